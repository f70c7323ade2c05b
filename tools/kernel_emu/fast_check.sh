#!/bin/bash
# The fast profile's kernels (crates/multires-cuda/kernels/codec_fast.cu) run
# on the CPU against multires::codec::lorenzo: payloads byte for byte and
# decoded values bit for bit, a check of the kernels' logic on a machine
# without a GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MULTIRES_FAST_CASES=$T/cases.bin cargo test -q -p multires --lib write_fast_cases -- --ignored >/dev/null
K=crates/multires-cuda/kernels
bash tools/kernel_emu/codec_source.sh > "$T/codec.cu"
g++ -std=c++20 -O1 -w -pthread -include tools/kernel_emu/emu.h \
  -DKERNEL_COMMON="\"$PWD/$K/common.cuh\"" -DKERNEL_CODEC="\"$T/codec.cu\"" \
  tools/kernel_emu/fast_emu.cpp -o "$T/fast_emu"
"$T/fast_emu" "$T/cases.bin"
