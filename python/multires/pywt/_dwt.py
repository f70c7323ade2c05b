"""PyWavelets' discrete transforms: one level and multilevel, 1-D, 2-D, n-D.

The engine computes one level along an axis (and whole 1-D wavedec and
waverec, which take its fused periodization path); the n-D forms combine
levels along axes in PyWavelets' key order, so they equal PyWavelets to
float64 rounding. float32 input stays float32; complex input is
transformed as its real and imaginary parts.
"""

from __future__ import annotations

import numbers
import warnings
from itertools import product

import numpy as np

from .. import _multires
from .._arrays import Foreign, split
from ._wavelets import Modes, Wavelet, _mode_name, _upcoef_full, as_wavelet

try:
    from numpy.exceptions import AxisError
except ImportError:  # numpy < 1.25
    from numpy import AxisError


def _check_dtype(a):
    """PyWavelets' working dtype: float32/64 and complex64/128 kept,
    float16 to float32, anything else to float64."""
    dt = np.asarray(a).dtype
    if dt in (np.float32, np.float64, np.complex64, np.complex128):
        return dt
    if dt == np.float16:
        return np.dtype(np.float32)
    if dt.kind == "c":
        return np.dtype(np.complex128)
    return np.dtype(np.float64)


def _prep(data, what="data"):
    """(array in its working dtype, Foreign source or None)."""
    a, foreign = split(data)
    if a.dtype == object:
        raise TypeError(f"{what} must be numeric, got an object array")
    return np.asarray(a, dtype=_check_dtype(a)), foreign


def _axis(axis, ndim):
    if not isinstance(axis, (numbers.Integral, np.integer)):
        raise TypeError(f"axis must be an integer, got {type(axis).__name__}")
    a = int(axis) + ndim if axis < 0 else int(axis)
    if not 0 <= a < ndim:
        raise AxisError(f"Axis {axis} is out of range for an array of {ndim} dimensions")
    return a


def _done(result, foreign):
    return foreign.like(result) if foreign is not None else result


def _device(device):
    d = str(device).lower()
    if d not in ("cpu", "cuda", "gpu", "auto"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'auto', got {device!r}")
    return "cuda" if d == "gpu" else d


def _use_gpu(device):
    """Whether ``device`` ('cpu', 'cuda', 'gpu' or 'auto') runs on the GPU:
    'cuda' always (errors name a missing GPU), 'auto' when one can be used."""
    d = _device(device)
    return d == "cuda" or (d == "auto" and _multires.cuda_available())


def dwt_max_level(data_len, filter_len):
    """The deepest useful level: floor(log2(data_len / (filter_len - 1)))."""
    if isinstance(filter_len, Wavelet):
        filter_len = filter_len.dec_len
    elif isinstance(filter_len, str):
        filter_len = as_wavelet(filter_len).dec_len
    elif hasattr(filter_len, "dec_len"):
        filter_len = filter_len.dec_len
    if int(data_len) < 0 or int(filter_len) < 0:
        raise ValueError("Invalid data or filter length")
    if filter_len < 2:
        raise ValueError("invalid wavelet filter length")
    if data_len < filter_len - 1:
        return 0
    return int(np.floor(np.log2(data_len / (filter_len - 1))))


def dwt_coeff_len(data_len, filter_len, mode):
    """Coefficients per level: ceil(N/2) for periodization, else floor((N + F - 1)/2)."""
    if isinstance(filter_len, Wavelet):
        filter_len = filter_len.dec_len
    elif isinstance(filter_len, str):
        filter_len = as_wavelet(filter_len).dec_len
    if data_len < 1:
        raise ValueError("Value of data_len must be greater than zero.")
    if filter_len < 1:
        raise ValueError("Value of filter_len must be greater than zero.")
    if Modes.from_object(mode) == Modes.periodization:
        return (data_len + 1) // 2
    return (data_len + filter_len - 1) // 2


def dwtn_max_level(shape, wavelet, axes=None):
    """The deepest level every transformed axis allows."""
    if axes is None:
        axes = range(len(shape))
    ws = _per_axis(wavelet, axes, as_wavelet, "wavelet")
    return min(dwt_max_level(shape[a], w.dec_len) for a, w in zip(axes, ws))


def _per_axis(value, axes, conv, what):
    axes = list(axes)
    if isinstance(value, (str, Wavelet, numbers.Integral)) or hasattr(value, "filter_bank"):
        return [conv(value)] * len(axes)
    try:
        vals = list(value)
    except TypeError:
        raise ValueError(f"{what} must be a str, Wavelet or iterable") from None
    if len(vals) == 1:
        return [conv(vals[0])] * len(axes)
    if len(vals) != len(axes):
        raise ValueError(f"The number of {what}s must match the number of axes to be transformed.")
    return [conv(v) for v in vals]


def _dwt_axis(a, w, mode, axis):
    if a.dtype.kind == "c":
        rr = _multires.dwt_axis(np.ascontiguousarray(a.real), w._filters, _mode_name(mode), axis)
        ii = _multires.dwt_axis(np.ascontiguousarray(a.imag), w._filters, _mode_name(mode), axis)
        return rr[0] + 1j * ii[0], rr[1] + 1j * ii[1]
    return _multires.dwt_axis(a, w._filters, _mode_name(mode), axis)


def _idwt_axis(ca, cd, w, mode, axis):
    if ca.dtype.kind == "c" or cd.dtype.kind == "c":
        r = _multires.idwt_axis(np.ascontiguousarray(ca.real), np.ascontiguousarray(cd.real), w._filters, _mode_name(mode), axis)
        i = _multires.idwt_axis(np.ascontiguousarray(ca.imag), np.ascontiguousarray(cd.imag), w._filters, _mode_name(mode), axis)
        return r + 1j * i
    return _multires.idwt_axis(ca, cd, w._filters, _mode_name(mode), axis)


def dwt(data, wavelet, mode="symmetric", axis=-1):
    """One level of the DWT: ``(cA, cD)`` along ``axis``.

    ``len(cA) == len(cD) == floor((N + dec_len - 1) / 2)``, or ``ceil(N/2)``
    for ``mode='periodization'``.
    """
    a, foreign = _prep(data)
    if a.ndim == 0:
        raise ValueError("dwt needs at least one dimension")
    ax = _axis(axis, a.ndim)
    return _done(tuple(_dwt_axis(a, as_wavelet(wavelet), mode, ax)), foreign)


def _pair(cA, cD):
    if cA is None and cD is None:
        raise ValueError("At least one coefficient parameter must be specified.")
    fa = fd = None
    if cA is not None:
        cA, fa = _prep(cA, "cA")
    if cD is not None:
        cD, fd = _prep(cD, "cD")
    if cA is None:
        cA = np.zeros_like(cD)
    elif cD is None:
        cD = np.zeros_like(cA)
    if cA.dtype != cD.dtype:
        dt = np.complex128 if "c" in (cA.dtype.kind, cD.dtype.kind) else np.float64
        cA, cD = cA.astype(dt), cD.astype(dt)
    if cA.shape != cD.shape:
        raise ValueError(f"Mismatch in shape of approximation coefficients {cA.shape} and detail coefficients {cD.shape}.")
    return cA, cD, fa or fd


def idwt(cA, cD, wavelet, mode="symmetric", axis=-1):
    """One level of the inverse DWT; either of cA, cD may be None (zeros)."""
    cA, cD, foreign = _pair(cA, cD)
    ax = _axis(axis, cA.ndim)
    return _done(_idwt_axis(cA, cD, as_wavelet(wavelet), mode, ax), foreign)


def downcoef(part, data, wavelet, mode="symmetric", level=1):
    """The approximation ('a') or detail ('d') coefficients of level ``level``."""
    if part not in ("a", "d"):
        raise ValueError(f"Argument 1 must be 'a' or 'd', not '{part}'.")
    a, foreign = _prep(data)
    if a.ndim > 1:
        raise ValueError("downcoef only supports 1d data.")
    w = as_wavelet(wavelet)
    for i in range(level):
        ca, cd = _dwt_axis(a, w, mode, 0)
        a = ca if (part == "a" or i < level - 1) else cd
    return _done(a, foreign)


def upcoef(part, coeffs, wavelet, level=1, take=0):
    """Direct reconstruction from one kind of coefficients (full length, or
    the central ``take`` samples)."""
    if part not in ("a", "d"):
        raise ValueError(f"Argument 1 must be 'a' or 'd', not '{part}'.")
    c, foreign = _prep(coeffs, "coeffs")
    if c.ndim > 1:
        raise ValueError("upcoef only supports 1d coeffs.")
    w = as_wavelet(wavelet)
    if c.dtype.kind == "c":
        return upcoef(part, c.real, w, level, take) + 1j * upcoef(part, c.imag, w, level, take)
    y = _upcoef_full(part == "a", c, w.rec_lo, w.rec_hi, level, c.dtype)
    if 0 < take < len(y):
        lo = (len(y) - take) // 2
        y = y[lo : lo + take]
    return _done(y, foreign)


def wavedec(data, wavelet, mode="symmetric", level=None, axis=-1, *, device="cpu"):
    """Multilevel 1-D DWT: ``[cA_n, cD_n, cD_n-1, ..., cD_1]``.

    Parameters
    ----------
    data : array_like
    wavelet : Wavelet or str
    mode : str
    level : int, optional
        Default: ``dwt_max_level(data.shape[axis], wavelet.dec_len)``.
    axis : int
    device : {'cpu', 'cuda', 'auto'}
        multires only: 'cuda' computes every 1-D signal along ``axis`` in
        one batched GPU launch sequence.
    """
    dev = _device(device)
    if dev != "cpu" and not isinstance(data, np.ndarray) and hasattr(data, "__dlpack__"):
        f = Foreign(data)
        if f.on_cuda and f.dtype_name in ("float32", "float64") and f.module in ("cupy", "torch", "jax", "jaxlib"):
            return _wavedec_on_device(f, wavelet, mode, level, axis)
    a, foreign = _prep(data)
    if a.ndim == 0:
        raise ValueError("wavedec needs at least one dimension")
    ax = _axis(axis, a.ndim)
    w = as_wavelet(wavelet)
    n = a.shape[ax]
    if level is None:
        level = dwt_max_level(n, w.dec_len)
    elif level < 0:
        raise ValueError(f"Level value of {level} is too low . Minimum level is 0.")
    elif level > dwt_max_level(n, w.dec_len):
        warnings.warn(
            f"Level value of {level} is too high: all coefficients will experience boundary effects.",
            stacklevel=2,
        )
    if a.dtype.kind != "c" and _use_gpu(dev):
        moved = np.ascontiguousarray(np.moveaxis(a, ax, -1))
        outer = moved.shape[:-1]
        blocks = _multires.wavedec_cuda(moved.reshape(-1, n), w._filters, _mode_name(mode), int(level))
        out = [np.moveaxis(b.reshape(outer + (b.shape[-1],)), -1, ax) for b in blocks]
        return _done(out, foreign)
    if a.dtype.kind == "c":
        re = wavedec(a.real, w, mode, level, ax)
        im = wavedec(a.imag, w, mode, level, ax)
        return _done([r + 1j * i for r, i in zip(re, im)], foreign)
    out = _multires.wavedec(a, w._filters, _mode_name(mode), int(level), ax)
    return _done(list(out), foreign)


def _wavedec_on_device(f, wavelet, mode, level, axis):
    """wavedec of a CUDA array on the GPU; the coefficients stay there."""
    ndim = len(f.obj.shape)
    if ndim == 0:
        raise ValueError("wavedec needs at least one dimension")
    ax = _axis(axis, ndim)
    w = as_wavelet(wavelet)
    n = int(f.obj.shape[ax])
    if level is None:
        level = dwt_max_level(n, w.dec_len)
    elif level < 0:
        raise ValueError(f"Level value of {level} is too low . Minimum level is 0.")
    elif level > dwt_max_level(n, w.dec_len):
        warnings.warn(f"Level value of {level} is too high: all coefficients will experience boundary effects.", stacklevel=3)
    rows, outer = f.last_axis_rows(ax)
    f.sync()
    blocks = _multires.wavedec_device(rows, w._filters, _mode_name(mode), int(level))
    return [f.last_axis_to(f.wrap(b).reshape(outer + (b.shape[-1],)), ax) for b in blocks]


def waverec(coeffs, wavelet, mode="symmetric", axis=-1, *, device="cpu"):
    """Inverse of :func:`wavedec` from ``[cA_n, cD_n, ..., cD_1]``."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError("Expected sequence of coefficient arrays.")
    if len(coeffs) < 1:
        raise ValueError("Coefficient list too short (minimum 1 arrays required).")
    foreign = None
    arrs = []
    for c in coeffs:
        if c is None:
            raise ValueError("waverec does not take None coefficients; pass zeros")
        a, f = _prep(c, "coeffs")
        foreign = foreign or f
        arrs.append(a)
    if len(arrs) == 1:
        return _done(arrs[0], foreign)
    dt = np.result_type(*[a.dtype for a in arrs])
    arrs = [np.asarray(a, dtype=dt) for a in arrs]
    ndim = arrs[0].ndim
    if any(a.ndim != ndim for a in arrs):
        raise ValueError("All coefficient arrays must have the same number of dimensions.")
    ax = _axis(axis, ndim)
    w = as_wavelet(wavelet)
    dev = _device(device)
    if dt.kind != "c" and _use_gpu(dev):
        moved = [np.ascontiguousarray(np.moveaxis(a, ax, -1)) for a in arrs]
        outer = moved[0].shape[:-1]
        y = _multires.waverec_cuda([m.reshape(-1, m.shape[-1]) for m in moved], w._filters, _mode_name(mode))
        return _done(np.moveaxis(y.reshape(outer + (y.shape[-1],)), -1, ax), foreign)
    if dt.kind == "c":
        r = waverec([a.real for a in arrs], w, mode, ax)
        i = waverec([a.imag for a in arrs], w, mode, ax)
        return _done(r + 1j * i, foreign)
    return _done(_multires.waverec(arrs, w._filters, _mode_name(mode), ax), foreign)


def _axes(axes, ndim):
    if axes is None:
        axes = tuple(range(ndim))
    elif isinstance(axes, (numbers.Integral, np.integer)):
        axes = (int(axes),)
    axes = tuple(_axis(a, ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError("The axes passed to dwtn must be unique.")
    return axes


def dwtn(data, wavelet, mode="symmetric", axes=None):
    """One level of the n-D DWT: a dict of 'a'/'d' keys, one letter per axis."""
    a, foreign = _prep(data)
    if a.ndim < 1:
        raise ValueError("Input data must be at least 1D")
    axes = _axes(axes, a.ndim)
    if not axes:
        raise ValueError("dwtn needs at least one axis to transform")
    ws = _per_axis(wavelet, axes, as_wavelet, "wavelet")
    ms = _per_axis(mode, axes, Modes.from_object, "mode")
    coeffs = [("", a)]
    for ax, w, m in zip(axes, ws, ms):
        nxt = []
        for key, c in coeffs:
            ca, cd = _dwt_axis(c, w, m, ax)
            nxt += [(key + "a", ca), (key + "d", cd)]
        coeffs = nxt
    return _done(dict(coeffs), foreign)


def _fix_coeffs(coeffs):
    missing = [k for k, v in coeffs.items() if v is None]
    if missing:
        raise ValueError("The following detail coefficients were set to None:\n{}".format(missing))
    bad = [k for k in coeffs if not (isinstance(k, str) and k and set(k) <= {"a", "d"})]
    if bad:
        raise ValueError(f"The following invalid keys were found in the detail coefficient dictionary: {bad}.")
    lens = {len(k) for k in coeffs}
    if len(lens) != 1:
        raise ValueError("All detail coefficient names must have equal length.")
    return {k: _prep(v, "coeffs")[0] for k, v in coeffs.items()}


def idwtn(coeffs, wavelet, mode="symmetric", axes=None):
    """One level of the inverse n-D DWT from a dwtn-style dict (missing or
    None entries count as zeros, as in PyWavelets)."""
    if not isinstance(coeffs, dict):
        raise TypeError("coeffs must be a dict of 'a'/'d' keys, as dwtn returns")
    foreign = next((Foreign(v) for v in coeffs.values() if v is not None and not isinstance(v, np.ndarray) and hasattr(v, "__dlpack__")), None)
    present = {k: v for k, v in coeffs.items() if v is not None}
    if not present:
        raise ValueError("At least one coefficient must contain a valid value.")
    c = _fix_coeffs(present)
    ndim_t = len(next(iter(c)))
    shapes = {v.shape for v in c.values()}
    if len(shapes) != 1:
        raise ValueError("`coeffs` must all be of equal size (or None)")
    shape = next(iter(shapes))
    ndim = len(shape)
    dt = np.result_type(*[v.dtype for v in c.values()])
    if axes is None:
        axes = tuple(range(ndim))
    axes = _axes(axes, ndim)
    if len(axes) != ndim_t:
        raise ValueError("The number of axes used in the inverse transform must match the number of transformed axes in coeffs.")
    ws = _per_axis(wavelet, axes, as_wavelet, "wavelet")
    ms = _per_axis(mode, axes, Modes.from_object, "mode")
    level = {k: np.asarray(v, dtype=dt) for k, v in c.items()}
    for k in range(ndim_t - 1, -1, -1):
        ax, w, m = axes[k], ws[k], ms[k]
        nxt = {}
        for key in ("".join(p) for p in product("ad", repeat=k)):
            a, d = level.get(key + "a"), level.get(key + "d")
            if a is None and d is None:
                continue
            a = np.zeros_like(d) if a is None else a
            d = np.zeros_like(a) if d is None else d
            nxt[key] = _idwt_axis(a, d, w, m, ax)
        level = nxt
    return _done(level[""], foreign)


def dwt2(data, wavelet, mode="symmetric", axes=(-2, -1)):
    """One level of the 2-D DWT: ``(cA, (cH, cV, cD))``."""
    axes = tuple(axes)
    a, foreign = _prep(data)
    if len(axes) != 2:
        raise ValueError("Expected 2 axes")
    if a.ndim < 2:
        raise ValueError(f"Input array has fewer dimensions than the specified axes: {a.ndim} < 2")
    c = dwtn(a, wavelet, mode, axes)
    return _done((c["aa"], (c["da"], c["ad"], c["dd"])), foreign)


def idwt2(coeffs, wavelet, mode="symmetric", axes=(-2, -1)):
    """Inverse of :func:`dwt2` from ``(cA, (cH, cV, cD))`` (any may be None)."""
    LL, (HL, LH, HH) = coeffs
    axes = tuple(axes)
    if len(axes) != len(set(axes)):
        raise ValueError("The axes passed to idwt2 must be unique.")
    if len(axes) != 2:
        raise ValueError("Expected 2 axes")
    return idwtn({"aa": LL, "da": HL, "ad": LH, "dd": HH}, wavelet, mode, axes)


def _check_level(sizes, dec_lens, level):
    if np.isscalar(sizes):
        sizes = (sizes,)
    if np.isscalar(dec_lens):
        dec_lens = (dec_lens,)
    max_level = np.min([dwt_max_level(s, d) for s, d in zip(sizes, dec_lens)])
    if level is None:
        level = max_level
    elif level < 0:
        raise ValueError(f"Level value of {level} is too low . Minimum level is 0.")
    elif level > max_level:
        warnings.warn(
            f"Level value of {level} is too high: all coefficients will experience boundary effects.",
            stacklevel=3,
        )
    return int(level)


def wavedecn(data, wavelet, mode="symmetric", level=None, axes=None):
    """Multilevel n-D DWT: ``[cAn, {details_n}, ..., {details_1}]``."""
    a, foreign = _prep(data)
    if a.ndim < 1:
        raise ValueError("Expected at least 1D input data.")
    axes = _axes(axes, a.ndim)
    ws = _per_axis(wavelet, axes, as_wavelet, "wavelet")
    level = _check_level([a.shape[ax] for ax in axes], [w.dec_len for w in ws], level)
    details = []
    key = "a" * len(axes)
    for _ in range(level):
        c = dwtn(a, ws, mode, axes)
        a = c.pop(key)
        details.append(c)
    details.reverse()
    return _done([a] + details, foreign)


def _match(a, d):
    # the approximation may be one longer along an axis (odd lengths)
    shape = next((v.shape for v in d.values() if v is not None), None)
    if a is None or shape is None:
        return a
    return a[tuple(slice(s) for s in shape)]


def waverecn(coeffs, wavelet, mode="symmetric", axes=None):
    """Inverse of :func:`wavedecn`."""
    if not isinstance(coeffs, (list, tuple)) or len(coeffs) == 0:
        raise ValueError("Coefficient list too short (minimum 1 array required).")
    a, ds = coeffs[0], list(coeffs[1:])
    if any(not isinstance(d, dict) for d in ds):
        raise ValueError("Unexpected detail coefficient type: waverecn takes [cA, {details}, ...] as wavedecn returns")
    if len(ds) == 0:
        return _prep(a, "coeffs")[0] if a is not None else None
    nd = {len(k) for d in ds for k in d}
    if len(nd) > 1:
        raise ValueError("All detail shapes must be of equal length.")
    ndim_t = nd.pop() if nd else 0
    if ndim_t == 0:
        raise ValueError("The detail dictionaries are empty")
    if a is not None:
        ndim = np.ndim(a)
    else:
        ndim = next(np.ndim(v) for d in ds for v in d.values() if v is not None)
    if axes is None:
        if ndim_t != ndim:
            raise ValueError("if axes is None, the number of dimensions of the approximation and detail coefficients must match")
        axes = tuple(range(ndim))
    axes = _axes(axes, ndim)
    if len(axes) != ndim_t:
        raise ValueError("Number of axes used in the inverse transform must match the number of transformed axes in coeffs.")
    key = "a" * ndim_t
    for d in ds:
        d = dict(d)
        if a is not None:
            a = _match(_prep(a, "coeffs")[0], d)
            shape = next((np.shape(v) for v in d.values() if v is not None), None)
            if shape is not None and a.shape != tuple(shape):
                raise ValueError(f"Shape mismatch: approximation {a.shape} does not fit details {tuple(shape)}")
        d[key] = a
        a = idwtn(d, wavelet, mode, axes)
    return a


def wavedec2(data, wavelet, mode="symmetric", level=None, axes=(-2, -1)):
    """Multilevel 2-D DWT: ``[cAn, (cHn, cVn, cDn), ..., (cH1, cV1, cD1)]``."""
    a, _ = split(data)
    a = np.asarray(a)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("Expected 2 axes")
    if len(axes) != len(set(axes)):
        raise ValueError("The axes passed to wavedec2 must be unique.")
    if a.ndim < len(np.unique(axes)):
        raise ValueError(f"Expected input data to have at least {len(np.unique(axes))} dimensions.")
    c = wavedecn(data, wavelet, mode, level, axes)
    return [c[0]] + [(d["da"], d["ad"], d["dd"]) for d in c[1:]]


def waverec2(coeffs, wavelet, mode="symmetric", axes=(-2, -1)):
    """Inverse of :func:`wavedec2`."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError("Expected sequence of coefficient arrays.")
    if len(axes) != len(set(axes)):
        raise ValueError("The axes passed to waverec2 must be unique.")
    if len(coeffs) < 1:
        raise ValueError("Coefficient list too short (minimum 1 array required).")
    if len(coeffs) == 1:
        return np.asarray(coeffs[0])
    ds = []
    for d in coeffs[1:]:
        if not isinstance(d, (tuple, list)) or len(d) != 3:
            raise ValueError("Unexpected detail coefficient type: expected (cH, cV, cD) per level")
        ds.append({"da": d[0], "ad": d[1], "dd": d[2]})
    return waverecn([coeffs[0]] + ds, wavelet, mode, axes)


def _extend_smooth(v, lo, hi):
    """``v`` extended along its last axis by its edge slopes (numpy.pad has no such mode)."""
    if v.shape[-1] < 2:
        return np.pad(v, [(0, 0)] * (v.ndim - 1) + [(lo, hi)], mode="edge")
    left = v[..., :1] + (v[..., :1] - v[..., 1:2]) * np.arange(lo, 0, -1)
    right = v[..., -1:] + (v[..., -1:] - v[..., -2:-1]) * np.arange(1, hi + 1)
    return np.concatenate([left, v, right], axis=-1)


def _extend_antisymmetric(v, lo, hi):
    """``v`` extended along its last axis as PyWavelets' antisymmetric mode:
    mirrored about the half sample, negated (the edge sample repeats negated)."""
    n = v.shape[-1]
    m = np.mod(np.arange(-lo, n + hi), 2 * n)
    sign = np.where(m < n, 1, -1)
    src = np.where(m < n, m, 2 * n - 1 - m)
    return v[..., src] * sign


def pad(x, pad_widths, mode):
    """Extends ``x`` by ``pad_widths`` (numpy.pad's form) with a DWT mode."""
    x = np.asarray(x)
    pw = np.broadcast_to(np.asarray(pad_widths, dtype=np.intp), (x.ndim, 2))
    name = _mode_name(mode)
    np_mode = {
        "zero": ("constant", {}),
        "constant": ("edge", {}),
        "symmetric": ("symmetric", {}),
        "reflect": ("reflect", {}),
        "periodic": ("wrap", {}),
        "periodization": ("wrap", {}),
        "antireflect": ("reflect", {"reflect_type": "odd"}),
    }
    if name in ("smooth", "antisymmetric"):
        extend = _extend_smooth if name == "smooth" else _extend_antisymmetric
        out = x
        for ax in range(x.ndim):
            lo, hi = pw[ax]
            out = np.moveaxis(extend(np.moveaxis(out, ax, -1), lo, hi), -1, ax)
        return out
    npm, kw = np_mode[name]
    return np.pad(x, pw, mode=npm, **kw)
