#!/usr/bin/env python3
"""Synchrosqueezing, inverse CWT and ridge fixtures from ssqueezepy 0.6.6.

Writes crates/multires/tests/data/ssq/{gmw,morlet}.npz. Each case is a
circular transform (padtype=None in ssqueezepy, boundary='periodic' in
multires) so that both compute the same sum at every column; scales start
at 2 samples (GMW) and 4 (Morlet, mu = 6), where the wavelets' spectra
vanish well before Nyquist (at smaller scales the exact sum of sampled
masks and ssqueezepy's band-limited product differ by aliasing).

    python3 -m pip install ssqueezepy==0.6.6
    python3 tools/golden/make_ssq_golden.py

ssqueezepy's 'gmw' (beta=60, gamma=3, norm='bandpass') is multires'
morse60-3 with L1 normalization. Its 'morlet' (mu=6) is multires'
cmor2.0-(6/2pi) times sqrt(2) cs pi^(1/4), less a correction term of
relative size exp(-mu^2/2) = 1.5e-8.
"""
import os
import sys

import numpy as np

os.environ.setdefault("SSQ_PARALLEL", "0")
import ssqueezepy as sq  # noqa: E402

if sq.__version__ != "0.6.6":
    sys.exit(f"ssqueezepy 0.6.6 is the reference, found {sq.__version__}")

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "multires", "tests", "data", "ssq")


def signal(n):
    t = np.arange(n) / n
    # A linear chirp from 0.02 to 0.12 cycles/sample and a steady tone.
    phase = 2 * np.pi * n * (0.02 * t + 0.05 * t**2)
    return np.cos(phase) + 0.5 * np.cos(2 * np.pi * 0.15 * n * t + 0.4)


def case(name, wavelet, n=512, nv=8, lowest=1):
    wavelet = sq.Wavelet(wavelet, dtype="float64")
    x = signal(n)
    scales = 2.0 ** (np.arange(lowest * nv, (lowest + 6) * nv + 1) / nv)  # 2^lowest, 6 octaves
    Tx, Wx, ssq_freqs, sc, w, dWx = sq.ssq_cwt(
        x, wavelet, scales=scales, padtype=None, get_w=True, get_dWx=True, maprange="peak"
    )
    # 'lebesgue' with get_w=True: the phase from Wx itself (without it,
    # ssqueezepy 0.6.6 takes the phase of dWx / 1).
    Tl, *_ = sq.ssq_cwt(x, wavelet, scales=scales, padtype=None, squeezing="lebesgue", get_w=True)
    xr = sq.issq_cwt(Tx, wavelet)
    xi = sq.icwt(Wx, wavelet, scales=scales, padtype=None, one_int=True)
    ridges = sq.ridge_extraction.extract_ridges(Tx, scales, penalty=2.0, n_ridges=2, bw=4)
    os.makedirs(OUT, exist_ok=True)
    np.savez_compressed(
        os.path.join(OUT, f"{name}.npz"),
        x=x,
        scales=scales,
        Wx=Wx,
        dWx=dWx,
        w=w,
        Tx=Tx,
        Tx_lebesgue=Tl,
        ssq_freqs=ssq_freqs,
        issq=xr,
        icwt=xi,
        ridges=ridges.astype(np.int64),
        adm_ssq=np.array(sq.utils.adm_ssq(wavelet)),
    )
    print(name, Tx.shape, "issq rel err", np.linalg.norm(xr - x) / np.linalg.norm(x))


if __name__ == "__main__":
    case("gmw", "gmw")
    case("morlet", ("morlet", {"mu": 6.0}), lowest=2)
