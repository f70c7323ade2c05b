#!/usr/bin/env python3
"""Golden DWT fixtures from PyWavelets for crates/multires/tests/dwt_golden.rs.

    python3 tools/golden/make_dwt_golden.py

Writes (compressed .npz, a few MB in all) under crates/multires/tests/data/dwt/:
  dwt1.npz     every discrete wavelet x every mode at N = 1, 6, 37:
               x_N, then W__M__N__a / __d (pywt.dwt) and W__M__N__r
               (pywt.idwt of those coefficients); reflect/antireflect at N = 1
               are PyWavelets errors and are left out.
  wavedec.npz  pywt.wavedec / waverec for a sample of wavelets, all modes, at
               N = 100 (default level) and N = 1000 (level 3), float64, and
               float32 for db4/haar periodization: W__M__N__L__i (array i of
               wavedec) and W__M__N__rec.
  nd.npz       wavedecn / waverecn in 2-D and 3-D, dwt2 keys, any axes.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "crates", "multires", "tests", "data", "dwt")


def ensure():
    try:
        import pywt  # noqa: F401
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "pywavelets", "numpy"])


def main():
    ensure()
    import numpy as np
    import pywt
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261122)
    modes = pywt.Modes.modes
    d = {}
    for n in (1, 6, 37):
        d[f"x_{n}"] = rng.standard_normal(n)
    for w in pywt.wavelist(kind="discrete"):
        for m in modes:
            for n in (1, 6, 37):
                if n == 1 and m in ("reflect", "antireflect"):
                    continue
                a, c = pywt.dwt(d[f"x_{n}"], w, m)
                d[f"{w}__{m}__{n}__a"] = a
                d[f"{w}__{m}__{n}__d"] = c
                d[f"{w}__{m}__{n}__r"] = pywt.idwt(a, c, w, m)
    np.savez_compressed(os.path.join(OUT, "dwt1.npz"), **d)

    d = {}
    x100 = rng.standard_normal(100)
    t = np.linspace(0, 1, 1000)
    x1000 = np.sin(40 * t ** 2) + 0.1 * rng.standard_normal(1000)
    d["x_100"], d["x_1000"] = x100, x1000
    for w in ("haar", "db4", "sym5", "coif3", "bior4.4", "rbio2.2", "dmey", "db20"):
        for m in modes:
            for x, n, lvl in ((x100, 100, None), (x1000, 1000, 3)):
                c = pywt.wavedec(x, w, m, level=lvl)
                L = len(c) - 1
                for i, arr in enumerate(c):
                    d[f"{w}__{m}__{n}__{L}__{i}"] = arr
                d[f"{w}__{m}__{n}__rec"] = pywt.waverec(c, w, m)
    x32 = x1000.astype(np.float32)
    d["x32_1000"] = x32
    for w in ("haar", "db4"):
        c = pywt.wavedec(x32, w, "periodization", level=4)
        for i, arr in enumerate(c):
            assert arr.dtype == np.float32
            d[f"f32__{w}__{i}"] = arr
        d[f"f32__{w}__rec"] = pywt.waverec(c, w, "periodization")
    np.savez_compressed(os.path.join(OUT, "wavedec.npz"), **d)

    d = {}
    img = rng.standard_normal((17, 12))
    vol = rng.standard_normal((6, 7, 5))
    d["img"], d["vol"] = img, vol
    for w, m in (("haar", "periodization"), ("db2", "symmetric"), ("bior2.2", "reflect"), ("sym3", "zero")):
        c = pywt.wavedecn(img, w, m, level=2)
        d[f"img__{w}__{m}__a"] = c[0]
        for i, det in enumerate(c[1:], start=1):
            for k, v in det.items():
                d[f"img__{w}__{m}__d{i}_{k}"] = v
        d[f"img__{w}__{m}__rec"] = pywt.waverecn(c, w, m)
        cA, (cH, cV, cD) = pywt.dwt2(img, w, m)
        d[f"dwt2__{w}__{m}__cA"], d[f"dwt2__{w}__{m}__cH"] = cA, cH
        d[f"dwt2__{w}__{m}__cV"], d[f"dwt2__{w}__{m}__cD"] = cV, cD
    for w, m, axes in (("db1", "symmetric", (0, 1, 2)), ("bior2.2", "periodization", (0, 2)), ("coif1", "smooth", (2, 1))):
        tag = "".join(map(str, axes))
        c = pywt.wavedecn(vol, w, m, level=1, axes=axes)
        d[f"vol__{w}__{m}__{tag}__a"] = c[0]
        for k, v in c[1].items():
            d[f"vol__{w}__{m}__{tag}__d1_{k}"] = v
        d[f"vol__{w}__{m}__{tag}__rec"] = pywt.waverecn(c, w, m, axes=axes)
    np.savez_compressed(os.path.join(OUT, "nd.npz"), **d)
    for f in ("dwt1.npz", "wavedec.npz", "nd.npz"):
        print(f, os.path.getsize(os.path.join(OUT, f)), "bytes")


if __name__ == "__main__":
    main()
