#!/bin/bash
# Session 52 call 2 (nvidia-h100-x1, carry [".gpu"]; about 450 s with the start): the build whose
# coder writes the bricks' rANS tables straight into the stage in parallel (.gpu/multires,
# .gpu/gpu_tests) runs the 16 GPU tests and cli_check.sh; device timelines of the half and the
# whole (the last chain's steps); then one-GPU medians of the half and the whole, alternated:
# this build, main before the session (.gpu/multires_main, ec4f689), and this build with the plans
# on the device (MULTIRES_CODEC_RPLAN=device, yielding waits now).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
mkdir -p /tmp/logs
for sz in 516x1024 1024; do
  for v in host device; do
    MULTIRES_CODEC_RPLAN=$v MULTIRES_CODEC_TIMELINE=1 timeout 120 $M bench --config codec-3d --device cuda $(size_args $sz) \
      --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 5 \
      --codec-field turbulent > /tmp/logs/tl_${sz}_$v.log 2> /tmp/logs/tl_${sz}_$v.err
    say "timeline $sz $v rc $?: $(python3 tools/device/timeline_summary.py /tmp/logs/tl_${sz}_$v.err --chain | grep -A3 'chain of' | tail -4 | tr -s ' ' | tr '\n' ';')"
  done
done
for i in 1 2; do
  for sz in 516x1024 1024; do
    M=.gpu/multires run tab_${sz}_$i $sz turbulent 9 1 X=1
    M=.gpu/multires_main run main_${sz}_$i $sz turbulent 9 1 X=1
    M=.gpu/multires run rplan_${sz}_$i $sz turbulent 9 1 MULTIRES_CODEC_RPLAN=device
  done
  say "elapsed $(( $(date +%s) - T0 ))s"
done
cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
