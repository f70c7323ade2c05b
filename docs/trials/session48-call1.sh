#!/bin/bash
# Session 48 call 1 (nvidia-h200-x2, carry [".gpu"]): the GPU tests on the build whose device
# checksums use 512-byte pieces (the short one first) and fold a warp a brick by tables;
# a timeline of two GPUs (do CRC_PIECES and CRC_FOLD still take 0.3-0.8 ms of each batch?);
# interleaved A/B against the committed build (.gpu/multires_prev), medians of 9, 1024^3.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
gpu_checks
B=(bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --codec-field turbulent)
P=.gpu/multires_prev
M=$P run t_prev 1024 turbulent 9 1,2 X=1
run t_new 1024 turbulent 9 1,2 X=1
MULTIRES_CODEC_TIMELINE=1 timeout 120 $M "${B[@]}" --repeat 3 > /tmp/tr/tl.log 2> /tmp/tr/tl.err
say "timeline rc $?"
M=$P run t_prev2 1024 turbulent 9 1,2 X=1
run t_new2 1024 turbulent 9 1,2 X=1
M=$P run s_prev 1024 smooth 9 1,2 X=1
run s_new 1024 smooth 9 1,2 X=1
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/tl.* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
