#!/bin/bash
# For the session after 53 (nvidia-h200-x2, carry [".gpu"] with .gpu/multires from main at the
# session's end; no GPU tests owed: session 53's call 3 ran them on its final build; about 300 s
# with the start): where two GPUs lose 0.9 ms against GPU 0's slab alone (session 53, call 4).
# On one machine: device timelines and host traces of each GPU's slab alone on one GPU (516
# planes: GPU 0's; 508: GPU 1's) and of the whole on two GPUs, then the untraced rows again.
# Read with `timeline_summary.py X.err --chain` (per GPU: the last chain, the copies' ends) and
# `trace_summary.py X.err` (per run and GPU: the span, the head's marks).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
for sz in 516x1024 508x1024; do
  timeline tl_$sz $sz X=1
  traced tr_$sz $sz 1 X=1
done
BENCH_LIMIT=150 bench_one tl_two 1024 2 MULTIRES_CODEC_TIMELINE=1
say "timeline two GPUs rc $?"
traced tr_two 1024 2 X=1
for i in 1 2; do
  run half516_$i 516x1024 turbulent 9 1 X=1
  run half508_$i 508x1024 turbulent 9 1 X=1
  run whole_$i 1024 turbulent 9 1,2 X=1
done
tar czf $OUT/tr.tgz -C /tmp tr
say "total $(( $(date +%s) - T0 ))s"
