#!/bin/bash
# For session 65's first call (nvidia-h200-x2, carry [".gpu"]; about 560 s with the start). Needs
# .gpu/multires and .gpu/gpu_tests built from HEAD with docs/trials/session64-lead-batch.patch
# applied (`git apply`; the trial knob MULTIRES_CODEC_LEAD_BRICKS, off by default: the GPU crate
# changes, so the GPU tests run first). Checked with bash -n only.
# 1. The GPU tests and cli_check.
# 2. The lead batch (`lead_batch`): one binary, the knob off and at one brick, alternated, four pairs
#    at turbulent 1024^3. Predicted: GPU 0's slab (no batch under 7.6 M values) starts its first
#    inverse ~0.7 ms sooner; two GPUs at most 0.3 ms faster decoding, one GPU unchanged (the whole
#    field has a batch of one brick, so nothing is cut there).
# 3. If time is left, the pair in step of the two slab shapes with a common start a minute ahead
#    (MULTIRES_BENCH_START_AT; GPU 1's process needed over 30 s in session 64's call 5).
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
for i in 1 2 3 4; do
  RUN_LIMIT=100 run off_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  RUN_LIMIT=100 run lead_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_LEAD_BRICKS=1
  [ $(elapsed) -gt 440 ] && break
done
for f in /tmp/tr/off_*.err /tmp/tr/lead_*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
done
if [ $(elapsed) -lt 420 ]; then
  START=$(( $(date +%s%3N) + 60000 ))
  slab() {
    CUDA_VISIBLE_DEVICES=$1 bench_to /tmp/tr/$2.log /tmp/tr/$2.err 100 $3 1 40 turbulent \
      MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_BENCH_START_AT=$START
    echo "slab $2 ($3 on GPU $1): rc $?" >> $OUT/summary.txt
  }
  slab 0 gpu0 516x1024 & slab 1 gpu1 508x1024 & wait
  python3 tools/device/pair_ticks.py /tmp/tr/gpu0.err /tmp/tr/gpu1.err 2>&1 | tee -a $OUT/summary.txt
fi
say "elapsed $(elapsed)s"
end_call
