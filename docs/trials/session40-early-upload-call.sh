#!/bin/bash
# For the next session (written in session 40): after `git apply docs/trials/session40-early-upload.patch`, a build, and
# the binaries copied to .gpu/ (multires, gpu_tests), run on nvidia-h200-x2 with carry [".gpu"] (about 330 s):
# the 15 GPU tests, cli_check.sh, turbulent A/B of MULTIRES_CODEC_EARLY_UPLOAD, and the smooth field.
# (Run in session 41, call 1: BENCHMARKS.md "Codec, session 41".)
set -uo pipefail
source tools/device/codec_ab.sh
gpu_checks
run tE 1024 turbulent 3 1,2 X=1
run tO 1024 turbulent 3 1,2 MULTIRES_CODEC_EARLY_UPLOAD=0
run sE 1024 smooth 3 1,2 X=1
