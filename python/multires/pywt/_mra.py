"""Additive decompositions: pywt's ``mra``/``imra`` (and the 2-D and n-D
forms), each component the inverse of one band alone so that they sum to
the signal; and MATLAB's maximal overlap DWT, ``modwt``/``imodwt``/
``modwtmra``, at any length (periodic, no halving), computed by the engine.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import _multires
from ._dwt import _axis, _done, _use_gpu, _prep, wavedec, wavedecn, waverec, waverecn
from ._swt import iswt, iswtn, swt, swt_max_level, swtn
from ._wavelets import as_wavelet


def _trimmed(rec, shape):
    return rec if rec.shape == shape else rec[tuple(slice(s) for s in shape)]


def _one_at_a_time(coeffs, inverse, shape):
    """The inverse of each array of a coefficient structure with every
    other array zero, in the structure's layout (arrays, tuples, dicts)."""
    def zero(c):
        if isinstance(c, dict):
            return {k: np.zeros_like(v) for k, v in c.items()}
        if isinstance(c, (tuple, list)):
            return type(c)(np.zeros_like(v) for v in c)
        return np.zeros_like(c)

    zeros = [zero(c) for c in coeffs]
    out = []
    for j, c in enumerate(coeffs):
        def with_only(v, key):
            tmp = list(zeros)
            if key is None:
                tmp[j] = v
            elif isinstance(c, dict):
                tmp[j] = {**zeros[j], key: v}
            else:
                parts = list(zeros[j])
                parts[key] = v
                tmp[j] = type(c)(parts)
            return _trimmed(inverse(tmp), shape)

        if isinstance(c, dict):
            out.append({k: with_only(v, k) for k, v in c.items()})
        elif isinstance(c, (tuple, list)):
            out.append(tuple(with_only(v, i) for i, v in enumerate(c)))
        else:
            out.append(with_only(c, None))
    return out


def mra(data, wavelet, level=None, axis=-1, transform="swt", mode="periodization"):
    """1-D multiresolution analysis, as ``pywt.mra``: ``[cA_n, cD_n, ...,
    cD_1]`` as arrays of the signal's shape that sum to it. ``transform``
    'swt' (norm=True, periodization only) or 'dwt' (any ``mode``)."""
    data = _prep(data)[0]
    if transform == "swt":
        if mode != "periodization":
            raise ValueError("transform swt only supports mode='periodization'")
        coeffs = swt(data, wavelet, level=level, axis=axis, trim_approx=True, norm=True)
        return _one_at_a_time(coeffs, lambda c: iswt(c, wavelet, norm=True, axis=axis), data.shape)
    if transform == "dwt":
        coeffs = wavedec(data, wavelet, mode=mode, level=level, axis=axis)
        return _one_at_a_time(coeffs, lambda c: waverec(c, wavelet, mode=mode, axis=axis), data.shape)
    raise ValueError(f"unrecognized transform: {transform!r} (use 'swt' or 'dwt')")


def mra2(data, wavelet, level=None, axes=(-2, -1), transform="swt2", mode="periodization"):
    """2-D multiresolution analysis, as ``pywt.mra2``: ``[cA_n, (cH_n, cV_n,
    cD_n), ...]`` as arrays of the input's shape that sum to it."""
    nd = {"swt2": "swtn", "dwt2": "dwtn"}.get(transform)
    if nd is None:
        raise ValueError(f"unrecognized transform: {transform!r} (use 'swt2' or 'dwt2')")
    if len(tuple(axes)) != 2:
        raise ValueError("Expected 2 axes")
    out = mran(data, wavelet, level, axes, nd, mode)
    return [out[0]] + [(d["da"], d["ad"], d["dd"]) for d in out[1:]]


def mran(data, wavelet, level=None, axes=None, transform="swtn", mode="periodization"):
    """n-D multiresolution analysis, as ``pywt.mran``: ``[cA_n, {details_n},
    ...]`` as arrays of the input's shape that sum to it."""
    data = _prep(data)[0]
    if transform == "swtn":
        if mode != "periodization":
            raise ValueError("transform swt only supports mode='periodization'")
        if level is None:
            ax = range(data.ndim) if axes is None else axes
            level = min(swt_max_level(data.shape[a]) for a in ax)
        coeffs = swtn(data, wavelet, level, axes=axes, trim_approx=True, norm=True)
        return _one_at_a_time(coeffs, lambda c: iswtn(c, wavelet, axes=axes, norm=True), data.shape)
    if transform == "dwtn":
        coeffs = wavedecn(data, wavelet, mode=mode, level=level, axes=axes)
        return _one_at_a_time(coeffs, lambda c: waverecn(c, wavelet, mode=mode, axes=axes), data.shape)
    raise ValueError(f"unrecognized transform: {transform!r} (use 'swtn' or 'dwtn')")


def _leaves(c):
    if isinstance(c, dict):
        return [v for x in c.values() for v in _leaves(x)]
    if isinstance(c, (tuple, list)):
        return [v for x in c for v in _leaves(x)]
    return [c]


def imra(mra_coeffs):
    """The signal of ``mra``'s components: their sum."""
    parts = _leaves(list(mra_coeffs))
    out = np.array(parts[0], copy=True)
    for c in parts[1:]:
        out = out + c
    return out


def imra2(mra_coeffs):
    """The array of ``mra2``'s components: their sum."""
    return imra(mra_coeffs)


def imran(mra_coeffs):
    """The array of ``mran``'s components: their sum."""
    return imra(mra_coeffs)


def _modwt_rows(fn, a, axis):
    """``fn`` on the C-contiguous rows along ``axis``; complex as parts."""
    if a.dtype.kind == "c":
        return _modwt_rows(fn, np.ascontiguousarray(a.real), axis) + 1j * _modwt_rows(fn, np.ascontiguousarray(a.imag), axis)
    return fn(np.ascontiguousarray(np.moveaxis(a, axis, -1)))


def modwt(x, wavelet="sym4", level=None, axis=-1, *, device="cpu"):
    """Maximal overlap DWT, as MATLAB's ``modwt(x, wname, level)``: an array
    of shape ``(level + 1, *x.shape)`` with the details W_1 ... W_level and
    then the smooth V_level (the transformed axis last). Any length works;
    ``level`` defaults to floor(log2(N)), the deepest. Orthogonal wavelets
    only: the synthesis filters scaled by 1/sqrt(2), periodic, so the
    planes keep the signal's energy. ``device='cuda'`` runs on the GPU,
    equal to the CPU bit for bit in float64."""
    a, foreign = _prep(x, "x")
    if a.ndim == 0:
        raise ValueError("x must be at least 1-D")
    ax = _axis(axis, a.ndim)
    n = a.shape[ax]
    if n == 0:
        raise ValueError("x is empty along the transformed axis")
    if level is None:
        level = int(np.log2(n))
    if not isinstance(level, (numbers.Integral, np.integer)) or not 1 <= level <= int(np.log2(n)):
        raise ValueError(f"level must be an integer in 1..{int(np.log2(n))} (floor(log2(N)) for N = {n}), got {level!r}")
    w = as_wavelet(wavelet)
    return _done(_modwt_rows(lambda r: _multires.modwt(r, w._filters, int(level), _use_gpu(device)), a, ax), foreign)


def imodwt(w, wavelet="sym4", *, device="cpu"):
    """The signal of ``modwt``'s array (transformed axis last), as MATLAB's
    ``imodwt``."""
    a, foreign = _prep(w, "w")
    if a.ndim < 2:
        raise ValueError(f"w must be modwt's array of shape (level + 1, ..., N), got shape {a.shape}")
    wv = as_wavelet(wavelet)
    return _done(_modwt_rows(lambda r: _multires.modwt_inverse(r, wv._filters, False, _use_gpu(device)), a, -1), foreign)


def modwtmra(w, wavelet="sym4", *, device="cpu"):
    """MATLAB's ``modwtmra``: the details D_1 ... D_J and the smooth S_J of
    ``modwt``'s array (same shape), each the inverse of one plane alone;
    they sum to the signal."""
    a, foreign = _prep(w, "w")
    if a.ndim < 2:
        raise ValueError(f"w must be modwt's array of shape (level + 1, ..., N), got shape {a.shape}")
    wv = as_wavelet(wavelet)
    return _done(_modwt_rows(lambda r: _multires.modwt_inverse(r, wv._filters, True, _use_gpu(device)), a, -1), foreign)
