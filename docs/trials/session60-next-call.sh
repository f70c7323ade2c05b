#!/bin/bash
# For the session after 60 (nvidia-h200-x2, about 360 s with the start; carry [".gpu"]: multires
# and gpu_tests built from HEAD). The GPU crate is call 3's (its tests passed there); the CLI
# since builds rayon's pool at half the cores for a codec run on GPUs, measured in calls 3-4 only
# through RAYON_NUM_THREADS=16. So: cli_check, then three triplets alternated: the CLI's default
# (16 on 32 cores), RAYON_NUM_THREADS=32 (the old pool of every core) and 8 (a quarter; one
# process in call 4: 1.822x compress, 1.743x decode). Expect the default's two-GPU rows above
# the old pool's in most triplets (calls 3-4: decode 271.7 against 263.1 GB/s, compress 238.5
# against 231.6, medians of five).
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
MULTIRES=$M timeout 40 bash tools/device/cli_check.sh > $OUT/cli_check.log 2>&1
say "cli_check: rc $? | $(tail -1 $OUT/cli_check.log)"
for i in 1 2 3; do
  RUN_LIMIT=$([ $i = 1 ] && echo 120 || echo 60) run half_$i 1024 turbulent 9 1,2 X=1
  RUN_LIMIT=60 run every_$i 1024 turbulent 9 1,2 RAYON_NUM_THREADS=32
  RUN_LIMIT=60 run quarter_$i 1024 turbulent 9 1,2 RAYON_NUM_THREADS=8
done
say "elapsed $(elapsed)s"
end_call
