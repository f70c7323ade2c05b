#!/bin/bash
# Session 59 call 4 (nvidia-h200-x2, carry [".gpu"]): the final build. Call 3's build with a
# decode's rANS headers read on the slot's own (kept) thread by default (call 3, two processes
# each: one-GPU slabs decode 155.7 GB/s against 148.4 on the pool, two GPUs 266.2 against
# 256.3). The GPU tests and cli_check, then the default and MULTIRES_CODEC_HEADS=pool (call 3's
# default) alternated, a third time while the call is under 330 s.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
for i in 1 2 3; do
  if [ $i = 3 ] && [ $(elapsed) -gt 330 ]; then break; fi
  run slot_$i 1024 turbulent 9 1,2 X=1
  run pool_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_HEADS=pool
done
say "elapsed $(elapsed)s"
end_call
