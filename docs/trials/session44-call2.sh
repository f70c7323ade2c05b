#!/bin/bash
# Session 44, call 2 (nvidia-h200-x2, carry [".gpu"]): how much of two GPUs' shortfall at
# 1024^3 is the last GPU's thin brick layer (8 brick shapes and 13 batches against 4 and 10)?
# 1032 planes (8 x 129) of 1024^2 give both slabs the same 4 shapes; the same field with its
# planes mirrored past 1024, so the values differ only in those 8 planes. Then a larger field
# with and without a thin layer (1536^3; 1548 x 1536^2). A traced two-GPU turbulent run first
# (host marks of the plan, the batches and the assembly). Fields made once, kept in /tmp/fields.
set -uo pipefail
source tools/device/codec_ab.sh
{ nvidia-smi topo -m; nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv; } >> $OUT/summary.txt 2>&1
SECONDS=0
MULTIRES_CODEC_TRACE=1 timeout 150 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat 2 --codec-field turbulent > /tmp/tr/trace.log 2>/tmp/tr/trace.err
say "== traced turbulent 2 GPUs rc $? ${SECONDS}s"
grep -E "codec-3d (resident|slabs)" /tmp/tr/trace.log | tee -a $OUT/summary.txt
python3 tools/device/trace_summary.py /tmp/tr/trace.err > $OUT/trace_t.txt 2>&1
grep -E "^trace (compress|slabs plan|decompress_slabs)" /tmp/tr/trace.err >> $OUT/trace_t.txt
run t 1024 turbulent 3 1,2 X=1
run td 1032x1024 turbulent 3 1,2 X=1
run s 1024 smooth 3 1,2 X=1
run sd 1032x1024 smooth 3 1,2 X=1
RUN_LIMIT=170 run s36 1536 smooth 2 1,2 X=1
RUN_LIMIT=120 run s36d 1548x1536 smooth 2 1,2 X=1
