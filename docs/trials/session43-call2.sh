#!/bin/bash
# Session 43, call 2 (nvidia-h200-x2, carry [".gpu"]): why GPU 1 decodes its slab slower.
# Call 1's timeline: GPU 0 (10 batches, 541 M values) decoded in 15.8-16.4 ms, GPU 1 (13
# batches, 533 M values, the thin last brick layer) in 20.1-22.7, its big batches' RDEC 6-10 ms
# against 2.6-4.4 on GPU 0. The same runs with the GPUs swapped (CUDA_VISIBLE_DEVICES=1,0) tell
# the GPU from the work. Also: the host's topology, and the compress plan's new per-GPU marks
# (ranged, sampled, joined), and fewer batches a slab (MULTIRES_CODEC_SHARES=4 and 6).
set -uo pipefail
source tools/device/codec_ab.sh
{ nvidia-smi topo -m; lscpu | grep -iE "numa|model name|socket"; grep -o -m1 avx512f /proc/cpuinfo;
  nvidia-smi --query-gpu=index,pci.bus_id,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv; } >> $OUT/summary.txt 2>&1
for v in a:0,1 b:1,0; do
  n=${v%%:*}; SECONDS=0
  CUDA_VISIBLE_DEVICES=${v#*:} MULTIRES_CODEC_TIMELINE=1 MULTIRES_CODEC_TRACE=1 timeout 100 $M bench --config codec-3d --device cuda --codec-size 1024 --gpus 2 --resident --codec-rel 1e-3 --repeat 2 --codec-field turbulent > /tmp/tr/$n.log 2>/tmp/tr/$n.err
  say "== timeline $n (CUDA_VISIBLE_DEVICES=${v#*:}) rc $? ${SECONDS}s"
  grep -E "codec-3d (resident|slabs)" /tmp/tr/$n.log | tee -a $OUT/summary.txt
  python3 tools/device/timeline_summary.py /tmp/tr/$n.err > $OUT/tl_$n.txt 2>&1
  python3 tools/device/trace_summary.py /tmp/tr/$n.err > $OUT/tr_$n.txt 2>&1
done
run t4 1024 turbulent 3 2 MULTIRES_CODEC_SHARES=4
run t6 1024 turbulent 3 2 MULTIRES_CODEC_SHARES=6
