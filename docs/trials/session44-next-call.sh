#!/bin/bash
# For the session after 44 (nvidia-h200-x2, carry [".gpu"]; about 420 s with the start):
# 6c71be6 (a coded batch's checksums handed to the pool from the brick at which its GPU's gate
# goes idle) has not run on a GPU. First the 15 GPU tests and cli_check on it, then the A/B
# against the old choice (MULTIRES_CODEC_CRC=once) on the turbulent 1536^3 field, where each
# GPU's last batch spent 10-12.6 ms checksumming on one thread (session 44, call 5), and on
# 1024^3. Prediction: two GPUs code the 1536^3 field in about 55 ms instead of 60-66 (1.8x or
# more), and one GPU a few ms faster too; the decode does not move.
set -uo pipefail
source tools/device/codec_ab.sh
gpu_checks
SECONDS=0
RUN_LIMIT=300 run t36 1536 turbulent 2 1,2 X=1
RUN_LIMIT=150 run t36_once 1536 turbulent 2 1,2 MULTIRES_CODEC_CRC=once
run t 1024 turbulent 3 1,2 X=1
run t_once 1024 turbulent 3 1,2 MULTIRES_CODEC_CRC=once
say "total ${SECONDS}s"
