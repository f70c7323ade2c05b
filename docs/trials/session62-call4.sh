#!/bin/bash
# Session 62 call 4 (nvidia-h200-x2; carry [".gpu"]: multires built from HEAD). Call 3: at 1280^3
# (1.95 times 1024^3's values) two GPUs decode at 1.69-1.71x one GPU and code at 1.72-1.77x, no
# better than at 1024^3, so what two GPUs lose grows with the field rather than staying fixed.
# Does one GPU alone lose it too on a half? A 516-plane half of 1024^2 planes (GPU 0's share) and a
# 645-plane half of 1280^2 planes on one GPU, each beside its whole on one and two GPUs, every run
# on a 60 ms tick so each run's time is printed.
# (The per-row medians ran as an inline Python snippet; tools/device/tick_medians.py is that
# snippet, with the same output.)
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
RUN_LIMIT=120 run half1024 516x1024 turbulent 9 1 MULTIRES_BENCH_ALIGN_MS=60
RUN_LIMIT=130 run whole1024 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
say "elapsed $(elapsed)s"
[ $(elapsed) -lt 250 ] && RUN_LIMIT=150 run half1280 645x1280 turbulent 9 1 MULTIRES_BENCH_ALIGN_MS=60
say "elapsed $(elapsed)s"
[ $(elapsed) -lt 330 ] && RUN_LIMIT=200 run whole1280 1280 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
for f in /tmp/tr/*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
end_call
