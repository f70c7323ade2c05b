"""PyWavelets' stationary wavelet transform: ``swt``, ``iswt``, ``swt2``,
``iswt2``, ``swtn``, ``iswtn``, ``swt_max_level``. The engine computes
each level along an axis (the à trous periodized convolution in pywt's
order of sums, and its inverse: the average of the two periodization
inverses of each level's interleaved halves); the n-D forms apply it axis
by axis, as pywt does.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from .. import _multires
from .._arrays import Foreign
from ._dwt import _axes, _axis, _device, _done, _per_axis, _prep, _use_gpu
from ._wavelets import as_wavelet


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


def _scale(norm, inverse=False):
    """pywt's norm=True: the filter bank times 1/sqrt(2) forward and
    sqrt(2) inverse (numpy's values), so that the transform is a tight
    frame (an orthogonal wavelet's energy is kept)."""
    if not norm:
        return 1.0
    return float(np.sqrt(2)) if inverse else float(1 / np.sqrt(2))


def _warn_not_orthogonal(ws, norm):
    if norm and not all(w.orthogonal for w in ws):
        warnings.warn(
            "norm=True, but the wavelets used are not orthogonal: \n"
            "\tThe conditions for energy preservation are not satisfied.\n"
            "\tThe transform will not be a tight frame."
        )


def _check_levels(n, level, start_level):
    """pywt's length rules for ``level`` levels from ``start_level`` on an
    axis of ``n`` samples."""
    if not isinstance(level, (numbers.Integral, np.integer)) or level < 1:
        raise ValueError(f"Level value of {level} is too low : minimum required level is 1.")
    if not isinstance(start_level, (numbers.Integral, np.integer)) or start_level < 0:
        raise ValueError(f"start_level must be a non-negative integer, got {start_level!r}")
    max_level = swt_max_level(n)
    if start_level >= max_level:
        raise ValueError(f"start_level must be less than {max_level}.")
    if start_level + level > max_level:
        raise ValueError(
            f"Level value too high (max level for current data size and start_level is {max_level - start_level}): "
            f"the length {n} must be evenly divisible by 2**(start_level + level) = {2 ** (start_level + level)}."
        )


def _on_rows(fn, arrays, axis):
    """``fn`` over C-contiguous rows along ``axis`` of same-shape arrays;
    the results put back in the arrays' layout. Complex arrays go as their
    real and imaginary parts (the transforms are real-linear)."""
    if any(a.dtype.kind == "c" for a in arrays):
        re = _on_rows(fn, [np.ascontiguousarray(a.real) for a in arrays], axis)
        im = _on_rows(fn, [np.ascontiguousarray(a.imag) for a in arrays], axis)
        if isinstance(re, tuple):
            return tuple(r + 1j * i for r, i in zip(re, im))
        return re + 1j * im
    moved = [np.ascontiguousarray(np.moveaxis(a, axis, -1)) for a in arrays]
    shape = moved[0].shape
    out = fn(*[m.reshape(-1, shape[-1]) for m in moved])
    back = lambda v: np.moveaxis(v.reshape(shape), -1, axis)
    return tuple(back(v) for v in out) if isinstance(out, tuple) else back(out)


def _swt_level(x, w, fstep, axis, scale, gpu=False):
    if gpu and x.dtype.kind == "f":
        # One level on the GPU: swt_cuda's level start_level + 1 has filter step 2^start_level.
        start = int(fstep).bit_length() - 1
        return _on_rows(lambda r: _multires.swt_cuda(r, w._filters, 1, start, scale != 1.0)[0], [x], axis)
    return _on_rows(lambda r: _multires.swt_level(r, w._filters, fstep, scale), [x], axis)


def _iswt_level(a, d, w, fstep, axis, scale):
    return _on_rows(lambda ra, rd: _multires.iswt_level(ra, rd, w._filters, fstep, scale), [a, d], axis)


def _on_gpu(device, a):
    """Whether a real array goes to the GPU for ``device``."""
    return a.dtype.kind == "f" and _use_gpu(device)


def swt(data, wavelet, level=None, start_level=0, axis=-1, trim_approx=False, norm=False, *, device="cpu"):
    """Multilevel 1-D stationary (undecimated) wavelet transform.

    Returns ``[(cAn, cDn), ..., (cA1, cD1)]`` (coarsest first), or with
    ``trim_approx`` ``[cAn, cDn, ..., cD1]``; every array has the input's
    shape. The length along ``axis`` must be a multiple of ``2**level``.
    Equal to ``pywt.swt`` to float64 rounding; float32 stays float32,
    complex input is transformed as its real and imaginary parts.
    ``device='cuda'`` (or 'auto' with a GPU) runs every level of every row
    on the GPU, equal to the CPU's result bit for bit in float64.
    """
    if _device(device) != "cpu" and not isinstance(data, np.ndarray) and hasattr(data, "__dlpack__"):
        f = Foreign(data)
        if f.on_cuda and f.dtype_name in ("float32", "float64") and f.module in ("cupy", "torch", "jax", "jaxlib"):
            return _swt_on_device(f, wavelet, level, start_level, axis, trim_approx, norm)
    a, foreign = _prep(data)
    if a.ndim == 0:
        raise ValueError("data must be at least 1-D")
    ax = _axis(axis, a.ndim)
    w = as_wavelet(wavelet)
    _warn_not_orthogonal([w], norm)
    n = a.shape[ax]
    if level is None:
        level = swt_max_level(n)
    _check_levels(n, level, start_level)
    if _on_gpu(device, a):
        levels = _on_rows(lambda r: tuple(v for p in _multires.swt_cuda(r, w._filters, int(level), int(start_level), bool(norm)) for v in p), [a], ax)
        out = [(_done(levels[2 * i], foreign), _done(levels[2 * i + 1], foreign)) for i in range(level)]
        return [out[0][0]] + [cd for _, cd in out] if trim_approx else out
    out, x = [], a
    for j in range(start_level, start_level + level):
        ca, cd = _swt_level(x, w, 2**j, ax, _scale(norm))
        out.append((_done(ca, foreign), _done(cd, foreign)))
        x = ca
    out.reverse()
    if trim_approx:
        return [out[0][0]] + [cd for _, cd in out]
    return out


def _swt_on_device(f, wavelet, level, start_level, axis, trim_approx, norm):
    """swt of a CUDA array on the GPU; the coefficients stay there, as
    arrays of the input's kind."""
    ndim = len(f.obj.shape)
    if ndim == 0:
        raise ValueError("data must be at least 1-D")
    ax = _axis(axis, ndim)
    w = as_wavelet(wavelet)
    _warn_not_orthogonal([w], norm)
    n = int(f.obj.shape[ax])
    if level is None:
        level = swt_max_level(n)
    _check_levels(n, level, start_level)
    rows, outer = f.last_axis_rows(ax)
    f.sync()
    back = lambda b: f.last_axis_to(f.wrap(b).reshape(outer + (n,)), ax)
    out = [(back(a), back(d)) for a, d in _multires.swt_device(rows, w._filters, int(level), int(start_level), bool(norm))]
    return [out[0][0]] + [d for _, d in out] if trim_approx else out


def _common(arrays):
    dt = np.result_type(*[_prep(a)[0].dtype for a in arrays])
    return [np.asarray(_prep(a)[0], dtype=dt) for a in arrays]


def iswt(coeffs, wavelet, norm=False, axis=-1):
    """The signal of ``swt``'s coefficients (either of its forms), as
    ``pywt.iswt``: each level the average of the two periodization inverses
    of its interleaved halves."""
    if not coeffs:
        raise ValueError("coeffs is empty: pass what swt returned")
    trim_approx = not isinstance(coeffs[0], (tuple, list))
    if trim_approx:
        first, details = coeffs[0], list(coeffs[1:])
    else:
        first, details = coeffs[0][0], [c[1] for c in coeffs]
    output, *details = _common([first] + details)
    w = as_wavelet(wavelet)
    ax = _axis(axis, output.ndim)
    num_levels = len(details)
    for j, cd in enumerate(details):
        if cd.shape != output.shape:
            raise ValueError(
                f"the detail coefficients of level {num_levels - j} have shape {cd.shape}, the approximation {output.shape}"
            )
        output = _iswt_level(output, cd, w, 2 ** (num_levels - j - 1), ax, _scale(norm, inverse=True))
    return output


def swtn(data, wavelet, level, start_level=0, axes=None, trim_approx=False, norm=False, *, device="cpu"):
    """n-D stationary wavelet transform, as ``pywt.swtn``:
    ``[{coeffs_level_n}, ..., {coeffs_level_1}]``, dicts keyed by one
    'a'/'d' letter per axis (with ``trim_approx`` the first entry is the
    coarsest approximation and the dicts hold details only). ``wavelet``
    may be one per axis. ``device='cuda'`` runs each axis pass on the GPU
    (equal to the CPU bit for bit in float64)."""
    a, foreign = _prep(data)
    if a.ndim < 1:
        raise ValueError("Input data must be at least 1D")
    axes = _axes(axes, a.ndim)
    ws = _per_axis(wavelet, axes, as_wavelet, "wavelet")
    _warn_not_orthogonal(ws, norm)
    for ax in axes:
        _check_levels(a.shape[ax], level, start_level)
    gpu = _on_gpu(device, a)
    ret = []
    for j in range(start_level, start_level + level):
        bands = [("", a)]
        for ax, w in zip(axes, ws):
            nxt = []
            for key, x in bands:
                ca, cd = _swt_level(x, w, 2**j, ax, _scale(norm), gpu)
                nxt += [(key + "a", ca), (key + "d", cd)]
            bands = nxt
        bands = dict(bands)
        a = bands["a" * len(axes)]
        if trim_approx:
            bands.pop("a" * len(axes))
        ret.append({k: _done(v, foreign) for k, v in bands.items()})
    if trim_approx:
        ret.append(_done(a, foreign))
    ret.reverse()
    return ret


def iswtn(coeffs, wavelet, axes=None, norm=False):
    """The array of ``swtn``'s coefficients (either form), as ``pywt.iswtn``.
    Each level is inverted axis by axis (the last axis first); pywt's
    joint n-D average over parities factors into these 1-D averages."""
    if not coeffs:
        raise ValueError("coeffs is empty: pass what swtn returned")
    ndim_t = max(len(k) for k in coeffs[-1])
    trim_approx = not isinstance(coeffs[0], dict)
    approx = coeffs[0] if trim_approx else coeffs[0]["a" * ndim_t]
    levels = coeffs[1:] if trim_approx else coeffs
    output = _prep(approx)[0]
    axes = _axes(axes, output.ndim)
    if len(axes) != ndim_t:
        raise ValueError("The number of axes used in iswtn must match the number of dimensions transformed in swtn.")
    ws = _per_axis(wavelet, axes, as_wavelet, "wavelet")
    num_levels = len(levels)
    for j, details in enumerate(levels):
        details = {k: v for k, v in details.items() if k != "a" * ndim_t}
        names = list(details)
        arrays = _common([output] + [details[k] for k in names])
        if len({v.shape for v in arrays}) != 1:
            raise RuntimeError("Mismatch in shape of intermediate coefficient arrays")
        bands = dict(zip(names, arrays[1:]))
        bands["a" * ndim_t] = arrays[0]
        fstep = 2 ** (num_levels - j - 1)
        for k in range(ndim_t - 1, -1, -1):
            nxt = {}
            for key in {b[:k] for b in bands}:
                a, d = bands.get(key + "a"), bands.get(key + "d")
                a = np.zeros_like(d) if a is None else a
                d = np.zeros_like(a) if d is None else d
                nxt[key] = _iswt_level(a, d, ws[k], fstep, axes[k], _scale(norm, inverse=True))
            bands = nxt
        output = bands[""]
    return output


def _check_2d(axes):
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("Expected 2 axes")
    if len(set(axes)) != 2:
        raise ValueError("The axes passed to swt2 must be unique.")
    return axes


def swt2(data, wavelet, level, start_level=0, axes=(-2, -1), trim_approx=False, norm=False, *, device="cpu"):
    """2-D stationary wavelet transform, as ``pywt.swt2``:
    ``[(cA_n, (cH_n, cV_n, cD_n)), ..., (cA_1, (cH_1, cV_1, cD_1))]``, or
    with ``trim_approx`` ``[cA_n, (cH_n, cV_n, cD_n), ...]`` (wavedec2's
    layout). ``device='cuda'``: on the GPU, as ``swtn``."""
    axes = _check_2d(axes)
    if np.ndim(data) < 2:
        raise ValueError("Input array has fewer dimensions than the specified axes")
    levels = swtn(data, wavelet, level, start_level, axes, trim_approx, norm, device=device)
    ret = [levels.pop(0)] if trim_approx else []
    for c in levels:
        details = (c["da"], c["ad"], c["dd"])
        ret.append(details if trim_approx else (c["aa"], details))
    return ret


def iswt2(coeffs, wavelet, norm=False, axes=(-2, -1)):
    """The array of ``swt2``'s coefficients (either form), as ``pywt.iswt2``."""
    axes = _check_2d(axes)
    if not coeffs:
        raise ValueError("coeffs is empty: pass what swt2 returned")
    if not isinstance(coeffs[0], (tuple, list)):
        nd = [coeffs[0]] + [{"da": h, "ad": v, "dd": d} for h, v, d in coeffs[1:]]
    else:
        nd = [{"aa": a, "da": h, "ad": v, "dd": d} for a, (h, v, d) in coeffs]
    return iswtn(nd, wavelet, axes=axes, norm=norm)
