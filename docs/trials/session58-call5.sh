#!/bin/bash
# Session 58, call 5 (nvidia-h200-x2; carry [".gpu"], .gpu/multires and .gpu/gpu_tests built
# from the device-checksum change). Call 4: decoding without the host's checksums ran at 1.85x
# one GPU, against 1.73x with them. Now a decode batch whose payloads go up whole from a
# page-locked file checks their checksums on the device (CRC_PIECES, CRC_FOLD); default against
# MULTIRES_CODEC_VERIFY=host (the old checks), alternated twice; then the GPU tests and cli_check.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2; do
  run dev_$i 1024 turbulent 9 1,2 X=1
  run host_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=host
done
gpu_checks
end_call
