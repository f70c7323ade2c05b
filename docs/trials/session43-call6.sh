#!/bin/bash
# Session 43, call 6 (nvidia-h200-x2, carry [".gpu"]), on b2c648b, 271 s of device time left:
# CUDA_DEVICE_MAX_CONNECTIONS=32 against the default 8 hardware queues. A GPU runs 20-26 slot
# streams (13 slots, each with its stream and its bulk stream); with 8 connections, commands of
# streams that share one are served in order, which would explain the timeline's 8-12 ms gaps
# between two events of one stream with nothing queued between them (call 1: the host passed
# both marks within 0.5 ms). Session 30 tried 32 on one GPU only (within the spread).
set -uo pipefail
source tools/device/codec_ab.sh
run c32 1024 turbulent 3 1,2 CUDA_DEVICE_MAX_CONNECTIONS=32
run c8 1024 turbulent 3 1,2 X=1
