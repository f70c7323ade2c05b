#!/bin/bash
# Session 55 call 1 (nvidia-h200-x2, carry [".gpu"] with .gpu/multires = main at 49cac6d; no GPU
# tests owed; about 500 s). Knobs last tuned before sessions 38-54 changed the pipeline, swept on
# two GPUs against the default (a --gpus 1,2 process a round, so the ratio has its baseline on
# the same machine): MULTIRES_CODEC_SHARES (batches a slab; default 8 for a dense field on
# several GPUs) at 6, 7, 10 and 12, and MULTIRES_CODEC_FRONT=3 (transforms at once; default 2).
# Then whether the GPUs reach each other's memory (peer access over NVLink: what brick stealing
# needs), and one traced two-GPU run (which GPU ends last on these cards).
set -uo pipefail
source tools/device/codec_ab.sh
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ';' | sed 's/^/cards: /' | tee -a $OUT/summary.txt; echo
nvidia-smi topo -m > $OUT/topo.txt 2>&1
python3 - >> $OUT/summary.txt 2>&1 <<'PY'
import time, torch
print("peer 0->1:", torch.cuda.can_device_access_peer(0, 1), "1->0:", torch.cuda.can_device_access_peer(1, 0))
a = torch.empty(1 << 28, dtype=torch.float32, device="cuda:0")
for _ in range(3):
    torch.cuda.synchronize(0); torch.cuda.synchronize(1)
    t = time.perf_counter(); b = a.to("cuda:1"); torch.cuda.synchronize(1)
    print(f"1 GiB cuda:0 -> cuda:1 in {1e3*(time.perf_counter()-t):.2f} ms")
PY
for i in 1 2; do
  run def_$i 1024 turbulent 9 1,2 X=1
  for s in 6 7 10 12; do
    run sh${s}_$i 1024 turbulent 9 2 MULTIRES_CODEC_SHARES=$s
  done
  run fr3_$i 1024 turbulent 9 2 MULTIRES_CODEC_FRONT=3
  say "elapsed $(( $(date +%s) - T0 ))s"
done
traced tr_def 1024 2 X=1
mkdir -p /tmp/logs; mv $OUT/*.log /tmp/logs/; cp /tmp/tr/*.err /tmp/tr/*.log /tmp/logs/ 2>/dev/null; tar czf $OUT/logs.tgz -C /tmp logs
say "total $(( $(date +%s) - T0 ))s"
