#!/bin/bash
# For session 63's first call (nvidia-h200-x2, about 330 s with the start; carry [".gpu"]: multires
# built from HEAD; no GPU tests owed, the GPU crate is 5f46d77's). Session 62: a half field alone on
# one GPU decodes in 54% of the whole's time at 1024^3 and 57% at 1280^3, so what does not halve
# grows with the field, and a batch-sized fill and drain would halve with a half's batches. Where
# is it? Device timelines (MULTIRES_CODEC_TIMELINE=1, five runs each, one GPU) of each lone half
# and its whole, then each run's phases from timeline_summary.py: the first and last batch at each
# mark (d_rdec_before: streams up; d_decode: RDEC done; d_inverse), gaps between marks, and the
# tail. Events slow a run: compare the phases' shares, not the totals. Then two plain processes
# for the medians.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for w in 516x1024 1024 645x1280 1280; do
  BENCH_LIMIT=150 timeline tl_$w $w
  python3 tools/device/timeline_summary.py /tmp/tr/tl_$w.err > $OUT/tl_$w.txt 2>&1
  say "tl_$w: $(grep -m1 -E 'run|tail' $OUT/tl_$w.txt)"
  [ $(elapsed) -gt 420 ] && break
done
[ $(elapsed) -lt 430 ] && RUN_LIMIT=60 run whole 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
say "elapsed $(elapsed)s"
end_call
