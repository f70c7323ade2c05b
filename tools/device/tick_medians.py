#!/usr/bin/env python3
"""Each row's run times from a bench process's stderr (MULTIRES_BENCH_ALIGN_MS prints them).

Usage: tick_medians.py ERR [WHAT]

Reads the `bench ticks WHAT: TICK:MS ...` lines (WHAT: compress or decompress, default
decompress), one per timed row in the bench's order, leaves out each row's first run (the
warm-up, as the bench's medians do) and prints the rows' median and fastest run in ms,
`med M min F | ...`.
"""
import statistics
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    what = sys.argv[2] if len(sys.argv) == 3 else "decompress"
    rows = []
    for line in open(sys.argv[1], errors="replace"):
        if line.startswith(f"bench ticks {what}:"):
            runs = [float(item.split(":")[1]) for item in line.split()[3:]][1:]
            if runs:
                rows.append(f"med {statistics.median(runs):.2f} min {min(runs):.2f}")
    print(" | ".join(rows))


if __name__ == "__main__":
    main()
