#!/bin/bash
# Session 49 call 2 (nvidia-h200-x2, carry [".gpu"]): the slab head's fix (call 1's failed GPU
# test: the plan took every GPU's head while other threads still checked for them) and
# MULTIRES_CODEC_TAPER as a ratio (a batch halved while it holds more than taper/2 times the
# values coded after it). First the failed test alone, then traced one-GPU runs of the half
# (516 planes) and whole field at taper 0/2/3 (the tail after the last transform read from the
# traces), then two-GPU medians of 9 at taper 0/2/3, alternated.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
MULTIRES_REQUIRE_GPU=1 timeout 200 .gpu/gpu_tests --test-threads 1 codec_on_a_device_resident_or_pinned > $OUT/gpu_one.log 2>&1
say "gpu test (slabs): rc $? | $(grep 'test result' $OUT/gpu_one.log)"
for sz in 516x1024 1024; do
  for tp in 0 2 3; do
    d=(); n=$sz; [[ $sz == *x* ]] && { d=(--codec-depth ${sz%x*}); n=${sz#*x}; }
    MULTIRES_CODEC_TAPER=$tp MULTIRES_CODEC_TRACE=1 timeout 120 $M bench --config codec-3d --device cuda --codec-size $n "${d[@]}" \
      --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 5 \
      --codec-field turbulent > /tmp/tr/tr_${sz}_$tp.log 2> /tmp/tr/tr_${sz}_$tp.err
    say "trace $sz taper $tp rc $? | $(grep -E 'codec-3d resident' /tmp/tr/tr_${sz}_$tp.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/')"
  done
done
for k in 1 2; do
  for tp in 0 2 3; do run t${tp}_$k 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=$tp; done
done
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/tr_* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
