#!/bin/bash
# Session 51 call 1 (nvidia-h200-x2, carry [".gpu"] built from c468d4d): session50-next-call.sh plus
# traced two-GPU runs of the whole at both settings (each GPU's end, their spread). About 380 s.
# Question: is the drain (F, ~3 ms) RENC's longest chains? Session 50 found the device busy from
# the first transform to the last copy, and no fixed cost a batch. Shorter chains come from the
# plan's knobs, which the CPU coder reads too (bytes equal within a process; the ratio moves a
# little: BENCHMARKS' rows report it): MULTIRES_RANS_DENSE (8192 steps a chain before a split),
# MULTIRES_RANS_LONG (16384 before shorter chunks). Traced one-GPU spans of the half and the whole
# at the default and at DENSE=2048 LONG=4096, then two-GPU medians alternated.
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
for sz in 516x1024 1024; do
  traced def_$sz $sz 1 X=1
  traced short_$sz $sz 1 MULTIRES_RANS_DENSE=2048 MULTIRES_RANS_LONG=4096
done
traced def2_1024 1024 2 X=1
traced short2_1024 1024 2 MULTIRES_RANS_DENSE=2048 MULTIRES_RANS_LONG=4096
run def_1 1024 turbulent 9 1,2 X=1
run short_1 1024 turbulent 9 1,2 MULTIRES_RANS_DENSE=2048 MULTIRES_RANS_LONG=4096
run def_2 1024 turbulent 9 1,2 X=1
run short_2 1024 turbulent 9 1,2 MULTIRES_RANS_DENSE=2048 MULTIRES_RANS_LONG=4096
grep -h 'ratio' $OUT/*.log | sed -E 's/.*(ratio [0-9.]+).*/\1/' | sort | uniq -c | tee -a $OUT/summary.txt
mkdir -p /tmp/logs && cp $OUT/*.log /tmp/tr/def_* /tmp/tr/short_* /tmp/logs/ 2>/dev/null; rm -f $OUT/*.log
tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
