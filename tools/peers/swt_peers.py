"""pywt.swt / iswt: multires.pywt against PyWavelets, same inputs, best of
--repeat after a warm-up.

    python3 tools/peers/swt_peers.py [--threads 1] [--repeat 3]

swt-4m: N = 2^22 float64, db4, level 6 (the issue's configuration).
"""
import argparse
import time

import numpy as np
import pywt

import multires
import multires.pywt as mp


def best(f, repeat):
    f()
    b = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        b = min(b, time.perf_counter() - t)
    return b


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    multires.set_num_threads(a.threads)
    x = np.random.default_rng(0).standard_normal(1 << 22)
    c = pywt.swt(x, "db4", 6)
    print("| call | input | threads | multires (s) | pywt (s) | pywt / multires |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, ours, theirs in [
        ("swt", lambda: mp.swt(x, "db4", 6), lambda: pywt.swt(x, "db4", 6)),
        ("iswt", lambda: mp.iswt(c, "db4"), lambda: pywt.iswt(c, "db4")),
    ]:
        m, p = best(ours, a.repeat), best(theirs, a.repeat)
        print(f"| {name} | 2^22 float64, db4, level 6 | {a.threads} | {m:.3f} | {p:.3f} | {p / m:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
