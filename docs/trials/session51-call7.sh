#!/bin/bash
# Session 51 call 7 (nvidia-h200-x2, carry [".gpu"]; about 470 s with the start): the final build
# (.gpu/multires, .gpu/gpu_tests: yielding waits by default, on_every_gpu's threads start together)
# runs the 16 GPU tests and cli_check.sh, then the canonical bench alternated against session
# 50's final build (.gpu/multires_b0, c468d4d: blocking waits, no barrier) and the final build
# with MULTIRES_CUDA_WAIT=block (the barrier alone).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
for i in 1 2; do
  M=.gpu/multires run new_$i 1024 turbulent 9 1,2 X=1
  M=.gpu/multires_b0 run b0_$i 1024 turbulent 9 1,2 X=1
  M=.gpu/multires run block_$i 1024 turbulent 9 1,2 MULTIRES_CUDA_WAIT=block
done
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
