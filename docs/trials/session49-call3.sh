#!/bin/bash
# Session 49 call 3 (nvidia-h200-x2, carry [".gpu"]): where a two-GPU compression loses against
# one GPU's half alone (call 2 on two H200s: half alone 17.0 ms of batches + 0.8 head, two GPUs
# at best 19.5 ms in all). Traced two-GPU runs (slabs only, --gpus 2), then one GPU's half.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
for k in 1 2; do
  MULTIRES_CODEC_TRACE=1 timeout 120 $M bench --config codec-3d --device cuda --codec-size 1024 \
    --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat 7 \
    --codec-field turbulent > /tmp/tr/tr2_$k.log 2> /tmp/tr/tr2_$k.err
  say "trace 2 GPUs rc $? | $(grep -E 'codec-3d (resident|slabs)' /tmp/tr/tr2_$k.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/' | tr '\n' ' ')"
done
MULTIRES_CODEC_TRACE=1 timeout 120 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-depth 516 \
  --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 7 \
  --codec-field turbulent > /tmp/tr/tr1_half.log 2> /tmp/tr/tr1_half.err
say "trace half rc $? | $(grep -E 'codec-3d resident' /tmp/tr/tr1_half.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/')"
nproc; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tee -a $OUT/summary.txt
mkdir -p /tmp/logs && cp /tmp/tr/tr* /tmp/logs/ 2>/dev/null
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
