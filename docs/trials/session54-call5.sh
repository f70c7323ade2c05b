#!/bin/bash
# Session 54 call 5 (nvidia-h200-x2, carry [".gpu"]; the final build: `halve_last_large` by
# default, the taper removed; about 380 s with the start): the GPU tests and cli_check.sh on it,
# then the whole on one and two GPUs against session 53's final build (.gpu/multires_prev),
# alternated three times.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
gpu_checks
for i in 1 2 3; do
  M=.gpu/multires_prev run prev_$i 1024 turbulent 9 1,2 X=1
  run new_$i 1024 turbulent 9 1,2 X=1
  say "elapsed $(( $(date +%s) - T0 ))s"
done
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
