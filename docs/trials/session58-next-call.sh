#!/bin/bash
# For the session after 58 (nvidia-h200-x2, about 350 s with the start). It applies nothing
# itself: first `git apply docs/trials/session58-device-crc.patch`, build (`cargo build
# --release`, `cargo test --release --no-run -p multires-cuda --test gpu`), copy `multires` and
# the gpu test binary into .gpu/, then run this with carry [".gpu"].
# The trial: MULTIRES_CODEC_VERIFY=device checks a decode's payloads on the device, from the
# whole payloads copied up, with CRC_PIECES/CRC_FOLD queued on the slot's stream while RDEC runs
# on the bulk one (session 58 call 5 queued them before RDEC: the one-GPU decode lost 5%). Call 4
# of session 58 put the two-GPU decode at 1.85x with no checks, 1.78x with the host's after the
# uploads (now the default, `own`). The GPU tests with the knob on (the corrupt-file test then
# asserts the device checked), then device against the default, alternated twice.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
SECONDS=0
MULTIRES_CODEC_VERIFY=device MULTIRES_REQUIRE_GPU=1 timeout 260 .gpu/gpu_tests --test-threads 1 \
  > $OUT/gpu_tests_device.log 2>&1
say "gpu tests (VERIFY=device): rc $? in ${SECONDS}s | $(grep 'test result' $OUT/gpu_tests_device.log)"
for i in 1 2; do
  run device_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_VERIFY=device
  run own_$i 1024 turbulent 9 1,2 X=1
done
end_call
