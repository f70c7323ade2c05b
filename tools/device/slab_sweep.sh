#!/bin/bash
# Usage on a two-GPU device: bash tools/device/slab_sweep.sh [SIZE] [REL]
# Tuning knobs (the bytes never depend on them) against the default for
# the 2-GPU slabs rows, both fields, one process a setting; then traces of
# the smooth field's slabs on 1 and 2 GPUs. Whole logs go to $OUT.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=${MULTIRES:-.gpu/multires}
SIZE=${1:-1024}
REL=${2:-1e-3}
O=${OUT:-/tmp}
VARIANTS=${VARIANTS:-"default MULTIRES_CODEC_SHARES=4 MULTIRES_CODEC_SHARES=2"}
for F in turbulent smooth; do
  for V in $VARIANTS; do
    L="$O/sweep_${F}_${V//=/_}.log"  # $OUT brings back 8 files at most
    if [ "$V" = default ]; then E=""; else E="$V"; fi
    env $E "$M" bench --config codec-3d --device cuda --codec-size "$SIZE" --repeat 3 --gpus 2 \
      --resident --codec-field "$F" --codec-rel "$REL" > "$L" 2>&1
    echo "$F $V rc $? | $(grep -E 'codec-3d (slabs|resident)' "$L" | cut -d'|' -f1,3-5 | tr '\n' ' ')"
  done
done
if [ -n "${TRACE:-}" ]; then
  MULTIRES_CODEC_TRACE=1 "$M" bench --config codec-3d --device cuda --codec-size "$SIZE" \
    --repeat 1 --gpus 1,2 --resident --codec-field smooth --codec-rel "$REL" \
    > "$O/trace_smooth_out.log" 2> "$O/trace_smooth.log"
  echo "trace: rc $? ($(wc -l < "$O/trace_smooth.log") lines)"
fi
