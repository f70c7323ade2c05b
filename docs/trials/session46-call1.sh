#!/bin/bash
# Session 46, call 1 (nvidia-h200-x2, carry [".gpu"]): session 45's planned knobs call
# (three slots or three front permits a GPU on 1024^3, interleaved), then traced runs of one
# GPU and two (host marks) to compare their heads and tails. Logs come back in one tarball.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
run t 1024 turbulent 3 1,2 X=1
run t_slots3 1024 turbulent 3 1,2 MULTIRES_CODEC_SLOTS=3
run t_front3 1024 turbulent 3 1,2 MULTIRES_CODEC_FRONT=3
run t2 1024 turbulent 3 1,2 X=1
run s 1024 smooth 3 1,2 X=1
run s_slots3 1024 smooth 3 1,2 MULTIRES_CODEC_SLOTS=3
for g in 1 2; do
  MULTIRES_CODEC_TRACE=1 timeout 60 $M bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus $g --resident --codec-rel 1e-3 --repeat 3 --codec-field turbulent > /tmp/tr/tr$g.log 2>/tmp/tr/tr$g.err
  say "traced $g: rc $?"
  python3 tools/device/trace_summary.py /tmp/tr/tr$g.err > $OUT/trace$g.txt 2>&1
done
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
