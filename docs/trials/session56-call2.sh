#!/bin/bash
# Session 56 call 2 (nvidia-h200-x2, carry [".gpu"]; about 330 s). Call 1's traced two-GPU decodes
# showed a batch's thread held 3-7 ms between `d_rdec_fn` and `d_decode` (the RDEC launch), against
# at most 1.4 ms on one GPU. This build marks the steps between (`d_rdec_bulk` after the bulk
# stream's join, `d_rdec_launched` after the launch) and times the decoded slab's allocation
# ("trace field"). Traced two-GPU runs: default, the decoder on one stream a slot
# (MULTIRES_CODEC_PRIORITY=encode), blocking waits (MULTIRES_CUDA_WAIT=block); then two A/B rounds
# of the three, one and two GPUs each.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for c in "tr_def X=1" "tr_pe MULTIRES_CODEC_PRIORITY=encode" "tr_blk MULTIRES_CUDA_WAIT=block"; do
  set -- $c
  traced $1 1024 2 $2
done
say "elapsed $(elapsed)s"
for i in 1 2; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run pe_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_PRIORITY=encode
  run blk_$i 1024 turbulent 9 1,2 MULTIRES_CUDA_WAIT=block
  say "elapsed $(elapsed)s"
done
end_call
