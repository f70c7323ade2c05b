#!/bin/bash
# Session 53 call 5 (nvidia-h200-x2, carry [".gpu"]; about 370 s with the start): call 4 found GPU
# 0's slab (516 planes, ending in two 56 M batches) 0.9 ms slower alone than GPU 1's (508, ending
# in the thin layer's small batches). Tapered tails (MULTIRES_CODEC_TAPER=2: a GPU's last batches
# halved while larger than what follows) on the 516-plane half and on one and two GPUs,
# alternated with the default; then the GPU tests with the taper set, in case it becomes the
# default.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
for i in 1 2; do
  run half516_t0_$i 516x1024 turbulent 9 1 X=1
  run half516_t2_$i 516x1024 turbulent 9 1 MULTIRES_CODEC_TAPER=2
  run two_t0_$i 1024 turbulent 9 1,2 X=1
  run two_t2_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=2
  say "elapsed $(( $(date +%s) - T0 ))s"
done
SECONDS=0
MULTIRES_CODEC_TAPER=2 MULTIRES_REQUIRE_GPU=1 timeout 170 .gpu/gpu_tests --test-threads 1 > $OUT/gpu_tests_taper2.log 2>&1
say "gpu tests (taper 2): rc $? in ${SECONDS}s | $(grep 'test result' $OUT/gpu_tests_taper2.log)"
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/; rm -f $OUT/*.log; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
