#!/bin/bash
# Session 48 call 3 (nvidia-h200-x2, carry [".gpu"]): call 2's A/B again on (one hopes) a quiet
# machine, with no tests (call 2 ran them on this build): ec1a53d (.gpu/multires_prev)
# against 4bd3b6e, and 4bd3b6e with MULTIRES_CODEC_TAPER=1/2, medians of 9, 1024^3.
set -uo pipefail
source tools/device/codec_ab.sh
SECONDS=0
P=.gpu/multires_prev
M=$P run t_prev 1024 turbulent 9 1,2 X=1
run t_new 1024 turbulent 9 1,2 X=1
run t_tp1 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=1
M=$P run t_prev2 1024 turbulent 9 1,2 X=1
run t_new2 1024 turbulent 9 1,2 X=1
run t_tp1b 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=1
run t_tp2 1024 turbulent 9 1,2 MULTIRES_CODEC_TAPER=2
run s_new 1024 smooth 9 1,2 X=1
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total ${SECONDS}s"
