#!/usr/bin/env python3
"""Per-batch host marks of one traced run (a MULTIRES_CODEC_TRACE=1 log, stderr of a bench).

Usage: python3 tools/device/batch_marks.py trace.err BATCHES [K]

Prints the K-th (default 0) run of BATCHES batches in all (both GPUs' together for a
two-GPU run; runs as `trace_summary.py` groups them): per GPU and batch, its values and
when it passed the main marks, in ms from the run's first mark. Session 54 read the tails
of GPU 0 and GPU 1 with it.
"""
import sys

from trace_summary import parse, runs

MARKS = ["start", "slot", "before", "interp", "r_hist", "r_lists_up", "r_encode", "r_down_queued", "end"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, want = sys.argv[1], int(sys.argv[2])
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    sel = [r for r in runs(parse(path)) if len(r) == want]
    if k >= len(sel):
        sys.exit(f"{path}: {len(sel)} runs of {want} batches, no run {k}")
    run = sel[k]
    t0 = min(b["marks"][0][1] for b in run)
    for b in sorted(run, key=lambda b: (b["gpu"], b["batch"])):
        marks = dict(b["marks"])
        cells = " ".join(f"{n}={marks[n] - t0:5.1f}" for n in MARKS if n in marks)
        print(f"gpu {b['gpu']} batch {b['batch']:2d} {b['values'] / 1e6:6.1f} M {cells}")


if __name__ == "__main__":
    main()
