#!/usr/bin/env python3
"""multires' Python package against PyWavelets and fCWT on the CPU, all in
one process (BENCHMARKS.md, "Python package"):

  * multires.pywt.wavedec vs pywt.wavedec: 2^24 float64 samples, db4,
    periodization and symmetric, 8 levels, one thread;
  * multires.pywt.wavedec2 vs pywt.wavedec2: 4096^2 float64, db4, 4 levels;
  * multires.cwt vs fcwt on cwt-seed (N = 102,400, 200 scales, complex64
    output): the first call (planning included) and a reused CwtPlan.

Installs what it needs (fcwt wants Debian's libfftw3-single3):
    python3 tools/peers/python_cpu_peers.py [--threads 2]
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from cwt_cpu_peers import ensure, median_time as best  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2, help="threads for the CWT and wavedec2 rows")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    if shutil.which("apt-get") and not os.path.exists("/usr/lib/x86_64-linux-gnu/libfftw3f.so.3"):
        subprocess.call(["apt-get", "install", "-y", "-q", "libfftw3-single3"], stdout=subprocess.DEVNULL)
    ensure([("numpy", "numpy"), ("pywt", "pywavelets"), ("matplotlib", "matplotlib"), ("fcwt", "fcwt")])
    import fcwt
    import numpy as np
    import pywt

    import multires
    import multires.pywt as mp

    rows = []
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 24)
    multires.set_num_threads(1)
    for mode in ("periodization", "symmetric"):
        t_m = best(lambda: mp.wavedec(x, "db4", mode, level=8), a.repeat)
        t_p = best(lambda: pywt.wavedec(x, "db4", mode, level=8), a.repeat)
        rows.append((f"wavedec 2^24 f64 db4 {mode} L8", 1, t_m, "PyWavelets", t_p))
    del x
    multires.set_num_threads(a.threads)
    img = rng.standard_normal((4096, 4096))
    for mode in ("periodization", "symmetric"):
        t_m = best(lambda: mp.wavedec2(img, "db4", mode, level=4), a.repeat)
        t_p = best(lambda: pywt.wavedec2(img, "db4", mode, level=4), a.repeat)
        rows.append((f"wavedec2 4096^2 f64 db4 {mode} L4", a.threads, t_m, "PyWavelets", t_p))
    del img

    # cwt-seed: Doppler, N = 102,400, Morlet, 200 linear scales, complex64.
    n = 102_400
    t = np.arange(n) / n
    sig = (np.sqrt(t * (1 - t)) * np.sin(2 * np.pi * 1.05 / (t + 0.05))).astype(np.float32)
    scales = np.arange(1.0, 201.0)
    t0 = time.perf_counter()
    W, _ = multires.cwt(sig, scales, "morl", precision="f32", device="cpu")
    t_first = (time.perf_counter() - t0) * 1e3
    assert W.dtype == np.complex64 and W.shape == (200, n)
    plan = multires.CwtPlan(n, scales, "morl", precision="f32", device="cpu")
    out = np.empty((200, n), dtype=np.complex64)
    t_plan = best(lambda: plan(sig, out=out), a.repeat)
    fs = n
    morlet = fcwt.Morlet(2.0)
    sf = fcwt.Scales(morlet, fcwt.FCWT_LINFREQS, fs, 0.8125 * fs / 200, fs / 2, 200)
    fout = np.zeros((200, n), dtype=np.complex64)
    t0 = time.perf_counter()
    fc = fcwt.FCWT(morlet, a.threads, False, False)
    fc.cwt(sig, sf, fout)
    f_first = (time.perf_counter() - t0) * 1e3
    f_warm = best(lambda: fc.cwt(sig, sf, fout), a.repeat)
    rows.append(("cwt-seed first call (planning included)", a.threads, t_first, "fCWT first call", f_first))
    rows.append(("cwt-seed first call vs fCWT warm", a.threads, t_first, "fCWT warm", f_warm))
    rows.append(("cwt-seed CwtPlan reused", a.threads, t_plan, "fCWT warm", f_warm))

    print(f"\n# multires {multires.__version__}, PyWavelets {pywt.__version__}, numpy {np.__version__}; median of {a.repeat} after a warm-up, ms")
    print("| case | threads | multires (ms) | peer | peer (ms) | peer / multires |")
    print("| --- | --- | --- | --- | --- | --- |")
    for case, th, m, peer, p in rows:
        print(f"| {case} | {th} | {m:.1f} | {peer} | {p:.1f} | {p / m:.2f}x |")


if __name__ == "__main__":
    main()
