#!/bin/bash
# Session 44, call 4 (nvidia-h200-x2, carry [".gpu"]): why two GPUs code the turbulent 1536^3
# field at only 1.74x one GPU (call 3), where its decode reached 1.84x and the smooth field's
# coding 1.85x: a traced run on one GPU and two (host marks of every batch), then the
# checksums all on the shared pool (MULTIRES_CODEC_CRC=pool) against the default.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
MULTIRES_CODEC_TRACE=1 timeout 300 $M bench --config codec-3d --device cuda --codec-size 1536 --codec-field-cache /tmp/fields --gpus 1,2 --resident --codec-rel 1e-3 --repeat 2 --codec-field turbulent > /tmp/tr/trace.log 2>/tmp/tr/trace.err
say "== traced turbulent 1536 rc $? ${SECONDS}s"
grep -E "codec-3d (resident|slabs)" /tmp/tr/trace.log | tee -a $OUT/summary.txt
python3 tools/device/trace_summary.py /tmp/tr/trace.err > $OUT/trace_t36.txt 2>&1
grep -E "^trace (compress|slabs plan|decompress_slabs|resident plan)" /tmp/tr/trace.err >> $OUT/trace_t36.txt
RUN_LIMIT=150 run crc_pool 1536 turbulent 2 1,2 MULTIRES_CODEC_CRC=pool
RUN_LIMIT=150 run default 1536 turbulent 2 1,2 X=1
say "total ${SECONDS}s"
