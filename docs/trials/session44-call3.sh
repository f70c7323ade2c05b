#!/bin/bash
# Session 44, call 3 (nvidia-h200-x2, carry [".gpu"]): two GPUs against one where the field is
# large enough for a run's fixed milliseconds (call 2's trace: about 2 ms of range and plan, 0.4
# to the first batch) to weigh less: 1536^3 (3.6 G values, 14.5 GB float32) of both fields, and
# 1024^3 of both again in the same call. Call 2 (two H100s) gave the smooth 1536^3 field 1.87x /
# 1.85x. The turbulent field's FFT now runs on every core (it ran along z on one).
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
RUN_LIMIT=300 run t36 1536 turbulent 2 1,2 X=1
RUN_LIMIT=150 run s36 1536 smooth 2 1,2 X=1
run t 1024 turbulent 3 1,2 X=1
run s 1024 smooth 3 1,2 X=1
say "total ${SECONDS}s"
