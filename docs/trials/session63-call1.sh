#!/bin/bash
# For session 63's first call (nvidia-h200-x2, about 420 s with the start; carry [".gpu"]: multires
# built from HEAD; no GPU tests owed, the GPU crate is 5f46d77's). Two questions from session 62.
# 1. Sessions 61-62 ran processes in step on the 516-plane field in both processes: two copies of
#    GPU 0's slab. GPU 1's slab is 508 planes with the thin layer's shapes (13 batches, four small,
#    against 10), and ended last in four of seven decodes in session 49. Pair a 516-plane process
#    on GPU 0 with a 508-plane one on GPU 1 (`508x1024`: GPU 1's brick shapes) against one process
#    with both GPUs. If the pair matches the one process, the 0.2-0.5 ms put down to the process is
#    GPU 1's slab.
# 2. A lone half decodes in 54% of the whole's time at 1024^3: device timelines
#    (MULTIRES_CODEC_TIMELINE=1, one GPU) of the 516-plane field and of the whole, compared phase by
#    phase with timeline_summary.py (events slow a run: compare shares, not totals).
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
RUN_LIMIT=120 run whole_1 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
for f in 516x1024 508x1024; do
  bench_to /tmp/tr/make$f.log /tmp/tr/make$f.err 90 $f 1 1 turbulent X=1
  say "$f field: rc $?"
done
slab() {
  CUDA_VISIBLE_DEVICES=$1 bench_to /tmp/tr/$2.log /tmp/tr/$2.err 90 $3 1 25 turbulent \
    MULTIRES_BENCH_ALIGN_MS=60
}
for i in 1 2; do
  slab 0 gpu0_$i 516x1024 & slab 1 gpu1_$i 508x1024 & wait
  python3 tools/device/pair_ticks.py /tmp/tr/gpu0_$i.err /tmp/tr/gpu1_$i.err | tee -a $OUT/summary.txt
  [ $(elapsed) -lt 250 ] && RUN_LIMIT=60 run whole_$((i + 1)) 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
done
for f in /tmp/tr/whole_*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
for w in 516x1024 1024; do
  [ $(elapsed) -gt 400 ] && break
  BENCH_LIMIT=100 timeline tl_$w $w
  python3 tools/device/timeline_summary.py /tmp/tr/tl_$w.err > $OUT/tl_$w.txt 2>&1
done
if [ $(elapsed) -lt 440 ]; then
  TL_GPUS=1,2 BENCH_LIMIT=100 timeline tl2_1024 1024
  python3 tools/device/timeline_summary.py /tmp/tr/tl2_1024.err > $OUT/tl2_1024.txt 2>&1
fi
say "elapsed $(elapsed)s"
end_call
