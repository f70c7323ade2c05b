#!/bin/bash
# For the next session (written in session 42), on nvidia-h200-x2 with carry [".gpu"], about 420 s
# with the start. Before it: build (`cargo build --release`, `cargo test --release --no-run -p
# multires-cuda --test gpu`) and copy target/release/multires to .gpu/multires and the gpu test
# binary to .gpu/gpu_tests. At most 8 files come back from $OUT: this call writes 7.
# 1. The owed checks: the 15 GPU tests and cli_check after a454765 and 17f74a2 (the CPU rANS
#    decoder, the GPU tests' reference, now sixteen chunks at once with AVX-512 and sparse zero
#    runs at once).
# 2. What holds a slot's thread between its stream copies and its RDEC launch (session 42 call 4:
#    2.5-10.8 ms with nothing queued between the two marks): the timeline and the trace of the
#    same runs. In tr.txt, read the longest wait before d_rdec_before (host time); in tl.txt, the
#    gap from d_streams_up to d_rdec_before (device time) of the same batches.
# 3. The default benches, for the ratio on this machine start.
set -uo pipefail
source tools/device/codec_ab.sh
gpu_checks
SECONDS=0
MULTIRES_CODEC_TIMELINE=1 MULTIRES_CODEC_TRACE=1 timeout 100 $M bench --config codec-3d --device cuda --codec-size 1024 --gpus 1,2 --resident --codec-rel 1e-3 --repeat 1 --codec-field turbulent > /tmp/tr/tl.log 2>/tmp/tr/tl.err
say "== timeline and trace rc $? ${SECONDS}s"
grep -E "codec-3d (resident|slabs)" /tmp/tr/tl.log | tee -a $OUT/summary.txt
python3 tools/device/timeline_summary.py /tmp/tr/tl.err --batches > $OUT/tl.txt 2>&1
python3 tools/device/trace_summary.py /tmp/tr/tl.err > $OUT/tr.txt 2>&1
run t 1024 turbulent 3 1,2 X=1
run s 1024 smooth 3 1,2 X=1
