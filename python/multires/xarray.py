"""multires on xarray DataArrays: the transform along a named dimension,
dims and coordinates kept, lazily on Dask-backed arrays
(:mod:`multires.dask`) and at once on numpy-backed ones::

    import xarray as xr, multires.xarray
    eeg = xr.open_dataset("eeg.nc", chunks={"time": 2**16})["signal"]    # (channel, time)
    W = multires.xarray.cwt(eeg, freqs=np.geomspace(1, 40, 60), fs=256.0, dim="time")
    W.sel(frequency=10, method="nearest").mean("channel")
"""

import numpy as np

try:
    import xarray as xr
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("multires.xarray needs xarray: pip install xarray") from e

import multires


def _is_dask(a):
    try:
        import dask.array as da
    except ImportError:
        return False
    return isinstance(a, da.Array)


def _check_dim(x, dim):
    if not isinstance(x, xr.DataArray):
        raise TypeError(f"x must be an xarray.DataArray, got {type(x).__name__}")
    if dim not in x.dims:
        raise ValueError(f"dim={dim!r} is not a dimension of x, whose dims are {x.dims}")


def cwt(x, scales=None, wavelet="morl", *, dim="time", freqs=None, fs=None, hop=1, **kw):
    """:func:`multires.cwt` along ``dim`` of a DataArray: a DataArray with a
    new dimension ``frequency`` (when ``freqs`` or ``fs`` is given; else
    ``scale``) before ``dim``, the other dims and their coordinates kept,
    ``dim``'s coordinate taken every ``hop``-th. Other keywords are
    :func:`multires.cwt`'s."""
    _check_dim(x, dim)
    n = x.sizes[dim]
    if scales is None and freqs is None:
        scales = multires._default_scales(n, wavelet, kw.get("spacing", "log"))
    rows = multires.cwt(np.zeros(4), scales, wavelet, freqs=freqs, fs=fs,
                        **{k: v for k, v in kw.items() if k in ("normalization",)})[1]
    row_dim = "frequency" if (freqs is not None or fs is not None) else "scale"

    def f(a):
        if _is_dask(a):
            import multires.dask as md

            return md.cwt(a, scales, wavelet, freqs=freqs, fs=fs, hop=hop, **kw)[0]
        return multires.cwt(a, scales, wavelet, freqs=freqs, fs=fs, hop=hop, **kw)[0]

    out = xr.apply_ufunc(f, x, input_core_dims=[[dim]], output_core_dims=[[row_dim, dim]],
                         exclude_dims={dim}, dask="allowed", keep_attrs=True)
    coords = {row_dim: np.asarray(rows)}
    if dim in x.coords:
        coords[dim] = x[dim].values[::hop]
    return out.assign_coords(coords)


def fir(x, filters, *, dim="time", mode="same", post=None, **kw):
    """:func:`multires.fir` along ``dim`` (``mode='same'``): a DataArray with a
    new dimension ``filter`` before ``dim``, dims and coordinates kept."""
    _check_dim(x, dim)
    if mode != "same":
        raise ValueError(f"mode={mode!r}: along a labelled dimension multires.xarray.fir keeps its coordinate: mode='same'")

    def f(a):
        if _is_dask(a):
            import multires.dask as md

            return md.fir(a, filters, mode, post, **kw)
        return multires.fir(a, filters, mode, post, **kw)

    nf = 1 if np.ndim(filters) == 1 else np.shape(filters)[0]
    out = xr.apply_ufunc(f, x, input_core_dims=[[dim]], output_core_dims=[["filter", dim]],
                         dask="allowed", keep_attrs=True)
    return out.assign_coords(filter=np.arange(nf))
