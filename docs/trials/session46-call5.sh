#!/bin/bash
# Session 46, call 5 (nvidia-h200-x2, carry [".gpu"]): is anything lost between two GPUs of
# one process? The committed build codes 1024^3 on one GPU, on two, and the first GPU's share
# alone (516 planes: its slab of four brick layers) on one GPU, medians of 9. If two GPUs take
# about as long as one GPU takes for its half, the whole gap to 1.8x is the run's fixed part
# (head and tail), not the GPUs getting in each other's way.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
run full_t 1024 turbulent 9 1,2 X=1
run half_t 516x1024 turbulent 9 1,2 X=1
run full_t2 1024 turbulent 9 1,2 X=1
run half_t2 516x1024 turbulent 9 1,2 X=1
run full_s 1024 smooth 9 1,2 X=1
run half_s 516x1024 smooth 9 1,2 X=1
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
