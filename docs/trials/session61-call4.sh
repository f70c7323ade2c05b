#!/bin/bash
# Session 61 call 4 (nvidia-h200-x2, about 200 s with the start; carry [".gpu"]; call 2's build).
# Call 3's timelines showed a decode batch's lists reaching the device late (GPU 1's batch 8
# at 13.2 ms, the copy engine idle from 9.1 ms) and the run ending with it. Host traces
# (MULTIRES_CODEC_TRACE=1, five runs) of the decode: the half alone on one GPU, the whole on
# two GPUs; trace_summary.py's per-run view (each mark's median and longest wait, and the
# marks of the batch that ended last) under $OUT, with every batch's trace lines.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for spec in "thalf 516x1024 1" "twhole2 1024 2"; do
  set -- $spec
  BENCH_LIMIT=150 traced $1 $2 $3 X=1
  python3 tools/device/trace_summary.py /tmp/tr/$1.err > $OUT/$1.trace.txt 2>&1
  grep -E "^trace gpu" /tmp/tr/$1.err | gzip > $OUT/$1.lines.gz
done
say "elapsed $(elapsed)s"
end_call
