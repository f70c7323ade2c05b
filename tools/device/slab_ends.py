#!/usr/bin/env python3
"""Which GPU's slab ended last in each traced decode (MULTIRES_CODEC_TRACE=1), and by how much.

Usage: slab_ends.py ERR

Reads the `trace decompress_slabs: began@T ... decoded 0@T0 decoded 1@T1` lines (parsed as
trace_summary.py parses host-stage lines) and prints, for each run, `last G by L, run R` in ms:
the GPU whose slab ended last, how long after the first, and the run from `began` to that end.
"""
import sys

from trace_summary import parse_stages


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = []
    for what, marks in parse_stages(sys.argv[1]):
        if what != "decompress_slabs":
            continue
        began = dict(marks)["began"]
        ends = {name.split()[1]: t for name, t in marks if name.startswith("decoded ")}
        if len(ends) < 2:
            continue
        last = max(ends, key=ends.get)
        first = min(ends.values())
        out.append(f"last {last} by {ends[last] - first:.1f}, run {ends[last] - began:.1f}")
    print("; ".join(out))


if __name__ == "__main__":
    main()
