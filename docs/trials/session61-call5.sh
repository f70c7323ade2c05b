#!/bin/bash
# Session 61 call 5 (nvidia-h200-x2, about 480 s with the start; carry [".gpu"]: multires and
# gpu_tests built from HEAD). Call 4's host traces: a decode batch reads its rANS headers for
# 1-3 ms before it queues its streams, so the copy engine starts late and the last streams of a
# half arrive at about 9 ms. Now a batch whose payloads lie in page-locked memory queues them up
# whole first, and its lists go through the stage (a kernel), not behind the streams on the
# engine (MULTIRES_CODEC_EARLY=off: as before). The GPU tests, then three pairs alternated.
# Expect the half's decode to gain more than the whole's: two-GPU decode up, one GPU less so.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
for i in 1 2 3; do
  RUN_LIMIT=$([ $i = 1 ] && echo 120 || echo 60) run early_$i 1024 turbulent 9 1,2 X=1
  RUN_LIMIT=60 run off_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_EARLY=off
done
say "elapsed $(elapsed)s"
end_call
