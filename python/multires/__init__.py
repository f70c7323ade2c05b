"""multires: wavelet analysis on CPUs and NVIDIA GPUs.

Exact continuous wavelet transforms (:func:`cwt`, :class:`CwtPlan`), FIR
filter banks (:func:`fir`), PyWavelets' discrete transforms under their own
names (:mod:`multires.pywt`, with the stationary transform, wavelet packets
and MATLAB's MODWT), wavelet denoising as scikit-image's (:func:`denoise`) and an error-bounded codec (:func:`compress`,
:func:`decompress`, :class:`MrzFile`), computed by a Rust engine with the
GIL released. ``device='auto'`` runs on a CUDA GPU when one can be used and
on the CPU otherwise; the same package works on machines with and without
a GPU.
"""

from __future__ import annotations

import math
import os

import numpy as np

from . import _multires
from ._arrays import aligned, as_float, split
from ._stream import CwtStream, FirStream
from ._timefreq import (
    admissibility,
    ar1,
    extract_ridges,
    global_wavelet_spectrum,
    icwt,
    issq_cwt,
    significance,
    ssq_cwt,
    wct,
    wct_significance,
    xwt,
)

__version__ = _multires.__version__

__all__ = [
    "cwt",
    "CwtPlan",
    "CwtStream",
    "fir",
    "FirStream",
    "compress",
    "decompress",
    "MrzFile",
    "save",
    "load",
    "cuda_available",
    "set_num_threads",
    "get_num_threads",
    "scale_to_frequency",
    "frequency_to_scale",
    "icwt",
    "ssq_cwt",
    "issq_cwt",
    "extract_ridges",
    "admissibility",
    "wct",
    "wct_significance",
    "xwt",
    "global_wavelet_spectrum",
    "significance",
    "ar1",
    "denoise",
    "denoise_wavelet",
    "estimate_sigma",
    "cycle_spin",
    "modwt",
    "imodwt",
    "modwtmra",
]


def set_num_threads(n: int) -> None:
    """Sets the CPU threads the engine uses (0: every core, or RAYON_NUM_THREADS)."""
    _multires.set_num_threads(int(n))


def get_num_threads() -> int:
    """The CPU threads the engine uses."""
    return _multires.get_num_threads()


def cuda_available() -> bool:
    """Whether the CUDA backend can be used (a GPU, its driver and NVRTC)."""
    return _multires.cuda_available()


def _wavelet_info(wavelet: str) -> dict:
    if not isinstance(wavelet, str):
        name = getattr(wavelet, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"wavelet must be a name such as 'morl' or 'cmor1.5-1.0', got {wavelet!r}")
        wavelet = name
    return _multires.continuous_info(wavelet)


def scale_to_frequency(wavelet: str, scales, fs: float = 1.0) -> np.ndarray:
    """Centre frequency (in units of ``fs``) of each scale (in samples)."""
    cf = _wavelet_info(wavelet)["center_frequency"]
    return cf * fs / np.asarray(scales, dtype=np.float64)


def frequency_to_scale(wavelet: str, freqs, fs: float = 1.0) -> np.ndarray:
    """The scale (in samples) whose centre frequency is each of ``freqs``."""
    f = np.asarray(freqs, dtype=np.float64)
    if np.any(~np.isfinite(f)) or np.any(f <= 0):
        raise ValueError("freqs must be finite and positive")
    if not (fs > 0 and math.isfinite(fs)):
        raise ValueError(f"fs must be finite and positive, got {fs}")
    cf = _wavelet_info(wavelet)["center_frequency"]
    return cf * fs / f


def _default_scales(n: int, wavelet: str, spacing: str) -> np.ndarray:
    """Scales from 1 sample to the largest whose support fits the signal
    (the wavelet's half support times the scale, twice, within n): 16 per
    octave for 'log', every integer up to 64 for 'linear'."""
    half = _wavelet_info(wavelet)["half_support"]
    smax = max(2.0, n / (2.0 * max(half, 1e-9)))
    if spacing == "log":
        count = max(2, int(round(16 * math.log2(smax))) + 1)
        return np.geomspace(1.0, smax, count)
    if spacing == "linear":
        return np.arange(1.0, min(64.0, math.floor(smax)) + 1.0)
    raise ValueError(f"spacing must be 'log' or 'linear', got {spacing!r}")


def _precision(precision, dtype) -> str:
    if precision is None:
        return "f32" if dtype in (np.float32, np.complex64) else "f64"
    p = str(precision).lower().replace("float", "f")
    if p not in ("f32", "f64"):
        raise ValueError(f"precision must be 'f32' or 'f64' (or None: that of x), got {precision!r}")
    return p


def _half(dtype):
    """'f16'/'bf16' for a 16-bit output dtype, None for float32/float64 (or
    None), and the precision that a float32/float64 dtype asks for."""
    if dtype is None:
        return None, None
    if isinstance(dtype, str):
        name = dtype.lower()  # 'f16' is not numpy's 'f16' (a 16-byte float)
    elif getattr(dtype, "__name__", None) == "bfloat16" or str(dtype) == "bfloat16":
        name = "bfloat16"
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = str(dtype)
    if name in ("float16", "f16", "half"):
        return "f16", None
    if name in ("bfloat16", "bf16"):
        return "bf16", None
    if name in ("float32", "f32"):
        return None, "f32"
    if name in ("float64", "f64"):
        return None, "f64"
    raise ValueError(
        f"dtype must be float16, bfloat16 (magnitude or power), float32 or float64, got {dtype!r}"
    )


def _scales_and_name(scales, hop, wavelet):
    """The scales as a flat float64 array and the wavelet's name, with the
    checks a plan and a stream make before the engine sees them."""
    s = np.asarray(scales, dtype=np.float64).ravel()
    if s.size == 0:
        raise ValueError("scales is empty: give at least one scale (in samples)")
    if int(hop) != hop or hop < 1:
        raise ValueError(f"hop must be an integer >= 1, got {hop!r}")
    name = wavelet if isinstance(wavelet, str) else getattr(wavelet, "name", wavelet)
    if not isinstance(name, str):
        raise TypeError(f"wavelet must be a name such as 'morl', got {wavelet!r}")
    return s, name


def _bfloat16():
    """ml_dtypes' bfloat16 where it is installed (numpy has none), else None."""
    try:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return None


class CwtPlan:
    """A continuous wavelet transform planned once for signals of ``n`` samples.

    Planning samples the masks, chooses direct sums or overlap-save FFTs per
    scale and, on the GPU, allocates device buffers; every call then reuses
    them. ``plan(x)`` transforms ``x`` of shape ``(..., n)`` into
    coefficients of shape ``(..., len(scales), columns)``; ``plan(x, out=W)``
    writes into ``W`` (C-contiguous, of :attr:`dtype`) and returns it.

    Parameters
    ----------
    n : int
        Samples per signal.
    scales : array_like
        Scales in samples, rows of the output in this order.
    wavelet : str
        A continuous wavelet: ``morl``, ``mexh``, ``gausP``, ``cgauP``,
        ``cmorB-C``, ``shanB-C``, ``fbspM-B-C``, ``paulM``, ``dogM``, ``morseB-G``.
    output : {'complex', 'magnitude', 'power', 'phase'}
    precision : {'f64', 'f32'}
        Working and output precision.
    boundary : {'zero', 'reflect', 'symmetric', 'periodic', ...}
        How the signal is extended beyond its ends.
    normalization : {'l2', 'l1'}
        Mask gain s^(-1/2) (equal energy) or s^(-1) (equal amplitude).
    hop : int
        Keep every hop-th column.
    algorithm : {'auto', 'direct', 'fft'}
    device : {'auto', 'cpu', 'cuda'}
    fs : float, optional
        Sampling rate, for :attr:`frequencies`.
    complex_input : bool
        Whether the signals will be complex (informs the cost model only).
    allow_nonfinite : bool
        Propagate NaN/Inf (with ``algorithm='direct'``) instead of refusing them.
    dtype : {None, 'float16', 'bfloat16', 'float32', 'float64'}
        The stored values' type. ``float16``/``bfloat16`` hold magnitude or
        power in half the bytes of float32 (computed in ``precision``,
        rounded once); bfloat16 comes back as ``ml_dtypes.bfloat16`` where
        that package is installed, else as its bits in uint16. float32 and
        float64 set ``precision``.
    """

    def __init__(
        self,
        n,
        scales,
        wavelet="morl",
        *,
        output="complex",
        precision="f64",
        boundary="zero",
        normalization="l2",
        hop=1,
        algorithm="auto",
        device="auto",
        fs=None,
        complex_input=False,
        allow_nonfinite=False,
        dtype=None,
    ):
        half, p = _half(dtype)
        if p is not None:
            precision = p
        if isinstance(n, (bool, np.bool_)) or int(n) != n or n < 1:
            raise ValueError(f"n must be a positive number of samples, got {n!r}")
        s, name = _scales_and_name(scales, hop, wavelet)
        self._core = _multires.CwtPlanCore(
            int(n),
            bool(complex_input),
            s.tolist(),
            name,
            str(output),
            _precision(precision, None),
            str(boundary),
            str(normalization),
            int(hop),
            str(algorithm),
            str(device),
            None if fs is None else float(fs),
            bool(allow_nonfinite),
            half,
        )
        self._half = half
        self.wavelet = name
        self.fs = fs
        self.boundary = str(boundary)
        self.scales = np.asarray(self._core.scales)

    @property
    def n(self) -> int:
        """Samples per signal."""
        return self._core.n

    @property
    def columns(self) -> int:
        """Output columns per signal (n / hop, rounded up)."""
        return self._core.columns

    @property
    def dtype(self) -> np.dtype:
        """The coefficients' dtype (uint16 for bfloat16 without ml_dtypes)."""
        if self._half == "bf16":
            return _bfloat16() or np.dtype(np.uint16)
        return np.dtype(self._core.dtype)

    @property
    def device(self) -> str:
        """Where the plan runs: 'cpu' or 'cuda'."""
        return self._core.device

    @property
    def frequencies(self):
        """Centre frequency of each row, in the units of ``fs`` (None without fs)."""
        if self.fs is None:
            return None
        return scale_to_frequency(self.wavelet, self.scales, self.fs)

    def explain(self) -> str:
        """How each scale is computed."""
        return self._core.explain()

    def __repr__(self):
        return (
            f"CwtPlan(n={self.n}, scales={len(self.scales)}, wavelet={self.wavelet!r}, "
            f"dtype={self.dtype}, device={self.device!r})"
        )

    def _on_device(self, x):
        """The device path for a CUDA array (CuPy, PyTorch, JAX) of the
        plan's precision: read, transformed and returned on the GPU."""
        from ._arrays import Foreign

        if self._half is not None:
            return None  # 16-bit outputs come back through the host
        f = Foreign(x)
        want = "float32" if self.dtype in (np.complex64, np.float32) else "float64"
        if not (f.on_cuda and self.device == "cuda" and self.boundary == "zero" and f.dtype_name == want):
            return None
        if f.module not in ("cupy", "torch", "jax", "jaxlib"):
            return None
        shape = tuple(x.shape)
        if len(shape) == 0 or shape[-1] != self.n:
            raise ValueError(f"x has shape {shape}; this plan transforms signals of {self.n} samples along the last axis")
        rows, outer = f.last_axis_rows(-1)
        f.sync()
        dev = self._core.execute_device(rows)
        return f.wrap(dev).reshape(outer + (len(self.scales), self.columns))

    def __call__(self, x, out=None):
        """Transforms ``x`` of shape (..., n); see the class docstring.

        A CUDA array (CuPy, PyTorch, JAX) of the plan's precision on a
        'cuda' plan with boundary 'zero' is read and transformed on the
        device and the result returned there as the same kind of array;
        other device arrays go through the host.
        """
        if out is None and not isinstance(x, np.ndarray) and hasattr(x, "__dlpack__"):
            r = self._on_device(x)
            if r is not None:
                return r
        x, foreign = split(x)
        a = as_float(x, "x", allow_complex=True)
        if a.ndim == 0 or a.shape[-1] != self.n:
            raise ValueError(
                f"x has shape {a.shape}; this plan transforms signals of {self.n} samples along the last axis"
            )
        if a.size == 0:
            raise ValueError(f"x has shape {a.shape}: there are no signals to transform")
        batch = a.shape[:-1]
        rows = a.reshape(-1, self.n)
        want = batch + (len(self.scales), self.columns)
        if out is None:
            out = _multires.empty(list(want), "uint16" if self._half else self.dtype.name)
            if self._half:
                out = out.view(self.dtype)
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError("out must be a numpy array")
            if out.shape != want or out.dtype != self.dtype:
                raise ValueError(f"out has shape {out.shape} and dtype {out.dtype}; this call needs {want} {self.dtype}")
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("out must be C-contiguous and writeable (the engine writes rows in place)")
        target = out.reshape((rows.shape[0], len(self.scales), self.columns))
        self._core.execute(rows, target.view(np.uint16) if self._half else target)
        return foreign.like(out) if foreign is not None else out


_LAST_PLAN = [None, None]  # (key, plan): the last configuration cwt() planned


def _cached_plan(n, scales, wavelet, **kw):
    """The plan of the last cwt() call when this call asks for the same
    transform (a loop over signals then plans once), else a new one."""
    key = (n, np.asarray(scales, np.float64).tobytes(), str(wavelet), tuple(sorted((k, str(v)) for k, v in kw.items())))
    k, p = _LAST_PLAN
    if k == key:
        return p
    p = CwtPlan(n, scales, wavelet, **kw)
    _LAST_PLAN[:] = [key, p]
    return p


def cwt(
    x,
    scales=None,
    wavelet="morl",
    *,
    freqs=None,
    fs=None,
    spacing="log",
    output="complex",
    precision=None,
    boundary="zero",
    normalization="l2",
    hop=1,
    algorithm="auto",
    device="auto",
    dtype=None,
):
    """Continuous wavelet transform, the exact sum.

    ``W[..., s, n] = sum_k x[..., n + k] conj(m_s[k])`` with
    ``m_s[k] = s^(-1/2) psi(k / s)`` (``normalization='l2'``) over the
    wavelet's support: no integration or interpolation of psi, so small
    scales are as exact as large ones.

    Parameters
    ----------
    x : array_like, shape (..., N)
        Real or complex signals along the last axis (numpy, or a CuPy,
        PyTorch or JAX array).
    scales : array_like, optional
        Scales in samples. Without ``scales`` or ``freqs``: from 1 to the
        largest whose support fits in N, 16 per octave (``spacing='log'``)
        or 1, 2, ..., 64 (``'linear'``).
    wavelet : str
        ``morl`` (default), ``mexh``, ``gausP``, ``cgauP``, ``cmorB-C``,
        ``shanB-C``, ``fbspM-B-C``, ``paulM``, ``dogM``, ``morseB-G``.
    freqs : array_like, optional
        Centre frequencies (in the units of ``fs``, default 1: cycles per
        sample) instead of scales.
    fs : float, optional
        Sampling rate.
    output : {'complex', 'magnitude', 'power', 'phase'}
    precision : {'f32', 'f64'}, optional
        Default: float32 for float32/complex64 input, else float64.
    boundary, normalization, hop, algorithm, device, dtype :
        As :class:`CwtPlan` (``dtype='float16'`` with ``output='magnitude'``
        halves a float32 scalogram's bytes).

    A call with the same length and options as the previous one reuses its
    plan; for full control (and ``out=``) hold a :class:`CwtPlan`.

    Returns
    -------
    coefs : ndarray, shape (..., len(scales), ceil(N / hop))
    freqs_or_scales : ndarray
        The centre frequency of each row when ``freqs`` or ``fs`` is
        given, else the scales.

    Examples
    --------
    >>> import numpy as np, multires
    >>> x = np.sin(2 * np.pi * 50 * np.arange(1000) / 1000)
    >>> W, f = multires.cwt(x, wavelet="cmor1.5-1.0", freqs=[25, 50, 100], fs=1000)
    >>> W.shape
    (3, 1000)
    """
    from ._arrays import Foreign

    foreign = Foreign(x) if (not isinstance(x, np.ndarray) and hasattr(x, "__dlpack__")) else None
    if foreign is not None and foreign.on_cuda and device != "cpu" and foreign.dtype_name in ("float32", "float64"):
        # Planned from the device array's shape and dtype, without a host copy.
        a = np.empty((0,), dtype=foreign.dtype_name)
        shape = tuple(x.shape)
        if len(shape) == 0 or shape[-1] == 0:
            raise ValueError(f"x has shape {shape}: expected signals of shape (..., N) with N >= 1")
        n = shape[-1]
    else:
        xn, foreign = split(x)
        a = as_float(xn, "x", allow_complex=True)
        if a.ndim == 0 or a.size == 0:
            raise ValueError(f"x has shape {a.shape}: expected signals of shape (..., N) with N >= 1")
        n = a.shape[-1]
    if scales is not None and freqs is not None:
        raise ValueError("give scales or freqs, not both")
    if freqs is not None:
        s = frequency_to_scale(wavelet, freqs, 1.0 if fs is None else fs)
    elif scales is not None:
        s = np.asarray(scales, dtype=np.float64).ravel()
    else:
        s = _default_scales(n, wavelet, spacing)
    plan = _cached_plan(
        n,
        s,
        wavelet,
        output=output,
        precision=_precision(precision, a.dtype),
        boundary=boundary,
        normalization=normalization,
        hop=hop,
        algorithm=algorithm,
        device=device,
        fs=fs,
        complex_input=a.dtype.kind == "c",
        dtype=dtype,
    )
    # The plan hands a non-numpy input's result back as its kind of array.
    W = plan(x) if foreign is not None else plan(a)
    second = plan.scales
    if freqs is not None or fs is not None:
        second = scale_to_frequency(wavelet, plan.scales, 1.0 if fs is None else fs)
    return W, second


def fir(x, filters, mode="same", post=None, *, algorithm="auto", device="auto"):
    """Filter bank: every row of ``filters`` convolved with ``x``.

    ``y[..., f, n] = sum_k h_f[k] x[..., n - k]`` aligned as
    ``numpy.convolve(x, h_f, mode)``.

    Parameters
    ----------
    x : array_like, shape (..., N)
        Real or complex signals.
    filters : array_like, shape (F, M) or (M,)
        Real or complex taps.
    mode : {'full', 'same', 'valid'}
    post : {None, 'power', 'magnitude', 'derivative'}
        Applied as each row is stored: |y|^2, |y|, or numpy.gradient(y).
    algorithm : {'auto', 'direct', 'overlap-save'}
    device : {'auto', 'cpu', 'cuda'}

    Returns
    -------
    y : ndarray, shape (..., F, L), float64 or complex128
        L is N + M - 1 ('full'), max(N, M) ('same'), max(N, M) - min(N, M) + 1 ('valid').
    """
    xn, foreign = split(x)
    a = as_float(xn, "x", allow_complex=True)
    if a.ndim == 0 or a.size == 0:
        raise ValueError(f"x has shape {a.shape}: expected signals of shape (..., N) with N >= 1")
    h = as_float(filters, "filters", allow_complex=True)
    if h.ndim == 1:
        h = h[np.newaxis, :]
    if h.ndim != 2 or h.size == 0:
        raise ValueError(f"filters has shape {h.shape}: expected (F, M) or (M,) with F, M >= 1")
    batch = a.shape[:-1]
    rows = a.reshape(-1, a.shape[-1])
    y = _multires.fir(rows, h, str(mode), "none" if post is None else str(post), str(algorithm), str(device))
    y = y.reshape(batch + y.shape[1:])
    return foreign.like(y) if foreign is not None else y


def _bound(abs, rel, psnr, lossless=False):
    given = [(k, v) for k, v in (("abs", abs), ("rel", rel), ("psnr", psnr)) if v is not None]
    if lossless:
        if given:
            raise ValueError(f"lossless=True keeps every bit; drop {given[0][0]}=")
        return "lossless", 0.0
    if len(given) != 1:
        raise ValueError(
            "give exactly one error bound: abs=E (largest error), rel=E (of the value range), psnr=DB, or lossless=True"
        )
    k, v = given[0]
    v = float(v)
    if not math.isfinite(v) or v < 0 or (k == "psnr" and v <= 0):
        raise ValueError(f"{k}={v}: the bound must be finite and not negative (psnr above 0)")
    return k, v


#: The integer types the codec keeps as integers (others are refused).
_INTEGERS = (np.uint8, np.uint16, np.int16, np.int32)


def _field(a):
    an, _ = split(a)
    an = np.asarray(an)
    if an.dtype in _INTEGERS:
        f = aligned(np.ascontiguousarray(an))
    elif an.dtype.kind in "iub":
        raise TypeError(
            f"the codec keeps uint8, uint16, int16 and int32 as integers; {an.dtype} is not one of them "
            "(convert it, e.g. a.astype(np.int32) or np.float64)"
        )
    else:
        f = as_float(an, "a")
    if not 1 <= f.ndim <= 4:
        raise ValueError(f"the codec takes arrays of 1 to 4 axes, got shape {f.shape}")
    if f.size == 0:
        raise ValueError(f"the array of shape {f.shape} is empty")
    return f


def _as_elem(y, info):
    """Decoded values as the file's element type: integers rounded and
    clamped to their type (each within the bound asked for)."""
    dt = np.dtype(info["dtype"])
    if dt.kind in "iu":
        lim = np.iinfo(dt)
        return np.clip(np.rint(y), lim.min, lim.max).astype(dt)
    return y


def _transform(transform, profile):
    """The transform a profile codes with (``profile='fast'``: the Lorenzo
    predictor at a fixed bit length)."""
    if profile == "default":
        return str(transform)
    if profile == "fast":
        if transform not in ("interp", "lorenzo"):
            raise ValueError(f"profile='fast' codes with the Lorenzo predictor; it does not take transform={transform!r} (drop one)")
        return "lorenzo"
    raise ValueError(f"profile={profile!r}: use 'default' or 'fast'")


def compress(a, *, abs=None, rel=None, psnr=None, lossless=False, transform="interp", profile="default", device="auto", info=False):
    """Compresses an array with a guaranteed error bound, or losslessly.

    Every decoded value is within the bound of the input: ``abs`` is the
    largest absolute error, ``rel`` that error relative to the range of
    the finite values, ``psnr`` a PSNR floor in dB. ``lossless=True``
    gives every value's bits back (NaN payloads, infinities, signed zeros
    and subnormals included). Under a lossy bound NaN and infinities are
    kept as they are.

    Parameters
    ----------
    a : array_like, 1 to 4 axes
        float32 or float64 (float16 becomes float32, other non-integer
        types float64); uint8, uint16, int16 and int32 are coded as
        integers and come back as them, ``abs`` then in integer units
        (below 1: exact).
    abs, rel, psnr : float
        One error bound (or ``lossless=True``).
    lossless : bool
        Bit-exact coding.
    transform : {'interp', 'cdf97', 'cdf53', 'haar', 'lorenzo'}
        Integer and lossless coding take ``'interp'``.
    profile : {'default', 'fast'}
        'fast' codes with the Lorenzo predictor in blocks of 64 values
        packed at a fixed bit length (as cuSZp packs), each block on its
        own: larger files, the same strict bound (its speed against
        'default' and cuSZp is in BENCHMARKS.md).
    device : {'auto', 'cpu', 'cuda'}
        The GPU codes float fields with finite values under a lossy bound;
        'auto' codes the others on the CPU.
    info : bool
        Also return a dict with the bound, the largest error made, the PSNR
        and the ratio (against the input's own size).

    Returns
    -------
    bytes
        The .mrz file's bytes (or ``(bytes, info)``).
    """
    kind, v = _bound(abs, rel, psnr, lossless)
    b, stats = _multires.compress(_field(a), kind, v, _transform(transform, profile), str(device))
    return (b, stats) if info else b


def decompress(b, *, device="auto", out=None) -> np.ndarray:
    """The array held by .mrz bytes, in its shape and type as compressed.

    Parameters
    ----------
    b : bytes-like
        The bytes of a .mrz file.
    device : {'auto', 'cpu', 'cuda'}
        Where to decode: the values are the same bit for bit. 'auto' takes
        the GPU when one is usable; lossless files decode on the CPU.
    out : numpy.ndarray, optional
        A writable, C-contiguous array of the file's shape and (float)
        type to decode into and return. An array reused from one call to
        the next skips the page faults of a new one, which on large
        fields cost more than the decoding itself.
    """
    if not isinstance(b, (bytes, bytearray, memoryview)):
        raise TypeError(f"decompress takes the bytes of a .mrz file, got {type(b).__name__}")
    if out is not None and not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
    y, info = _multires.decompress(b if isinstance(b, bytes) else bytes(b), str(device), out)
    if out is not None:
        return out
    return _as_elem(y.reshape(info["shape"]), info)


def save(path, a, *, abs=None, rel=None, psnr=None, lossless=False, transform="interp", profile="default", device="auto"):
    """Compresses ``a`` (as :func:`compress`) into the file ``path``.

    The file is written under a temporary name and renamed into place, so
    an error or an interrupt never leaves a partial file. Returns the
    compression statistics.
    """
    kind, v = _bound(abs, rel, psnr, lossless)
    b, stats = _multires.compress(_field(a), kind, v, _transform(transform, profile), str(device))
    _multires.write_atomic(os.fspath(path), b)
    return stats


def load(path) -> np.ndarray:
    """All values of the .mrz file ``path``."""
    with MrzFile(path) as f:
        return f[...]


class MrzFile:
    """An open .mrz file whose regions decode on demand.

    ``f[0:64, :, 10:20]`` decodes only the bricks that region meets.
    Integer indices, steps and negative bounds work as on numpy arrays.

    Attributes
    ----------
    shape : tuple of int
    dtype : numpy.dtype
    info : dict
        Transform, bound, brick size, value range, file size and ratio.
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self._core = _multires.MrzFileCore(self.path)
        self.info = dict(self._core.info())
        self.shape = tuple(self.info["shape"])
        self.dtype = np.dtype(self.info["dtype"])
        self.ndim = len(self.shape)
        self._coded = tuple(self.info["coded_shape"])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"MrzFile({self.path!r}, shape={self.shape}, dtype={self.dtype})"

    def __array__(self, dtype=None, copy=None):
        a = self[...]
        return a if dtype is None else a.astype(dtype)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis for k in key):
            i = next(i for i, k in enumerate(key) if k is Ellipsis)
            fill = self.ndim - (len(key) - 1)
            key = key[:i] + (slice(None),) * fill + key[i + 1 :]
        if len(key) > self.ndim:
            raise IndexError(f"too many indices: the array has {self.ndim} dimensions")
        key = key + (slice(None),) * (self.ndim - len(key))
        starts, stops, post = [], [], []
        for k, n in zip(key, self.shape):
            if isinstance(k, slice):
                a, b, step = k.indices(n)
                if step > 0:
                    lo, hi = a, max(a, b)
                else:
                    lo, hi = (b + 1, a + 1) if a > b else (0, 0)
                starts.append(lo)
                stops.append(hi)
                post.append(slice(None, None, step) if step > 0 else slice(None, None, step))
            elif isinstance(k, (int, np.integer)):
                i = int(k) + (n if k < 0 else 0)
                if not 0 <= i < n:
                    raise IndexError(f"index {k} is out of bounds for an axis of {n}")
                starts.append(i)
                stops.append(i + 1)
                post.append(0)
            else:
                raise TypeError(f"MrzFile takes integers and slices, got {type(k).__name__}")
        return _as_elem(self._read(starts, stops), self.info)[tuple(post)]

    def read(self, level=0, region=None):
        """The field, or the box ``region`` of it (a tuple of slices, one
        per axis, step 1), at 2^-level resolution: every 2^level-th point
        per axis of each brick, counted from the brick's origin.

        A coarse view is read and decoded from the front of each brick
        (the interpolation stores its passes coarsest first), so its cost
        grows with the view, not the field. Its values are the full
        decode's at those points, each within the file's bound of the
        original there: ``f.read(level=k)`` equals
        ``f[...][np.ix_(*f.positions(k))]``. 1-D to 3-D fields."""
        starts, stops = self._box(region)
        if level == 0:
            return _as_elem(self._read(starts, stops), self.info)
        return self._coarse(starts, stops, level)[0]

    def positions(self, level, region=None):
        """The indices per axis of the points ``read(level, region)`` returns."""
        starts, stops = self._box(region)
        if level == 0:
            return tuple(np.arange(a, b) for a, b in zip(starts, stops))
        return self._coarse(starts, stops, level)[1]

    def _box(self, region):
        if region is None:
            return [0] * self.ndim, list(self.shape)
        if not isinstance(region, tuple):
            region = (region,)
        if len(region) != self.ndim or not all(isinstance(k, slice) for k in region):
            raise ValueError(f"region must be a tuple of {self.ndim} slices (one per axis), got {region!r}")
        starts, stops = [], []
        for k, n in zip(region, self.shape):
            a, b, step = k.indices(n)
            if step != 1 or b <= a:
                raise ValueError(f"region {region!r}: each slice must be non-empty with step 1")
            starts.append(a)
            stops.append(b)
        return starts, stops

    def _coarse(self, starts, stops, level):
        if not isinstance(level, (int, np.integer)) or level < 0:
            raise ValueError(f"level must be an integer >= 0, got {level!r}")
        if self.ndim == 4:
            raise ValueError(f"coarse views are of 1-D to 3-D fields; this one is 4-D {self.shape}")
        if self.ndim == 1:
            a, pos = self._core.read_coarse([0, starts[0]], [1, stops[0]], int(level))
            a, pos = a.reshape(-1), pos[1:]
        else:
            a, pos = self._core.read_coarse(starts, stops, int(level))
        return _as_elem(a, self.info), tuple(np.asarray(p, dtype=np.intp) for p in pos)

    def _read(self, starts, stops):
        """The box [starts, stops) of the field's shape, through the coded
        field's (a 1-D signal is coded as 1 x N, a 4-D field with its
        first two axes as one)."""
        if len(self._coded) == self.ndim:
            return self._core.read(starts, stops)
        if self.ndim == 1:
            return self._core.read([0, starts[0]], [1, stops[0]]).reshape(stops[0] - starts[0])
        (t0, z0, y0, x0), (t1, z1, y1, x1) = starts, stops
        nz = self.shape[1]
        if t1 <= t0 or z1 <= z0:
            return np.zeros([b - a for a, b in zip(starts, stops)], self._coded_dtype())
        box = self._core.read([t0 * nz, y0, x0], [t1 * nz, y1, x1])
        return box.reshape(t1 - t0, nz, y1 - y0, x1 - x0)[:, z0:z1]

    def _coded_dtype(self):
        return np.float64 if self.dtype.itemsize > 4 or self.dtype == np.int32 else np.float32


# After CwtPlan: multires.pywt (which these build on) imports it.
from ._denoise import cycle_spin, denoise, denoise_wavelet, estimate_sigma  # noqa: E402
from .pywt._mra import imodwt, modwt, modwtmra  # noqa: E402
