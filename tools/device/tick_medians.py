#!/usr/bin/env python3
"""Each row's run times from a bench process's stderr (MULTIRES_BENCH_ALIGN_MS prints them).

Usage: tick_medians.py ERR [WHAT]

Reads the `bench ticks WHAT: TICK:MS ...` lines (WHAT: compress or decompress, default
decompress) as pair_ticks.py does, one per timed row in the bench's order, each row's first run
(the warm-up) left out, and prints the rows' median and fastest run in ms, `med M min F | ...`.
"""
import statistics
import sys

from pair_ticks import ticks


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    what = sys.argv[2] if len(sys.argv) == 3 else "decompress"
    rows = [
        f"med {statistics.median(runs.values()):.2f} min {min(runs.values()):.2f}"
        for w, runs in ticks(sys.argv[1])
        if w == what and runs
    ]
    print(" | ".join(rows))


if __name__ == "__main__":
    main()
