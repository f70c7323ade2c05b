#!/bin/bash
# Session 61 call 2 (nvidia-h200-x2, about 420 s with the start; carry [".gpu"]: multires and
# gpu_tests built from HEAD). The GPU tests (tests/gpu.rs now opens its in-memory files through
# one helper), then how much of the two-GPU loss is the process's own today: one process with
# both GPUs (the CLI's default), and two processes in step, one GPU each (516 planes of 1024^2,
# MULTIRES_BENCH_ALIGN_MS=60), paired run by run by tools/device/pair_ticks.py. Session 47 (two
# H100s, an older build) found two processes in step lose 0.1-0.3 ms, one process about 1.1
# coding and 0.7 decoding. If the pairs' later runs beat one process's two-GPU rows by about a
# millisecond, the loss is still the process's; if not, what stands between 1.74x and 1.8x is the
# run's fixed part, which both ways carry.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
RUN_LIMIT=120 run whole_1 1024 turbulent 9 1,2 X=1
# The 516-plane field, made once before the two processes read it.
bench_to /tmp/tr/make516.log /tmp/tr/make516.err 90 516x1024 1 1 turbulent X=1
say "516-plane field: rc $?"
half() {
  CUDA_VISIBLE_DEVICES=$1 bench_to /tmp/tr/$2.log /tmp/tr/$2.err 90 516x1024 1 25 turbulent \
    MULTIRES_BENCH_ALIGN_MS=60
}
for i in 1 2; do
  half 0 stepA_$i & half 1 stepB_$i & wait
  say "in step $i: $(grep -E 'codec-3d (resident|slabs)' /tmp/tr/stepA_$i.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/' | tr '\n' ';') | $(grep -E 'codec-3d (resident|slabs)' /tmp/tr/stepB_$i.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/' | tr '\n' ';')"
  python3 tools/device/pair_ticks.py /tmp/tr/stepA_$i.err /tmp/tr/stepB_$i.err | tee -a $OUT/summary.txt
  RUN_LIMIT=60 run whole_$((i + 1)) 1024 turbulent 9 1,2 X=1
done
say "elapsed $(elapsed)s"
end_call
