#!/bin/bash
# Session 64 call 2 (nvidia-h200-x2, carry [".gpu"]): container version 8 (rANS contexts restart
# every 1,024 values, chunks from 2^10, CHUNK_BITS 4096; the restart in bits 5-6 of a stream's first
# word) as .gpu/multires, against version 7 (dbdec4b, .gpu/multires_base). Three alternated pairs at
# turbulent 1024^3 rel 1e-3 first (the question), then the GPU tests and cli_check (the GPU crate
# changed: R_RESET, R_PIECE_MIN_LOG, R_CHUNK_BITS).
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  for b in multires_base multires; do
    M=.gpu/$b RUN_LIMIT=100 run ${b}_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  done
done
for f in /tmp/tr/multires*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
grep -h "ratio" $OUT/multires*_1.log | cut -c1-170 | tee -a $OUT/summary.txt
[ $(elapsed) -lt 380 ] && gpu_checks
end_call
