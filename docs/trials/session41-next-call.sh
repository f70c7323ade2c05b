#!/bin/bash
# For the next session (written in session 41), on nvidia-h200-x2 (about 60 s with the start):
# whether a stream copy two bytes off a word is what holds a decode's uploads to 30-38 GB/s a GPU.
# No build needed. If the "+98 -> +0" rows run well under the "+0 -> +0" ones, see GPU_NOTES.md
# session 41 for the fix to try.
set -uo pipefail
timeout 120 python3 tools/device/offset_rate.py 300 | tee $OUT/offset_rate.txt
timeout 60 python3 tools/device/h2d_rate.py 4 | tee $OUT/h2d_rate.txt
