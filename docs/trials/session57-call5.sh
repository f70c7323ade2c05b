#!/bin/bash
# Session 57 call 5 (nvidia-h200-x2, about 300 s): halve_last_large in the pinned (streaming) path,
# never measured there (carried since session 54): field and file in page-locked host memory,
# one GPU and two, with the cut (default) and without (MULTIRES_CODEC_HALVE_LAST=off),
# alternated twice; then one more resident A/B pair of the default for the session's ratio.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
pinned() {
  local name=$1; shift
  SECONDS=0
  env "$@" timeout 120 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields \
    --gpus 1,2 --pinned --codec-rel 1e-3 --repeat 3 --codec-field turbulent > $OUT/$name.log 2> /tmp/tr/$name.err
  say "== $name ($*) rc $? in ${SECONDS}s"
  say "$(grep 'codec-3d pinned' $OUT/$name.log | sed -E 's/.*\| ([0-9]) GPU.*= ([0-9.]+) GB.s .*= ([0-9.]+) GB.s \(([^)]*)\) \| ([^|]*)\|.*/\1 GPU: \2 \/ \3 | \5/')"
}
for i in 1 2; do
  pinned cut_$i X=1
  pinned nocut_$i MULTIRES_CODEC_HALVE_LAST=off
done
run def_1 1024 turbulent 9 1,2 X=1
end_call
