#!/bin/bash
# Session 61 call 6 (nvidia-h200-x2, about 150 s with the start; carry [".gpu"]: multires from
# HEAD and multires_early built with docs/trials/session61-early-streams.patch). Call 5: the early
# streams decode 20% slower on one GPU and two. Why? Host traces (MULTIRES_CODEC_TRACE=1, five
# runs) of both builds on two GPUs: which mark of a batch waits longer.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
BENCH_LIMIT=100 traced off 1024 2 X=1
python3 tools/device/trace_summary.py /tmp/tr/off.err > $OUT/off.trace.txt 2>&1
M=.gpu/multires_early
BENCH_LIMIT=100 traced early 1024 2 X=1
python3 tools/device/trace_summary.py /tmp/tr/early.err > $OUT/early.trace.txt 2>&1
say "elapsed $(elapsed)s"
end_call
