#!/bin/bash
# Session 66, call 4 (nvidia-h200-x2, carry [".gpu"]: HEAD's .gpu/multires, the build whose GPU
# tests passed in call 3). The session's two changes together against neither, in one binary:
# HEAD as it is, and MULTIRES_CODEC_RAMP=off MULTIRES_CODEC_GPU_THREADS=spawn (session 65's code
# paths). Alternated plain pairs, both rows; the figures for the closing note. Then, for the next
# session's look at coding (now the lower ratio), one traced process of HEAD on one GPU and two.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  RUN_LIMIT=100 run head_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  RUN_LIMIT=100 run old_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_RAMP=off MULTIRES_CODEC_GPU_THREADS=spawn
  [ $(elapsed) -gt 250 ] && break
done
say_ticks /tmp/tr/head_*.err /tmp/tr/old_*.err
[ $(elapsed) -lt 330 ] && BENCH_LIMIT=70 bench_one tr_head 1024 1,2 MULTIRES_CODEC_TRACE=1 MULTIRES_BENCH_ALIGN_MS=60
say "tr_head rc $?: $(python3 tools/device/slab_ends.py /tmp/tr/tr_head.err 2>&1 | cut -c1-300)"
end_call
