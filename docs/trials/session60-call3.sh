#!/bin/bash
# Session 60, call 3 (nvidia-h200-x2, about 500 s with the start; carry [".gpu"]: multires and
# gpu_tests of the final build). Every container checksum is crc-fast's now (call 2's trial,
# adopted; equal sums, unit-tested against crc32fast here), so the GPU tests come first. Then
# three triplets of processes alternated: the default rayon pool (32 threads on 32 cores beside
# a GPU's 13 slot threads each) against pools of 16 and 24 (RAYON_NUM_THREADS). Since session 59
# the slot threads (kept from run to run) take more of a batch's host steps themselves (rANS
# headers, the tables' copy), so a smaller pool may contend less with them. The default rows
# are also the final build's figures.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
for i in 1 2 3; do
  RUN_LIMIT=$([ $i = 1 ] && echo 120 || echo 60) run base_$i 1024 turbulent 9 1,2 X=1
  RUN_LIMIT=60 run pool16_$i 1024 turbulent 9 1,2 RAYON_NUM_THREADS=16
  RUN_LIMIT=60 run pool24_$i 1024 turbulent 9 1,2 RAYON_NUM_THREADS=24
done
say "elapsed $(elapsed)s"
end_call
