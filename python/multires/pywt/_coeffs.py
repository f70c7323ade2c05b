"""PyWavelets' helpers to pack multilevel coefficients into one array and back."""

from __future__ import annotations

import numpy as np

from ._dwt import _check_level, _per_axis, as_wavelet, dwt_coeff_len


def _to_nd(coeffs):
    """wavedec and wavedec2 lists in wavedecn's form ([a, {key: d}, ...])."""
    out = [coeffs[0]]
    for c in coeffs[1:]:
        if isinstance(c, dict):
            out.append(c)
        elif isinstance(c, np.ndarray):
            if c.ndim != 1:
                raise ValueError("expected a 1D coefficient array")
            out.append({"d": c})
        elif isinstance(c, (tuple, list)):
            if len(c) != 3:
                raise ValueError("expected a 3-tuple of detail coefficients")
            if any(v is None for v in c):
                raise ValueError("Expected numpy arrays of detail coefficients. Setting coefficients to None is not supported.")
            out.append({"da": c[0], "ad": c[1], "dd": c[2]})
        else:
            raise ValueError("invalid coefficient list")
    return out


def _prepare(coeffs, axes):
    if not isinstance(coeffs, list) or len(coeffs) == 0:
        raise ValueError("input must be a list of coefficients from wavedecn")
    if coeffs[0] is None:
        raise ValueError("coeffs_to_array does not support missing coefficients.")
    if not isinstance(coeffs[0], np.ndarray):
        raise ValueError("first list element must be a numpy array")
    ndim = coeffs[0].ndim
    coeffs = _to_nd(coeffs)
    if len(coeffs) == 1:
        return coeffs, axes, ndim, None
    nt = len(next(iter(coeffs[1])))
    if axes is None:
        if nt < ndim:
            raise ValueError("coeffs corresponds to a DWT performed over only a subset of the axes.  In this case, axes must be specified.")
        axes = np.arange(ndim)
    if len(axes) != nt:
        raise ValueError("The length of axes doesn't match the number of dimensions transformed.")
    return coeffs, np.asarray([a % ndim for a in axes]), ndim, nt


def coeffs_to_array(coeffs, padding=0, axes=None):
    """Packs wavedec/wavedec2/wavedecn coefficients into one array.

    Returns ``(coeff_arr, coeff_slices)``: the approximation in the corner,
    each level's details beside it along the transformed axes. ``padding``
    fills what the pieces leave uncovered (None: refuse a loose packing).
    """
    coeffs, axes, ndim, nt = _prepare(coeffs, axes)
    a = coeffs[0]
    if len(coeffs) == 1:
        return a, [tuple([slice(None)] * ndim)]
    shape = np.asarray(a.shape)
    total = a.size
    for d in coeffs[1:]:
        if any(v is None for v in d.values()):
            raise ValueError("coeffs_to_array does not support missing coefficients.")
        shape[axes] += np.asarray(d["d" * nt].shape)[axes]
        total += sum(v.size for v in d.values())
    shape = tuple(shape.tolist())
    if padding is None:
        if int(np.prod(shape)) != total:
            raise ValueError("array coefficients cannot be tightly packed")
        arr = np.empty(shape, dtype=a.dtype)
    else:
        arr = np.full(shape, padding, dtype=a.dtype)
    a_shape = a.shape
    a_sl = tuple(slice(s) for s in a_shape)
    arr[a_sl] = a
    slices = [a_sl]
    for d in coeffs[1:]:
        level = {}
        d_shape = d["d" * nt].shape
        for key, v in d.items():
            sl = [slice(None)] * ndim
            for i, letter in enumerate(key):
                ax = axes[i]
                if letter == "a":
                    sl[ax] = slice(v.shape[ax])
                elif letter == "d":
                    sl[ax] = slice(a_shape[ax], a_shape[ax] + v.shape[ax])
                else:
                    raise ValueError(f"unexpected letter: {letter}")
            sl = tuple(sl)
            arr[sl] = v
            level[key] = sl
        slices.append(level)
        a_shape = [a_shape[n] + d_shape[n] for n in range(ndim)]
    return arr, slices


def array_to_coeffs(arr, coeff_slices, output_format="wavedecn"):
    """The coefficient list :func:`coeffs_to_array` packed into ``arr``."""
    arr = np.asarray(arr)
    if len(coeff_slices) == 0:
        raise ValueError("empty list of coefficient slices")
    out = [arr[coeff_slices[0]]]
    for sl in coeff_slices[1:]:
        if output_format == "wavedec":
            out.append(arr[sl["d"]])
        elif output_format == "wavedec2":
            out.append((arr[sl["da"]], arr[sl["ad"]], arr[sl["dd"]]))
        elif output_format == "wavedecn":
            out.append({k: arr[v] for k, v in sl.items()})
        else:
            raise ValueError(f"Unrecognized output format: {output_format}")
    return out


def wavedecn_size(shapes):
    """Coefficients in all of a :func:`wavedecn_shapes` result."""

    def size(s):
        return 0 if s is None else int(np.prod(s))

    total = size(shapes[0])
    for d in shapes[1:]:
        total += sum(size(s) for s in d.values())
    return total


def wavedecn_shapes(shape, wavelet, mode="symmetric", level=None, axes=None):
    """The shapes :func:`wavedecn` would return, without transforming."""
    from ._dwt import _axes

    shape = tuple(shape)
    axes = _axes(axes, len(shape))
    ws = _per_axis(wavelet, axes, as_wavelet, "wavelet")
    ms = _per_axis(mode, axes, lambda m: m, "mode")
    level = _check_level([shape[a] for a in axes], [w.dec_len for w in ws], level)
    out = []
    a = list(shape)
    for _ in range(level):
        a = list(a)
        for ax, w, m in zip(axes, ws, ms):
            a[ax] = dwt_coeff_len(a[ax], w.dec_len, m)
        from itertools import product

        keys = ["".join(k) for k in product("ad", repeat=len(axes))][1:]
        out.append({k: tuple(a) for k in keys})
    out.reverse()
    return [tuple(a)] + out


def ravel_coeffs(coeffs, axes=None):
    """Flattens multilevel coefficients into one 1-D array.

    Returns ``(coeff_arr, coeff_slices, coeff_shapes)``.
    """
    coeffs, axes, ndim, nt = _prepare(coeffs, axes)
    a = coeffs[0]
    if len(coeffs) == 1:
        return a.ravel(), [slice(a.size)], [a.shape]
    sizes = [a.size] + [sum(v.size for v in d.values() if v is not None) for d in coeffs[1:]]
    arr = np.empty((sum(sizes),), dtype=a.dtype)
    arr[: a.size] = a.ravel()
    slices, shapes = [slice(a.size)], [a.shape]
    offset = a.size
    for d in coeffs[1:]:
        if any(v is None for v in d.values()):
            raise ValueError("coeffs_to_array does not support missing coefficients.")
        sl, sh = {}, {}
        for key in sorted(d):
            v = d[key]
            sl[key] = slice(offset, offset + v.size)
            sh[key] = v.shape
            arr[sl[key]] = v.ravel()
            offset += v.size
        slices.append(sl)
        shapes.append(sh)
    return arr, slices, shapes


def unravel_coeffs(arr, coeff_slices, coeff_shapes, output_format="wavedecn"):
    """The coefficient list :func:`ravel_coeffs` flattened into ``arr``."""
    arr = np.asarray(arr)
    if len(coeff_slices) == 0:
        raise ValueError("empty list of coefficient slices")
    if len(coeff_shapes) == 0:
        raise ValueError("empty list of coefficient shapes")
    if len(coeff_shapes) != len(coeff_slices):
        raise ValueError("coeff_shapes and coeff_slices have unequal length")
    out = [arr[coeff_slices[0]].reshape(coeff_shapes[0])]
    for sl, sh in zip(coeff_slices[1:], coeff_shapes[1:]):
        if output_format == "wavedec":
            out.append(arr[sl["d"]].reshape(sh["d"]))
        elif output_format == "wavedec2":
            out.append(tuple(arr[sl[k]].reshape(sh[k]) for k in ("da", "ad", "dd")))
        elif output_format == "wavedecn":
            out.append({k: arr[v].reshape(sh[k]) for k, v in sl.items()})
        else:
            raise ValueError(f"Unrecognized output format: {output_format}")
    return out
