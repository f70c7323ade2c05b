#!/bin/bash
# Session 44, call 5 (nvidia-h200-x2, carry [".gpu"]; .gpu/crc_rate built from
# tools/device/crc_rate): the 15 GPU tests and cli_check on the last change (trace marks
# r_heads and r_crc_pool / r_crc_slot after a coded batch's header writes and checksums).
# Call 4's trace put 6.6-12 ms between the last batch's r_outliers and its end (the checksums'
# stage): how fast crc32fast runs on this host, alone and on every core at once, and a traced
# turbulent 1536^3 run that names where each batch's checksums ran and how long they took.
set -uo pipefail
source tools/device/codec_ab.sh
{ lscpu | grep -iE "model name|^CPU\(s\)"; grep -o -w -E "pclmulqdq|vpclmulqdq|avx512f" /proc/cpuinfo | sort | uniq -c; .gpu/crc_rate; } >> $OUT/summary.txt 2>&1
gpu_checks
SECONDS=0
MULTIRES_CODEC_TRACE=1 timeout 260 $M bench --config codec-3d --device cuda --codec-size 1536 --codec-field-cache /tmp/fields --gpus 1,2 --resident --codec-rel 1e-3 --repeat 2 --codec-field turbulent > /tmp/tr/trace.log 2>/tmp/tr/trace.err
say "== traced turbulent 1536 rc $? ${SECONDS}s"
grep -E "codec-3d (resident|slabs)" /tmp/tr/trace.log | tee -a $OUT/summary.txt
python3 tools/device/trace_summary.py /tmp/tr/trace.err > $OUT/trace_t36.txt 2>&1
grep -E "^trace (compress|slabs plan|decompress_slabs|resident plan)" /tmp/tr/trace.err >> $OUT/trace_t36.txt
grep -E "^trace gpu" /tmp/tr/trace.err | grep -c r_crc_pool | sed 's/^/batches with r_crc_pool: /' >> $OUT/summary.txt
grep -E "^trace gpu" /tmp/tr/trace.err | grep -c r_crc_slot | sed 's/^/batches with r_crc_slot: /' >> $OUT/summary.txt
run t 1024 turbulent 3 1,2 X=1
