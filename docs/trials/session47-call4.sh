#!/bin/bash
# Session 47 call 4 (nvidia-h200-x2, carry [".gpu"]): call 3's traces put the in-process loss in
# the two-GPU head (1.9-2.0 ms from the run's start to its first batch, against 1.3 for one GPU's
# half alone: 0.6-0.7 ms from the plan to the first batch, 0.3 alone) and left the last batch's
# 1.7-1.8 ms after RCOPY (outliers, checksums, the copy down) unexplained. This build marks the
# head's steps (shares, each GPU's coding thread, budget, batches, slot threads) and the tail's
# (r_olists, r_crc_queued, r_buf, r_down_queued); a timeline run shows the tail on the device.
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=.gpu/multires
say() { echo "$@" | tee -a $OUT/summary.txt; }
mkdir -p /tmp/logs
whole() { env $2 timeout 150 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat $3 --codec-field turbulent > /tmp/logs/$1.log 2>/tmp/logs/$1.err; say "$1 ($2) rc $? $(grep -oE '(resident|slabs) .*' /tmp/logs/$1.log | grep -o 'compress [0-9.]* s = [0-9.]* GB/s' | tr '\n' ' ')"; }
SECONDS=0
whole whole_tr "MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_TRACE=1" 9
whole whole_tl "MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_TIMELINE=1" 3
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
