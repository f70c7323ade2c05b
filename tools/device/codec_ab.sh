#!/bin/bash
# Sourced by a device call's script (docs/trials/*-call.sh): the steps every codec A/B call
# repeats, with the binaries in .gpu/ (multires, gpu_tests) and results under $OUT.
#   say TEXT...                      print and append to $OUT/summary.txt
#   gpu_checks                       the GPU tests (MULTIRES_REQUIRE_GPU=1) and cli_check.sh
#   run NAME SIZE FIELD REPEAT GPUS ENV...
#                                    one bench process (--resident, rel 1e-3) with ENV set (give
#                                    X=1 for none): its resident and slab rows, GB/s compress /
#                                    decompress, and how many rows had equal bytes and values;
#                                    SIZE is N (N^3) or DxN (D planes of N^2); the fields are
#                                    made once a call and kept in /tmp/fields
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=.gpu/multires
mkdir -p /tmp/tr
say() { echo "$@" | tee -a $OUT/summary.txt; }
gpu_checks() {
  SECONDS=0
  MULTIRES_REQUIRE_GPU=1 timeout 260 .gpu/gpu_tests --test-threads 1 > $OUT/gpu_tests.log 2>&1
  say "gpu tests: rc $? in ${SECONDS}s | $(grep 'test result' $OUT/gpu_tests.log)"
  MULTIRES=$M timeout 40 bash tools/device/cli_check.sh > $OUT/cli_check.log 2>&1
  say "cli_check: rc $? | $(tail -1 $OUT/cli_check.log)"
}
run() {
  local name=$1 n=$2 f=$3 r=$4 g=$5 size=$2; shift 5
  local depth=()
  [[ $n == *x* ]] && { depth=(--codec-depth ${n%x*}); n=${n#*x}; }
  SECONDS=0
  env "$@" timeout ${RUN_LIMIT:-90} $M bench --config codec-3d --device cuda --codec-size $n "${depth[@]}" --codec-field-cache /tmp/fields --gpus $g --resident --codec-rel 1e-3 --repeat $r --codec-field $f > $OUT/$name.log 2>/tmp/tr/$name.err
  say "== $name ($size $f $*) rc $? in ${SECONDS}s"; say "$(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | sed -E 's/codec-3d (\w+) .*\| ([0-9]) GPU.*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \2: \3 \/ \4/; s/codec-3d (resident) .*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1: \2 \/ \3/')"
  say "equal bytes rows: $(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | grep -c "bytes equal to the host path's") values: $(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | grep -c "decoded values equal")"
}
