#!/bin/bash
# Session 63 call 3 (nvidia-h200-x2, carry [".gpu"]): container version 7 (rANS contexts restart
# every 2,048 values, chunks from 2^11, CHUNK_BITS 8192; RDEC takes each brick's restart from its
# stream's header) as .gpu/multires, against 91cd241 (.gpu/multires_base). The GPU tests and
# cli_check first (the GPU crate changed), then three alternated pairs at turbulent 1024^3 rel 1e-3,
# then the smooth field once each if time is left.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
for i in 1 2 3; do
  for b in multires_base multires; do
    M=.gpu/$b RUN_LIMIT=100 run ${b}_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  done
done
for b in multires_base multires; do
  [ $(elapsed) -gt 470 ] && break
  M=.gpu/$b RUN_LIMIT=80 run ${b}_smooth 1024 smooth 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
done
for f in /tmp/tr/multires*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
grep -h "ratio" $OUT/multires*_1.log $OUT/multires*_smooth.log 2>/dev/null | cut -c1-170 | tee -a $OUT/summary.txt
end_call
