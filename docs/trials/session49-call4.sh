#!/bin/bash
# Session 49 call 4 (nvidia-h200-x2, carry [".gpu"]): the GPU tests and cli_check on the
# device-ordered front (a batch's transform waits on the device, by an event, for the
# histogram of the batch two turns before; MULTIRES_CODEC_FRONT_WAIT=host keeps the host's
# gate), then A/B medians of 9 on 1024^3 turbulent (one GPU resident and slabs, two GPUs),
# alternated, a smooth pair, and one traced half-field run on the device front.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
for k in 1 2; do
  run host_$k 1024 turbulent 9 1,2 MULTIRES_CODEC_FRONT_WAIT=host
  run dev_$k 1024 turbulent 9 1,2 X=1
done
run s_host 1024 smooth 9 1,2 MULTIRES_CODEC_FRONT_WAIT=host
run s_dev 1024 smooth 9 1,2 X=1
MULTIRES_CODEC_TRACE=1 timeout 120 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-depth 516 \
  --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 5 \
  --codec-field turbulent > /tmp/tr/trd_half.log 2> /tmp/tr/trd_half.err
say "trace half (device front) rc $? | $(grep -E 'codec-3d resident' /tmp/tr/trd_half.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/')"
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/trd_* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
