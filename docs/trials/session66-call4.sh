#!/bin/bash
# Session 66, call 4 (nvidia-h200-x2, carry [".gpu"]: HEAD's .gpu/multires, the build whose GPU
# tests passed in call 3). The session's two changes together against neither, in one binary:
# HEAD as it is, and MULTIRES_CODEC_RAMP=off MULTIRES_CODEC_GPU_THREADS=spawn (session 65's code
# paths). Alternated plain pairs, both rows; the figures for the closing note.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  RUN_LIMIT=100 run head_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  RUN_LIMIT=100 run old_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_RAMP=off MULTIRES_CODEC_GPU_THREADS=spawn
  [ $(elapsed) -gt 250 ] && break
done
say_ticks /tmp/tr/head_*.err /tmp/tr/old_*.err
end_call
