#!/bin/bash
# Session 56 call 3 (nvidia-h200-x2, carry [".gpu"]; about 400 s). Call 2 put the decode's 3-7 ms
# holds in `bulk_begin` (cudarc's `join`: an event made, recorded, waited on and destroyed each
# time); with the decoder on one stream (MULTIRES_CODEC_PRIORITY=encode) they were gone. This build
# orders a slot's two streams by two events made with the slot (`StreamOrder`). .gpu/multires_prev
# is call 2's build. One traced two-GPU run of the new build, two A/B rounds (prev, new, new with
# the decoder on one stream; one and two GPUs each), then the GPU tests and cli_check.sh.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
traced tr_new 1024 2 X=1
for i in 1 2; do
  M=.gpu/multires_prev run prev_$i 1024 turbulent 9 1,2 X=1
  run new_$i 1024 turbulent 9 1,2 X=1
  run pe_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_PRIORITY=encode
  say "elapsed $(elapsed)s"
done
gpu_checks
end_call
