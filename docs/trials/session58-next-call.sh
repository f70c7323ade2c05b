#!/bin/bash
# For the session after 58 (nvidia-h200-x2, about 480 s with the start; carry [".gpu"]). It
# applies nothing itself: first
#   git apply docs/trials/session58-device-crc.patch docs/trials/session58-slot-workers.patch
# (they apply together, either order; built and linted together here, never run on a GPU),
# build (`cargo build --release`, `cargo test --release --no-run -p multires-cuda --test gpu`),
# copy `multires` and the gpu test binary into .gpu/ (multires, gpu_tests), then run this.
# Two trials, each behind a knob, against session 58's final build's ways:
# - MULTIRES_CODEC_VERIFY=device: a decode's payloads checked on the device, CRC_PIECES_LEAN
#   (4 KiB of shared memory, beside RDEC's blocks) and CRC_FOLD queued on the slot's stream
#   while RDEC runs on the bulk one (session 58 call 5
#   queued them before RDEC: one-GPU decode -5%). Session 58 call 4: two-GPU decode 1.85x with
#   no checks, 1.78x with the host's after the uploads (the default, `own`).
# - slot threads kept from run to run (`src/workers.rs`, on in the patch;
#   MULTIRES_CODEC_WORKERS=spawn is the old way): session 58's traces put a two-GPU decode's
#   batches' first steps over 1.7-3.0 ms against 0.2 alone.
# The GPU tests with the patches' defaults and VERIFY=device (the corrupt-file test then asserts
# the device checked), then four ways alternated twice. Adopt what gains on two GPUs without the
# one-GPU rows losing; drop the rest (and its knob).
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
SECONDS=0
MULTIRES_CODEC_VERIFY=device MULTIRES_REQUIRE_GPU=1 timeout 260 .gpu/gpu_tests --test-threads 1 \
  > $OUT/gpu_tests_device.log 2>&1
say "gpu tests (kept threads, VERIFY=device): rc $? in ${SECONDS}s | $(grep 'test result' $OUT/gpu_tests_device.log)"
for i in 1 2; do
  run kept_device_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=device
  run kept_own_$i 1024 turbulent 9 1,2 X=1
  run spawn_own_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_WORKERS=spawn
done
say "elapsed $(elapsed)s"
end_call
