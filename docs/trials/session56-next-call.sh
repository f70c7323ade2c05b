#!/bin/bash
# For the session after 56 (nvidia-h200-x2, carry [".gpu"] with .gpu/multires and .gpu/gpu_tests
# built from main; about 330 s with the start; no GPU tests owed: the final build's passed in
# session 56 call 4). The decode's fixed part, measured on the device: a half field decodes in more
# than half the whole's time (H100s: 17.9-18.2 ms against 33.3-34.0), and session 56 ruled out the
# host's holds and lending. Device timelines (MULTIRES_CODEC_TIMELINE=1; read the order of the
# marks, not the gaps at launches) of the whole on one GPU, GPU 0's slab alone (516 planes) on one
# GPU, and the whole on two GPUs; then two plain processes for the session's ratio. Read with
# `python3 tools/device/timeline_summary.py /tmp/tr/NAME.err` (per GPU and run: when the first and
# last batch reached each mark; for a decode `d_rdec_before` = streams up, `d_decode` = RDEC's end,
# `d_inverse` = the inverse's end): where the half's span goes that the whole's overlaps.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
timeline tl_whole 1024 X=1
timeline tl_half 516x1024 X=1
TL_GPUS=2 timeline tl_two 1024 X=1
say "elapsed $(elapsed)s"
for i in 1 2; do run def_$i 1024 turbulent 9 1,2 X=1; done
end_call
