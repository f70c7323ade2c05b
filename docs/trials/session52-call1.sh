#!/bin/bash
# Session 52 call 1 (nvidia-h100-x1, carry [".gpu"]; about 450 s with the start): the merge of
# warm-enc-lists (.gpu/multires, .gpu/gpu_tests) runs the 16 GPU tests and cli_check.sh; device
# timelines of the half field (516 planes) and the whole on one GPU (the last chain's host steps);
# then one-GPU medians of the half and the whole, the merge against main before it
# (.gpu/multires_main), alternated: two GPUs code about as fast as the half alone on one, so
# whole/half on one GPU stands in for the two-GPU ratio on a one-GPU machine.
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
for i in 1 2; do
  for sz in 516x1024 1024; do
    M=.gpu/multires run warm_${sz}_$i $sz turbulent 9 1 X=1
    M=.gpu/multires_main run main_${sz}_$i $sz turbulent 9 1 X=1
  done
  say "elapsed $(( $(date +%s) - T0 ))s"
done
cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
