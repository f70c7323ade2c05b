#!/bin/bash
# Session 45, call 3 (nvidia-h200-x2, carry [".gpu"]): call 2's traces put two GPUs' batches
# 2-3 ms (up to 11) in r_plan (the rANS tables on the rayon pool) against 1 on one GPU: the
# pool's workers empty their own queues (other batches' checksums) before they take an injected
# job. Checksums now have a pool of their own (MULTIRES_CODEC_CRC default "own"); A/B against
# session 44's choice (once) and 6c71be6's (judged), interleaved, at 1024^3.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
run t_own 1024 turbulent 3 1,2 X=1
run t_once 1024 turbulent 3 1,2 MULTIRES_CODEC_CRC=once
run t_own2 1024 turbulent 3 1,2 X=1
run t_judged 1024 turbulent 3 1,2 MULTIRES_CODEC_CRC=judged
run s_own 1024 smooth 3 1,2 X=1
run s_once 1024 smooth 3 1,2 MULTIRES_CODEC_CRC=once
run s_own2 1024 smooth 3 1,2 X=1
MULTIRES_CODEC_TRACE=1 timeout 60 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat 3 --codec-field turbulent > /tmp/tr/tr.log 2>/tmp/tr/tr.err
say "== traced own turbulent rc $?"
grep -E "codec-3d (resident|slabs)" /tmp/tr/tr.log | tee -a $OUT/summary.txt
python3 tools/device/trace_summary.py /tmp/tr/tr.err > $OUT/trace_own.txt 2>&1
say "total ${SECONDS}s"
