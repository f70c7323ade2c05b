#!/bin/bash
# Session 66, call 2 (nvidia-h200-x2, carry [".gpu"]: .gpu/multires and .gpu/gpu_tests built with
# ramp_batches on by default). Call 1's traces: GPU 1's four small batches (16 thin bricks, 33 M
# values) are decoded by 2.5-3.8 ms, while both GPUs' large batches wait for their slots' headers
# until 3-4 ms; GPU 0's slab has one small batch (7.6 M) and ends ~1 ms after GPU 1's. The ramp
# cuts batches of 8, 4, 2 and 1 bricks (32 M values) off GPU 0's first batch; one GPU's plan and
# GPU 1's are unchanged. Predicted: the lag shrinks to ~0.3 ms and the two-GPU decode gains up to
# ~0.7 ms (ratio +3-4%); one GPU the same. Alternated plain pairs (ramp, MULTIRES_CODEC_RAMP=off),
# one traced process each (slab_ends.py), then the GPU tests and cli_check on this build.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  RUN_LIMIT=100 run ramp_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  RUN_LIMIT=100 run off_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_RAMP=off
  [ $(elapsed) -gt 200 ] && break
done
say_ticks /tmp/tr/ramp_*.err /tmp/tr/off_*.err
for q in ramp off; do
  extra=(X=1); [ $q = off ] && extra=(MULTIRES_CODEC_RAMP=off)
  BENCH_LIMIT=80 bench_one tr_$q 1024 2 MULTIRES_CODEC_TRACE=1 MULTIRES_BENCH_ALIGN_MS=60 "${extra[@]}"
  say "tr_$q rc $?: $(python3 tools/device/slab_ends.py /tmp/tr/tr_$q.err)"
done
say "elapsed before tests $(elapsed)s"
[ $(elapsed) -lt 360 ] && gpu_checks
end_call
