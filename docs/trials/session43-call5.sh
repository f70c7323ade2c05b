#!/bin/bash
# Session 43, call 5 (nvidia-h200-x2, carry [".gpu"]), on b2c648b (the slab-streams trial
# reverted; the GPU crate's one change since call 1 is compress_slabs' trace marks): the 15 GPU
# tests and cli_check, then the default benches of both fields on one GPU and two.
set -uo pipefail
source tools/device/codec_ab.sh
gpu_checks
run t 1024 turbulent 3 1,2 X=1
run s 1024 smooth 3 1,2 X=1
