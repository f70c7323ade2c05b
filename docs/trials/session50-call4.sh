#!/bin/bash
# Session 50, call 4 (nvidia-h200-x2, carry [".gpu"], .gpu/ built after the host's plans became
# the default again; in calls 2-3 the device's were). The GPU tests and cli_check on the final
# default, then the host's plans against the device's with stream priorities off (RENC, queued at
# once under RPLAN, no longer below the transforms), alternated.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
run host_1 1024 turbulent 9 1,2 X=1
run devp_1 1024 turbulent 9 1,2 MULTIRES_CODEC_RPLAN=device MULTIRES_CODEC_PRIORITY=off
run host_2 1024 turbulent 9 1,2 X=1
run devp_2 1024 turbulent 9 1,2 MULTIRES_CODEC_RPLAN=device MULTIRES_CODEC_PRIORITY=off
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
