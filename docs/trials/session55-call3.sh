#!/bin/bash
# Session 55 call 3 (nvidia-h200-x2, carry [".gpu"] with .gpu/multires = this session's final
# build, .gpu/multires_base = 49cac6d (session 54's); about 520 s). The GPU code changed
# (table_addresses, each payload's length once, DeviceFront only when on; the taper knob of call
# 2 removed): the GPU tests and cli_check.sh, then the whole on one and two GPUs against
# 49cac6d, alternated three times. Then, as data for the decode's two-GPU loss: two processes
# with four batches a slab (MULTIRES_CODEC_SHARES=4; call 1 swept 6-12), and each slab alone
# traced (516 and 508 planes), as far as time allows.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
gpu_checks
for i in 1 2 3; do
  run new_$i 1024 turbulent 9 1,2 X=1
  M=.gpu/multires_base run base_$i 1024 turbulent 9 1,2 X=1
  say "elapsed $(( $(date +%s) - T0 ))s"
done
for i in 1 2; do
  [ $(( $(date +%s) - T0 )) -gt 440 ] && break
  run sh4_$i 1024 turbulent 9 2 MULTIRES_CODEC_SHARES=4
done
for d in 516 508; do
  [ $(( $(date +%s) - T0 )) -gt 480 ] && break
  traced tr_$d ${d}x1024 1 X=1
done
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; cp /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
