#!/bin/bash
# Session 52 call 4 (nvidia-h200-x2, carry [".gpu"]; about 450 s with the start): more alternated
# processes of call 3's pair (the same binaries: this session's build against ec4f689), for medians
# that the machine's spread cannot move: six processes each.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
for i in 1 2 3 4 5 6; do
  M=.gpu/multires run new_$i 1024 turbulent 9 1,2 X=1
  M=.gpu/multires_main run main_$i 1024 turbulent 9 1,2 X=1
  say "elapsed $(( $(date +%s) - T0 ))s"
  [ $(( $(date +%s) - T0 )) -gt 470 ] && break
done
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
