#!/bin/bash
# Usage on the device: bash tools/device/gpu_tests.sh [DIR]
# Runs every test binary in DIR (default .gpu/tests: the multires-cuda
# unit tests and tests/gpu_*.rs, copied from `cargo test --release -p
# multires-cuda --no-run`) with MULTIRES_REQUIRE_GPU=1, so that a missing
# GPU fails them instead of skipping. Prints each binary's result line;
# exits non-zero if any failed.
set -u
D=${1:-.gpu/tests}
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
rc=0
for t in "$D"/*; do
  [ -x "$t" ] || continue
  out=$(MULTIRES_REQUIRE_GPU=1 "$t" --test-threads 1 2>&1)
  r=$?
  [ $r -ne 0 ] && { rc=1; echo "$out" | tail -40; }
  echo "$(basename "$t"): rc $r | $(echo "$out" | grep 'test result' | tail -1)"
done
exit $rc
