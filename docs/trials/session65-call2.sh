#!/bin/bash
# Session 65, call 2 (nvidia-h200-x2, carry [".gpu"]): session 62's plan per GPU
# (`docs/trials/session62-plan-per-gpu.patch`: each GPU plans its slab on its own thread in
# `decompress_slabs`) against HEAD, two binaries alternated: .gpu/multires (HEAD 992a602) and
# .gpu/plan (HEAD with the patch). Then one traced two-GPU process of each, whose
# `trace decompress_slabs` lines give the plan's time on the caller's thread.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
for i in 1 2 3 4 5; do
  M=.gpu/multires RUN_LIMIT=100 run base_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  M=.gpu/plan RUN_LIMIT=100 run plan_$i 1024 turbulent 9 1,2 MULTIRES_BENCH_ALIGN_MS=60
  [ $(elapsed) -gt 400 ] && break
done
for f in /tmp/tr/base_*.err /tmp/tr/plan_*.err; do
  say "$(basename $f .err) decompress: $(python3 tools/device/tick_medians.py $f decompress) | compress: $(python3 tools/device/tick_medians.py $f compress)"
done
for b in multires plan; do
  M=.gpu/$b BENCH_LIMIT=80 bench_one tr_$b 1024 2 MULTIRES_CODEC_TRACE=1
  say "trace $b rc $?: $(grep 'trace decompress_slabs' /tmp/tr/tr_$b.err | tail -4 | tr '\n' ';')"
done
say "elapsed $(elapsed)s"
end_call
