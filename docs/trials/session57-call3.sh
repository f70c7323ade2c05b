#!/bin/bash
# Session 57 call 3 (nvidia-h200-x2, about 220 s): is GPU 1's slab slower to decode by itself?
# Call 1's timelines had GPU 1's decode (508 planes, with the thin layer; 13 batches) end 1.5 ms
# after GPU 0's (516 planes; 10 batches) on the device. Each slab's shape alone on one GPU
# (--codec-depth 516 / 508), then the whole on one and two GPUs with CUDA_DEVICE_MAX_CONNECTIONS=32
# (a GPU's 10-13 decode streams share 8 hardware queues by default) against without.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2; do
  run d516_$i 516x1024 turbulent 9 1 X=1
  run d508_$i 508x1024 turbulent 9 1 X=1
done
run def_1 1024 turbulent 9 1,2 X=1
run conn32_1 1024 turbulent 9 1,2 CUDA_DEVICE_MAX_CONNECTIONS=32
run def_2 1024 turbulent 9 1,2 X=1
run conn32_2 1024 turbulent 9 1,2 CUDA_DEVICE_MAX_CONNECTIONS=32
end_call
