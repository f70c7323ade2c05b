#!/bin/bash
# Session 47 call 1 (nvidia-h200-x2, carry [".gpu"]): the GPU tests on the build whose runs on
# several GPUs give each GPU its own rayon pool by default (session 46's trial), then
# interleaved A/B against the committed build (.gpu/multires_prev), medians of 9, 1024^3.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
gpu_checks
P=.gpu/multires_prev
M=$P run t_prev 1024 turbulent 9 1,2 X=1
run t_auto 1024 turbulent 9 1,2 X=1
run t_off 1024 turbulent 9 1,2 MULTIRES_CODEC_GPU_POOL=0
M=$P run t_prev2 1024 turbulent 9 1,2 X=1
run t_auto2 1024 turbulent 9 1,2 X=1
run t_24 1024 turbulent 9 1,2 MULTIRES_CODEC_GPU_POOL=24
M=$P run s_prev 1024 smooth 9 1,2 X=1
run s_auto 1024 smooth 9 1,2 X=1
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
