#!/bin/bash
# Session 49 call 5 (nvidia-h200-x2, carry [".gpu"]): the GPU tests and cli_check on the final
# build (the host's gate again the default; the device's turns behind
# MULTIRES_CODEC_FRONT_WAIT=device), then the committed default against the device's turns
# with priorities off (call 4: with priorities on they starved the rANS kernels), 1024^3
# turbulent, medians of 9.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
run final_1 1024 turbulent 9 1,2 X=1
run devoff 1024 turbulent 9 1,2 MULTIRES_CODEC_FRONT_WAIT=device MULTIRES_CODEC_PRIORITY=off
run final_2 1024 turbulent 9 1,2 X=1
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
