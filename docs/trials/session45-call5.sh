#!/bin/bash
# Session 45, call 5 (nvidia-h200-x2, carry [".gpu"]): payload checksums on the device (HPUT puts
# the host's parts of each payload into the device buffer, CRC_PIECES a 4 KiB piece a lane,
# CRC_FOLD combines them as zlib's crc32_combine; default MULTIRES_CODEC_CRC), against the host's
# (once: session 44's choice; judged: 6c71be6's) at 1024^3, then the 15 GPU tests and cli_check.
# The bench rows say whether the bytes equal the CPU's (which crc32fast checksums).
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
run t_dev 1024 turbulent 3 1,2 X=1
run t_once 1024 turbulent 3 1,2 MULTIRES_CODEC_CRC=once
run t_dev2 1024 turbulent 3 1,2 X=1
run s_dev 1024 smooth 3 1,2 X=1
run s_once 1024 smooth 3 1,2 MULTIRES_CODEC_CRC=once
say "benches ${SECONDS}s"
gpu_checks
