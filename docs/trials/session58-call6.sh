#!/bin/bash
# Session 58, call 6 (nvidia-h200-x2; carry [".gpu"], .gpu/multires and .gpu/gpu_tests built
# from the deferred-checks change). Call 5: checksums on the device cost the one-GPU decode 5%
# (H200s) and gained nothing on two; reverted. Now the host's checks wait for the uploads: a
# batch checks its payloads once its GPU's logged uploads are done (`drained`, default), once
# its own are (`own`), or at once (`queued`, the old way); alternated twice; then the GPU tests
# and cli_check on this build.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2; do
  run drained_$i 1024 turbulent 9 1,2 X=1
  run own_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=own
  run queued_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=queued
done
gpu_checks
end_call
