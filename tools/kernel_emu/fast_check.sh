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
cat $K/codec_transform.cu $K/codec_rice.cu $K/codec_rans.cu $K/codec_checks.cu $K/codec_fast.cu |
  sed 's/extern __shared__/extern/' > "$T/codec.cu"
g++ -std=c++20 -O1 -w -pthread -include tools/kernel_emu/emu.h \
  -DKERNEL_COMMON="\"$PWD/$K/common.cuh\"" -DKERNEL_CODEC="\"$T/codec.cu\"" \
  tools/kernel_emu/fast_emu.cpp -o "$T/fast_emu"
"$T/fast_emu" "$T/cases.bin"
