"""PyWavelets' fully separable wavelet transform: a full ``wavedec`` along
each axis in turn, the levels of every axis stacked in one array
(``fswavedecn``/``fswaverecn`` and ``FswavedecnResult``)."""
from __future__ import annotations

import numbers
import warnings
from itertools import product

import numpy as np

from ._dwt import AxisError, _per_axis, _prep, wavedec, waverec
from ._wavelets import Modes, _mode_name, as_wavelet


def _check_axes(shape, axes):
    if len(axes) != len(set(axes)):
        raise AxisError("The axes passed to fswavedecn must be unique.")
    if any(not -len(shape) <= ax < len(shape) for ax in axes):
        raise AxisError(f"Axis greater than data dimensions: axes {tuple(axes)} for an array of {len(shape)} dimensions")


class FswavedecnResult:
    """The coefficients of ``fswavedecn`` in one array, with the slices that
    pick each axis's levels: ``result[(i, j, ...)]`` is the block of level
    index i along the first transformed axis, j along the second, ...
    (0 is the approximation)."""

    def __init__(self, coeffs, coeff_slices, wavelets, mode_enums, axes):
        self._coeffs = coeffs
        self._coeff_slices = coeff_slices
        self._axes = tuple(axes)
        self._wavelets = [as_wavelet(w) for w in wavelets]
        self._mode_enums = [Modes.from_object(m) for m in mode_enums]

    @property
    def coeffs(self):
        """The array of all coefficients."""
        return self._coeffs

    @coeffs.setter
    def coeffs(self, c):
        if c.shape != self._coeffs.shape:
            raise ValueError("new coefficient array must match the existing coefficient shape")
        self._coeffs = c

    @property
    def coeff_slices(self):
        """Per transformed axis, the slice of each level along it."""
        return self._coeff_slices

    @property
    def ndim(self):
        return self._coeffs.ndim

    @property
    def ndim_transform(self):
        return len(self._axes)

    @property
    def axes(self):
        return self._axes

    @property
    def levels(self):
        """The number of levels along each transformed axis."""
        return [len(s) - 1 for s in self._coeff_slices]

    @property
    def wavelets(self):
        return self._wavelets

    @property
    def wavelet_names(self):
        return [w.name for w in self._wavelets]

    @property
    def modes(self):
        return [_mode_name(m) for m in self._mode_enums]

    def _slices(self, levels):
        sl = [slice(None)] * self.ndim
        for n, (ax, lev) in enumerate(zip(self._axes, levels)):
            sl[ax] = self._coeff_slices[n][lev]
        return tuple(sl)

    @property
    def approx(self):
        """The approximation block (level index 0 on every axis)."""
        return self._coeffs[self._slices((0,) * self.ndim_transform)]

    @approx.setter
    def approx(self, a):
        self[(0,) * self.ndim_transform] = a

    def _validate_index(self, levels):
        levels = tuple(levels)
        if len(levels) != len(self._axes):
            raise ValueError("levels must match the number of transformed axes")
        if not all(isinstance(v, numbers.Number) and v >= 0 and v % 1 == 0 for v in levels):
            raise ValueError("Index must be a tuple of non-negative integers")
        levels = tuple(int(v) for v in levels)
        if any(v > m for v, m in zip(levels, self.levels)):
            raise ValueError("Specified indices exceed the number of transform levels.")
        return levels

    def __getitem__(self, levels):
        return self._coeffs[self._slices(self._validate_index(levels))]

    def __setitem__(self, levels, x):
        sl = self._slices(self._validate_index(levels))
        x = np.asarray(x)
        if self._coeffs[sl].shape != x.shape:
            raise ValueError("x does not match the shape of the requested coefficient")
        if x.dtype != self._coeffs.dtype:
            warnings.warn(f"dtype mismatch:  converting the provided array to dtype {self._coeffs.dtype}")
        self._coeffs[sl] = x

    def detail_keys(self):
        """Every block's level indices except the approximation's, sorted."""
        keys = list(product(*(range(n + 1) for n in self.levels)))
        keys.remove((0,) * len(self._axes))
        return sorted(keys)


def fswavedecn(data, wavelet, mode="symmetric", levels=None, axes=None):
    """Fully separable wavelet decomposition, as ``pywt.fswavedecn``: a
    ``wavedec`` of ``levels`` levels along each of ``axes`` in turn (each
    axis may have its own wavelet, mode and level count)."""
    a = _prep(data)[0]
    axes = tuple(range(a.ndim)) if axes is None else tuple(axes)
    _check_axes(a.shape, axes)
    if levels is None or np.isscalar(levels):
        levels = [levels] * len(axes)
    if len(levels) != len(axes):
        raise ValueError("levels must match the length of the axes list")
    modes = _per_axis(mode, axes, Modes.from_object, "mode")
    wavelets = _per_axis(wavelet, axes, as_wavelet, "wavelet")
    slices = []
    arr = a
    for ax, lev, w, m in zip(axes, levels, wavelets, modes):
        coeffs = wavedec(arr, w, mode=m, level=lev, axis=ax)
        offsets = np.cumsum([0] + [c.shape[ax] for c in coeffs])
        slices.append([slice(int(offsets[d]), int(offsets[d + 1])) for d in range(len(coeffs))])
        arr = np.concatenate(coeffs, axis=ax)
    return FswavedecnResult(arr, slices, wavelets, modes, axes)


def fswaverecn(fswavedecn_result):
    """The array of a ``FswavedecnResult``, as ``pywt.fswaverecn``."""
    r = fswavedecn_result
    arr = r.coeffs
    _check_axes(arr.shape, r.axes)
    if len(r.axes) != len(r.coeff_slices):
        raise ValueError("dimension mismatch")
    for n, (ax, w, m) in enumerate(zip(r.axes, r.wavelets, r.modes)):
        sl = [slice(None)] * arr.ndim
        parts = []
        for s in r.coeff_slices[n]:
            sl[ax] = s
            parts.append(arr[tuple(sl)])
        arr = waverec(parts, w, mode=m, axis=ax)
    return arr
