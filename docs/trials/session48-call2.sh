#!/bin/bash
# Session 48 call 2 (nvidia-h200-x2, carry [".gpu"]): the GPU tests on the build whose slab
# coding keeps one thread a GPU from its range to its batches (a barrier between; each GPU's
# memory budget taken before it) and whose density sample stops once dense; interleaved A/B
# against ec1a53d (.gpu/multires_prev), and MULTIRES_CODEC_TAPER=1/2 (the last shares'
# batches halved), medians of 9, 1024^3; one traced run of two GPUs for the head.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
gpu_checks
P=.gpu/multires_prev
M=$P run t_prev 1024 turbulent 9 1,2 X=1
run t_new 1024 turbulent 9 1,2 X=1
run t_tp1 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=1
run t_tp2 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=2
M=$P run t_prev2 1024 turbulent 9 1,2 X=1
run t_new2 1024 turbulent 9 1,2 X=1
run t_tp1b 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=1
M=$P run s_prev 1024 smooth 9 1,2 X=1
run s_new 1024 smooth 9 1,2 X=1
run s_tp1 1024 smooth 9 1,2 MULTIRES_CODEC_TAPER=1
B=(bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --codec-field turbulent)
MULTIRES_CODEC_TRACE=1 timeout 120 $M "${B[@]}" --repeat 5 > /tmp/tr/tr.log 2> /tmp/tr/tr.err
say "trace rc $?"
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/tr.* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
