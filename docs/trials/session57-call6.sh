#!/bin/bash
# Session 57 call 6 (nvidia-h200-x2, about 350 s): the final build (a zero bound's interpolation
# step a power of two below the peak, in `interp_step` and the ISTEP kernel): the GPU tests (now
# with constant fields under a relative bound, CPU = GPU bytes and the device's decode exact) and
# cli_check.sh, then three A/B processes of the default for the session's two-GPU ratio.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
for i in 1 2 3; do run def_$i 1024 turbulent 9 1,2 X=1; done
end_call
