#!/bin/bash
# Session 58, call 4 (nvidia-h200-x2; carry [".gpu"], .gpu/multires with MULTIRES_CODEC_VERIFY).
# Call 3's traces: in the two-GPU process a decode batch's host checksums (verify_payloads) end
# at 12-19 ms against 8-10.7 alone, while both GPUs' uploads read host memory. Does the decode's
# host checking slow the two-GPU run? Checks after each batch's streams are up (`after`), none
# (`off`, a measurement only), against the default, alternated.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2; do
  run def_$i 1024 turbulent 9 1,2 X=1
  run after_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=after
done
run off_1 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=off
end_call
