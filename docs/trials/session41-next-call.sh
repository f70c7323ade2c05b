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
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=.gpu/multires
mkdir -p /tmp/tr
say() { echo "$@" | tee -a $OUT/summary.txt; }
timeout 90 python3 tools/device/offset_rate.py 300 | tee -a $OUT/summary.txt
SECONDS=0
MULTIRES_REQUIRE_GPU=1 timeout 170 .gpu/gpu_tests --test-threads 1 > $OUT/gpu_tests.log 2>&1
say "gpu tests: rc $? in ${SECONDS}s | $(grep 'test result' $OUT/gpu_tests.log)"
MULTIRES=$M timeout 40 bash tools/device/cli_check.sh > $OUT/cli_check.log 2>&1
say "cli_check: rc $? | $(tail -1 $OUT/cli_check.log)"
run() { # name size field repeat gpus env...
  local name=$1 n=$2 f=$3 r=$4 g=$5; shift 5
  SECONDS=0
  env "$@" timeout 90 $M bench --config codec-3d --device cuda --codec-size $n --gpus $g --resident --codec-rel 1e-3 --repeat $r --codec-field $f > $OUT/$name.log 2>/tmp/tr/$name.err
  say "== $name ($n $f $*) rc $? in ${SECONDS}s"; say "$(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | sed -E 's/codec-3d (\w+) .*\| ([0-9]) GPU.*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1 \2: \3 \/ \4/; s/codec-3d (resident) .*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s.*/\1: \2 \/ \3/')"
  say "equal bytes rows: $(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | grep -c "bytes equal to the host path's") values: $(grep -E "codec-3d (resident|slabs)" $OUT/$name.log | grep -c "decoded values equal")"
}
run tN 1024 turbulent 3 1,2 X=1
run tO 1024 turbulent 3 1,2 MULTIRES_CODEC_SPAN_OFFSETS=0
run sN 1024 smooth 3 1,2 X=1
