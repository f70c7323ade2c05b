#!/bin/bash
# For the session after 59 (nvidia-h200-x2, about 480 s with the start; carry [".gpu"]). It
# applies nothing itself: first
#   git apply docs/trials/session59-slot-tables-plans.patch
# (knobs only, defaults unchanged: MULTIRES_CODEC_TABLES=slot copies write_tables' rANS starts on
# the slot's kept thread, MULTIRES_CODEC_PLANS=slot plans the coder's bricks there), build
# (`cargo build --release`, `cargo test --release --no-run -p multires-cuda --test gpu`), copy
# `multires` and the gpu test binary into .gpu/ (multires, gpu_tests), then run this. The GPU tests
# and cli_check come first: after session 59's device-tested build, `workers::run_all` came to
# name a slot thread's panic message and a thread that could not start (host code; its unit
# tests passed, not yet on the device). Session 59 call 5: one
# process with TABLES=slot gave two-GPU compress 237.4 and decode 265.5 GB/s, inside the final
# build's spread (229.8-242.0 and 251.6-270.9); PLANS=slot slowed the one-GPU coder (125 against
# 130-134), so it is not run again. Four pairs alternated; adopt TABLES=slot (make it the way,
# drop both knobs, then the GPU tests) only if its two-GPU rows beat the default's in most pairs
# without the one-GPU rows losing.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
gpu_checks
export RUN_LIMIT=60
for i in 1 2 3 4; do
  run base_$i 1024 turbulent 9 1,2 X=1
  run tables_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_TABLES=slot
done
say "elapsed $(elapsed)s"
end_call
