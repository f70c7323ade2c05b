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
  for sh in 4 8 16; do
    d=(); n=$sz; [[ $sz == *x* ]] && { d=(--codec-depth ${sz%x*}); n=${sz#*x}; }
    MULTIRES_CODEC_SHARES=$sh MULTIRES_CODEC_TRACE=1 timeout 120 $M bench --config codec-3d --device cuda --codec-size $n "${d[@]}" \
      --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 5 \
      --codec-field turbulent > /tmp/tr/sh_${sz}_$sh.log 2> /tmp/tr/sh_${sz}_$sh.err
    say "trace $sz shares $sh rc $? | $(grep -E 'codec-3d resident' /tmp/tr/sh_${sz}_$sh.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/') | spans $(python3 tools/device/trace_summary.py /tmp/tr/sh_${sz}_$sh.err 2>/dev/null | grep -A3 'resident plan' | grep -oE 'gpu 0: [0-9]+ batches, [0-9.]+ M values, \+0.0 to \+[0-9.]+' | sed -E 's/.*: ([0-9]+) batches.*to \+([0-9.]+)/\1b:\2/' | tr '\n' ' ')"
  done
done
run d_1 1024 turbulent 9 1,2 X=1
run s4_1 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=4
run s6_1 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=6
run d_2 1024 turbulent 9 1,2 X=1
run s4_2 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=4
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/sh_* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
