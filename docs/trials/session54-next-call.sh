#!/bin/bash
# For the session after 54 (nvidia-h200-x2, carry [".gpu"] with .gpu/multires from main at the
# session's end; no GPU tests owed: session 54's call 5 ran them on its final build; about 390 s
# with the start). Why `halve_last_large` gained 2.2% on two H100s and 0.9% on two H200s, which
# GPU now ends last, and where decoding loses 1.2-1.5 ms to two GPUs. On whatever cards come:
# traced two-GPU runs with the cut and without (MULTIRES_CODEC_HALVE_LAST=off), each slab alone
# traced, then the whole on one and two GPUs, alternated three times.
# Read the traces with `trace_summary.py X.err` (per run and GPU: the span; decodes show
# `decompress_slabs` stages) and `batch_marks.py X.err 24 K` (23 batches without the cut: per
# GPU and batch, the main marks of the K-th two-GPU run).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
traced tr_cut 1024 2 X=1
traced tr_off 1024 2 MULTIRES_CODEC_HALVE_LAST=off
# Each slab alone, traced, for the decode's two-GPU loss (1.2-1.5 ms on H100s, session 54).
traced tr_516 516x1024 1 X=1
traced tr_508 508x1024 1 X=1
for i in 1 2 3; do
  run cut_$i 1024 turbulent 9 1,2 X=1
  run off_$i 1024 turbulent 9 1,2 MULTIRES_CODEC_HALVE_LAST=off
  say "elapsed $(( $(date +%s) - T0 ))s"
done
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; cp /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
