#!/usr/bin/env python3
"""Times fCWT and PyWavelets on DESIGN.md's cwt-seed and cwt-1m configurations,
and multires (`multires bench`) on the same machine, and prints the ratios.

Installs what it needs (run as root or in a venv):
    apt-get install -y libfftw3-single3 libfftw3-dev   (for fcwt)
    python3 -m pip install fcwt pywavelets numpy

Usage: python3 tools/peers/cwt_cpu_peers.py [--threads N] [--multires target/release/multires]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time


def ensure(pkgs):
    missing = []
    for mod, pip in pkgs:
        try:
            __import__(mod)
        except ImportError:
            missing.append(pip)
    if missing:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", *missing])


def doppler(n):
    import numpy as np
    t = np.arange(n) / n
    return np.sqrt(t * (1 - t)) * np.sin(2 * np.pi * 1.05 / (t + 0.05))


def median_time(fn, repeat):
    fn()  # warm-up (plans, wisdom)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def multires_ms(exe, config, threads, wavelet):
    out = subprocess.run(
        [exe, "--threads", str(threads), "bench", "--config", config, "--device", "cpu",
         "--precision", "f32", "--wavelet", wavelet, "--repeat", "5"],
        check=True, capture_output=True, text=True).stdout
    print("   ", out.strip())
    return float(re.search(r"median ([0-9.]+) ms", out).group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--multires", default="target/release/multires")
    ap.add_argument("--skip-pywt-1m", action="store_true", default=True)
    a = ap.parse_args()
    if shutil.which("apt-get") and not os.path.exists("/usr/lib/x86_64-linux-gnu/libfftw3f.so.3"):
        subprocess.call(["apt-get", "install", "-y", "-q", "libfftw3-single3"], stdout=subprocess.DEVNULL)
    ensure([("numpy", "numpy"), ("pywt", "pywavelets"), ("matplotlib", "matplotlib"), ("fcwt", "fcwt")])
    import numpy as np
    import fcwt
    import pywt

    rows = []
    # cwt-seed: N = 102400, Morlet, 200 linear scales 1..200, complex output.
    n = 102_400
    x = doppler(n).astype(np.float32)
    fs = n  # fCWT wants an integer rate; frequencies are then cycles per signal
    # fCWT's Morlet (sigma 2pi... its default) over the frequencies of scales 1..200 of
    # a Morlet with centre frequency ~0.8 cycles/sample, linear in frequency: 200 bins.
    morlet = fcwt.Morlet(2.0)
    f0, f1 = 0.8125 * fs / 200, fs / 2
    scales_f = fcwt.Scales(morlet, fcwt.FCWT_LINFREQS, fs, f0, f1, 200)
    out = np.zeros((200, n), dtype=np.complex64)
    fc = fcwt.FCWT(morlet, a.threads, False, False)
    t_fcwt = median_time(lambda: fc.cwt(x, scales_f, out), 5)
    t_pywt = median_time(lambda: pywt.cwt(x, np.arange(1, 201), "morl", method="fft"), 3)
    for w in ("morl", "cmor1.5-1.0"):
        t_m = multires_ms(a.multires, "cwt-seed", a.threads, w)
        rows.append(("cwt-seed", w, t_m, t_fcwt, t_pywt))
    # cwt-1m: N = 2^20, complex Morlet, 256 log-spaced scales 1..1024.
    n = 1 << 20
    x = doppler(n).astype(np.float32)
    fs = n
    scales_f = fcwt.Scales(morlet, fcwt.FCWT_LOGSCALES, fs, 0.8125 * fs / 1024, fs / 2, 256)
    out = np.zeros((256, n), dtype=np.complex64)
    t_fcwt = median_time(lambda: fc.cwt(x, scales_f, out), 3)
    t_m = multires_ms(a.multires, "cwt-1m", a.threads, "cmor1.5-1.0")
    rows.append(("cwt-1m", "cmor1.5-1.0", t_m, t_fcwt, float("nan")))
    print(f"\n{a.threads} thread(s); times are medians in ms (f32, complex output)")
    print("| config | multires wavelet | multires | fCWT | PyWavelets (fft) | fCWT / multires | PyWavelets / multires |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for c, w, m, f, p in rows:
        print(f"| {c} | {w} | {m:.1f} | {f:.1f} | {p:.0f} | {f / m:.2f}x | {p / m:.1f}x |")


if __name__ == "__main__":
    main()
