#!/usr/bin/env python3
"""Summarize a MULTIRES_CODEC_TIMELINE=1 log (stderr of a codec run).

Usage: python3 tools/device/timeline_summary.py timeline.log [--batches] [--chain]

The timeline prints one line per batch and GPU ("timeline gpu G batch I
(N values): mark@ms ..."), each mark an event recorded on the batch's
stream when its work up to there finished on the device, in ms from that
GPU's first event of the run. This groups the lines into runs (a GPU's
batch numbers restart), and prints per run and GPU:
- when the first and the last batch reached each mark (for a decode,
  `d_rdec_before` is when a batch's streams were up, `d_decode` its RDEC's
  end, `d_inverse` its inverse's end);
- the median and longest time between consecutive marks of a batch;
- the tail: from the last batch's first mark to the run's last event.
With --batches, every batch's marks too. With --chain, for each coding
run the chain of the batch that ends last, from the end of its transform
(`interp`) in steps (histogram, the host's plans, RENC, the layout,
checksums, the payload's copy down), and when each batch's payload copy
ended: where a run's tail waits on the host, or on the copy engine
(session 51). Events slow a run: read the order and the gaps, not the
totals.
"""
import re
import statistics
import sys

from trace_summary import marks_of

LINE = re.compile(r"^timeline gpu (\d+) batch (\d+) \((\d+) values\): (.*)$")


def parse(path):
    runs = []
    last = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            g, b, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
            # A GPU's batch numbers rise within a run.
            if g not in last or b <= last[g][0]:
                runs.append({"gpu": g, "batches": []})
                run = runs[-1]
            else:
                run = last[g][1]
            last[g] = (b, run)
            run["batches"].append((b, n, marks_of(m.group(4))))
    return runs


def summarize(run, show_batches):
    bs = run["batches"]
    values = sum(n for _, n, _ in bs)
    kind = "decode" if any(m and m[0][0].startswith("d_") for _, _, m in bs) else "code"
    ends = [m[-1][1] for _, _, m in bs if m]
    print(f"gpu {run['gpu']} {kind}: {len(bs)} batches, {values / 1e6:.0f} M values, "
          f"last event {max(ends, default=0):.1f} ms")
    names = []
    for _, _, m in bs:
        for name, _ in m:
            if name not in names:
                names.append(name)
    for name in names:
        at = [t for _, _, m in bs for k, t in m if k == name]
        gaps = []
        for _, _, m in bs:
            for i in range(1, len(m)):
                if m[i][0] == name:
                    gaps.append(m[i][1] - m[i - 1][1])
        gap = f", since the mark before {statistics.median(gaps):.1f} / {max(gaps):.1f}" if gaps else ""
        print(f"  {name:>16}: first {min(at):6.1f} last {max(at):6.1f} ms{gap}")
    firsts = [(m[0][1], b) for b, _, m in bs if m]
    if firsts:
        t, b = max(firsts)
        print(f"  tail: batch {b}'s first mark at {t:.1f} ms, {max(ends) - t:.1f} ms before the run's end")
    if show_batches:
        for b, n, m in sorted(bs):
            print(f"    batch {b:3d} {n / 1e6:6.1f} M: " + " ".join(f"{k}@{t:.1f}" for k, t in m))


# A coding batch's chain after its transform, as (step, first mark, last
# mark); a step whose marks a run lacks, or reaches in another order (the
# device's plans, MULTIRES_CODEC_RPLAN=device, queue RENC before the
# histogram comes down), is left out.
CHAIN = [
    ("histogram and its copy down", "interp", "r_hist"),
    ("host: plans, chunk lists, lists up", "r_hist", "r_upload"),
    ("RENC", "r_upload", "r_enc_kernel"),
    ("sizes down", "r_enc_kernel", "r_encode"),
    ("host: layout, then RCOPY", "r_encode", "r_copy"),
    ("checksums", "r_copy", "r_buf"),
    ("payload down", "r_buf", "r_down_queued"),
]


def chain(run):
    bs = [(b, n, dict(m)) for b, n, m in run["batches"] if m]
    if not bs or not any("interp" in m for _, _, m in bs):
        return
    b, n, m = max(bs, key=lambda x: max(x[2].values()))
    end = max(m.values())
    if "interp" not in m:
        return
    print(f"  chain of batch {b} ({n / 1e6:.1f} M values), the last to end: "
          f"{end - m['interp']:.1f} ms from its transform's end to its last event")
    for step, a, z in CHAIN:
        if a in m and z in m and m[z] >= m[a]:
            print(f"    {step:>36}: {m[z] - m[a]:5.2f} ms")
    downs = sorted((m["r_down_queued"], b, n) for b, n, m in bs if "r_down_queued" in m)
    if downs:
        print("  payload copies ended (ms, batch, M values): "
              + ", ".join(f"{t:.1f} b{b} {n / 1e6:.0f}" for t, b, n in downs))


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    show = "--batches" in sys.argv[2:]
    show_chain = "--chain" in sys.argv[2:]
    runs = parse(sys.argv[1])
    if not runs:
        print("no timeline lines (was MULTIRES_CODEC_TIMELINE=1 set?)")
        sys.exit(1)
    for i, r in enumerate(runs):
        print(f"== run {i}")
        summarize(r, show)
        if show_chain:
            chain(r)


if __name__ == "__main__":
    main()
