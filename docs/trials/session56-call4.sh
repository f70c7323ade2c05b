#!/bin/bash
# Session 56 call 4 (nvidia-h200-x2, carry [".gpu"]; about 400 s). Call 3's machine ran slowly
# (GPU tests 168 s), so its A/B is not read. Here: call 2's build (.gpu/multires_prev, the slot's
# streams joined by cudarc's `join`) against StreamOrder (.gpu/multires, whose GPU tests passed in
# call 3), alternated three times, one and two GPUs a process; then the GPU tests of the previous
# build (.gpu/gpu_tests_prev), for the case it stays.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  M=.gpu/multires_prev run prev_$i 1024 turbulent 9 1,2 X=1
  run new_$i 1024 turbulent 9 1,2 X=1
  say "elapsed $(elapsed)s"
done
cp .gpu/gpu_tests_prev .gpu/gpu_tests
M=.gpu/multires_prev gpu_checks
end_call
