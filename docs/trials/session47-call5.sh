#!/bin/bash
# Session 47 call 5 (nvidia-h200-x2, carry [".gpu"]): the GPU tests on the build with CRC_FOLD a
# warp a brick (call 4's timeline: 1.0-1.8 ms on the device from a batch's outlier lists to its
# checksums, the coder's tail), the budget asked while the range runs and the density sample
# judged on the pool (call 4's trace: 0.1-0.3 ms of the two-GPU head); then interleaved A/B
# against the committed build (.gpu/multires_prev), medians of 9, 1024^3; one timeline run.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
gpu_checks
P=.gpu/multires_prev
M=$P run t_prev 1024 turbulent 9 1,2 X=1
run t_new 1024 turbulent 9 1,2 X=1
M=$P run t_prev2 1024 turbulent 9 1,2 X=1
run t_new2 1024 turbulent 9 1,2 X=1
M=$P run s_prev 1024 smooth 9 1,2 X=1
run s_new 1024 smooth 9 1,2 X=1
MULTIRES_CODEC_TIMELINE=1 timeout 90 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat 3 --codec-field turbulent > /tmp/tr/tl.log 2> /tmp/tr/tl.err
say "timeline rc $?"
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/tl.* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
