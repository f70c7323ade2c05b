#!/bin/bash
# Session 63 call 2 (nvidia-h200-x2, carry [".gpu"]): rANS chains of 2,048 steps (RESET 2048,
# chunks and pieces from 2^11, CHUNK_BITS 8192: docs/trials/session63-chains-2048.patch, built as
# .gpu/multires_short) against HEAD (.gpu/multires), three alternated pairs of processes at
# turbulent 1024^3 rel 1e-3. Call 1's timelines: a batch's RDEC lasts at least a chain (2-3 ms even
# for 2-13 M values), and a half pays it at its start and end as the whole does.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  for b in multires multires_short; do
    M=.gpu/$b RUN_LIMIT=100 run ${b}_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  done
done
for f in /tmp/tr/multires*_?.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
grep -h "ratio" $OUT/multires_1.log $OUT/multires_short_1.log | head -4 | cut -c1-160 | tee -a $OUT/summary.txt
end_call
