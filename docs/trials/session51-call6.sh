#!/bin/bash
# Session 51 call 6 (nvidia-h200-x2, carry [".gpu"]: 1b9315a plus head marks; about 120 s with the
# start). Two GPUs reach their ranges 0.9-1.0 ms after the run begins, one GPU its half's 0.6-0.7:
# where do the 0.3 ms go (thread start, the range's launch and rows, the read back)? Traced runs of
# both, with marks at each GPU thread's start and around the range's read.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
traced two_1024 1024 1,2 X=1
mkdir -p /tmp/logs && cp /tmp/tr/two_* /tmp/logs/; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
