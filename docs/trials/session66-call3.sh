#!/bin/bash
# Session 66, call 3 (nvidia-h200-x2, carry [".gpu"]: .gpu/multires and .gpu/gpu_tests built with
# the ramp and with on_every_gpu on kept threads, both on by default). Call 2's traces: a two-GPU
# run's GPU threads (spawned for each run) begin 0.3 ms after the call, before the range (coding)
# or the slots (decoding); one GPU's resident path spawns none. Predicted: both two-GPU rows
# 0.2-0.3 ms faster, one GPU (resident) the same. Alternated plain pairs (kept, and
# MULTIRES_CODEC_GPU_THREADS=spawn), one traced process (the slabs plan's thread marks), then the
# GPU tests and cli_check on this build.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  RUN_LIMIT=100 run kept_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  RUN_LIMIT=100 run spawn_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_GPU_THREADS=spawn
  [ $(elapsed) -gt 220 ] && break
done
say_ticks /tmp/tr/kept_*.err /tmp/tr/spawn_*.err
BENCH_LIMIT=80 bench_one tr_kept 1024 2 MULTIRES_CODEC_TRACE=1 MULTIRES_BENCH_ALIGN_MS=60
say "tr_kept rc $?: $(python3 tools/device/slab_ends.py /tmp/tr/tr_kept.err)"
say "$(grep 'trace slabs plan' /tmp/tr/tr_kept.err | tail -3 | cut -c1-120)"
say "elapsed before tests $(elapsed)s"
[ $(elapsed) -lt 380 ] && gpu_checks
end_call
