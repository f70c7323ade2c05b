#!/bin/bash
# Session 43, call 4 (nvidia-h200-x2, carry [".gpu"]): a decode's rANS streams copied up from its
# start, paced (SlabStreams: the file's bytes in 16 MiB pieces, two queued at once by a thread of
# their own; a batch waits on the device for its pieces; its lists go up by the engine as
# before) against the batches' own copies (MULTIRES_SLAB_STREAMS=0). Call 3 queued every piece
# at once with the lists through the stage: the lists waited behind the whole file on one GPU
# (1-GPU turbulent decode 114 GB/s against 145-155). First the resident/pinned/slabs codec test
# (page-locked resident and slab decodes with default pieces, 1 KiB pieces, and the path off).
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
MULTIRES_REQUIRE_GPU=1 timeout 120 .gpu/gpu_tests --test-threads 1 codec_on_a_device_resident > $OUT/test.log 2>&1
say "test: rc $? in ${SECONDS}s | $(grep 'test result' $OUT/test.log)"
run t_on 1024 turbulent 3 1,2 X=1
run t_off 1024 turbulent 3 1,2 MULTIRES_SLAB_STREAMS=0
run s_on 1024 smooth 3 1,2 X=1
run s_off 1024 smooth 3 1,2 MULTIRES_SLAB_STREAMS=0
run t_a4 1024 turbulent 3 1,2 MULTIRES_SLAB_AHEAD=4
