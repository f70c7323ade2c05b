#!/bin/bash
# Session 63 call 4 (nvidia-h200-x2, carry [".gpu"]): more alternated pairs of version 7 (HEAD,
# .gpu/multires, whose GPU tests passed in call 3) against 91cd241 (.gpu/multires_base) at
# turbulent 1024^3 rel 1e-3, order reversed from call 3; then a lone half (516 planes, one GPU)
# of each if time is left.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 4 5 6 7; do
  for b in multires multires_base; do
    M=.gpu/$b RUN_LIMIT=100 run ${b}_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  done
done
for b in multires multires_base; do
  [ $(elapsed) -gt 420 ] && break
  M=.gpu/$b RUN_LIMIT=60 run ${b}_half 516x1024 turbulent 9 1 MULTIRES_BENCH_ALIGN_MS=60
done
for f in /tmp/tr/multires*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
end_call
