"""multires on Dask arrays: signals chunked along time, fields chunked in
blocks, computed chunk by chunk on Dask's workers (threads, processes or a
``distributed`` cluster) and equal to the whole-array calls.

Each chunk of a signal is extended by its neighbours' samples (a halo, by
``dask.array.overlap``) as deep as the widest mask reaches, computed with
the engine, and trimmed back::

    import dask.array as da, multires.dask
    x = da.from_zarr("signal.zarr")                 # (..., N), chunked along N
    W = multires.dask.cwt(x, scales, "morl")        # (..., S, N), same chunks along N
    W.to_zarr("scalogram.zarr")

With ``algorithm='direct'`` (the exact sum, every output the same sum in
the same order) the result equals the whole-array call bit for bit; with
the FFT algorithms a chunk's plan depends on its length, so values agree
to round-off (about 1e-15 of the largest).
"""

import math

import numpy as np

try:
    import dask.array as da
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("multires.dask needs dask: pip install 'dask[array]'") from e

import multires
from . import pywt as _pywt

_BOUNDARIES = {"zero": 0, "periodic": "periodic", "constant": 0}


def _signal(x, what="x"):
    if not isinstance(x, da.Array):
        raise TypeError(f"{what} must be a dask array (dask.array.from_array(x, chunks=...)), got {type(x).__name__}")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"{what} has shape {x.shape}: expected signals of shape (..., N) with N >= 1")
    return x


def _with_halo(x, depth, boundary):
    """`x` with each chunk of its last axis extended by `depth` samples of
    its neighbours (`boundary` past the ends), chunks no shorter than the
    halo (rechunked where needed, which dask's overlap requires)."""
    if depth == 0:
        return x
    small = min(x.chunks[-1])
    if small < depth and x.numblocks[-1] > 1:
        x = x.rechunk({x.ndim - 1: max(depth, max(x.chunks[-1]))})
    return da.overlap.overlap(x, depth={x.ndim - 1: depth}, boundary={x.ndim - 1: boundary})


def _dask_boundary(boundary, which):
    if boundary not in _BOUNDARIES:
        raise ValueError(
            f"{which} boundary={boundary!r}: on chunked signals multires.dask takes "
            f"{', '.join(repr(b) for b in ('zero', 'periodic'))} (the halo is filled as the whole-array call extends)"
        )
    return _BOUNDARIES[boundary]


def cwt(x, scales=None, wavelet="morl", *, freqs=None, fs=None, spacing="log", output="complex",
        precision=None, boundary="zero", normalization="l2", hop=1, algorithm="auto", device="cpu",
        dtype=None):
    """:func:`multires.cwt` of a dask array of signals ``(..., N)``, chunked
    along ``N`` (and anyhow along the other axes): the coefficients as a
    dask array ``(..., S, ceil(N / hop))`` with the chunks of ``x`` along
    time (divided by ``hop``), and the rows' frequencies or scales (numpy),
    as :func:`multires.cwt` returns them.

    The arguments are :func:`multires.cwt`'s; the scales (or ``freqs``) are
    resolved once for the whole length. ``hop`` must divide every chunk
    but the last. ``boundary`` is 'zero' or 'periodic'.
    """
    x = _signal(x)
    n = x.shape[-1]
    if scales is not None and freqs is not None:
        raise ValueError("give scales or freqs, not both")
    if freqs is not None:
        scales = multires.frequency_to_scale(wavelet, freqs, 1.0 if fs is None else fs)
    elif scales is None:
        scales = multires._default_scales(n, wavelet, spacing)
    scales = np.atleast_1d(np.asarray(scales, dtype=np.float64))
    if scales.ndim != 1 or scales.size == 0 or not np.all(np.isfinite(scales)) or np.any(scales <= 0):
        raise ValueError("scales must be a non-empty list of finite positive numbers (in samples)")
    if not isinstance(hop, (int, np.integer)) or hop < 1:
        raise ValueError(f"hop must be an integer >= 1, got {hop!r}")
    if any(c % hop for c in x.chunks[-1][:-1]):
        raise ValueError(f"hop={hop} must divide every chunk along time but the last; the chunks are {x.chunks[-1]}")
    half = multires._wavelet_info(wavelet)["half_support"]
    depth = int(math.ceil(half * float(scales.max()))) + 1
    kw = dict(scales=scales, wavelet=wavelet, output=output, precision=precision, boundary="zero",
              normalization=normalization, hop=1, algorithm=algorithm, device=device, dtype=dtype)
    pad = _dask_boundary(boundary, "cwt")
    probe, rows = multires.cwt(np.zeros(4, dtype=x.dtype), **kw)
    if freqs is not None or fs is not None:
        rows = multires.cwt(np.zeros(4, dtype=x.dtype), **dict(kw, scales=None), freqs=freqs, fs=fs)[1] \
            if freqs is not None else multires.cwt(np.zeros(4, dtype=x.dtype), **kw, fs=fs)[1]
    xh = _with_halo(x, depth, pad)
    time_chunks = _trimmed_chunks(xh, depth, x)
    if any(c % hop for c in time_chunks[:-1]):
        raise ValueError(f"hop={hop} must divide every chunk along time but the last; the chunks are {time_chunks}")

    def block(b):
        w = multires.cwt(np.ascontiguousarray(b), **kw)[0]
        w = w[..., depth:w.shape[-1] - depth] if xh is not x else w
        return w[..., ::hop]

    out_chunks = xh.chunks[:-1] + ((scales.size,), tuple(-(-c // hop) for c in time_chunks))
    w = da.map_blocks(block, xh, dtype=probe.dtype, chunks=out_chunks, new_axis=x.ndim - 1,
                      meta=np.empty((0,) * (x.ndim + 1), dtype=probe.dtype))
    return w, rows


def _trimmed_chunks(xh, depth, x):
    """The chunks along time of the array the halo was put around."""
    if xh is x:
        return x.chunks[-1]
    return tuple(c - 2 * depth for c in xh.chunks[-1])


def fir(x, filters, mode="same", post=None, *, algorithm="auto", device="cpu"):
    """:func:`multires.fir` of a dask array of signals ``(..., N)`` chunked
    along ``N``: ``(..., F, N)``, ``mode='same'`` (outputs aligned with the
    input's chunks), ``post`` None, 'power' or 'magnitude' (pointwise; a
    derivative needs the whole signal's ends)."""
    x = _signal(x)
    h = np.asarray(filters)
    if h.ndim == 1:
        h = h[np.newaxis, :]
    if h.ndim != 2 or h.size == 0:
        raise ValueError(f"filters has shape {h.shape}: expected (F, M) or (M,) with F, M >= 1")
    if mode != "same":
        raise ValueError(
            f"mode={mode!r}: multires.dask.fir computes mode='same', whose outputs line up with the "
            "input's chunks; for 'full', pad x with M - 1 zeros on each side first"
        )
    if post not in (None, "power", "magnitude"):
        raise ValueError(f"post={post!r}: on chunks, None, 'power' or 'magnitude' (pointwise)")
    m = h.shape[1]
    if x.shape[-1] < m:
        raise ValueError(f"x has {x.shape[-1]} samples, fewer than the {m} taps: mode='same' then has the filters' length")
    depth = m  # at least ceil((M - 1) / 2) each side, kept whole for the alignment below
    xh = _with_halo(x, depth, 0)
    time_chunks = _trimmed_chunks(xh, depth, x)
    probe = multires.fir(np.zeros(m, dtype=x.dtype), h, "full", post)
    lead = (m - 1) // 2

    def block(b):
        y = multires.fir(np.ascontiguousarray(b), h, "full", post, algorithm=algorithm, device=device)
        # A chunk's output m of the global 'same' output is the full
        # convolution's m + (M-1)//2; the block starts `depth` before it.
        start = lead + depth
        return y[..., start:start + b.shape[-1] - 2 * depth]

    out_chunks = xh.chunks[:-1] + ((h.shape[0],), time_chunks)
    return da.map_blocks(block, xh, dtype=probe.dtype, chunks=out_chunks, new_axis=x.ndim - 1,
                         meta=np.empty((0,) * (x.ndim + 1), dtype=probe.dtype))


def wavedec(x, wavelet, mode="periodization", level=None):
    """:func:`multires.pywt.wavedec` along the last axis of a dask array
    chunked along it: ``[cA_n, cD_n, ..., cD_1]`` as dask arrays, chunk
    ``j``'s coefficients in chunk ``j`` of each level.

    ``mode='periodization'`` (N / 2 coefficients a level, so chunks stay
    aligned), every chunk a multiple of 2^level.
    """
    x = _signal(x)
    w = _pywt.Wavelet(wavelet) if isinstance(wavelet, str) else wavelet
    if mode != "periodization":
        raise ValueError(
            f"mode={mode!r}: chunked wavedec keeps chunks aligned with mode='periodization' "
            "(N / 2 coefficients a level); other modes change the lengths at the ends"
        )
    n = x.shape[-1]
    if level is None:
        level = _pywt.dwt_max_level(n, w.dec_len)
    if not isinstance(level, (int, np.integer)) or level < 1:
        raise ValueError(f"level must be an integer >= 1, got {level!r}")
    step = 1 << level
    bad = [c for c in x.chunks[-1] if c % step]
    if bad:
        raise ValueError(
            f"every chunk along the last axis must be a multiple of 2^level = {step} "
            f"(the chunks are {x.chunks[-1]}); rechunk, e.g. x.rechunk({{-1: {step * max(1, max(x.chunks[-1]) // step)}}})"
        )
    # Coefficient k of level j reaches (L - 1)(2^j - 1) samples past its
    # own 2^j; a halo of that, rounded up to whole 2^level steps, keeps
    # every level's decimation in phase with the whole signal's.
    reach = (w.dec_len - 1) * (step - 1)
    depth = -(-reach // step) * step
    xh = _with_halo(x, depth, "periodic")
    time_chunks = _trimmed_chunks(xh, depth, x)
    if any(c % step for c in time_chunks):
        raise ValueError(f"the chunks {time_chunks} are not multiples of 2^level = {step} after the halo's rechunk")
    dt = np.result_type(x.dtype, np.float32)

    def block(b, j):
        c = _pywt.wavedec(np.ascontiguousarray(b), w, mode="periodization", level=level, axis=-1)
        # c[0] is cA_level; c[i] is cD of level level - i + 1.
        lv = level if j == 0 else level - j + 1
        d = depth >> lv
        a = c[j]
        return a[..., d:a.shape[-1] - d]

    out = []
    for j in range(level + 1):
        lv = level if j == 0 else level - j + 1
        chunks = xh.chunks[:-1] + (tuple(c >> lv for c in time_chunks),)
        out.append(da.map_blocks(block, xh, j, dtype=dt, chunks=chunks, meta=np.empty((0,) * x.ndim, dtype=dt)))
    return out


def compress(x, store, *, abs=None, rel=None, psnr=None, lossless=False, transform="interp", compute=True):
    """Writes a dask array into a zarr v3 array at ``store`` through the
    multires codec (:class:`multires.zarr.Mrz`), one .mrz stream per chunk
    (dask's chunks: they must be regular, as zarr's are). A ``rel`` bound
    is of each chunk's range. Returns the zarr array (``compute=False``:
    the dask graph that writes it, as ``dask.array.to_zarr`` does)."""
    import zarr

    from .zarr import Mrz

    if not isinstance(x, da.Array):
        raise TypeError(f"x must be a dask array, got {type(x).__name__}")
    chunks = tuple(c[0] for c in x.chunks)
    if any(len(set(c[:-1])) > 1 or c[-1] > c[0] for c in x.chunks):
        raise ValueError(f"zarr needs regular chunks (all equal but a smaller last one); these are {x.chunks}: rechunk x first")
    z = zarr.create_array(store=store, shape=x.shape, chunks=chunks, dtype=x.dtype,
                          serializer=Mrz(abs=abs, rel=rel, psnr=psnr, lossless=lossless, transform=transform),
                          compressors=None, overwrite=True)
    r = da.store(x, z, lock=False, compute=compute)
    return z if compute else r
