#!/bin/bash
# For the session after 46 (nvidia-h200-x2, carry [".gpu"]; about 420 s with the start).
# Before the call: `git apply docs/trials/session46-gpu-pools.patch`, `cargo build --release`,
# `cargo test --release --no-run -p multires-cuda --test gpu`; copy target/release/multires to
# .gpu/multires and the gpu test binary to .gpu/gpu_tests, and keep the committed build as
# .gpu/multires_prev. The call runs the GPU tests with a rayon pool a GPU
# (MULTIRES_CODEC_GPU_POOL=16, the patch's knob), then interleaved A/B against the committed
# build, medians of 9, 1024^3 turbulent and smooth.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
MULTIRES_CODEC_GPU_POOL=16 gpu_checks
P=.gpu/multires_prev
M=$P run t_prev 1024 turbulent 9 1,2 X=1
run t_pool16 1024 turbulent 9 1,2 MULTIRES_CODEC_GPU_POOL=16
run t_pool32 1024 turbulent 9 1,2 MULTIRES_CODEC_GPU_POOL=32
M=$P run t_prev2 1024 turbulent 9 1,2 X=1
run t_pool16b 1024 turbulent 9 1,2 MULTIRES_CODEC_GPU_POOL=16
M=$P run s_prev 1024 smooth 9 1,2 X=1
run s_pool16 1024 smooth 9 1,2 MULTIRES_CODEC_GPU_POOL=16
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
