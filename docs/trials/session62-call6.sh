#!/bin/bash
# Session 62 call 6 (nvidia-h200-x2, the session's last 260 s; carry [".gpu"]: multires with the
# trial `docs/trials/session62-verify-off.patch`). Session 58 found the decode's host checksums
# the largest part of the two-GPU process's loss (1.848x without them, 1.730x with, two H100s);
# checks now wait for a batch's own streams. What do they cost two H200s today?
# MULTIRES_CODEC_VERIFY=off skips them (a measurement only) against the default, alternated.
# (The per-row medians ran as an inline Python snippet; tools/device/tick_medians.py is that
# snippet, with the same output.)
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
RUN_LIMIT=100 run off_1 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_VERIFY=off
RUN_LIMIT=50 run on_1 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
[ $(elapsed) -lt 115 ] && RUN_LIMIT=45 run off_2 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_VERIFY=off
[ $(elapsed) -lt 150 ] && RUN_LIMIT=45 run on_2 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
for f in /tmp/tr/*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
done
end_call
