#!/bin/bash
# Session 58, call 7 (nvidia-h200-x2; carry [".gpu"], the final build: a decode batch checks
# its payloads once its own streams are up, the simplest of call 6's three ways, with `own`'s
# figures). The GPU tests and cli_check on this build first, then the default against
# MULTIRES_CODEC_VERIFY=queued (the old way), one process each.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
run own 1024 turbulent 9 1,2 X=1
run queued 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=queued
end_call
