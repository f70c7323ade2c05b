#!/bin/bash
# Session 55 call 4 (nvidia-h200-x2, carry [".gpu"]; about 400 s, the session's last device
# time). Brick lending over NVLink (call 1: peer access on, 1 GiB GPU 0 -> GPU 1 in 2.8 ms): with
# MULTIRES_CODEC_LEND=k the last GPU codes k bricks of the other slab (the smallest first: at
# 1024^3 GPU 0's four corner bricks, then its edge bricks), gathered over the link into its slot,
# before its own; GPU 0 ended 0.5-1.2 ms after GPU 1 on two H200s (call 1's trace). The whole on
# one and two GPUs alternated three times with k = 4 and 8 on two GPUs; the bench's byte and
# value checks cover the lent bricks. Then, if time is left, the GPU tests and cli_check.sh on
# this build.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
for i in 1 2 3; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run lend4_$i 1024 turbulent 9 2 MULTIRES_CODEC_LEND=4
  run lend8_$i 1024 turbulent 9 2 MULTIRES_CODEC_LEND=8
  say "elapsed $(( $(date +%s) - T0 ))s"
done
[ $(( $(date +%s) - T0 )) -lt 260 ] && gpu_checks
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; cp /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
