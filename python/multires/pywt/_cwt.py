"""PyWavelets' CWT and its frequency helpers.

``cwt`` computes the exact sum
``W[s, n] = s^(-1/2) sum_k x[k] conj(psi((k - n) / s))`` with the engine,
not PyWavelets' integrated-wavelet approximation: PyWavelets convolves the
signal with the running integral of psi sampled on a fixed grid and
differentiates, which at scales of a few samples blurs psi over the
grid's steps and, through the final difference, shifts it by about half a
sample. Its error falls as 1/s: measured against this exact sum for 'morl'
on white noise, 14%, 8% and 4% of the peak at s = 16, 32 and 64, and more
below. The shape, dtype and frequencies returned are PyWavelets'.
"""

from __future__ import annotations

import numpy as np

from .. import CwtPlan
from .._arrays import split
from ._dwt import _axis, _check_dtype
from ._wavelets import ContinuousWavelet, DiscreteContinuousWavelet, Wavelet


def _cont(wavelet):
    if isinstance(wavelet, (ContinuousWavelet, Wavelet)):
        return wavelet
    return DiscreteContinuousWavelet(wavelet)


def integrate_wavelet(wavelet, precision=8):
    """The running integral of psi on PyWavelets' grid: ``(int_psi, x)``
    (``(int_psi_d, int_psi_r, x)`` for biorthogonal wavelets)."""
    w = _cont(wavelet)
    f = w.wavefun(precision)
    if len(f) == 2:
        psi, x = f
        return np.cumsum(psi) * (x[1] - x[0]), x
    if len(f) == 3:
        _, psi, x = f
        return np.cumsum(psi) * (x[1] - x[0]), x
    _, psi_d, _, psi_r, x = f
    step = x[1] - x[0]
    return np.cumsum(psi_d) * step, np.cumsum(psi_r) * step, x


def central_frequency(wavelet, precision=8):
    """PyWavelets' centre frequency: the FFT peak of psi sampled by
    ``wavefun(precision)``, in cycles per unit of its grid."""
    w = _cont(wavelet)
    f = w.wavefun(precision)
    psi, x = (f[0], f[1]) if len(f) == 2 else (f[1], f[-1])
    domain = float(x[-1] - x[0])
    if not domain > 0:
        raise ValueError("the wavelet's grid is empty")
    index = int(np.argmax(np.abs(np.fft.fft(psi)[1:]))) + 2
    if index > len(psi) / 2:
        index = len(psi) - index + 2
    return 1.0 / (domain / (index - 1))


def scale2frequency(wavelet, scale, precision=8):
    """Normalized frequency (cycles per sample) of a CWT scale."""
    return central_frequency(wavelet, precision=precision) / scale


def frequency2scale(wavelet, freq, precision=8):
    """The CWT scale of a normalized frequency (cycles per sample)."""
    return central_frequency(wavelet, precision=precision) / freq


def cwt(data, scales, wavelet, sampling_period=1.0, method="conv", axis=-1, *, precision=12, device="auto"):
    """Continuous wavelet transform with PyWavelets' signature.

    Returns ``(coefs, frequencies)``: ``coefs`` of shape
    ``(len(scales),) + data.shape``, complex for complex wavelets and real
    otherwise, float32-based for float32 data; ``frequencies`` as
    ``scale2frequency(wavelet, scales, precision) / sampling_period``.
    ``method`` ('conv' or 'fft') is accepted for compatibility: the engine
    chooses direct sums or FFTs per scale and computes the exact sum
    either way. ``device`` (multires only): 'auto', 'cpu' or 'cuda'.
    """
    if method not in ("conv", "fft"):
        raise ValueError("method must be 'conv' or 'fft'")
    a, foreign = split(data)
    dt = _check_dtype(a)
    a = np.asarray(a, dtype=dt)
    w = _cont(wavelet)
    if not isinstance(w, ContinuousWavelet):
        raise ValueError("cwt takes a continuous wavelet (pywt.wavelist(kind='continuous'))")
    if np.isscalar(axis) is False:
        raise np.exceptions.AxisError("axis must be a scalar.") if hasattr(np, "exceptions") else ValueError("axis must be a scalar.")
    s = np.atleast_1d(np.asarray(scales, dtype=np.float64))
    if s.ndim != 1:
        raise ValueError("scales must be a 1-D array")
    if np.any(s <= 0):
        raise ValueError("`scales` must only include positive values")
    if a.ndim == 0:
        raise ValueError("data must have at least one dimension")
    ax = _axis(axis, a.ndim)
    moved = np.moveaxis(a, ax, -1)
    f32 = dt in (np.float32, np.complex64)
    plan = CwtPlan(
        moved.shape[-1],
        s,
        w._engine_name,
        output="complex",
        precision="f32" if f32 else "f64",
        boundary="zero",
        device=device,
        complex_input=dt.kind == "c",
    )
    W = plan(moved)  # (..., S, N)
    W = np.moveaxis(W, -2, 0)  # (S, ..., N)
    W = np.moveaxis(W, -1, ax + 1)
    if not w.complex_cwt and dt.kind != "c":
        W = W.real
    W = np.ascontiguousarray(W)
    freqs = np.atleast_1d(scale2frequency(w, s, precision)) / sampling_period
    if foreign is not None:
        return foreign.like(W), freqs
    return W, freqs


def qmf(filt):
    """The quadrature mirror filter of ``filt``."""
    filt = np.asarray(filt)
    qm = filt[::-1].copy()
    qm[1::2] = -qm[1::2]
    return qm


def orthogonal_filter_bank(scaling_filter):
    """(dec_lo, dec_hi, rec_lo, rec_hi) of an orthogonal wavelet from its
    scaling filter (normalized to sum sqrt(2))."""
    if not isinstance(scaling_filter, np.ndarray):
        raise ValueError("scaling_filter must be a numpy array.")
    if scaling_filter.size % 2 != 0:
        raise ValueError("`scaling_filter` length has to be even.")
    scaling_filter = np.asarray(scaling_filter, dtype=np.float64)
    rec_lo = np.sqrt(2) * scaling_filter / np.sum(scaling_filter)
    dec_lo = rec_lo[::-1]
    rec_hi = qmf(rec_lo)
    dec_hi = rec_hi[::-1]
    return (dec_lo, dec_hi, rec_lo, rec_hi)
