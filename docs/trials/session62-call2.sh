#!/bin/bash
# Session 62 call 2 (nvidia-h200-x2; carry [".gpu"]: call 1's multires). Call 1's two-GPU rows
# swung from 184 to 266 GB/s between processes, so its pairs could not say whether free headers
# (MULTIRES_CODEC_HEAD_CACHE=1) raise the ratio; one GPU gained 5-9% in all three. Now four pairs,
# each run on a 60 ms tick (MULTIRES_BENCH_ALIGN_MS=60) so that every run's time is printed
# (`bench ticks` on stderr, per row in order: resident, slabs 1, slabs 2).
# (The per-row medians ran as an inline Python snippet; tools/device/tick_medians.py is that
# snippet, with the same output.)
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3 4; do
  RUN_LIMIT=$([ $i = 1 ] && echo 120 || echo 70) run off_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  RUN_LIMIT=70 run cache_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_HEAD_CACHE=1
done
for f in /tmp/tr/off_*.err /tmp/tr/cache_*.err; do
  say "$(basename $f .err): $(python3 tools/device/tick_medians.py $f decompress)"
done
end_call
