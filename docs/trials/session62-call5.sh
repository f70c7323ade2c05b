#!/bin/bash
# Session 62 call 5 (nvidia-h200-x2; carry [".gpu"]: multires built from HEAD). Call 4 put one
# process with both GPUs 1.1-1.5 ms behind a half field alone on one GPU (17.08 against 15.59 ms
# decoding 1024^3), where session 61 found two processes in step, a GPU each, no faster than one
# process (16.2-16.3 against 16.0-16.9). Which is it today? Alternated: one process with both GPUs,
# and two processes in step on the 516-plane field (pair_ticks.py takes the later run of each
# pair), then that field alone on GPU 0.
# (The per-row medians ran as an inline Python snippet; tools/device/tick_medians.py is that
# snippet, with the same output.)
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
RUN_LIMIT=120 run whole_1 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
bench_to /tmp/tr/make516.log /tmp/tr/make516.err 90 516x1024 1 1 turbulent X=1
say "516-plane field: rc $?"
half() {
  CUDA_VISIBLE_DEVICES=$1 bench_to /tmp/tr/$2.log /tmp/tr/$2.err 90 516x1024 1 25 turbulent \
    MULTIRES_BENCH_ALIGN_MS=60
}
for i in 1 2; do
  half 0 stepA_$i & half 1 stepB_$i & wait
  python3 tools/device/pair_ticks.py /tmp/tr/stepA_$i.err /tmp/tr/stepB_$i.err | tee -a $OUT/summary.txt
  [ $(elapsed) -lt 260 ] && RUN_LIMIT=60 run whole_$((i + 1)) 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
done
[ $(elapsed) -lt 330 ] && { half 0 alone_1; say "alone_1: $(python3 tools/device/pair_ticks.py /tmp/tr/alone_1.err /tmp/tr/alone_1.err | tail -2 | tr '\n' ';')"; }
for f in /tmp/tr/whole_*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress)"
  say "   compress: $(python3 tools/device/tick_medians.py $f compress)"
done
say "elapsed $(elapsed)s"
end_call
