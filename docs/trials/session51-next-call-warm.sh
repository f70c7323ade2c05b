#!/bin/bash
# For the session after 51, if it merges branch warm-enc-lists (5c5389d: the coder keeps its chunk
# lists and RCOPY's offsets in the slot, as the decoder keeps its own; not yet run on a device).
# nvidia-h200-x2, carry [".gpu"] with .gpu/multires and .gpu/gpu_tests built from the merge and
# .gpu/multires_main from main before it; about 500 s with the start.
# 1. The 16 GPU tests and cli_check.sh on the merge (the change is on every coding batch's path).
# 2. Device timelines of the half and the whole on one GPU: the last chain's host steps
#    (`python3 tools/device/timeline_summary.py X.err --chain`), against session 51's 0.9 + 0.5 ms.
# 3. Two-GPU medians, the merge against main, alternated, three processes each.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
mkdir -p /tmp/logs
for sz in 516x1024 1024; do
  MULTIRES_CODEC_TIMELINE=1 timeout 120 $M bench --config codec-3d --device cuda $(size_args $sz) \
    --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 5 \
    --codec-field turbulent > /tmp/logs/tl_$sz.log 2> /tmp/logs/tl_$sz.err
  say "timeline $sz rc $?: $(python3 tools/device/timeline_summary.py /tmp/logs/tl_$sz.err --chain | grep -A3 'chain of' | tail -4 | tr -s ' ' | tr '\n' ';')"
done
for i in 1 2 3; do
  M=.gpu/multires run warm_$i 1024 turbulent 9 1,2 X=1
  M=.gpu/multires_main run main_$i 1024 turbulent 9 1,2 X=1
done
cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
