#!/bin/bash
# Session 46, call 7 (nvidia-h200-x2, carry [".gpu"]): a rayon pool a GPU
# (docs/trials/session46-gpu-pools.patch, built as .gpu/multires_pools; knob
# MULTIRES_CODEC_GPU_POOL=N threads a GPU) against the committed build, 1024^3 turbulent,
# medians of 9. Call 6 put two GPUs' loss to each other inside the process.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
P=.gpu/multires_pools
run t_base 1024 turbulent 9 1,2 X=1
M=$P run t_pool32 1024 turbulent 9 1,2 MULTIRES_CODEC_GPU_POOL=32
M=$P run t_pool16 1024 turbulent 9 1,2 MULTIRES_CODEC_GPU_POOL=16
run t_base2 1024 turbulent 9 1,2 X=1
rm -f $OUT/*.log
say "total ${SECONDS}s"
