#!/bin/bash
# Session 65, call 4 (nvidia-h200-x2, carry [".gpu"], HEAD's binary .gpu/multires): call 3 put
# GPU 0's later end (~1 ms) on its slab, not its card. Does it follow the batches a slab is cut
# into? Traced two-GPU processes, MULTIRES_CODEC_SHARES unset (8: GPU 0 10 batches, GPU 1 13),
# 16 and 5, alternated; slab_ends.py gives each run's lag and length.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2; do
  for s in def 16 5; do
    n=sh${s}_$i
    if [ $s = def ]; then extra=(); else extra=(MULTIRES_CODEC_SHARES=$s); fi
    M=.gpu/multires BENCH_LIMIT=90 bench_one $n 1024 2 MULTIRES_CODEC_TRACE=1 \
      MULTIRES_BENCH_ALIGN_MS=60 "${extra[@]}"
    say "$n rc $?: $(python3 tools/device/slab_ends.py /tmp/tr/$n.err)"
    say "   $(grep -E 'codec-3d slabs' /tmp/tr/$n.log | sed -E 's/.*\| ([0-9]) GPU.*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 GPU: \2 \/ \3/' | tr '\n' ';')"
  done
  [ $(elapsed) -gt 300 ] && break
done
say "elapsed $(elapsed)s"
end_call
