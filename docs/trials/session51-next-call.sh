#!/bin/bash
# For the session after 51 (nvidia-h200-x2, carry [".gpu"] built from HEAD; about 450 s with the
# start; no GPU tests owed: the final build's passed in session 51 call 7).
# Question: with yielding waits (the default since session 51), how long does the half's last
# batch wait on the host now, and does RPLAN (the plans on the device, which takes 0.9 ms of host
# steps off that chain) raise the ratio? Session 51's timeline (blocking waits) had the half's last
# chain at 3.5 ms, 1.4 of it on the host, while the whole's tail waits on its copies down.
# 1. Device timelines (MULTIRES_CODEC_TIMELINE) of the half and the whole on one GPU, default and RPLAN.
# 2. Two-GPU medians, default against RPLAN, alternated, four processes each (the ratio of medians
#    is the figure: single processes spread by 4% or more).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
mkdir -p /tmp/logs
for sz in 516x1024 1024; do
  for v in X=1 MULTIRES_CODEC_RPLAN=device; do
    tag=$([ "$v" = X=1 ] && echo def || echo rplan)
    env $v MULTIRES_CODEC_TIMELINE=1 timeout 120 $M bench --config codec-3d --device cuda $(size_args $sz) \
      --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 5 \
      --codec-field turbulent > /tmp/logs/tl_${tag}_$sz.log 2> /tmp/logs/tl_${tag}_$sz.err
    say "timeline $tag $sz rc $?"
  done
done
for i in 1 2 3 4; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run rplan_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_RPLAN=device
done
cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
