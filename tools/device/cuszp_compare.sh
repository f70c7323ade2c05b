#!/bin/bash
# Usage on the device: bash tools/device/cuszp_compare.sh [SIZE] [REPEAT] [DIR] [PROFILES]
# multires and cuSZp side by side on the H200, fields in device memory:
# `multires bench --config codec-3d --resident` for each of PROFILES
# (default "default fast"; every value checked by the bench) and cuSZp's
# plain and outlier modes (tools/device/cuszp_bench.cu) on the same
# fields (the bench's field cache), at rel 1e-2, 1e-3, 1e-4.
#
# cuSZp is built here from its public source, which travels in DIR/cuSZp
# (DIR an ignored folder, default .gpu; never committed): on the build machine
#   git -C <cuSZp clone> archive HEAD | tar -x -C DIR/cuSZp
# and DIR/multires is the release binary (cargo build --release -p multires-cli).
set -eu
size=${1:-1024}
repeat=${2:-5}
dir=${3:-.gpu}
profiles=${4:-default fast}
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
fields=/tmp/mr-fields
mkdir -p "$fields"
nvcc -O3 -std=c++17 -arch=sm_90 -I $dir/cuSZp/include -I $dir/cuSZp/include/cuSZp $dir/cuSZp/src/*.cu tools/device/cuszp_bench.cu \
  -o /tmp/cuszp_bench
echo "cuSZp $(cat $dir/cuSZp/COMMIT 2>/dev/null || echo '(commit not recorded)'), ${size}^3 float32, median of $repeat"
for p in $profiles; do
  echo "== multires --codec-profile $p"
  $dir/multires bench --config codec-3d --device cuda --gpus 1 --codec-size "$size" --resident \
    --codec-field-cache "$fields" --repeat "$repeat" --codec-profile "$p"
done
for kind in smooth turbulent; do
  /tmp/cuszp_bench "$fields/$kind-$size.npy" "$kind" "$repeat" 1e-2 1e-3 1e-4
done
