#!/bin/bash
# Session 60, call 2 (nvidia-h200-x2, about 460 s with the start; carry [".gpu"]: multires,
# gpu_tests and crc_rate built from this tree). write_tables' copy is on the slot thread now
# (call 1's trial, adopted), so the GPU tests come first. Then the host's CPU and crc_rate:
# crc32fast against crc-fast (VPCLMULQDQ folding where the CPU has it) on one thread and on
# 4-32 at once. Then four pairs of processes alternated: the default against
# MULTIRES_CODEC_CRC_IMPL=fast (every payload checksum, compress and decode, through crc-fast).
# Session 58 put the checksums as the largest part of the two-GPU decode's loss (1.848x with
# none against 1.730x). Adopt crc-fast if its two-GPU rows beat the default's in most pairs
# without the one-GPU rows losing.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) | $(grep -m1 -o -w 'vpclmulqdq\|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' ') | cores $(nproc)"
timeout 60 .gpu/crc_rate > $OUT/crc_rate.log 2>&1
say "crc_rate rc $?"; grep -E "one thread|threads" $OUT/crc_rate.log | awk '{print}' | tee -a $OUT/summary.txt
gpu_checks
for i in 1 2 3 4; do
  RUN_LIMIT=$([ $i = 1 ] && echo 120 || echo 60) run base_$i 1024 turbulent 9 1,2 X=1
  RUN_LIMIT=60 run crcfast_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_CRC_IMPL=fast
done
say "elapsed $(elapsed)s"
end_call
