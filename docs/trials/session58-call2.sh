#!/bin/bash
# Session 58, call 2 (nvidia-h200-x2; carry [".gpu"], .gpu/multires with the bench knob
# MULTIRES_BENCH_FILE_GPU). Is GPU 1 slower at copying up from a file that GPU 0's context
# page-locked? `tools/device/portable_rate.cu` times 320 MB up to each GPU (13 streams, 8 MB
# copies) alone and both at once, the buffer registered by either context; then the decode with
# the bench's file registered by GPU 1's context against GPU 0's (the default), alternated.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
nvcc -O2 -o /tmp/portable_rate tools/device/portable_rate.cu -lcuda > $OUT/portable_rate_build.log 2>&1
say "portable_rate build rc $?"
timeout 90 /tmp/portable_rate > $OUT/portable_rate.log 2>&1
say "portable_rate rc $?"; cat $OUT/portable_rate.log >> $OUT/summary.txt
for i in 1 2; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run file1_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_FILE_GPU=1
done
end_call
