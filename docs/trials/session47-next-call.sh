#!/bin/bash
# For the session after 47 (nvidia-h200-x2, carry [".gpu"]; about 330 s with the start).
# Before the call: `git apply docs/trials/session47-tail-marks.patch` (trace and timeline marks
# inside the coder's checksums step and its lists up, and stale head marks dropped at each
# compression's start; trace-only), `cargo build --release`,
# `cargo test --release --no-run -p multires-cuda --test gpu`; copy target/release/multires to
# .gpu/multires and the gpu test binary to .gpu/gpu_tests. The call runs the GPU tests, then
# one timeline run and one traced run of two GPUs: which of the stage copies, HPUT, CRC_PIECES
# and CRC_FOLD takes the 1.1-1.3 ms a batch spends on the device between its outlier lists and
# its checksums (session 47), and what of the last batch's 0.5-1.8 ms of lists up is the
# chunk lists, the stage or the allocation. Read them with
# `python3 tools/device/timeline_summary.py tl.err --batches` and `trace_summary.py tr.err`.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
gpu_checks
B=(bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --codec-field turbulent)
MULTIRES_CODEC_TIMELINE=1 timeout 120 $M "${B[@]}" --repeat 3 > /tmp/tr/tl.log 2> /tmp/tr/tl.err
say "timeline rc $?"
MULTIRES_CODEC_TRACE=1 timeout 120 $M "${B[@]}" --repeat 9 > /tmp/tr/tr.log 2> /tmp/tr/tr.err
say "trace rc $? $(grep -oE 'slabs .*' /tmp/tr/tr.log | grep -o 'compress [0-9.]* s = [0-9.]* GB/s' | tr '\n' ' ')"
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/tl.* /tmp/tr/tr.* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
