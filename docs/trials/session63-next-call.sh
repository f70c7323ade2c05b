#!/bin/bash
# For session 64's first call (nvidia-h200-x2, about 450 s with the start; carry [".gpu"]). Needs
# .gpu/multires built from HEAD. No GPU tests owed if the GPU crate is session 63's (they passed in
# its call 3).
# 1. Where one GPU's 3-4% of coding went with version 7 (twice the rANS chunks): device timelines of
#    the whole on one GPU, coding and decoding, as committed and with MULTIRES_RANS_MIN_LOG=12 (the
#    same binary and format, chunks of 2^12 as in version 6: the chunk count alone differs).
#    `timeline_summary.py --chain` prints the last batch's chain; compare the per-mark medians
#    (events slow a run). Then one plain process each way for the one-GPU rates.
# 2. Session 62's open question, repeated with more runs so that the two processes share ticks
#    (call 1 of session 63 started GPU 1's process 6 s late): GPU 0's slab shape (516x1024) on GPU 0
#    and GPU 1's (508x1024, the thin layer) on GPU 1 in step, 150 runs each, against one process
#    with both GPUs. If the pair's later run matches the one process, the in-process loss is GPU 1's
#    slab.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
RUN_LIMIT=100 run whole_1 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
for k in 11 12; do
  BENCH_LIMIT=100 timeline tl_$k 1024 MULTIRES_RANS_MIN_LOG=$k
  python3 tools/device/timeline_summary.py /tmp/tr/tl_$k.err > $OUT/tl_$k.txt 2>&1
  RUN_LIMIT=60 run one_$k 1024 turbulent 9 1 MULTIRES_RANS_MIN_LOG=$k MULTIRES_BENCH_ALIGN_MS=60
done
for f in 516x1024 508x1024; do
  bench_to /tmp/tr/make$f.log /tmp/tr/make$f.err 90 $f 1 1 turbulent X=1
  say "$f field: rc $?"
done
slab() {
  CUDA_VISIBLE_DEVICES=$1 bench_to /tmp/tr/$2.log /tmp/tr/$2.err 120 $3 1 150 turbulent \
    MULTIRES_BENCH_ALIGN_MS=60
}
slab 0 gpu0 516x1024 & slab 1 gpu1 508x1024 & wait
python3 tools/device/pair_ticks.py /tmp/tr/gpu0.err /tmp/tr/gpu1.err | tee -a $OUT/summary.txt
[ $(elapsed) -lt 380 ] && RUN_LIMIT=60 run whole_2 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
for f in /tmp/tr/whole_*.err /tmp/tr/one_*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
say "elapsed $(elapsed)s"
end_call
