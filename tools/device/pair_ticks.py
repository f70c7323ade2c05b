#!/usr/bin/env python3
"""Pairs the timed runs of two bench processes run in step (MULTIRES_BENCH_ALIGN_MS).

Usage: pair_ticks.py A.err B.err

Each process prints one `bench ticks WHAT: TICK:MS ...` line per timed row, in the same
order; the first run of each (the warm-up) is left out. For the k-th line of each, the runs
that started on the same tick are paired; the pair's time is the later of the two (what one
process with both GPUs would wait for).
Prints, per line, how many runs paired and the medians of A, B and the pairs' later.
"""
import statistics
import sys


def ticks(path):
    rows = []
    for line in open(path, errors="replace"):
        if line.startswith("bench ticks "):
            what, runs = line[len("bench ticks "):].split(":", 1)
            pairs = dict()
            # The first run is the bench's warm-up, left out of its medians too.
            for item in runs.split()[1:]:
                tick, ms = item.split(":")
                pairs[int(tick)] = float(ms)
            rows.append((what, pairs))
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = ticks(sys.argv[1]), ticks(sys.argv[2])
    for k, ((wa, ra), (wb, rb)) in enumerate(zip(a, b)):
        common = sorted(set(ra) & set(rb) - {0})
        if not common:
            print(f"row {k} {wa}: no runs on a common tick")
            continue
        later = [max(ra[t], rb[t]) for t in common]
        med = statistics.median
        print(
            f"row {k} {wa}: {len(common)} paired | A {med(ra[t] for t in common):.3f} ms"
            f" | B {med(rb[t] for t in common):.3f} ms | later {med(later):.3f} ms"
        )


if __name__ == "__main__":
    main()
