#!/bin/bash
# Session 62 call 3 (nvidia-h200-x2; carry [".gpu"]: multires built from HEAD, 5f46d77's crates).
# Calls 1-2 showed that free rANS headers do not raise the 1024^3 decode's two-GPU ratio, which
# stays near 1.73x: a run's fill and drain do not halve. How large must a field be for two GPUs to
# reach 1.8x? The turbulent field at 1280^3 (1.95 times 1024^3's values) in two processes, and the
# smooth one at 1024^3 in one, each run on a 60 ms tick so every run's time is printed.
# (The per-row medians ran as an inline Python snippet; tools/device/tick_medians.py is that
# snippet, with the same output.)
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
RUN_LIMIT=260 run turb1280_1 1280 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
say "elapsed $(elapsed)s"
[ $(elapsed) -lt 330 ] && RUN_LIMIT=150 run turb1280_2 1280 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
say "elapsed $(elapsed)s"
[ $(elapsed) -lt 430 ] && RUN_LIMIT=100 run smooth1024_1 1024 smooth 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
for f in /tmp/tr/*.err; do
  say "$(basename $f .err): $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
end_call
