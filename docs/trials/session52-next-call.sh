#!/bin/bash
# For the session after 52 (nvidia-h100-x1, carry [".gpu"] with .gpu/multires from main at the
# session's end; no GPU tests owed: session 52's final build passed them in its call 3; about
# 250 s with the start): where the half's last chain waits now. Device timelines and host trace
# marks (MULTIRES_CODEC_TRACE=1) of the half and the whole on one GPU, with yielding and with
# blocking waits, so the host's 0.8 ms between the histogram and the lists' copy can be split
# into the slot thread's wake-up, the pool's plans and the lists.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
for sz in 516x1024 1024; do
  timeline tl_${sz} $sz X=1
  timeline tl_${sz}_block $sz MULTIRES_CUDA_WAIT=block
  timeline tr_${sz} $sz MULTIRES_CODEC_TRACE=1
done
tar czf $OUT/tr.tgz -C /tmp tr
say "total $(( $(date +%s) - T0 ))s"
