#!/bin/bash
# Session 47 call 6 (nvidia-h200-x2, carry [".gpu"]): the GPU tests on the final build (the
# GPU crate as e422f24 plus trace-only marks; call 5's CRC_FOLD and head changes reverted), the
# codec tests first (call 5's run timed out in the CWT masks test before reaching them), then
# the rest, then cli_check.sh.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
say() { echo "$@" | tee -a $OUT/summary.txt; }
SECONDS=0
MULTIRES_REQUIRE_GPU=1 timeout 150 .gpu/gpu_tests --test-threads 1 codec > $OUT/gpu_codec.log 2>&1
say "gpu codec tests: rc $? in ${SECONDS}s | $(grep 'test result' $OUT/gpu_codec.log)"
S=$SECONDS
MULTIRES_REQUIRE_GPU=1 timeout 200 .gpu/gpu_tests --test-threads 1 --skip codec > $OUT/gpu_rest.log 2>&1
say "gpu other tests: rc $? in $((SECONDS-S))s | $(grep 'test result' $OUT/gpu_rest.log)"
MULTIRES=.gpu/multires timeout 40 bash tools/device/cli_check.sh > $OUT/cli_check.log 2>&1
say "cli_check: rc $? | $(tail -1 $OUT/cli_check.log)"
say "total ${SECONDS}s"
