#!/bin/bash
# Session 57 call 2 (nvidia-h200-x2, about 170 s): is the rANS chain the two-GPU decode's fixed
# part? Chunks of 2^13 (MULTIRES_RANS_MIN_LOG=13: chains twice as long, a measurement knob the CPU
# and GPU coders of one process both read) against the default 2^12, alternated twice. If the
# two-GPU ratio falls with longer chains, shorter ones (2^11, a format change) should raise it.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run ml13_$i 1024 turbulent 9 1,2 MULTIRES_RANS_MIN_LOG=13
done
grep -h "ratio\|codec-3d resident" $OUT/def_1.log $OUT/ml13_1.log | head -6 >> $OUT/summary.txt
end_call
