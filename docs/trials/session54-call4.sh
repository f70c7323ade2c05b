#!/bin/bash
# Session 54 call 4 (nvidia-h200-x2, carry [".gpu"]; build with `halve_last_large` behind
# MULTIRES_CODEC_HALVE_LAST=1; about 450 s with the start): GPU 0's slab ends in a 56 M batch
# whose chain (3.2 ms) is its drain; halving only that batch (one more batch) should end GPU 0
# 0.5-0.8 ms sooner, near GPU 1 (which ends 0.6-1 ms before it), and lift two GPUs toward
# 1.82x. The whole on one and two GPUs with and without, alternated three times; one traced
# two-GPU run with it; then the GPU tests and cli_check.sh with it set (so it can be the default).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
for i in 1 2 3; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run hl_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_HALVE_LAST=1
  say "elapsed $(( $(date +%s) - T0 ))s"
done
traced tr_hl 1024 2 MULTIRES_CODEC_HALVE_LAST=1
export MULTIRES_CODEC_HALVE_LAST=1
gpu_checks
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; cp /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
