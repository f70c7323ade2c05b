#!/bin/bash
# Usage on the device: bash tools/device/codec_profile.sh [SIZE] [FIELD]
# Per-kernel device time of the resident codec (Nsight Compute, one metric,
# kernels serialized) on a SIZE^3 float32 field (default 512, turbulent),
# then the resident bench at that size with the batch trace. Logs go to
# $OUT when it is set. MULTIRES=path/to/multires (default .gpu/multires).
set -uo pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
M=${MULTIRES:-.gpu/multires}
SIZE=${1:-512}
FIELD=${2:-turbulent}
O=${OUT:-/tmp}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
# One bound (rel 1e-3) through ncu: the resident compress and decompress
# (the host-path runs of the bench go through the same kernels).
"$NCU" --clock-control none --metrics gpu__time_duration.sum \
  --print-summary per-kernel --csv \
  "$M" bench --config codec-3d --device cuda --codec-size "$SIZE" --repeat 1 --resident \
  --codec-field "$FIELD" --codec-rel 1e-3 > "$O/ncu_$SIZE.csv" 2> "$O/ncu_$SIZE.err"
python3 - "$O/ncu_$SIZE.csv" <<'EOF'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
head = rows[0]
try:
    ki, ni, mi = head.index('Kernel Name'), head.index('Invocations'), head.index('Metric Name')
except ValueError:
    print('ncu output not understood:', head); sys.exit(0)
ai = head.index('Average')
tot = {}
for r in rows[1:]:
    if r[mi] != 'gpu__time_duration.sum':
        continue
    name = r[ki].split('(')[0]
    t = float(r[ai].replace(',', '')) * int(r[ni].replace(',', ''))
    tot[name] = tot.get(name, (0, 0.0))
    tot[name] = (tot[name][0] + int(r[ni].replace(',', '')), tot[name][1] + t)
s = sum(v[1] for v in tot.values())
print(f"{'kernel':24s} {'launches':>9s} {'ms':>9s} {'share':>6s}")
for k, (n, t) in sorted(tot.items(), key=lambda kv: -kv[1][1]):
    print(f"{k:24s} {n:9d} {t/1e6:9.2f} {100*t/s:5.1f}%")
print(f"{'total':24s} {'':9s} {s/1e6:9.2f}")
EOF
MULTIRES_CODEC_TRACE=1 "$M" bench --config codec-3d --device cuda --codec-size "$SIZE" --repeat 1 \
  --resident --codec-field "$FIELD" --codec-rel 1e-3 > "$O/trace_$SIZE.log" 2>&1
grep "codec-3d" "$O/trace_$SIZE.log"
