#!/bin/bash
# Session 45, call 2 (nvidia-h200-x2, carry [".gpu"]): call 1 measured 6c71be6 (checksums to
# the pool once the gate is idle) no better than MULTIRES_CODEC_CRC=once (1536^3 turbulent
# 1.73x against 1.76x; 1024^3 1.52x against 1.67x). Traced 1024^3 runs (turbulent, smooth;
# 1 and 2 GPUs) say whether the last batches handed their checksums over and what the tail is now.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
for f in turbulent smooth; do
  MULTIRES_CODEC_TRACE=1 timeout 120 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 1,2 --resident --codec-rel 1e-3 --repeat 3 --codec-field $f > /tmp/tr/$f.log 2>/tmp/tr/$f.err
  say "== traced $f 1024 rc $? ${SECONDS}s"
  grep -E "codec-3d (resident|slabs)" /tmp/tr/$f.log | tee -a $OUT/summary.txt
  python3 tools/device/trace_summary.py /tmp/tr/$f.err > $OUT/trace_$f.txt 2>&1
  grep -E "^trace (compress|slabs plan|decompress_slabs|resident plan)" /tmp/tr/$f.err >> $OUT/trace_$f.txt
  grep -E "^trace gpu" /tmp/tr/$f.err > $OUT/raw_$f.txt
  say "batches with r_crc_pool: $(grep -c r_crc_pool $OUT/raw_$f.txt) r_crc_slot: $(grep -c r_crc_slot $OUT/raw_$f.txt)"
done
say "total ${SECONDS}s"
