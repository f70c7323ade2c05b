#!/bin/bash
# Usage on a two-GPU device: bash tools/device/two_gpus.sh [SIZE] [REL]
# The checks owed after a change (the GPU tests, cli_check.sh), the copy
# ceilings, then the codec on 1 and 2 GPUs with the field in the GPUs'
# memory (resident, slabs) and in page-locked host memory (pinned), both
# fields at one bound (default 1024^3, rel 1e-3), and one traced 2-GPU run.
# Every command's whole output goes to $OUT (never only what a grep keeps:
# a failing run's message is on stderr); a summary is printed.
# MULTIRES=path/to/multires (default .gpu/multires); GPU_TESTS likewise.
# PINNED=0 leaves out the pinned rows, TRACE=0 the traced run, H2D=0 the
# copy ceilings (to fit a shorter call).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=${MULTIRES:-.gpu/multires}
T=${GPU_TESTS:-.gpu/tests}
SIZE=${1:-1024}
REL=${2:-1e-3}
O=${OUT:-/tmp}
if [ -d "$T" ]; then
  bash tools/device/gpu_tests.sh "$T" > "$O/gpu_tests.log" 2>&1
  echo "gpu tests: rc $?"; cat "$O/gpu_tests.log"
fi
MULTIRES="$M" bash tools/device/cli_check.sh > "$O/cli_check.log" 2>&1
echo "cli_check: rc $? | $(tail -1 "$O/cli_check.log")"
if [ "${H2D:-1}" != 0 ]; then
  python3 tools/device/h2d_rate.py 4 > "$O/h2d.log" 2>&1
  cat "$O/h2d.log"
fi
P=--pinned
[ "${PINNED:-1}" = 0 ] && P=
for F in turbulent smooth; do
  "$M" bench --config codec-3d --device cuda --codec-size "$SIZE" --repeat "${REPEAT:-2}" --gpus 1,2 \
    --resident $P --codec-field "$F" --codec-rel "$REL" > "$O/bench_$F.log" 2>&1
  echo "bench $F: rc $?"
  grep -E "codec-3d (resident|slabs|pinned)" "$O/bench_$F.log" | cut -d'|' -f1-6
done
[ "${TRACE:-1}" = 0 ] && exit 0
MULTIRES_CODEC_TRACE=1 "$M" bench --config codec-3d --device cuda --codec-size "$SIZE" \
  --repeat 1 --gpus 2 --resident --codec-field turbulent --codec-rel "$REL" \
  > "$O/trace_out.log" 2> "$O/trace.log"
echo "trace: rc $? ($(wc -l < "$O/trace.log") lines in $O/trace.log)"
