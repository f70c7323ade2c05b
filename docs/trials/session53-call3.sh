#!/bin/bash
# Session 53 call 3 (nvidia-h200-x2, carry [".gpu"]; about 550 s with the start): the build whose
# decoder writes its rANS tables straight into the upload (.gpu/multires, .gpu/gpu_tests; the
# coder as in session 52) runs the 16 GPU tests (two GPUs visible) and cli_check.sh; then
# alternated processes of it and of the build before (.gpu/multires_prev: session 52's code, the
# session's first two changes reverted), one and two GPUs each, for the decode and for more
# processes of the ratio.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
gpu_checks
for i in 1 2 3 4 5 6; do
  M=.gpu/multires run new_$i 1024 turbulent 9 1,2 X=1
  M=.gpu/multires_prev run prev_$i 1024 turbulent 9 1,2 X=1
  say "elapsed $(( $(date +%s) - T0 ))s"
  [ $(( $(date +%s) - T0 )) -gt 500 ] && break
done
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
