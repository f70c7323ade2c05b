#!/bin/bash
# For the session after 49 (nvidia-h200-x2, carry [".gpu"] with .gpu/multires built from HEAD;
# about 300 s with the start). No GPU tests are owed (fec6d8e's passed in session 49 call 5).
# Question: is there a fixed device cost a batch? Session 49 (two H200s): the half field's
# batches take 17.0 ms against 32.0 for the whole (2 x 17.0 - 32.0 = 2 ms), with the same
# transform rate per value; the half is cut into 10 batches (8 shares of a slab), the whole into
# 13 (8 shares of the field, batches twice as large). If a batch costs about 0.3 ms of device
# time whatever its size, then 2 GPUs with 4 shares a slab (batches as large as one GPU's) would
# gain ~1 ms (the target's margin); if not, the 2 ms is the tail's latency (L ~ 1.1 ms plus
# 0.023 ms a million values of the last batch). Traced one-GPU spans at SHARES 4/8/16, then
# two-GPU medians at SHARES 4/6 against the default, alternated.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
for sz in 516x1024 1024; do
  for sh in 4 8 16; do traced sh_${sz}_$sh $sz 1 MULTIRES_CODEC_SHARES=$sh; done
done
run d_1 1024 turbulent 9 1,2 X=1
run s4_1 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=4
run s6_1 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=6
run d_2 1024 turbulent 9 1,2 X=1
run s4_2 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=4
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/sh_* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
