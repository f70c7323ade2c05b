#!/bin/bash
# Session 57 call 4 (nvidia-h200-x2, about 230 s): batches a slab for the two-GPU decode. A dense
# file decodes in RESIDENT_SHARES (8) batches a slab, the count chosen for the coder (sessions
# 35-37); the decoder's own best was never measured on the turbulent field. MULTIRES_CODEC_SHARES
# (a measurement knob; the bytes never depend on it) fixes the count for one GPU and two alike, so
# the knob's processes run two GPUs only and are read against the default's one-GPU rows.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
run def_1 1024 turbulent 9 1,2 X=1
for k in 4 6 12; do run s${k}_1 1024 turbulent 9 2 MULTIRES_CODEC_SHARES=$k; done
run def_2 1024 turbulent 9 1,2 X=1
for k in 4 6; do run s${k}_2 1024 turbulent 9 2 MULTIRES_CODEC_SHARES=$k; done
end_call
