#!/bin/bash
# Session 52 call 5 (nvidia-h200-x2, carry [".gpu"]; at most about 400 s with the start): call 3's
# and call 4's pair again (this session's build against ec4f689, the binaries GPU-tested in call 3),
# alternated, as many pairs as fit the session's last device time.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
for i in 1 2 3 4 5; do
  M=.gpu/multires run new_$i 1024 turbulent 9 1,2 X=1
  M=.gpu/multires_main run main_$i 1024 turbulent 9 1,2 X=1
  say "elapsed $(( $(date +%s) - T0 ))s"
  [ $(( $(date +%s) - T0 )) -gt 270 ] && break
done
say "total $(( $(date +%s) - T0 ))s"
