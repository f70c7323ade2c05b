#!/bin/bash
# Session 59 call 3 (nvidia-h200-x2, carry [".gpu"]): the final build. Slot threads kept from run
# to run (src/workers.rs, the default; MULTIRES_CODEC_WORKERS=spawn the old way), the device's
# checksums dropped (calls 1-2: two-GPU decode 258.6 GB/s against 257.0 with the host's, one GPU
# 144.5 against 148.0), ISTEP's zero-bound step from the host. The GPU tests and cli_check, then
# kept, spawned and kept with the rANS headers read on the slot threads (HEADS=slot)
# alternated twice.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
for i in 1 2; do
  run kept_own_$i 1024 turbulent 9 1,2 X=1
  run spawn_own_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_WORKERS=spawn
  run kept_heads_slot_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_HEADS=slot
done
say "elapsed $(elapsed)s"
end_call
