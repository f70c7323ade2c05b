#!/bin/bash
# Session 53 call 1 (nvidia-h100-x1, carry [".gpu"]; about 450 s with the start): the build whose
# slot thread makes its batch's rANS plans itself, helped by pool workers as they wake
# (`pull_plans`, the default now; MULTIRES_CODEC_PLANS=pool is the old way) runs the 16 GPU tests
# and cli_check.sh; then device timelines and host traces of the half (516 planes, two GPUs' share)
# with either way, alternated, for the last chain's host step; then one-GPU medians of the half and
# the whole, alternated.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
gpu_checks
for i in 1 2; do
  for v in pull pool; do
    timeline tl_516x1024_${v}_$i 516x1024 MULTIRES_CODEC_PLANS=$v
    traced tr_516x1024_${v}_$i 516x1024 1 MULTIRES_CODEC_PLANS=$v
  done
done
say "elapsed $(( $(date +%s) - T0 ))s"
for i in 1 2; do
  for sz in 516x1024 1024; do
    run pull_${sz}_$i $sz turbulent 9 1 MULTIRES_CODEC_PLANS=pull
    run pool_${sz}_$i $sz turbulent 9 1 MULTIRES_CODEC_PLANS=pool
  done
  say "elapsed $(( $(date +%s) - T0 ))s"
done
cp $OUT/*.log /tmp/tr/; rm -f $OUT/*.log; tar czf $OUT/tr.tgz -C /tmp tr
say "total $(( $(date +%s) - T0 ))s"
