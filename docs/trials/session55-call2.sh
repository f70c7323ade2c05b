#!/bin/bash
# Session 55 call 2 (nvidia-h200-x2, carry [".gpu"]; about 480 s). Call 1's trace on two H200s:
# GPU 0 ends 0.5-1.2 ms after GPU 1 although its transforms end first; its last batches (56, 28,
# 28 M) have long chains, GPU 1's (13, 13, 5.7, 1.8 M) short ones. `taper_by_chain`
# (MULTIRES_CODEC_TAIL=rho in eighths) halves late batches until each holds at most a quarter of
# the largest plus rho/8 of what transforms after it, then counts the slots again (the taper of
# sessions 46-54 kept the slots counted before its cuts, so its extra batches waited for one).
# A/B three times against the default: TAIL=3 on one and two GPUs; on two only TAIL=2, TAIL=5,
# TAIL=3 without the slots counted again, and the default cut with them (MULTIRES_CODEC_REFIT=1).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
for i in 1 2 3; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run t3_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_TAIL=3
  run t2_$i 1024 turbulent 9 2 MULTIRES_CODEC_TAIL=2
  run t5_$i 1024 turbulent 9 2 MULTIRES_CODEC_TAIL=5
  run t3ns_$i 1024 turbulent 9 2 MULTIRES_CODEC_TAIL=3 MULTIRES_CODEC_TAIL_SLOTS=0
  run refit_$i 1024 turbulent 9 2 MULTIRES_CODEC_REFIT=1
  say "elapsed $(( $(date +%s) - T0 ))s"
  [ $(( $(date +%s) - T0 )) -gt 400 ] && break
done
traced tr_t3 1024 2 MULTIRES_CODEC_TAIL=3
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; cp /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
