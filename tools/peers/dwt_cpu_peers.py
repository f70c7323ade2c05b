#!/usr/bin/env python3
"""Time PyWavelets and multires on DESIGN.md's dwt-64m and dwt2-16k, on this
machine, in one run, and print the ratios.

    cargo build --release
    python3 tools/peers/dwt_cpu_peers.py [--skip-2d]

PyWavelets runs on one thread (it has no threads). multires runs at 1 and 2
threads through `multires bench`, which prints two figures for 1-D: with
fresh output arrays per call (like PyWavelets) and with output buffers kept
between calls (Wavedec1d/Waverec1d).
"""
import argparse
import re
import subprocess
import sys
import time


def ensure():
    try:
        import pywt  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "pywavelets", "numpy"])


def median(fn, repeat):
    fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def bench(exe, config, threads, wavelets=None):
    cmd = [exe, "--threads", str(threads), "bench", "--config", config, "--repeat", "5"]
    if wavelets:
        cmd += ["--dwt-wavelets", wavelets]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    print("   ", out.strip().replace("\n", "\n    "))
    rows = {}
    for line in out.splitlines():
        w = line.split("|")[3].strip()
        kind = "reused" if "reused outputs" in line else "fresh"
        d = float(re.search(r"wavedec median ([0-9.]+) ms", line).group(1))
        r = float(re.search(r"waverec median ([0-9.]+) ms", line).group(1))
        rows[(w, kind)] = (d, r)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--multires", default="target/release/multires")
    ap.add_argument("--skip-2d", action="store_true")
    a = ap.parse_args()
    ensure()
    import numpy as np
    import pywt
    rng = np.random.default_rng(1)
    x = rng.standard_normal(1 << 26).astype(np.float32)
    peer = {}
    for w in ("db4", "haar"):
        c = pywt.wavedec(x, w, "periodization", level=8)
        peer[w] = (median(lambda: pywt.wavedec(x, w, "periodization", level=8), 5),
                   median(lambda: pywt.waverec(c, w, "periodization"), 5))
        print(f"    PyWavelets {pywt.__version__} dwt-64m {w}: wavedec {peer[w][0]:.1f} ms, waverec {peer[w][1]:.1f} ms")
    del x
    ours = {t: bench(a.multires, "dwt-64m", t) for t in (1, 2)}
    print("\n| config | wavelet | op | PyWavelets (1 thread) | multires 1 thread fresh / reused | multires 2 threads fresh / reused | ratio 1 thread (fresh) | ratio 2 threads (fresh) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for w in ("db4", "haar"):
        for i, op in enumerate(("wavedec", "waverec")):
            p = peer[w][i]
            f1, r1 = ours[1][(w, "fresh")][i], ours[1][(w, "reused")][i]
            f2, r2 = ours[2][(w, "fresh")][i], ours[2][(w, "reused")][i]
            print(f"| dwt-64m | {w} | {op} | {p:.1f} | {f1:.1f} / {r1:.1f} | {f2:.1f} / {r2:.1f} | {p / f1:.2f}x | {p / f2:.2f}x |")
    if a.skip_2d:
        return
    img = rng.standard_normal((16384, 16384)).astype(np.float32)
    c = pywt.wavedec2(img, "haar", "periodization", level=6)
    p2 = (median(lambda: pywt.wavedec2(img, "haar", "periodization", level=6), 1),
          median(lambda: pywt.waverec2(c, "haar", "periodization"), 1))
    del img, c
    print(f"    PyWavelets dwt2-16k haar: wavedec2 {p2[0]:.1f} ms, waverec2 {p2[1]:.1f} ms")
    for t in (1, 2):
        o = bench(a.multires, "dwt2-16k", t)[("haar", "fresh")]
        print(f"| dwt2-16k | haar | wavedec2 / waverec2 | {p2[0]:.0f} / {p2[1]:.0f} | {t} thread(s): {o[0]:.0f} / {o[1]:.0f} | | {p2[0] / o[0]:.2f}x / {p2[1] / o[1]:.2f}x | |")


if __name__ == "__main__":
    main()
