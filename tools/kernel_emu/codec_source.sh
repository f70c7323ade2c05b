#!/bin/bash
# Prints the codec's kernels as the one program the GPU compiles: the files
# CODEC_SOURCE in crates/multires-cuda/src/kernels.rs joins, in its order
# (read from there, so the emulators cannot miss a file), with dynamic
# shared memory (extern __shared__) made plain extern: it is no block's copy
# here; the emulated kernels declare theirs and the others only compile.
set -euo pipefail
cd "$(dirname "$0")/../.."
files=$(sed -n '/^pub(crate) const CODEC_SOURCE/,/^);/p' crates/multires-cuda/src/kernels.rs |
  grep -o 'kernels/codec_[a-z_]*\.cu')
[ -n "$files" ] || { echo "codec_source.sh: no codec kernels found in CODEC_SOURCE (kernels.rs)" >&2; exit 1; }
for f in $files; do cat "crates/multires-cuda/$f"; done | sed 's/extern __shared__/extern/'
