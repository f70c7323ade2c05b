#!/bin/bash
# Session 65, call 3 (nvidia-h200-x2, carry [".gpu"], HEAD's binary .gpu/multires): call 2's
# traces had GPU 0's slab (516 planes, 10 batches) end 0.7-1.9 ms after GPU 1's (508 planes with
# the thin layer, 13 batches) on two H100s. Does the lag follow the slab or the card? Traced
# two-GPU processes alternated, the cards in order (CUDA_VISIBLE_DEVICES=0,1) and swapped (1,0),
# and the host's topology.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
nvidia-smi topo -m 2>&1 | tee -a $OUT/summary.txt
(numactl -H 2>&1 || lscpu | grep -i numa) | head -8 | tee -a $OUT/summary.txt
for i in 1 2 3; do
  for order in 0,1 1,0; do
    n=tr_${order/,/}_$i
    M=.gpu/multires BENCH_LIMIT=90 bench_one $n 1024 2 MULTIRES_CODEC_TRACE=1 \
      MULTIRES_BENCH_ALIGN_MS=60 CUDA_VISIBLE_DEVICES=$order
    say "$n rc $?: $(python3 tools/device/slab_ends.py /tmp/tr/$n.err)"
  done
  [ $(elapsed) -gt 330 ] && break
done
say "elapsed $(elapsed)s"
end_call
