#!/bin/bash
# For the session after 45 (nvidia-h200-x2, carry [".gpu"]; about 300 s with the start). The GPU
# crate's last code change (e422f24: checksums on the device, RANGE in float4s, the density
# sample beside the range) ran its 15 GPU tests in session 45's call 6; only comments came after.
# With the checksums off the host, do more slots or more batches in their transform now pay on
# two GPUs? Knobs only (no build change), interleaved, 1024^3 turbulent and smooth; then a
# traced two-GPU run for the head (range, plan, first batch).
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
run t 1024 turbulent 3 1,2 X=1
run t_slots3 1024 turbulent 3 1,2 MULTIRES_CODEC_SLOTS=3
run t_front3 1024 turbulent 3 1,2 MULTIRES_CODEC_FRONT=3
run t2 1024 turbulent 3 1,2 X=1
run s 1024 smooth 3 1,2 X=1
run s_slots3 1024 smooth 3 1,2 MULTIRES_CODEC_SLOTS=3
MULTIRES_CODEC_TRACE=1 timeout 60 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat 3 --codec-field turbulent > /tmp/tr/tr.log 2>/tmp/tr/tr.err
python3 tools/device/trace_summary.py /tmp/tr/tr.err > $OUT/trace.txt 2>&1
say "total ${SECONDS}s"
