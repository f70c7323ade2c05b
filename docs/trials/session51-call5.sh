#!/bin/bash
# Session 51 call 5 (nvidia-h200-x2, carry [".gpu"] built from c468d4d; about 330 s with the start).
# Call 4 (two processes each) had yielding waits (MULTIRES_CUDA_WAIT=yield) ahead on two GPUs
# (230-233 GB/s against 216-225) and on one (resident 131-133 against 127-130); session 49 saw no
# difference on H100s. Three more processes of each, alternated, with the pinned (streaming) rows
# too, before the default could change: compress / decompress GB/s per row.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
mkdir -p /tmp/logs
for i in 1 2 3; do
  for w in block yield; do
    SECONDS=0
    MULTIRES_CUDA_WAIT=$w timeout 120 $M bench --config codec-3d --device cuda --codec-size 1024 \
      --codec-field-cache /tmp/fields --gpus 1,2 --resident --pinned --codec-rel 1e-3 --repeat 7 \
      --codec-field turbulent > /tmp/logs/${w}_$i.log 2>/dev/null
    say "== $w $i rc $? in ${SECONDS}s: $(grep -E 'codec-3d (resident|slabs|pinned)' /tmp/logs/${w}_$i.log | sed -E 's/codec-3d (\w+) .*\| ([0-9]) GPU.*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \2: \3 \/ \4/; s/codec-3d (\w+) .*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1: \2 \/ \3/' | tr '\n' ';')"
  done
done
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
