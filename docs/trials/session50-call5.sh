#!/bin/bash
# Session 50, call 5 (nvidia-h200-x2, carry [".gpu"], the final build; ~200 s with the start):
# stream priorities off against the default on the final build, alternated (call 4's two-GPU
# decode ratio was 1.71x-1.72x with priorities off and RPLAN, 1.65x-1.68x without either).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
run def_1 1024 turbulent 9 1,2 X=1
run off_1 1024 turbulent 9 1,2 MULTIRES_CODEC_PRIORITY=off
run def_2 1024 turbulent 9 1,2 X=1
run off_2 1024 turbulent 9 1,2 MULTIRES_CODEC_PRIORITY=off
say "total $(( $(date +%s) - T0 ))s"
