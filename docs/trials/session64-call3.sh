#!/bin/bash
# Session 64 call 3 (nvidia-h200-x2, carry [".gpu"]): HEAD (dbdec4b, container version 7; version 8
# was rejected in call 2) as .gpu/multires and its GPU tests. The GPU tests and cli_check on this
# build, then the smooth field at 1024^3 (version 7 never ran it on the device), then turbulent
# 1024^3 processes for the record of where 2 GPUs / 1 GPU stands.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
RUN_LIMIT=120 run smooth 1024 smooth 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
for i in 1 2 3 4 5; do
  [ $(elapsed) -gt 480 ] && break
  RUN_LIMIT=100 run turb_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
done
for f in /tmp/tr/smooth.err /tmp/tr/turb_*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
grep -h "ratio" $OUT/smooth.log $OUT/turb_1.log | cut -c1-170 | tee -a $OUT/summary.txt
end_call
