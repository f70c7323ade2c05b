#!/bin/bash
# Session 43, call 3 (nvidia-h200-x2, carry [".gpu"]): a decode's rANS streams copied up at its
# start (SlabStreams: the file's bytes in 16 MiB pieces queued at once, batches waiting on the
# device for their pieces, lists through the stage) against the batches' own copies
# (MULTIRES_SLAB_STREAMS=0). First the resident/pinned/slabs codec test (new: page-locked slab
# and resident decodes with default pieces, 1 KiB pieces, and the path off).
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
MULTIRES_REQUIRE_GPU=1 timeout 120 .gpu/gpu_tests --test-threads 1 codec_on_a_device_resident > $OUT/test.log 2>&1
say "test: rc $? in ${SECONDS}s | $(grep 'test result' $OUT/test.log)"
run t_on 1024 turbulent 3 1,2 X=1
run t_off 1024 turbulent 3 1,2 MULTIRES_SLAB_STREAMS=0
run s_on 1024 smooth 3 1,2 X=1
run s_off 1024 smooth 3 1,2 MULTIRES_SLAB_STREAMS=0
SECONDS=0
MULTIRES_CODEC_TIMELINE=1 timeout 80 $M bench --config codec-3d --device cuda --codec-size 1024 --gpus 1,2 --resident --codec-rel 1e-3 --repeat 2 --codec-field turbulent > /tmp/tr/tl.log 2>/tmp/tr/tl.err
say "== timeline rc $? ${SECONDS}s"
python3 tools/device/timeline_summary.py /tmp/tr/tl.err --batches > $OUT/tl.txt 2>&1
