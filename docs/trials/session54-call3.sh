#!/bin/bash
# Session 54 call 3 (nvidia-h200-x2, carry [".gpu"]; session 53's final build, no GPU tests owed;
# about 330 s with the start): call 2 showed taper 2 losing on two GPUs with either wait. Reading:
# a tapered GPU 1 slab (508 planes, 13 batches untapered) needs more than RESIDENT_SLOTS = 16
# batches, so the last ones wait for a slot (a chain each). The whole on one and two GPUs with
# 32 slots, alone and with taper 2 and 4, against the default, alternated twice.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
for i in 1 2; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run s32_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_SLOTS=32
  run t2s32_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=2 MULTIRES_CODEC_SLOTS=32
  run t4s32_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=4 MULTIRES_CODEC_SLOTS=32
  say "elapsed $(( $(date +%s) - T0 ))s"
done
traced tr_t2s32 1024 2 MULTIRES_CODEC_TAPER=2 MULTIRES_CODEC_SLOTS=32
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; cp /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
