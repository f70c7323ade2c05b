#!/usr/bin/env python3
"""Wavelet coherence and the cross-wavelet transform: multires against
pycwt 0.5.0b0 on the same two series (a shared 32-sample tone in noise),
pycwt's default scales (dt = 1, dj = 1/12), CPU, best of --repeat.

    python3 tools/peers/coherence_peers.py [--sizes 4096,65536] [--repeat 3]
"""
import argparse
import time

import numpy as np
import pycwt

import multires


def best(f, repeat):
    f()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="4096,65536")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print("| call | N | scales | multires s | pycwt s | pycwt / multires |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in map(int, a.sizes.split(",")):
        rng = np.random.default_rng(4)
        t = np.arange(n)
        s = np.sin(2 * np.pi * t / 32.0)
        y1, y2 = s + 0.5 * rng.standard_normal(n), np.roll(s, 4) + 0.5 * rng.standard_normal(n)
        for name, ours, theirs in [
            ("wct (sig=False)", lambda: multires.wct(y1, y2, 1.0), lambda: pycwt.wct(y1, y2, 1.0, sig=False)),
            ("xwt", lambda: multires.xwt(y1, y2, 1.0), lambda: pycwt.xwt(y1, y2, 1.0)),
        ]:
            m, p = best(ours, a.repeat), best(theirs, a.repeat)
            scales = len(pycwt.cwt(y1, 1.0)[1])
            print(f"| {name} | {n} | {scales} | {m:.3f} | {p:.3f} | {p / m:.1f}x |")


if __name__ == "__main__":
    main()
