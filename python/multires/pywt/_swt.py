"""PyWavelets' stationary wavelet transform (1-D): ``swt``, ``iswt``,
``swt_max_level``. The engine computes each level (the à trous
periodized convolution, pywt's order of sums); the inverse is pywt's
algorithm over the engine's periodization ``idwt``.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from .. import _multires
from ._dwt import _axis, _done, _prep, idwt
from ._wavelets import Wavelet, as_wavelet


def swt_max_level(input_len):
    """The deepest level of ``swt`` for a signal of ``input_len`` samples:
    how many times it halves evenly (the smallest over the axes for a
    shape)."""
    if np.iterable(input_len):
        return min(swt_max_level(n) for n in input_len)
    n = int(input_len)
    if n < 1:
        raise ValueError("Cannot apply swt to a size 0 signal.")
    level = 0
    while n % 2 == 0:
        n //= 2
        level += 1
    if level == 0:
        warnings.warn(
            "No levels of stationary wavelet decomposition are possible. The signal to be transformed "
            "must have a size that is a multiple of 2**n for an n-level decomposition."
        )
    return level


def _normed(w: Wavelet, norm: bool, s: float) -> Wavelet:
    """pywt's norm=True: the filter bank times ``s`` (1/sqrt(2) forward,
    sqrt(2) inverse), so that the transform is a tight frame (an
    orthogonal wavelet's energy is kept)."""
    if not norm:
        return w
    if not w.orthogonal:
        warnings.warn(
            "norm=True, but the wavelet is not orthogonal: \n"
            "\tThe conditions for energy preservation are not satisfied.\n"
            "\tThe transform will not be a tight frame."
        )
    bank = [np.asarray(f) * s for f in w.filter_bank]
    return Wavelet(w.name, filter_bank=bank)


def swt(data, wavelet, level=None, start_level=0, axis=-1, trim_approx=False, norm=False):
    """Multilevel 1-D stationary (undecimated) wavelet transform.

    Returns ``[(cAn, cDn), ..., (cA1, cD1)]`` (coarsest first), or with
    ``trim_approx`` ``[cAn, cDn, ..., cD1]``; every array has the input's
    shape. The length along ``axis`` must be a multiple of ``2**level``.
    Equal to ``pywt.swt`` to float64 rounding; float32 stays float32,
    complex input is transformed as its real and imaginary parts.
    """
    a, foreign = _prep(data)
    if a.ndim == 0:
        raise ValueError("data must be at least 1-D")
    ax = _axis(axis, a.ndim)
    if a.dtype.kind == "c":
        re = swt(a.real, wavelet, level, start_level, ax, trim_approx, norm)
        im = swt(a.imag, wavelet, level, start_level, ax, trim_approx, norm)
        if trim_approx:
            return [_done(r + 1j * i, foreign) for r, i in zip(re, im)]
        return [(_done(ra + 1j * ia, foreign), _done(rd + 1j * id_, foreign)) for (ra, rd), (ia, id_) in zip(re, im)]
    w = _normed(as_wavelet(wavelet), norm, 1 / np.sqrt(2))
    n = a.shape[ax]
    if level is None:
        level = swt_max_level(n)
    if not isinstance(level, (numbers.Integral, np.integer)) or level < 1:
        raise ValueError(f"Level value of {level} is too low : minimum required level is 1.")
    if not isinstance(start_level, (numbers.Integral, np.integer)) or start_level < 0:
        raise ValueError(f"start_level must be a non-negative integer, got {start_level!r}")
    if n % 2 ** level:
        raise ValueError(
            f"Length of data must be evenly divisible by 2**level: {n} is not a multiple of {2 ** level} "
            f"(the largest level for this length is {swt_max_level(n)})"
        )
    max_level = swt_max_level(n)
    if start_level >= max_level:
        raise ValueError(f"start_level must be less than {max_level}.")
    if start_level + level > max_level:
        raise ValueError(
            f"Level value too high (max level for current data size and start_level is {max_level - start_level})."
        )
    rows = np.ascontiguousarray(np.moveaxis(a, ax, -1))
    shape = rows.shape
    x = rows.reshape(-1, n)
    out = []
    for j in range(start_level + 1, start_level + level + 1):
        ca, cd = _multires.swt_level(x, w._filters, 2 ** (j - 1), 1.0)
        out.append((ca, cd))
        x = ca
    back = lambda v: _done(np.moveaxis(v.reshape(shape), -1, ax), foreign)
    out.reverse()
    if trim_approx:
        return [back(out[0][0])] + [back(cd) for _, cd in out]
    return [(back(ca), back(cd)) for ca, cd in out]


def iswt(coeffs, wavelet, norm=False, axis=-1):
    """The signal of ``swt``'s coefficients (either of its forms), as
    ``pywt.iswt``: each level the average of the two periodization inverses
    of its interleaved halves."""
    trim_approx = not isinstance(coeffs[0], (tuple, list))
    if trim_approx:
        output, details = _prep(coeffs[0])[0].copy(), list(coeffs[1:])
    else:
        output, details = _prep(coeffs[0][0])[0].copy(), [c[1] for c in coeffs]
    if output.dtype.kind == "c" or any(np.iscomplexobj(d) for d in details):
        re = [np.real(output)] + [np.real(d) for d in details]
        im = [np.imag(output)] + [np.imag(d) for d in details]
        return iswt(re, wavelet, norm, axis) + 1j * iswt(im, wavelet, norm, axis)
    w = _normed(as_wavelet(wavelet), norm, np.sqrt(2))
    ax = _axis(axis, output.ndim)
    output = np.moveaxis(output, ax, -1).copy()
    num_levels = len(details)
    for j in range(num_levels, 0, -1):
        step = 2 ** (j - 1)
        cd = np.moveaxis(np.asarray(details[-j], dtype=output.dtype), ax, -1)
        if cd.shape != output.shape:
            raise ValueError(f"the detail coefficients of level {j} have shape {cd.shape}, the approximation {output.shape}")
        n = cd.shape[-1]
        for first in range(step):
            indices = np.arange(first, n, step)
            even, odd = indices[0::2], indices[1::2]
            x1 = idwt(output[..., even], cd[..., even], w, "periodization", axis=-1)
            x2 = idwt(output[..., odd], cd[..., odd], w, "periodization", axis=-1)
            x2 = np.roll(x2, 1, axis=-1)
            output[..., indices] = (x1 + x2) / 2.0
    return np.moveaxis(output, -1, ax)
