#!/bin/bash
# Session 46, call 2 (nvidia-h200-x2, carry [".gpu"]): A/B of three changes to the coder's
# two-GPU run, interleaved, 1024^3 rel 1e-3, medians of 9: .gpu/multires_prev (54358b9) against
# the new build with the old gate order (MULTIRES_CODEC_GATE=any: the merged slab head only),
# the ordered gate, and the ordered gate with tapered tails (MULTIRES_CODEC_TAPER=2, 4).
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
P=.gpu/multires_prev N=.gpu/multires
M=$P run t_prev 1024 turbulent 9 1,2 X=1
M=$N run t_head 1024 turbulent 9 1,2 MULTIRES_CODEC_GATE=any
M=$N run t_gate 1024 turbulent 9 1,2 X=1
M=$N run t_taper2 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=2
M=$N run t_taper4 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=4
M=$P run t_prev2 1024 turbulent 9 1,2 X=1
M=$N run t_gate2 1024 turbulent 9 1,2 X=1
M=$N run t_taper2b 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=2
M=$P run s_prev 1024 smooth 9 1,2 X=1
M=$N run s_gate 1024 smooth 9 1,2 X=1
M=$N run s_taper2 1024 smooth 9 1,2 MULTIRES_CODEC_TAPER=2
MULTIRES_CODEC_TRACE=1 MULTIRES_CODEC_TAPER=2 timeout 60 $N bench --config codec-3d --device cuda --codec-size 1024 --codec-field-cache /tmp/fields --gpus 2 --resident --codec-rel 1e-3 --repeat 3 --codec-field turbulent > /tmp/tr/tr2.log 2>/tmp/tr/tr2.err
python3 tools/device/trace_summary.py /tmp/tr/tr2.err > $OUT/trace_taper2.txt 2>&1
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/*.err /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
