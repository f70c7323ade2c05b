#!/usr/bin/env python3
"""Which GPU's slab ended last in each traced decode (MULTIRES_CODEC_TRACE=1), and by how much.

Usage: slab_ends.py ERR

Reads the `trace decompress_slabs: began@T ... decoded 0@T0 decoded 1@T1` lines and prints, for
each run, `last GPU G by L ms, run R ms` (R from `began` to the last slab's end).
"""
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = []
    for line in open(sys.argv[1], errors="replace"):
        if not line.startswith("trace decompress_slabs:"):
            continue
        began = float(re.search(r"began@([0-9.]+)", line).group(1))
        ends = {int(g): float(t) for g, t in re.findall(r"decoded (\d)@([0-9.]+)", line)}
        if len(ends) < 2:
            continue
        last = max(ends, key=ends.get)
        first = min(ends.values())
        out.append(f"last {last} by {ends[last] - first:.1f}, run {ends[last] - began:.1f}")
    print("; ".join(out))


if __name__ == "__main__":
    main()
