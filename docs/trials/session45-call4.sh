#!/bin/bash
# Session 45, call 4 (nvidia-h200-x2, carry [".gpu"]; 09bdcba's binary): call 3's own pool for
# the checksums lost (two GPUs 164-167 GB/s against 182-186). Call 2's traces had each GPU's
# last batch 5-7 ms in r_plan and 3-5 ms in r_upload (host stages of a few hundred us of work):
# are the 32 rayon workers crowding the slot threads off the 32 cores? A/B of the rayon pool's
# size at 1024^3 turbulent, interleaved.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
run r32 1024 turbulent 3 1,2 X=1
run r16 1024 turbulent 3 1,2 RAYON_NUM_THREADS=16
run r8 1024 turbulent 3 1,2 RAYON_NUM_THREADS=8
run r24 1024 turbulent 3 1,2 RAYON_NUM_THREADS=24
run r32b 1024 turbulent 3 1,2 X=1
MULTIRES_CODEC_TRACE=1 timeout 60 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat 3 --codec-field turbulent > /tmp/tr/tr.log 2>/tmp/tr/tr.err
say "== traced turbulent rc $?"
grep -E "codec-3d (resident|slabs)" /tmp/tr/tr.log | tee -a $OUT/summary.txt
python3 tools/device/trace_summary.py /tmp/tr/tr.err > $OUT/trace.txt 2>&1
nproc >> $OUT/summary.txt; lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|Model name" >> $OUT/summary.txt
say "total ${SECONDS}s"
