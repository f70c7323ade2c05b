#!/bin/bash
# Session 65, call 5 (nvidia-h200-x2, carry [".gpu"], HEAD's binary .gpu/multires): call 4's
# traces had GPU 0's lag shrink to 0.2-0.4 ms with MULTIRES_CODEC_SHARES=5 (GPU 0 then has 8
# batches, the number of hardware queues a context has by default). Plain processes, the knob
# unset and at 5 (it sets one GPU's slab too), alternated, both rows.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3; do
  M=.gpu/multires RUN_LIMIT=100 run def_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  M=.gpu/multires RUN_LIMIT=100 run sh5_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60 MULTIRES_CODEC_SHARES=5
  [ $(elapsed) -gt 200 ] && break
done
for f in /tmp/tr/def_*.err /tmp/tr/sh5_*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress) | compress: $(python3 tools/device/tick_medians.py $f compress)"
done
say "elapsed $(elapsed)s"
end_call
