#!/bin/bash
# Session 62 call 1 (nvidia-h200-x2, about 400 s with the start; carry [".gpu"]: multires built
# from the working tree with the MULTIRES_CODEC_HEAD_CACHE knob). What would a decode gain if its
# rANS headers cost the host nothing? The knob keeps each payload's parsed header from the warm-up
# run, so the timed runs skip the 1-3 ms a batch reads its headers before it queues anything: an
# upper bound on what RHEAD (the headers read on the device) could give. Three pairs alternated.
# Also: nvcc compiles RHEAD (docs/trials/session61-rhead.patch applied to a copy of codec.cu), the
# first compile of it by a CUDA compiler.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
( cd .gpu/rhead && timeout 120 nvcc -arch=sm_90 -std=c++17 --fmad=false -Xptxas -v -c check.cu -o /tmp/check.o ) > $OUT/rhead_nvcc.log 2>&1
say "rhead nvcc: rc $? | $(grep -A2 'k_RHEAD' $OUT/rhead_nvcc.log | grep -E 'registers|stack' | tr -s ' ' | tr '\n' ';')"
for i in 1 2 3; do
  RUN_LIMIT=$([ $i = 1 ] && echo 120 || echo 60) run off_$i 1024 turbulent 9 1,2 X=1
  RUN_LIMIT=60 run cache_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_HEAD_CACHE=1
done
end_call
