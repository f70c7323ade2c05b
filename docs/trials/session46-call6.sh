#!/bin/bash
# Session 46, call 6 (nvidia-h200-x2, carry [".gpu"]): is the 0.7-2.3 ms two GPUs lose to each
# other (call 5) inside the process? Each GPU codes its half (516 planes of the 1024^3 turbulent
# field, resident, medians of 100) in a process of its own: alone, then both processes at once
# (their timed loops of about 2 s each overlap). Equal times alone and at once put the loss in
# the process (threads, rayon pool, driver); slower at once puts it in the machine.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=.gpu/multires
half() { CUDA_VISIBLE_DEVICES=$1 timeout 150 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-depth 516 --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 100 --codec-field turbulent > $OUT/$2.log 2>&1; echo "$2 rc $? $(grep -o 'resident .*' $OUT/$2.log | grep -o '[0-9.]* GB/s' | tr '\n' ' ')" >> $OUT/summary.txt; }
SECONDS=0
half 0 alone0
half 1 alone1
half 0 both0 & half 1 both1 & wait
half 0 alone0b
echo "total ${SECONDS}s" >> $OUT/summary.txt
cat $OUT/summary.txt
