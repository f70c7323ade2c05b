#!/bin/bash
# Session 54 call 2 (nvidia-h200-x2, carry [".gpu"]; session 53's final build, no GPU tests owed;
# about 330 s with the start): do tapered tails lose on two GPUs because ~30 slot threads
# yield-wait on 32 cores beside the rayon pool? The whole on one and two GPUs, four settings
# alternated twice: default, blocking waits, taper 2, taper 2 with blocking waits.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
say "cores: $(nproc)"
for i in 1 2; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run block_$i 1024 turbulent 9 1,2 MULTIRES_CUDA_WAIT=block
  run t2_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=2
  run t2block_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=2 MULTIRES_CUDA_WAIT=block
  say "elapsed $(( $(date +%s) - T0 ))s"
done
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; cp /tmp/tr/*.err /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
