#!/usr/bin/env python3
"""Wavelet coherence and the cross-wavelet transform: multires against
pycwt 0.5.0b0 on the same two series (a shared 32-sample tone in noise),
pycwt's default scales (dt = 1, dj = 1/12), CPU, best of --repeat.

    python3 tools/peers/coherence_peers.py [--sizes 4096,65536] [--repeat 3]
        [--mc 512:0.25:100,256:0.5:200]

--mc adds wct(sig=True) rows (N:dj:pairs, one run each: pycwt's Monte
Carlo takes a minute).
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
    ap.add_argument("--mc", default="512:0.25:100,256:0.5:200")
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
    for spec in filter(None, a.mc.split(",")):
        n, dj, pairs = spec.split(":")
        n, dj, pairs = int(n), float(dj), int(pairs)
        rng = np.random.default_rng(1)
        t = np.arange(n)
        y1 = np.sin(2 * np.pi * t / 32) + rng.standard_normal(n)
        y2 = np.sin(2 * np.pi * t / 32 + 1) + rng.standard_normal(n)
        t0 = time.perf_counter()
        *_, level = multires.wct(y1, y2, 1.0, dj=dj, sig=True, mc_count=pairs, seed=3)
        m = time.perf_counter() - t0
        np.random.seed(5)
        t0 = time.perf_counter()
        *_, theirs = pycwt.wct(y1, y2, 1.0, dj=dj, sig=True, mc_count=pairs, cache=False, progress=False)
        p = time.perf_counter() - t0
        gap = np.nanmax(np.abs(level[2:-2] - theirs[2:-2]))
        print(f"| wct (sig=True, {pairs} pairs, dj={dj:g}; levels differ by {gap:.3f}) | {n} | {len(level)} | {m:.3f} | {p:.3f} | {p / m:.1f}x |")


if __name__ == "__main__":
    main()
