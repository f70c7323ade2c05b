#!/bin/bash
# Session 51 call 6 (nvidia-h200-x2, carry [".gpu"] built with yielding waits as the default;
# about 330 s with the start): the 16 GPU tests and cli_check.sh on the final build, then the
# canonical bench (one process, 1 and 2 GPUs, resident and pinned rows).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
SECONDS=0
timeout 150 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields \
  --gpus 1,2 --resident --pinned --codec-rel 1e-3 --repeat 9 --codec-field turbulent > $OUT/final.log 2>&1
say "final bench rc $? in ${SECONDS}s: $(grep -E 'codec-3d (resident|slabs|pinned)' $OUT/final.log | sed -E 's/codec-3d (\w+) .*\| ([0-9]) GPU.*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \2: \3 \/ \4/; s/codec-3d (\w+) .*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1: \2 \/ \3/' | tr '\n' ';')"
say "total $(( $(date +%s) - T0 ))s"
