#!/bin/bash
# Session 46, call 3 (nvidia-h200-x2, carry [".gpu"]): knobs only on the committed build
# (54358b9; session 45's e422f24 code), 1024^3 rel 1e-3, medians of 9, interleaved: batches a
# slab (MULTIRES_CODEC_SHARES sets them for one GPU and two alike), how host threads wait for
# the device (MULTIRES_CUDA_WAIT=yield against blocking), three front permits a GPU.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
run t_base 1024 turbulent 9 1,2 X=1
run t_sh4 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=4
run t_sh6 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=6
run t_sh12 1024 turbulent 9 1,2 MULTIRES_CODEC_SHARES=12
run t_yield 1024 turbulent 9 1,2 MULTIRES_CUDA_WAIT=yield
run t_front3 1024 turbulent 9 1,2 MULTIRES_CODEC_FRONT=3
run t_base2 1024 turbulent 9 1,2 X=1
run s_base 1024 smooth 9 1,2 X=1
run s_sh6 1024 smooth 9 1,2 MULTIRES_CODEC_SHARES=6
run s_sh2 1024 smooth 9 1,2 MULTIRES_CODEC_SHARES=2
run s_yield 1024 smooth 9 1,2 MULTIRES_CUDA_WAIT=yield
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
