"""The error-bounded codec for Zarr: a zarr-python v3 array-to-bytes codec
(``Mrz``, name ``multires.mrz``) and a numcodecs codec (``MrzCodec``, id
``multires.mrz``), each chunk one .mrz stream with every value within the
bound. Registered through the package's entry points (``zarr.codecs``,
``numcodecs.codecs``), so a store written with them opens wherever
multires is installed::

    import zarr, multires.zarr
    z = zarr.create_array(store, shape=(512, 512, 512), chunks=(128, 128, 128),
                          dtype="float32", serializer=multires.zarr.Mrz(rel=1e-3))

Chunks are 2-D or 3-D float32/float64 (the codec's fields); exactly one
of ``abs``, ``rel`` (of the chunk's value range) or ``psnr`` is given.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import compress, decompress

NAME = "multires.mrz"
TRANSFORMS = ("interp", "cdf97", "cdf53", "haar", "lorenzo")


def _config(abs, rel, psnr, transform, lossless=False):
    given = {k: v for k, v in (("abs", abs), ("rel", rel), ("psnr", psnr)) if v is not None}
    if transform not in TRANSFORMS:
        raise ValueError(f"transform must be one of {', '.join(TRANSFORMS)}, got {transform!r}")
    if lossless:
        if given:
            raise ValueError(f"lossless=True keeps every bit; drop {sorted(given)}")
        return {"lossless": True, "transform": transform}
    if len(given) != 1:
        raise ValueError(
            f"give exactly one error bound (abs=, rel=, psnr=) or lossless=True, got {sorted(given) or 'none'}"
        )
    (kind, value), = given.items()
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{kind}={value}: the bound must be a finite number above 0")
    return {kind: value, "transform": transform}


_DTYPES = (np.float32, np.float64, np.uint8, np.uint16, np.int16, np.int32)


def _encode(a, config):
    a = np.asarray(a)
    if not 1 <= a.ndim <= 4:
        raise ValueError(f"multires.mrz codes chunks of 1 to 4 axes; this chunk has shape {a.shape}")
    if a.dtype not in _DTYPES:
        raise TypeError(
            f"multires.mrz codes float32, float64, uint8, uint16, int16 and int32 chunks, got {a.dtype}"
        )
    return compress(np.ascontiguousarray(a), device="cpu", **config)


try:
    from zarr.abc.codec import ArrayBytesCodec
    from zarr.core.common import parse_named_configuration
except ImportError:  # zarr v3 is optional
    ArrayBytesCodec = None

if ArrayBytesCodec is not None:

    @dataclass(frozen=True)
    class Mrz(ArrayBytesCodec):
        """zarr v3 array-to-bytes codec: each chunk a .mrz stream, within one
        bound (abs, rel, psnr) or lossless; float32/float64 and
        uint8/uint16/int16/int32 chunks of 1 to 4 axes."""

        is_fixed_size = False
        abs: float | None = None
        rel: float | None = None
        psnr: float | None = None
        transform: str = "interp"
        lossless: bool = False

        def __post_init__(self):
            _config(self.abs, self.rel, self.psnr, self.transform, self.lossless)

        @classmethod
        def from_dict(cls, data):
            _, config = parse_named_configuration(data, NAME, require_configuration=True)
            return cls(**config)

        def to_dict(self):
            return {"name": NAME, "configuration": self._config()}

        def _config(self):
            return _config(self.abs, self.rel, self.psnr, self.transform, self.lossless)

        async def _encode_single(self, chunk_array, chunk_spec):
            b = _encode(chunk_array.as_numpy_array(), self._config())
            return chunk_spec.prototype.buffer.from_bytes(b)

        async def _decode_single(self, chunk_bytes, chunk_spec):
            a = decompress(chunk_bytes.to_bytes(), device="cpu").reshape(chunk_spec.shape)
            return chunk_spec.prototype.nd_buffer.from_numpy_array(a.astype(chunk_spec.dtype.to_native_dtype(), copy=False))

        def compute_encoded_size(self, input_byte_length, chunk_spec):
            raise NotImplementedError("multires.mrz chunks have data-dependent sizes")

    from zarr.registry import register_codec as _register_zarr

    # Also registered on import, for installs without the entry points (a
    # source tree on PYTHONPATH).
    _register_zarr(NAME, Mrz)
else:
    Mrz = None

try:
    from numcodecs.abc import Codec
except ImportError:  # numcodecs is optional
    Codec = object


class MrzCodec(Codec):
    """numcodecs codec (zarr v2 stores, and everything built on numcodecs):
    ``encode`` takes an array of 1 to 4 axes (float32/float64 or
    uint8/uint16/int16/int32), ``decode`` returns it within the bound (or
    exactly, ``lossless=True``)."""

    codec_id = NAME

    def __init__(self, abs=None, rel=None, psnr=None, transform="interp", lossless=False):
        self.config = _config(abs, rel, psnr, transform, lossless)
        for k, v in self.config.items():
            setattr(self, k, v)

    def encode(self, buf):
        return _encode(buf, self.config)

    def decode(self, buf, out=None):
        a = decompress(bytes(memoryview(buf)), device="cpu")
        if out is not None:
            o = np.asarray(out)
            o.reshape(-1)[...] = a.reshape(-1).astype(o.dtype, copy=False)
            return out
        return a

    def get_config(self):
        return {"id": NAME, **self.config}

    @classmethod
    def from_config(cls, config):
        config = {k: v for k, v in config.items() if k != "id"}
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"MrzCodec({args})"


try:
    import numcodecs as _numcodecs

    _numcodecs.register_codec(MrzCodec)
except ImportError:
    pass
