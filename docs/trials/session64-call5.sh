#!/bin/bash
# Session 64 call 5 (nvidia-h200-x2, carry [".gpu"], HEAD's build with MULTIRES_BENCH_START_AT):
# session 62's pair in step at last. GPU 0's slab shape (516 planes) on GPU 0 and GPU 1's (508, the
# thin layer) on GPU 1, two processes whose timed runs all wait for one start time 30 s ahead, 40 runs
# each, after one process with both GPUs on the same machine (which makes the cached field). If the pairs' later runs match the one
# process, its loss against half of one GPU is GPU 1's slab and the device, not the process.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
RUN_LIMIT=80 run whole 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
say "whole decompress: $(python3 tools/device/tick_medians.py /tmp/tr/whole.err decompress)"
say "   compress: $(python3 tools/device/tick_medians.py /tmp/tr/whole.err compress)"
START=$(( $(date +%s%3N) + 30000 ))
slab() {
  CUDA_VISIBLE_DEVICES=$1 bench_to /tmp/tr/$2.log /tmp/tr/$2.err 70 $3 1 40 turbulent \
    MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_BENCH_START_AT=$START
  echo "slab $2 ($3 on GPU $1): rc $?" >> $OUT/summary.txt
}
slab 0 gpu0 516x1024 & slab 1 gpu1 508x1024 & wait
tail -2 $OUT/summary.txt
grep -h "codec-3d resident" /tmp/tr/gpu0.log /tmp/tr/gpu1.log | cut -c1-140 | tee -a $OUT/summary.txt
python3 tools/device/pair_ticks.py /tmp/tr/gpu0.err /tmp/tr/gpu1.err 2>&1 | tee -a $OUT/summary.txt
end_call
