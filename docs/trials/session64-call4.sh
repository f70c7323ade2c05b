#!/bin/bash
# Session 64 call 4 (nvidia-h200-x2, carry [".gpu"], HEAD's build): where two GPUs' decode loses its
# 2 ms against half of one GPU's. Device timelines (events from each GPU's own first one) of the
# whole field on one and two GPUs (one process, rows resident, slabs 1, slabs 2) and of the lone half
# (516 planes) on one GPU; one plain process for the wall-clock ticks on the same machine. Compare each
# GPU's span (first event to last) with the run's wall time: what is left is the host's before the
# first event and after the last, and the GPUs' skew. Then the pair in step of the two slab shapes,
# 40 runs each, with each process's exit status (calls 1 of sessions 63 and 64 lost GPU 1's output).
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
TL_GPUS=1,2 BENCH_LIMIT=100 timeline tl_whole 1024
python3 tools/device/timeline_summary.py /tmp/tr/tl_whole.err > $OUT/tl_whole.txt 2>&1
BENCH_LIMIT=60 timeline tl_half 516x1024
python3 tools/device/timeline_summary.py /tmp/tr/tl_half.err > $OUT/tl_half.txt 2>&1
RUN_LIMIT=80 run plain 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
say "plain decompress: $(python3 tools/device/tick_medians.py /tmp/tr/plain.err decompress)"
say "   compress: $(python3 tools/device/tick_medians.py /tmp/tr/plain.err compress)"
bench_to /tmp/tr/make508.log /tmp/tr/make508.err 60 508x1024 1 1 turbulent X=1
say "508x1024 field: rc $?"
slab() {
  CUDA_VISIBLE_DEVICES=$1 bench_to /tmp/tr/$2.log /tmp/tr/$2.err 60 $3 1 40 turbulent \
    MULTIRES_BENCH_ALIGN_MS=60
  echo "slab $2 ($3 on GPU $1): rc $?" >> $OUT/summary.txt
}
[ $(elapsed) -lt 220 ] && { slab 0 gpu0 516x1024 & slab 1 gpu1 508x1024 & wait; }
cat $OUT/summary.txt | tail -2
ls -la /tmp/tr/gpu0.* /tmp/tr/gpu1.* | tee -a $OUT/summary.txt
python3 tools/device/pair_ticks.py /tmp/tr/gpu0.err /tmp/tr/gpu1.err 2>&1 | tee -a $OUT/summary.txt
end_call
