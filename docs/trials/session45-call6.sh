#!/bin/bash
# Session 45, call 6 (nvidia-h200-x2, carry [".gpu"]): the head of a slab run. Call 4's traces put
# 2.4 ms before two GPUs' first batch (range 1.2, density sample 0.3-0.4, 0.7 to start) against
# 19.2 ms of batches. RANGE now reads float4s, its three results come back in one copy, and the
# slab's sample rows are copied on the device beside them (one read-back). .gpu/multires_prev is
# call 5's build (checksums on the device). Interleaved A/B at 1024^3, then the 15 GPU tests and
# cli_check on the new build.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
run t_new 1024 turbulent 3 1,2 X=1
M=.gpu/multires_prev run t_prev 1024 turbulent 3 1,2 X=1
run t_new2 1024 turbulent 3 1,2 X=1
run s_new 1024 smooth 3 1,2 X=1
M=.gpu/multires_prev run s_prev 1024 smooth 3 1,2 X=1
say "benches ${SECONDS}s"
gpu_checks
