#!/bin/bash
# Session 61 call 3 (nvidia-h200-x2, about 280 s with the start; carry [".gpu"]; the build of
# call 2). Call 2 found two processes in step, a GPU each, decode no faster than one process with
# both GPUs (16.2-16.3 ms against 16.0-16.9), while a 516-plane half alone takes 15.8-15.9 ms of
# the whole's 27.9: the decode's ceiling is the device's own fixed part, about 1.75x. Where is
# it? Device timelines (MULTIRES_CODEC_TIMELINE=1, five warm runs): the whole on one GPU, the
# half alone, the whole on two GPUs; each summary (every batch's marks) under $OUT.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for spec in "whole1 1024 1" "half1 516x1024 1" "whole2 1024 2"; do
  set -- $spec
  TL_GPUS=$3 BENCH_LIMIT=150 timeline $1 $2 X=1
  python3 tools/device/timeline_summary.py /tmp/tr/$1.err --batches > $OUT/$1.tl.txt 2>&1
  say "$1: $(grep -E 'codec-3d (resident|slabs)' /tmp/tr/$1.log | sed -E 's/.*compress [0-9.]+ s = ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \/ \2/' | tr '\n' ';')"
done
say "elapsed $(elapsed)s"
end_call
