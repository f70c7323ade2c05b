#!/bin/bash
# Session 58, call 3 (nvidia-h200-x2; carry [".gpu"]). Host traces (MULTIRES_CODEC_TRACE=1) of
# the decode: the whole on two GPUs, and each GPU's slab alone on one GPU (516 and 508 planes),
# to find when each batch's thread starts (the slot threads are spawned each run) and where GPU
# 1's batches fall behind in the two-GPU process. Read /tmp/tr/*.err in logs.tgz.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
traced tr_two 1024 2 X=1
traced tr_516 516x1024 1 X=1
traced tr_508 508x1024 1 X=1
end_call
