#!/usr/bin/env python3
"""Summarize a MULTIRES_CODEC_TRACE=1 log (stderr of a codec run).

Usage: python3 tools/device/trace_summary.py trace.log

The trace prints one line per batch ("trace gpu [G] batch I (N values):
mark@ms ..."), every mark on one clock. This groups the lines into runs
(a run starts where a batch starts after every earlier batch ended) and
prints, per run and GPU: the batches, the values, when the first batch
started and the last ended, the median and longest time spent before
each mark (from the previous mark of the same batch), and the marks of
the batch that ended last (the run's tail). A host-stage line ("trace
decompress_slabs: began@... decoded 0@...", "trace compress: ...") is
printed with the first run that starts after it began, in milliseconds
from that run's start.
"""
import re
import statistics
import sys
from collections import defaultdict

LINE = re.compile(r"^trace gpu \[([0-9, ]+)\] batch (\d+) \((\d+) values\): (.*)$")
STAGES = re.compile(r"^trace (?!gpu )([^:]+): (began@.*)$")


def marks_of(text):
    """The (mark, ms) pairs of 'name@ms' tokens; names may hold spaces."""
    return [(m.group(1), float(m.group(2))) for m in re.finditer(r"([^@]+?)@([0-9.]+)\s*", text)]


def parse_stages(path):
    out = []
    with open(path) as f:
        for line in f:
            m = STAGES.match(line.strip())
            if m:
                marks = marks_of(m.group(2))
                if marks:
                    out.append((m.group(1), marks))
    return out


def parse(path):
    batches = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            marks = []
            for tok in m.group(4).split():
                name, _, at = tok.rpartition("@")
                try:
                    marks.append((name, float(at)))
                except ValueError:
                    continue
            if marks:
                batches.append(
                    {
                        "gpu": m.group(1).replace(" ", ""),
                        "batch": int(m.group(2)),
                        "values": int(m.group(3)),
                        "marks": marks,
                    }
                )
    return batches


def runs(batches):
    """Batches grouped into runs by time: a run ends before a batch that
    starts after every batch so far has ended."""
    out, end = [], None
    for b in sorted(batches, key=lambda b: b["marks"][0][1]):
        start, last = b["marks"][0][1], b["marks"][-1][1]
        if end is None or start > end:
            out.append([])
            end = last
        out[-1].append(b)
        end = max(end, last)
    return out


def summary(run, stages=()):
    t0 = min(b["marks"][0][1] for b in run)
    t1 = max(b["marks"][-1][1] for b in run)
    lines = [f"run at {t0:.1f} ms: {len(run)} batches, {t1 - t0:.1f} ms"]
    for what, marks in stages:
        cells = " ".join(f"{n}{t - t0:+.1f}" for n, t in marks)
        lines.append(f"  stages {what}: {cells}")
    by_gpu = defaultdict(list)
    for b in run:
        by_gpu[b["gpu"]].append(b)
    for g, bs in sorted(by_gpu.items()):
        first = min(b["marks"][0][1] for b in bs) - t0
        last = max(b["marks"][-1][1] for b in bs) - t0
        values = sum(b["values"] for b in bs)
        starts = sorted(b["marks"][0][1] - t0 for b in bs)
        lines.append(
            f"  gpu {g}: {len(bs)} batches, {values / 1e6:.1f} M values, "
            f"+{first:.1f} to +{last:.1f} ms (batches started +{starts[0]:.1f} to +{starts[-1]:.1f})"
        )
        steps = defaultdict(list)
        order = []
        for b in bs:
            for (_, a), (name, t) in zip(b["marks"], b["marks"][1:]):
                if name not in steps:
                    order.append(name)
                steps[name].append(t - a)
        cells = [
            f"{n} {statistics.median(steps[n]):.1f}/{max(steps[n]):.1f}"
            for n in order
            if max(steps[n]) >= 0.5
        ]
        lines.append("    before each mark, median/longest ms (>= 0.5): " + ", ".join(cells))
        tail = max(bs, key=lambda b: b["marks"][-1][1])
        marks = " ".join(f"{n}+{t - t0:.1f}" for n, t in tail["marks"])
        lines.append(f"    last to end, batch {tail['batch']}: {marks}")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    batches = parse(sys.argv[1])
    if not batches:
        sys.exit(f"{sys.argv[1]}: no 'trace gpu' lines (was MULTIRES_CODEC_TRACE=1 set?)")
    rs = runs(batches)
    starts = [min(b["marks"][0][1] for b in r) for r in rs]
    by_run = defaultdict(list)
    for what, marks in parse_stages(sys.argv[1]):
        after = [i for i, t0 in enumerate(starts) if t0 >= marks[0][1]]
        if after:
            by_run[after[0]].append((what, marks))
    for i, r in enumerate(rs):
        print(summary(r, by_run[i]))


if __name__ == "__main__":
    main()
