#!/bin/bash
# For the session after 48 (nvidia-h200-x2, carry [".gpu"] with .gpu/multires and .gpu/gpu_tests
# built from HEAD; about 420 s with the start). The GPU tests first: the GPU crate is as in
# 4bd3b6e (tested in session 48's call 2), but its tests compare with the CPU decoder, whose
# wide rANS steps changed after (cc5c17b, a41bbe4) and were only run on this AMD host's
# AVX-512, not the device host's. Before building, `git apply
# docs/trials/session48-review-slab-head.patch` (session 48's review: the slab head's per-GPU
# state without a stand-in error or the budget, and CRC_FOLD's x^(8*512) a compile-time
# constant; built, linted and unit-tested here, never run on a GPU): these tests then cover it,
# and it lands if they pass. Then it measures the fixed part F of a
# one-GPU run (F = 2 T(half) - T(whole), from the slabs-1 rows of a 516-plane field and the
# 1024^3 one, each process alternated twice), compress and decompress, then traces one run of
# each size on one GPU, so that F's parts (head, fill, drain) can be read side by side with
# `python3 tools/device/trace_summary.py`. 1.8x on two GPUs needs F <= W c / 8 (GPU_NOTES,
# session 48).
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
gpu_checks
run half 516x1024 turbulent 9 1 X=1
run whole 1024 turbulent 9 1,2 X=1
run half2 516x1024 turbulent 9 1 X=1
run whole2 1024 turbulent 9 1,2 X=1
for sz in 516x1024 1024; do
  d=(); n=$sz; [[ $sz == *x* ]] && { d=(--codec-depth ${sz%x*}); n=${sz#*x}; }
  MULTIRES_CODEC_TRACE=1 timeout 120 $M bench --config codec-3d --device cuda --codec-size $n "${d[@]}" \
    --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 5 \
    --codec-field turbulent > /tmp/tr/tr_$sz.log 2> /tmp/tr/tr_$sz.err
  say "trace $sz rc $?"
done
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/tr_* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
