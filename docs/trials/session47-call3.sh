#!/bin/bash
# Session 47 call 3 (nvidia-h200-x2, carry [".gpu"]): call 2 found two processes in step lose
# nothing coding (20.5-20.8 ms each, alone 20.6-20.8), where two GPUs of one process take 21.5.
# Is that the slower GPU of each run (a run of two GPUs ends with its later one), or something
# the process shares? Untraced: both halves in step with each run's tick (pair the runs, take
# the later of each pair). Traced (MULTIRES_CODEC_TRACE): the same halves, and two GPUs of one
# process, for each batch's host stages side by side.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=.gpu/multires
say() { echo "$@" | tee -a $OUT/summary.txt; }
mkdir -p /tmp/logs
half() { CUDA_VISIBLE_DEVICES=$1 env $3 timeout 150 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-depth 516 --codec-field-cache /tmp/fields --gpus 1 --resident --codec-rel 1e-3 --repeat $4 --codec-field turbulent > /tmp/logs/$2.log 2>/tmp/logs/$2.err; say "$2 ($3) rc $? $(grep -o 'resident .*' /tmp/logs/$2.log | grep -o '[0-9.]* s = [0-9.]* GB/s' | tr '\n' ' ')"; }
whole() { env $2 timeout 150 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat $3 --codec-field turbulent > /tmp/logs/$1.log 2>/tmp/logs/$1.err; say "$1 ($2) rc $? $(grep -o 'slabs .*' /tmp/logs/$1.log | grep -o '[0-9.]* s = [0-9.]* GB/s' | tr '\n' ' ')"; }
SECONDS=0
A=MULTIRES_BENCH_ALIGN_MS=60
whole whole_ticks $A 20
half 0 step0 $A 40 & half 1 step1 $A 40 & wait
T="MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_TRACE=1"
half 0 tr0 "$T" 9 & half 1 tr1 "$T" 9 & wait
whole whole_tr "$T" 9
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
