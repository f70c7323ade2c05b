#!/bin/bash
# Session 51 call 4 (nvidia-h200-x2, carry [".gpu"] built from c468d4d; about 260 s with the start).
# Call 3's timeline: the half's last batch waits on the host about 1.3 ms of its 3.5 ms chain
# (plan, lists, layout, each after a thread wake-up under blocking sync), while the whole's tail
# is bound by the copy engine (the last 6 ms move 326 MB down). Waking faster should help two GPUs
# (a half each) more than one: MULTIRES_CUDA_WAIT=yield and spin against the default, alternated.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
run def_1 1024 turbulent 9 1,2 X=1
run yield_1 1024 turbulent 9 1,2 MULTIRES_CUDA_WAIT=yield
run spin_1 1024 turbulent 9 1,2 MULTIRES_CUDA_WAIT=spin
run def_2 1024 turbulent 9 1,2 X=1
run yield_2 1024 turbulent 9 1,2 MULTIRES_CUDA_WAIT=yield
run spin_2 1024 turbulent 9 1,2 MULTIRES_CUDA_WAIT=spin
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
