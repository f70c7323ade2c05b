#!/bin/bash
# For the next session (written in session 41), on nvidia-h200-x2 with carry [".gpu"], about 360 s
# with the start. Before it: `git apply docs/trials/session41-span-offsets.patch`, build
# (`cargo build --release`, `cargo test --release --no-run -p multires-cuda --test gpu`), and copy
# target/release/multires to .gpu/multires and the gpu test binary to .gpu/gpu_tests.
# 1. Whether a copy two bytes off a word is what holds a decode's uploads to 30-38 GB/s a GPU
#    (offset_rate.py: compare the "+98 -> +0" rows with "+0 -> +0" and "+98 -> +2").
# 2. The patch (spans land at their host offset from 16 bytes; MULTIRES_CODEC_SPAN_OFFSETS=0 is
#    the old placement): the 15 GPU tests, cli_check, and the turbulent decode A/B.
set -uo pipefail
source tools/device/codec_ab.sh
timeout 90 python3 tools/device/offset_rate.py 300 | tee -a $OUT/summary.txt
gpu_checks
run tN 1024 turbulent 3 1,2 X=1
run tO 1024 turbulent 3 1,2 MULTIRES_CODEC_SPAN_OFFSETS=0
run sN 1024 smooth 3 1,2 X=1
