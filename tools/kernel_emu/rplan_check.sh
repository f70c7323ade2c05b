#!/bin/bash
# RPLAN, RPIECES and RWORDS (crates/multires-cuda/kernels/codec_rans.cu) run on
# the CPU against multires::codec::rans::plan over its synthetic cases:
# a check of the kernels' logic on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MULTIRES_RPLAN_CASES=$T/cases.bin cargo test -q -p multires --lib write_rplan_cases -- --ignored >/dev/null
K=crates/multires-cuda/kernels
bash tools/kernel_emu/codec_source.sh > "$T/codec.cu"
g++ -std=c++20 -O1 -w -pthread -include tools/kernel_emu/emu.h \
  -DKERNEL_COMMON="\"$PWD/$K/common.cuh\"" -DKERNEL_CODEC="\"$T/codec.cu\"" \
  tools/kernel_emu/rplan_emu.cpp -o "$T/rplan_emu"
"$T/rplan_emu" "$T/cases.bin"
