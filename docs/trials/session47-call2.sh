#!/bin/bash
# Session 47 call 2 (nvidia-h200-x2, carry [".gpu"]): is the 0.7-2.3 ms two GPUs of one process
# lose to each other (session 46) the process, or the two GPUs' heads and tails falling at the
# same instant? Session 46's two processes ran their loops at once but out of step, and lost
# 0.1-0.3 ms. Here each timed run starts on a 60 ms tick of the wall clock
# (MULTIRES_BENCH_ALIGN_MS, the bench's knob), so two processes run in step as two GPUs of one
# process do. Each GPU codes 516 planes of the turbulent 1024^3 field, resident, medians of 60.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=.gpu/multires
say() { echo "$@" | tee -a $OUT/summary.txt; }
half() { CUDA_VISIBLE_DEVICES=$1 env $3 timeout 150 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-depth 516 --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat 60 --codec-field turbulent > $OUT/$2.log 2>&1; say "$2 ($3) rc $? $(grep -o 'resident .*' $OUT/$2.log | grep -o '[0-9.]* s = [0-9.]* GB/s' | tr '\n' ' ')"; }
SECONDS=0
A=MULTIRES_BENCH_ALIGN_MS=60
half 0 alone0 $A
half 1 alone1 $A
half 0 both0 $A & half 1 both1 $A & wait
half 0 free0 X=1 & half 1 free1 X=1 & wait
half 0 both0b $A & half 1 both1b $A & wait
half 0 alone0b $A
source tools/device/codec_ab.sh
run full_aligned 1024 turbulent 9 1,2 $A
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
