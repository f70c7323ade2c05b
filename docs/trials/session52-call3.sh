#!/bin/bash
# Session 52 call 3 (nvidia-h200-x2, carry [".gpu"]; about 500 s with the start): the build with the
# tables written straight into the stage and the faster rans::plan (.gpu/multires, .gpu/gpu_tests)
# runs the 16 GPU tests and cli_check.sh, then the canonical bench (1024^3 turbulent, rel 1e-3, one
# and two GPUs) alternated against main before the session (.gpu/multires_main, ec4f689).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
for i in 1 2 3; do
  M=.gpu/multires run new_$i 1024 turbulent 9 1,2 X=1
  M=.gpu/multires_main run main_$i 1024 turbulent 9 1,2 X=1
  say "elapsed $(( $(date +%s) - T0 ))s"
done
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
