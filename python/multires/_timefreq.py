"""The CWT's companions with ssqueezepy's names: the inverse CWT, the
synchrosqueezed CWT and its inverse, and ridge extraction.

Definitions are ssqueezepy 0.6's (docs/DESIGN.md states where they
differ); the transforms underneath are multires' exact CWT sums, and the
time derivative that synchrosqueezing needs is a second exact CWT with the
wavelet's derivative as mask, not a finite difference.
"""

from __future__ import annotations

import math

import numpy as np

from . import _multires
from ._arrays import as_float, split

__all__ = ["icwt", "ssq_cwt", "issq_cwt", "extract_ridges", "admissibility", "wct", "wct_significance", "xwt", "global_wavelet_spectrum", "significance", "ar1"]

# ssqueezepy's default wavelet, under multires' name for the same function.
_ALIASES = {"gmw": "morse60-3"}


def _name(wavelet) -> str:
    if not isinstance(wavelet, str):
        name = getattr(wavelet, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"wavelet must be a name such as 'gmw', 'morse60-3' or 'cmor1.5-1.0', got {wavelet!r}")
        wavelet = name
    return _ALIASES.get(wavelet.lower(), wavelet)


def admissibility(wavelet="gmw") -> dict:
    """The wavelet's inversion constants: ``positive`` K+ = ∫ conj(ψ̂(u))/u du
    over u > 0 (ssqueezepy's ``adm_ssq``), ``negative`` K- (the same over
    u < 0), ``calderon`` C_ψ = ∫ |ψ̂(u)|²/|u| du (``adm_cwt``), ``dc_leak``
    |ψ̂(0)| / max |ψ̂| and ``analytic``."""
    return _multires.admissibility(_name(wavelet))


def _ssq_scales(n: int, wavelet: str, nv: int) -> np.ndarray:
    """Geometric scales, ``nv`` per octave, from the one whose centre
    frequency is 0.4 cycles per sample to the one whose cone of influence
    spans half the record."""
    info = _multires.continuous_info(wavelet)
    smin = info["center_frequency"] / 0.4
    smax = max(smin * 2.0, n / (2.0 * max(info["coi_factor"], 1e-9)))
    count = max(2, int(math.floor(nv * math.log2(smax / smin))) + 1)
    return smin * 2.0 ** (np.arange(count) / nv)


def _rows(x):
    xn, _ = split(x)
    a = as_float(xn, "x", allow_complex=True)
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"x has shape {a.shape}: expected signals of shape (..., N) with N >= 1")
    return a


def ssq_cwt(
    x,
    wavelet="gmw",
    scales=None,
    nv=32,
    fs=None,
    ssq_freqs=None,
    squeezing="sum",
    maprange="peak",
    gamma=None,
    *,
    boundary="reflect",
    precision=None,
    device="auto",
    flipud=True,
    get_w=False,
    get_dWx=False,
):
    """Synchrosqueezed continuous wavelet transform (ssqueezepy's ``ssq_cwt``).

    Parameters
    ----------
    x : array_like, shape (N,) or (C, N)
        Real or complex signal(s); a batch is the loop over its rows.
    wavelet : str
        An analytic wavelet: ``'gmw'`` (ssqueezepy's default, multires'
        ``morse60-3``), ``morseB-G``, ``cmorB-C``, ``paulM``, ``cgauP``.
    scales : array_like, optional
        In samples. Default: ``nv`` per octave from the scale whose centre
        frequency is 0.4 cycles/sample up to the one whose cone of
        influence spans half the record.
    fs : float, optional
        Sampling rate (default 1): frequencies come in its units.
    ssq_freqs : {'log', 'linear'} or array_like, optional
        The output frequencies, or how to space them (default: like the
        scales, log for geometric ones).
    squeezing : {'sum', 'lebesgue'}
    maprange : {'peak', 'maximal'} or (fmin, fmax)
        'peak': from the wavelet's peak frequency at the largest scale to
        that at the smallest; 'maximal': fs/N to fs/2.
    gamma : float, optional
        |Wx| at or below which a coefficient is not reassigned (default
        10 eps of the precision, as ssqueezepy).
    boundary : str
        How the signal continues past its ends (``'reflect'``, ssqueezepy's
        padding; ``'periodic'``, ``'zero'``, ``'symmetric'``).
    precision, device :
        As :func:`multires.cwt`; the squeezing itself runs on the CPU.
    flipud : bool
        Rows from the highest frequency down (ssqueezepy's default).
    get_w, get_dWx : bool
        Also return the phase transform and ∂Wx/∂t.

    Returns
    -------
    Tx : ndarray, shape (..., len(ssq_freqs), N)
    Wx : ndarray, shape (..., len(scales), N)
        The CWT, L1-normalized as ssqueezepy's.
    ssq_freqs : ndarray
        Frequency of each row of Tx.
    scales : ndarray
    w, dWx : ndarray
        When asked for.
    """
    a = _rows(x)
    name = _name(wavelet)
    n = a.shape[-1]
    if scales is None:
        s = _ssq_scales(n, name, int(nv))
    else:
        s = np.asarray(scales, dtype=np.float64).ravel()
    fs_ = 1.0 if fs is None else float(fs)
    spacing, freqs, rng = None, None, None
    if isinstance(ssq_freqs, str):
        spacing = ssq_freqs
    elif ssq_freqs is not None:
        freqs = [float(f) for f in np.asarray(ssq_freqs, dtype=np.float64).ravel()]
    if isinstance(maprange, str):
        if maprange == "maximal" and freqs is None:
            sp = spacing or "log"
            freqs = _multires.ssq_frequencies(list(s), n, name, sp, "maximal", fs_)
        elif maprange != "peak":
            raise ValueError(f"maprange must be 'peak', 'maximal' or (fmin, fmax), got {maprange!r}")
    else:
        lo, hi = maprange
        rng = (float(lo), float(hi))
    if precision is None:
        precision = "f32" if a.dtype in (np.float32, np.complex64) else "f64"
    flat = a.reshape(-1, n)
    outs = []
    for row in flat:
        outs.append(
            _multires.ssq_cwt(
                np.ascontiguousarray(row, dtype=np.complex128),
                list(s),
                name,
                fs_,
                boundary,
                precision,
                device,
                squeezing,
                spacing,
                rng,
                freqs,
                gamma,
                bool(flipud),
            )
        )
    lead = a.shape[:-1]

    def gather(i):
        # One signal keeps the engine's array (no copy); a batch is stacked.
        if len(outs) == 1:
            return outs[0][i].reshape(lead + outs[0][i].shape)
        return np.stack([o[i] for o in outs]).reshape(lead + outs[0][i].shape)

    Tx, Wx, dWx = gather(0), gather(1), gather(3)
    f = outs[0][2]
    result = [Tx, Wx, f, s]
    if get_w:
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.abs(np.imag(dWx * np.conj(Wx)) / (np.abs(Wx) ** 2 * 2 * np.pi))
        g = (10 * np.finfo(np.float64 if precision == "f64" else np.float32).eps) if gamma is None else gamma
        w[np.abs(Wx) < g] = np.inf
        result.append(w)
    if get_dWx:
        result.append(dWx)
    return tuple(result)


def issq_cwt(Tx, wavelet="gmw", ssq_freqs=None, *, band=None, x_mean=0.0):
    """The signal of a synchrosqueezed plane: x = 2 Re(Σ_k Tx[k]) / K+ + x_mean
    (ssqueezepy's ``issq_cwt``). ``band=(fmin, fmax)`` with ``ssq_freqs``
    rebuilds the component whose rows lie in that band only."""
    T = np.asarray(Tx)
    if T.ndim < 2:
        raise ValueError(f"Tx has shape {T.shape}: expected (..., frequencies, N)")
    name = _name(wavelet)
    nf = T.shape[-2]
    if band is not None and ssq_freqs is None:
        raise ValueError("band needs ssq_freqs (the frequency of each row of Tx)")
    f = list(np.arange(nf, dtype=np.float64) + 1.0) if ssq_freqs is None else [float(v) for v in np.ravel(ssq_freqs)]
    flat = T.reshape((-1,) + T.shape[-2:])
    out = [
        _multires.issq_cwt(np.ascontiguousarray(p, dtype=np.complex128), f, name, band, float(x_mean))
        for p in flat
    ]
    return np.stack(out).reshape(T.shape[:-2] + (T.shape[-1],))


def icwt(Wx, wavelet="gmw", scales=None, *, normalization="l2", band=None, x_mean=0.0, real=True):
    """Inverse CWT by the single-integral (Morlet) formula.

    ``Wx`` are coefficients of :func:`multires.cwt` (``normalization`` as
    there, 'l2' by default; pass 'l1' for the ``Wx`` of :func:`ssq_cwt`) at
    ``scales`` (in samples). Analytic wavelets: x = 2 Re(Σ_i w_i W_i) / K+;
    real even ones: Σ_i w_i W_i / K+; others by frequency-side division.
    ``band=(smin, smax)`` keeps the rows whose scale lies in it (one band of
    the signal). The mean is not in any CWT: give it as ``x_mean``.
    """
    W = np.asarray(Wx)
    if W.ndim < 2:
        raise ValueError(f"Wx has shape {W.shape}: expected (..., scales, N)")
    if scales is None:
        raise ValueError("icwt needs the scales the coefficients were computed at")
    s = [float(v) for v in np.ravel(scales)]
    name = _name(wavelet)
    flat = W.reshape((-1,) + W.shape[-2:])
    out = [
        _multires.icwt(
            np.ascontiguousarray(p, dtype=np.complex128), s, name, normalization, band, float(x_mean), bool(real)
        )
        for p in flat
    ]
    return np.stack(out).reshape(W.shape[:-2] + (W.shape[-1],))


def extract_ridges(Tf, scales, penalty=2.0, n_ridges=1, bw=15, transform="cwt", get_params=False):
    """Ridges of a time-frequency plane (ssqueezepy's ``extract_ridges``):
    the path minimizing -ln(|Tf|²/max + eps) plus ``penalty`` times the
    squared jump in ln(scales) (``transform='cwt'``) or in the axis itself
    (``'stft'`` or a frequency axis), found exactly by dynamic programming;
    further ridges after zeroing ±``bw`` rows around each one found.

    Returns ``ridge_idxs`` of shape (N, n_ridges), and with ``get_params``
    also the axis value and the energy |Tf|² on each ridge.
    """
    T = np.asarray(Tf)
    if T.ndim != 2:
        raise ValueError(f"Tf has shape {T.shape}: expected (rows, N)")
    energy = np.ascontiguousarray(np.abs(T) ** 2, dtype=np.float64)
    axis = [float(v) for v in np.ravel(scales)]
    if transform not in ("cwt", "stft"):
        raise ValueError(f"transform must be 'cwt' or 'stft', got {transform!r}")
    eps = float(np.finfo(np.float64 if T.dtype in (np.complex128, np.float64) else np.float32).eps)
    idx, val, en = _multires.extract_ridges(
        energy, axis, transform == "cwt", float(penalty), int(n_ridges), int(bw), eps
    )
    return (idx, val, en) if get_params else idx


# pycwt's Morlet (f0 = 6): its Fourier period over scale.
_PYCWT_FLAMBDA = 4 * np.pi / (6.0 + np.sqrt(2 + 6.0**2))


def _check_morlet(wavelet):
    if str(wavelet).lower() != "morlet":
        raise ValueError(f"wavelet {wavelet!r}: coherence follows pycwt's Morlet (f0 = 6) only, as its smoothing does")


def _pair(y1, y2, dt, dj, s0, J, normalize, boundary, device, coherence=True):
    a1, a2 = np.asarray(y1, dtype=np.float64), np.asarray(y2, dtype=np.float64)
    if a1.shape != a2.shape or a1.ndim != 1:
        raise ValueError(f"y1 and y2 must be 1-D of one length, got {a1.shape} and {a2.shape}")
    return _multires.morlet_coherence(
        list(a1), list(a2), float(dt), float(dj), None if s0 == -1 else float(s0),
        None if J == -1 else int(J), bool(normalize), boundary, device, coherence,
    )


def xwt(y1, y2, dt, dj=1 / 12, s0=-1, J=-1, wavelet="morlet", normalize=True, *, boundary="zero", device="auto"):
    """Cross-wavelet transform W1 W2* of two series (pycwt's ``xwt``), with
    pycwt's Morlet (f0 = 6), scales ``s0 2^(j dj)`` in the units of ``dt``
    and the exact CWT (``boundary`` as :func:`multires.cwt`: 'zero' by
    default; pycwt's FFT is circular, as 'periodic' is for a power-of-two
    length). Each series has its mean removed and is divided by its
    standard deviation first when ``normalize``.

    Returns ``W12, coi, freq`` (pycwt also returns a significance level:
    :func:`significance` gives it).
    """
    _check_morlet(wavelet)
    _, _, W12, _, freq, coi = _pair(y1, y2, dt, dj, s0, J, normalize, boundary, device, coherence=False)
    return W12, np.asarray(coi), np.asarray(freq)


def wct(y1, y2, dt, dj=1 / 12, s0=-1, J=-1, sig=False, significance_level=0.95, wavelet="morlet",
        normalize=True, *, boundary="zero", device="auto", mc_count=300, seed=0, progress=False):
    """Wavelet coherence (pycwt's ``wct``; Torrence & Webster 1999, Grinsted
    et al. 2004): ``|S(W12/s)|^2 / (S(|W1|^2/s) S(|W2|^2/s))`` with pycwt's
    Morlet smoothing in time and scale, over exact CWTs (``boundary`` as
    in :func:`xwt`).

    Returns ``WCT, aWCT, coi, freq, sig`` as pycwt does. With ``sig=True``,
    ``sig`` is the coherence that ``significance_level`` of pairs of
    independent AR(1) series (lag-1 coefficients estimated from ``y1`` and
    ``y2`` by :func:`ar1`) stay below, per scale: see
    :func:`wct_significance` (``mc_count`` pairs drawn from a generator
    seeded with ``seed``); otherwise ``sig`` is ``[0]``.
    """
    _check_morlet(wavelet)
    WCT, aWCT, _, sj, freq, coi = _pair(y1, y2, dt, dj, s0, J, normalize, boundary, device)
    if not sig:
        return WCT, aWCT, np.asarray(coi), np.asarray(freq), np.asarray([0])
    g1, g2 = ar1(y1)[0], ar1(y2)[0]
    rows = np.asarray(WCT).shape[0]
    level = wct_significance(g1, g2, dt, dj, float(sj[0]), rows - 1, significance_level, mc_count=mc_count,
                             seed=seed, progress=progress, boundary=boundary, device=device)
    return WCT, aWCT, np.asarray(coi), np.asarray(freq), level


def _red_noise(rng, count, n, g):
    """``count`` AR(1) series of ``n`` samples, lag-1 coefficient ``g`` and
    unit innovations, each started ``2 / -ln|g|`` samples early (twice the
    decorrelation time) as pycwt's ``rednoise`` is."""
    if g == 0:
        return rng.standard_normal((count, n))
    if not abs(g) < 1:
        raise ValueError(f"the lag-1 coefficient {g!r} is not below 1 in magnitude: the series is not stationary")
    lead = int(np.ceil(-2 / np.log(abs(g))))
    e = rng.standard_normal((count, n + lead))
    y = np.empty_like(e)
    y[:, 0] = e[:, 0]
    for t in range(1, n + lead):  # a loop over time, vectorised over the series
        y[:, t] = g * y[:, t - 1] + e[:, t]
    return y[:, lead:]


def wct_significance(al1, al2, dt, dj=1 / 12, s0=-1, J=-1, significance_level=0.95, wavelet="morlet",
                     mc_count=300, *, seed=0, progress=False, boundary="zero", device="auto"):
    """Monte Carlo significance of wavelet coherence (pycwt's
    ``wct_significance``; Grinsted et al. 2004): the coherence of
    ``mc_count`` pairs of independent AR(1) series with lag-1 coefficients
    ``al1`` and ``al2``, long enough (6 times the largest scale) that the
    largest scale leaves the cone of influence, is binned in 1000 bins per
    scale over the points outside the cone, and the ``significance_level``
    quantile of each scale is returned (one value a scale, ``J + 1`` of
    them). The generator is numpy's PCG64 seeded with ``seed``, so a call
    repeats exactly. Scales with no point outside the cone are NaN (pycwt
    leaves them 0 and its last such scale NaN); pycwt draws from numpy's
    global generator and applies no cache here.
    """
    _check_morlet(wavelet)
    if not (isinstance(mc_count, (int, np.integer)) and mc_count >= 1):
        raise ValueError(f"mc_count must be a positive integer, got {mc_count!r}")
    if not 0 < significance_level < 1:
        raise ValueError(f"significance_level must lie in (0, 1), got {significance_level!r}")
    dt = float(dt)
    s0v = 2 * dt / _PYCWT_FLAMBDA if s0 == -1 else float(s0)
    if J == -1:
        raise ValueError("J (the number of scales less one) is needed: wct passes the one of its transform")
    n = int(np.ceil(s0v * 2 ** (J * dj) / dt * 6))
    rng = np.random.default_rng(seed)
    nbins = 1000
    counts = np.zeros((J + 1, nbins), dtype=np.int64)
    # Every pair has the same length and scales, so one cone serves them all.
    valid = rows = None
    batch = 32
    done = 0
    while done < mc_count:
        k = min(batch, mc_count - done)
        noise1 = _red_noise(rng, k, n, float(al1))
        noise2 = _red_noise(rng, k, n, float(al2))
        for a, b in zip(noise1, noise2):
            R2, _, _, _, freq, coi = _pair(a, b, dt, dj, s0v, J, False, boundary, device)
            if valid is None:
                valid = (1 / np.asarray(freq))[:, None] <= np.asarray(coi)[None, :]
                rows = np.broadcast_to(np.arange(J + 1)[:, None], valid.shape)[valid]
            bins = np.clip(np.floor(np.asarray(R2) * nbins).astype(np.int64), 0, nbins - 1)
            np.add.at(counts, (rows, bins[valid]), 1)
        done += k
        if progress:
            print(f"wct_significance: {done}/{mc_count} pairs", flush=True)
    centres = (np.arange(nbins) + 0.5) / nbins
    level = np.full(J + 1, np.nan)
    for s in np.flatnonzero(valid.any(axis=1)):
        sel = counts[s] > 0
        P = np.cumsum(counts[s, sel]).astype(np.float64)
        P = (P - 0.5) / P[-1]
        level[s] = np.interp(significance_level, P, centres[sel])
    return level


def smooth(W, scales, dj):
    """pycwt's Morlet smoothing of a (scales, N) plane; ``scales`` in samples."""
    return _multires.smooth(np.ascontiguousarray(W, dtype=np.complex128), [float(s) for s in np.ravel(scales)], float(dj))


def global_wavelet_spectrum(W, scales=None):
    """The time average of |W|^2 per scale (Torrence & Compo's global
    wavelet spectrum), of a (..., scales, N) plane."""
    return np.mean(np.abs(np.asarray(W)) ** 2, axis=-1)


def ar1(x):
    """Allen & Smith's bias-corrected AR(1) estimate of a series (pycwt's
    ``ar1``): ``(g, a, mu2)``, the lag-1 coefficient, the noise amplitude
    and the bias term."""
    return _multires.ar1([float(v) for v in np.ravel(x)])


def significance(signal, dt, scales, sigma_test=0, alpha=None, significance_level=0.95, dof=-1,
                 wavelet="morlet"):
    """Red-noise significance of wavelet power (pycwt's ``significance``;
    Torrence & Compo 1998): ``(signif, fft_theor)`` per scale, where
    ``scales`` are in the units of ``dt`` (as :func:`wct` and pycwt use
    them) and ``signal`` is the series (or its variance). ``sigma_test=0``
    tests one coefficient's power (2 degrees of freedom, eq. 18);
    ``sigma_test=1`` power averaged over ``dof`` coefficients in time
    (eq. 23); ``sigma_test=2`` power averaged over the scales between
    ``dof = [s1, s2]`` (eqs. 25-28, the grid's ``dj`` read off the first
    two scales as pycwt does), one level and one spectrum value for the
    band. ``alpha`` defaults to :func:`ar1` of the series.
    """
    _check_morlet(wavelet)
    a = np.asarray(signal, dtype=np.float64)
    variance = float(a) if a.size == 1 else float(a.std() ** 2)
    if alpha is None:
        if a.size == 1:
            raise ValueError("alpha is needed when signal is a variance, not a series")
        alpha = ar1(a)[0]
    s = np.asarray(scales, dtype=np.float64).ravel()
    periods = s * _PYCWT_FLAMBDA
    d, band = None, None
    if sigma_test == 1:
        d = [float(v) for v in np.ravel(np.asarray(dof, dtype=np.float64))]
    elif sigma_test == 2:
        edges = np.ravel(np.asarray(dof, dtype=np.float64))
        if edges.size != 2 or s.size < 2:
            raise ValueError(f"sigma_test=2 needs dof=[s1, s2], the band of scales averaged, and two scales or more; got dof={dof!r}")
        band = (float(edges[0]), float(edges[1]), float(np.log2(s[1] / s[0])))
    elif sigma_test != 0:
        raise ValueError(f"sigma_test must be 0 (power), 1 (time-averaged) or 2 (scale-averaged), got {sigma_test!r}")
    signif, theor = _multires.red_noise_significance(
        variance, float(alpha), list(periods), list(s), float(dt), float(significance_level), d, band
    )
    if band is not None:
        return float(signif[0]), float(theor[0])
    return np.asarray(signif), np.asarray(theor)
