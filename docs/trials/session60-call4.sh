#!/bin/bash
# Session 60, call 4 (nvidia-h200-x2, about 230 s with the start; carry [".gpu"]: call 3's
# build, no code changed since). Two more processes each of the default pool and a pool of 16
# (RAYON_NUM_THREADS=16; call 3: two-GPU decode 267.8 against 262.2 GB/s, three each, but the
# one-GPU rows as fast, so the ratio alike), and one of a pool of 8.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
RUN_LIMIT=110 run base_4 1024 turbulent 9 1,2 X=1
RUN_LIMIT=50 run pool16_4 1024 turbulent 9 1,2 RAYON_NUM_THREADS=16
RUN_LIMIT=50 run pool8_4 1024 turbulent 9 1,2 RAYON_NUM_THREADS=8
RUN_LIMIT=50 run base_5 1024 turbulent 9 1,2 X=1
RUN_LIMIT=50 run pool16_5 1024 turbulent 9 1,2 RAYON_NUM_THREADS=16
say "elapsed $(elapsed)s"
end_call
