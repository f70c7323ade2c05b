#!/bin/bash
# Session 53 call 4 (nvidia-h200-x2, carry [".gpu"]; about 250 s with the start; no GPU tests owed:
# call 3 ran them on this build): where two GPUs lose against their halves on the same machine.
# Each GPU's slab shape alone on one GPU (516 planes: GPU 0's four full brick layers; 508: GPU
# 1's three and the thin one), the whole on one and two GPUs, alternated; then one traced
# two-GPU process (each GPU's span and the head).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
for i in 1 2; do
  run half516_$i 516x1024 turbulent 9 1 X=1
  run half508_$i 508x1024 turbulent 9 1 X=1
  run whole_$i 1024 turbulent 9 1,2 X=1
  say "elapsed $(( $(date +%s) - T0 ))s"
done
traced tr_two 1024 1,2 X=1
cp $OUT/*.log /tmp/tr/; rm -f $OUT/*.log; tar czf $OUT/tr.tgz -C /tmp tr
say "total $(( $(date +%s) - T0 ))s"
