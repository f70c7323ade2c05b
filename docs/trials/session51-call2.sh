#!/bin/bash
# Session 51 call 2 (nvidia-h200-x2, carry [".gpu"] built from c468d4d; about 150 s with the start).
# Question: do the two GPUs share their link to the host? A run's tail is the payloads' copies
# down (a quarter of a half's payload after its last histogram); if both GPUs copy through one
# link, two GPUs' tails are longer than one GPU's half alone. Then traced two-GPU runs (each
# GPU's batches; call 1's copies missed them).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi topo -m > $OUT/topo.txt 2>&1; cat $OUT/topo.txt
python3 tools/device/pcie_share.py 2>&1 | tee -a $OUT/summary.txt
traced two_1024 1024 2 X=1
traced half_516x1024 516x1024 1 X=1
mkdir -p /tmp/logs && cp /tmp/tr/two_* /tmp/tr/half_* /tmp/logs/; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
