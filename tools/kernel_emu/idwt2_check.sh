#!/bin/bash
# IDWT2 (crates/multires-cuda/kernels/dwt.cu, the fused 2-D synthesis level)
# run on the CPU against the two IDWT_AX axis passes it replaces: a check of
# the kernel's index logic on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
K=crates/multires-cuda/kernels
sed 's/extern __shared__/extern/' $K/dwt.cu > "$T/dwt.cu"
g++ -std=c++20 -O1 -w -pthread -include tools/kernel_emu/emu.h \
  -DKERNEL_COMMON="\"$PWD/$K/common.cuh\"" -DKERNEL_DWT="\"$T/dwt.cu\"" \
  tools/kernel_emu/idwt2_emu.cpp -o "$T/idwt2_emu"
"$T/idwt2_emu"
