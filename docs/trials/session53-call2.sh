#!/bin/bash
# Session 53 call 2 (nvidia-h100-x1, carry [".gpu"]; about 500 s with the start): the build whose
# RENC keeps its division multipliers in global memory (RRECIP makes them once a brick), four
# blocks an SM instead of three (.gpu/multires, .gpu/gpu_tests) runs the 16 GPU tests and
# cli_check.sh; RENC's own times and limits under ncu against the build before
# (.gpu/multires_prev, call 1's); one-GPU medians of the half and the whole, alternated; a
# timeline of the half.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
for b in multires multires_prev; do
  timeout 150 ncu --clock-control none -k regex:k_RENC --launch-skip 12 --launch-count 6 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__grid_size,launch__waves_per_multiprocessor \
    --csv .gpu/$b bench --config codec-3d --device cuda --codec-size 1024 --codec-depth 516 \
    --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 1 \
    --codec-field turbulent > /tmp/tr/ncu_$b.csv 2> /tmp/tr/ncu_$b.err
  say "ncu $b rc $?: $(grep -E 'gpu__time_duration|registers_per_thread|occupancy_limit|waves' /tmp/tr/ncu_$b.csv | awk -F'","' '{print $(NF-2)"="$NF}' | tr -d '"' | sort | uniq -c | tr '\n' ';')"
done
say "elapsed $(( $(date +%s) - T0 ))s"
for i in 1 2 3; do
  for sz in 516x1024 1024; do
    M=.gpu/multires run new_${sz}_$i $sz turbulent 9 1 X=1
    M=.gpu/multires_prev run prev_${sz}_$i $sz turbulent 9 1 X=1
  done
  say "elapsed $(( $(date +%s) - T0 ))s"
done
timeline tl_516x1024_new 516x1024 X=1
M=.gpu/multires_prev timeline tl_516x1024_prev 516x1024 X=1
cp $OUT/*.log /tmp/tr/; rm -f $OUT/*.log; tar czf $OUT/tr.tgz -C /tmp tr
say "total $(( $(date +%s) - T0 ))s"
