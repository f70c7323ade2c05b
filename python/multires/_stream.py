"""Streams: the CWT and the FIR bank of a signal that arrives in chunks.

Each ``push(chunk)`` returns the output columns that no later sample can
change, and ``finish()`` the rest; joined along the last axis they equal
``multires.cwt`` (or ``multires.fir``) of the whole signal bit for bit.
"""

from __future__ import annotations

import numpy as np

from . import _multires
from ._arrays import as_float


def _chunk(x) -> np.ndarray:
    a = as_float(x, "chunk", allow_complex=True)
    if a.ndim != 1:
        raise ValueError(f"chunk has shape {a.shape}: push 1-D chunks of one signal, in order")
    return np.ascontiguousarray(a)


def _kind_error(e: ValueError) -> ValueError:
    if "began with real" in str(e):
        return ValueError(f"{e}; or create the stream with complex_input=True")
    return e


class _Stream:
    """What both streams share: the core, made again complex when the
    first non-empty chunk is, and the counts."""

    _make = None  # the core's class

    def _start(self, complex_input):
        self._decided = complex_input is not None
        self._core = self._make(bool(complex_input), *self._args)
        self._latency = self._core.latency
        self._samples = 0
        self._columns = 0

    @property
    def latency(self) -> int:
        """Samples the stream holds before its first output column comes out."""
        return self._latency

    @property
    def samples(self) -> int:
        """Samples pushed so far."""
        return self._samples

    @property
    def columns(self) -> int:
        """Columns returned so far."""
        return self._columns

    def explain(self) -> str:
        """How the stream computes (the recipe of every long signal)."""
        return self._core.explain()

    def _out(self, v) -> np.ndarray:
        self._columns += v.shape[-1]
        return v

    def push(self, chunk) -> np.ndarray:
        """Appends ``chunk`` (1-D, any length) and returns the columns final
        so far, shape ``(rows, k)``."""
        a = _chunk(chunk)
        if not self._decided and a.size:
            self._decided = True
            if a.dtype.kind == "c":
                self._core = self._make(True, *self._args)
                self._latency = self._core.latency
        try:
            v = self._out(self._core.push(a))
        except ValueError as e:
            raise _kind_error(e) from None
        self._samples += a.size
        return v

    def finish(self) -> np.ndarray:
        """The remaining columns, the boundary applied at the true end."""
        return self._out(self._core.finish())


class CwtStream(_Stream):
    """The continuous wavelet transform of a signal pushed in chunks.

    ``push(chunk)`` takes the next samples (any length, zero included) and
    returns the columns final so far, shape ``(len(scales), k)``;
    ``finish()`` returns the remaining ones. Concatenated along the last
    axis they are ``multires.cwt(x, scales, wavelet, ...)[0]`` of the whole
    signal, bit for bit: chunk edges carry the masks' halos, and the
    boundary is applied only at the true ends.

    Memory stays bounded by the longest FFT segment plus the masks' halo
    (see :attr:`memory_bound`), not by the signal's length. The first
    columns come once :attr:`latency` samples have arrived; a stream shorter
    than that is transformed whole at ``finish()``.

    Parameters
    ----------
    scales : array_like
        Scales in samples (or give ``freqs`` with ``fs``).
    wavelet : str
        As :func:`multires.cwt`.
    freqs, fs, output, boundary, normalization, hop, algorithm, dtype :
        As :func:`multires.cwt`. ``boundary='periodic'`` cannot stream (its
        first columns read the signal's end).
    precision : {'f64', 'f32'}
    complex_input : bool, optional
        Whether samples are complex; by default the first non-empty chunk
        decides.
    allow_nonfinite : bool
        Propagate NaN/Inf (with ``algorithm='direct'``).
    device : {'auto', 'cpu', 'cuda'}
        'auto' streams on the GPU where one is usable (not for float16 or
        bfloat16 outputs). On the GPU the window of samples stays on the
        device, every sample crosses PCIe once, and columns come ``chunk``
        at a time; they equal ``cwt(..., device='cuda')`` bit for bit.
    chunk : int
        Columns per GPU window (default 65536).

    Examples
    --------
    >>> import numpy as np, multires
    >>> x = np.random.default_rng(0).standard_normal(200_000)
    >>> s = multires.CwtStream(np.geomspace(2, 64, 20), "cmor1.5-1.0")
    >>> parts = [s.push(c) for c in np.array_split(x, 7)] + [s.finish()]
    >>> W = np.concatenate(parts, axis=-1)
    >>> bool(np.array_equal(W, multires.cwt(x, np.geomspace(2, 64, 20), "cmor1.5-1.0")[0]))
    True
    """

    def __init__(
        self,
        scales=None,
        wavelet="morl",
        *,
        freqs=None,
        fs=None,
        output="complex",
        precision="f64",
        boundary="zero",
        normalization="l2",
        hop=1,
        algorithm="auto",
        complex_input=None,
        allow_nonfinite=False,
        dtype=None,
        device="auto",
        chunk=65536,
    ):
        from . import _half, _precision, _scales_and_name, frequency_to_scale

        if (scales is None) == (freqs is None):
            raise ValueError("give scales or freqs (with fs), one of them")
        if freqs is not None:
            scales = frequency_to_scale(wavelet, freqs, 1.0 if fs is None else fs)
        s, name = _scales_and_name(scales, hop, wavelet)
        half, p = _half(dtype)
        if p is not None:
            precision = p
        self._args = (
            s.tolist(),
            name,
            str(output),
            _precision(precision, None),
            str(boundary),
            str(normalization),
            int(hop),
            str(algorithm),
            None if fs is None else float(fs),
            bool(allow_nonfinite),
            half,
            str(device),
            int(chunk),
        )
        if int(chunk) != chunk or chunk < 1:
            raise ValueError(f"chunk must be an integer >= 1 (columns per GPU window), got {chunk!r}")
        self._make = _multires.CwtStreamCore
        self._start(complex_input)
        self._memory = self._core.memory_bound
        self._half = half
        self.wavelet = name
        self.fs = fs
        self.scales = s

    @property
    def dtype(self) -> np.dtype:
        """The coefficients' dtype."""
        from . import _bfloat16

        if self._half == "bf16":
            return _bfloat16() or np.dtype(np.uint16)
        return np.dtype(self._core.dtype)

    @property
    def device(self) -> str:
        """Where the stream runs: 'cpu' or 'cuda'."""
        return self._core.device

    @property
    def memory_bound(self) -> int:
        """Bytes the stream holds besides a chunk and its output."""
        return self._memory

    @property
    def frequencies(self):
        """Centre frequency of each row, in the units of ``fs`` (None without fs)."""
        from . import scale_to_frequency

        if self.fs is None:
            return None
        return scale_to_frequency(self.wavelet, self.scales, self.fs)

    def _out(self, v) -> np.ndarray:
        if self._half is not None:
            v = v.view(self.dtype)
        return super()._out(v)

    def __repr__(self):
        return f"CwtStream(scales={len(self.scales)}, wavelet={self.wavelet!r}, device={self.device!r}, samples={self.samples}, columns={self.columns})"


class FirStream(_Stream):
    """A filter bank over a signal pushed in chunks.

    ``push(chunk)`` returns the outputs final so far, shape ``(F, k)``, and
    ``finish()`` the rest; joined along the last axis they are
    ``multires.fir(x, filters, mode, post)`` of the whole signal bit for
    bit. ``post='derivative'`` trails by one output (numpy.gradient needs
    each output's right neighbour).

    Parameters
    ----------
    filters : array_like, shape (F, M) or (M,)
    mode : {'full', 'same', 'valid'}
    post : {None, 'power', 'magnitude', 'derivative'}
    algorithm : {'auto', 'direct', 'overlap-save'}
    complex_input : bool, optional
        Whether samples are complex; by default the first non-empty chunk decides.
    allow_nonfinite : bool
    """

    def __init__(self, filters, mode="same", post=None, *, algorithm="auto", complex_input=None, allow_nonfinite=False):
        h = as_float(filters, "filters", allow_complex=True)
        if h.ndim == 1:
            h = h[np.newaxis, :]
        if h.ndim != 2 or h.size == 0:
            raise ValueError(f"filters has shape {h.shape}: expected (F, M) or (M,) with F, M >= 1")
        self._args = (np.ascontiguousarray(h), str(mode), "none" if post is None else str(post), str(algorithm), bool(allow_nonfinite))
        self._make = _multires.FirStreamCore
        self._start(complex_input)

    def __repr__(self):
        return f"FirStream(filters={self._args[0].shape[0]}, taps={self._args[0].shape[1]}, samples={self.samples}, outputs={self.columns})"
