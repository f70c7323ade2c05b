#!/bin/bash
# Usage on a two-GPU device: bash tools/device/big_field.sh
# 1. A field of more than 2^32 values (smooth 1626^3, 17.2 GB float32) on
#    1 and 2 GPUs, resident and in slabs, with --check: the GPUs' bytes
#    must equal the CPU codec's, and every path's decoded values the host
#    path's (32-bit indices would break here first).
# 2. Turbulent 1280^3 on 1 and 2 GPUs: how the 2-GPU scaling moves when
#    the fixed costs are spread over a larger field.
# Whole logs go to $OUT (bring-back holds 8 files at most).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=${MULTIRES:-.gpu/multires}
O=${OUT:-/tmp}
run() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$M" bench --config codec-3d --device cuda "$@" > "$O/$name.log" 2>&1
  echo "$name: rc $? in $((SECONDS - t0)) s"
  grep -E "^codec-3d" "$O/$name.log" | cut -d'|' -f1-7
  grep -iE "error|differ" "$O/$name.log" | head -5
}
run big_smooth "${BIG_LIMIT:-240}" --codec-size "${BIG_SIZE:-1626}" --repeat 2 --gpus 1,2 \
  --resident --check --codec-field smooth --codec-rel 1e-3
[ "${TURB:-1}" = 0 ] && exit 0
run big_turbulent "${TURB_LIMIT:-200}" --codec-size "${TURB_SIZE:-1280}" --repeat 2 --gpus 1,2 \
  --resident --codec-field turbulent --codec-rel 1e-3
