#!/bin/bash
# Session 59 call 5 (nvidia-h200-x2, carry [".gpu"], about 200 s: the session's last device
# time). A trial build: docs/trials/session59-slot-tables-plans.patch on the final build (call 4),
# `multires` only (no GPU tests: the default path is the final build's). Two more host steps a
# batch from the rayon pool to the slot's kept thread, as call 3 did for the decode's headers:
# MULTIRES_CODEC_TABLES=slot (write_tables' copy of the rANS starts, 0.6-1.3 MB a batch, coder
# and decoder) and MULTIRES_CODEC_PLANS=slot (the coder's rans::plan a brick). Each process saves
# its rows at once, so a call cut short still says something.
set -uo pipefail
source tools/device/codec_ab.sh
begin_call
export RUN_LIMIT=60
run base_1 1024 turbulent 9 1,2 X=1
run tables_1 1024 turbulent 9 1,2 MULTIRES_CODEC_TABLES=slot
run plans_1 1024 turbulent 9 1,2 MULTIRES_CODEC_PLANS=slot
run base_2 1024 turbulent 9 1,2 X=1
run both_1 1024 turbulent 9 1,2 MULTIRES_CODEC_TABLES=slot MULTIRES_CODEC_PLANS=slot
say "elapsed $(elapsed)s"
end_call
