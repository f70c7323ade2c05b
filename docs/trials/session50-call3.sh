#!/bin/bash
# Session 50, call 3 (nvidia-h200-x2, carry [".gpu"], .gpu/ built from the reordered RPLAN commit):
# session 50 call 2's A/B after the lists' copies moved before RPLAN (the host's wait no longer
# waits for the plans: call 2's front turned later), then the GPU tests and cli_check. Plans on the device
# (the default) against plans on the host (MULTIRES_CODEC_RPLAN=host), alternated, one and two
# GPUs, and traced one-GPU spans of the half and the whole with each.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
run dev_1 1024 turbulent 9 1,2 X=1
run host_1 1024 turbulent 9 1,2 MULTIRES_CODEC_RPLAN=host
run dev_2 1024 turbulent 9 1,2 X=1
run host_2 1024 turbulent 9 1,2 MULTIRES_CODEC_RPLAN=host
for sz in 516x1024; do
  traced dev_$sz $sz 1 X=1
  traced host_$sz $sz 1 MULTIRES_CODEC_RPLAN=host
done
gpu_checks
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/dev_* /tmp/tr/host_* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
