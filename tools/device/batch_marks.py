#!/usr/bin/env python3
"""Per-batch host marks of one traced run (a MULTIRES_CODEC_TRACE=1 log, stderr of a bench).

Usage: python3 tools/device/batch_marks.py trace.err BATCHES [K]

Prints the K-th (default 0) run of BATCHES batches in all (both GPUs' together for a
two-GPU run): per GPU and batch, its values and when it passed the main marks, in ms
from the run's first mark. Session 54 read the tails of GPU 0 and GPU 1 with it.
"""
import re
import sys

MARKS = ["start", "slot", "before", "interp", "r_hist", "r_lists_up", "r_encode", "r_down_queued", "end"]


def runs(path):
    out, cur, seen = [], None, set()
    for line in open(path, errors="replace"):
        m = re.match(r"trace gpu \[?([\d, ]+)\]? batch (\d+) \((\d+) values\): (.*)", line)
        if not m:
            continue
        key = (m[1], m[2])
        if cur is None or key in seen:
            cur, seen = [], set()
            out.append(cur)
        seen.add(key)
        marks = {k: float(v) for k, v in re.findall(r"(\w+)@([0-9.]+)", m[4])}
        cur.append((m[1], int(m[2]), int(m[3]) / 1e6, marks))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, want = sys.argv[1], int(sys.argv[2])
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    sel = [r for r in runs(path) if len(r) == want]
    if k >= len(sel):
        sys.exit(f"{path}: {len(sel)} runs of {want} batches, no run {k}")
    run = sel[k]
    t0 = min(min(m.values()) for *_, m in run if m)
    for g, b, v, m in sorted(run, key=lambda x: (x[0], x[1])):
        cells = " ".join(f"{n}={m[n] - t0:5.1f}" for n in MARKS if n in m)
        print(f"gpu {g} batch {b:2d} {v:6.1f} M {cells}")


if __name__ == "__main__":
    main()
