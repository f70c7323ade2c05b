#!/bin/bash
# For the session after 60 (nvidia-h200-x2, about 330 s with the start; carry [".gpu"]: multires
# and gpu_tests built from HEAD). The GPU crate is call 3's (its tests passed there); the CLI
# since builds rayon's pool at half the cores for a codec run on GPUs, measured in calls 3-4 only
# through RAYON_NUM_THREADS=16. So: cli_check, then four pairs alternated, the CLI's default
# against RAYON_NUM_THREADS=32 (the old pool of every core). Expect the default's two-GPU rows
# above the old pool's in most pairs (calls 3-4: decode 271.7 against 263.1 GB/s, compress
# 238.5 against 231.6, medians of five).
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
MULTIRES=$M timeout 40 bash tools/device/cli_check.sh > $OUT/cli_check.log 2>&1
say "cli_check: rc $? | $(tail -1 $OUT/cli_check.log)"
for i in 1 2 3 4; do
  RUN_LIMIT=$([ $i = 1 ] && echo 120 || echo 60) run half_$i 1024 turbulent 9 1,2 X=1
  RUN_LIMIT=60 run every_$i 1024 turbulent 9 1,2 RAYON_NUM_THREADS=32
done
say "elapsed $(elapsed)s"
end_call
