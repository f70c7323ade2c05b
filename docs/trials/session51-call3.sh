#!/bin/bash
# Session 51 call 3 (nvidia-h200-x2, carry [".gpu"] built from c468d4d; about 120 s with the start).
# Device timelines (MULTIRES_CODEC_TIMELINE: an event at every stage mark) of the half (516 planes)
# and the whole on one GPU: how long each batch's RENC, RCOPY and copy down take on the device in
# the last 3-5 ms of a run, where two GPUs lose against one (F).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
mkdir -p /tmp/logs
for sz in 516x1024 1024; do
  SECONDS=0
  MULTIRES_CODEC_TIMELINE=1 timeout 120 $M bench --config codec-3d --device cuda $(size_args $sz) \
    --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 5 \
    --codec-field turbulent > /tmp/logs/tl_$sz.log 2> /tmp/logs/tl_$sz.err
  say "timeline $sz rc $? in ${SECONDS}s | $(grep 'codec-3d resident' /tmp/logs/tl_$sz.log | cut -c1-120)"
done
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
