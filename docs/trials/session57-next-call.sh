#!/bin/bash
# For the session after 57 (nvidia-h200-x2, about 160 s with the start; carry [".gpu"] with
# .gpu/multires and .gpu/gpu_tests built from main; no GPU tests owed: the final build's passed
# in session 57 call 6). Is the two-GPU process's ~1.3 ms the driver? `tools/device/launch_rate.cu`
# (new, never run: built against a stub header here) times three driver calls a decode's slot
# threads make (a kernel launch; an event made, recorded, waited on and destroyed, as cudarc's
# `join`; a small async copy up) from 13 threads on one GPU, 26 on one GPU, and 13 on each of two.
# If a thread's rate on two GPUs falls well under its rate with 26 threads on one, the driver is
# shared across contexts, and fewer calls a batch (a graph or fused passes for the inverse's ~22
# launches) is the lead; if not, look elsewhere. Then two plain processes for the ratio.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
nvcc -O2 -o /tmp/launch_rate tools/device/launch_rate.cu -lcuda > $OUT/launch_rate_build.log 2>&1
say "launch_rate build rc $?"
timeout 120 /tmp/launch_rate 20000 > $OUT/launch_rate.log 2>&1
say "launch_rate rc $?"; cat $OUT/launch_rate.log >> $OUT/summary.txt
for i in 1 2; do run def_$i 1024 turbulent 9 1,2 X=1; done
end_call
