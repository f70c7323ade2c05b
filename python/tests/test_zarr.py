"""multires.zarr: zarr v3 stores (written directly and by Dask) and the
numcodecs codec, read back within the bound."""
import importlib.metadata

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
da = pytest.importorskip("dask.array")

import multires.zarr as mz


def _field(rng, shape=(64, 48, 40), dtype=np.float32):
    return np.cumsum(np.cumsum(rng.standard_normal(shape), axis=0), axis=-1).astype(dtype)


def test_zarr_v3_round_trip_within_the_bound(rng, tmp_path):
    x = _field(rng)
    z = zarr.create_array(
        store=str(tmp_path / "a.zarr"), shape=x.shape, chunks=(32, 32, 32), dtype="float32",
        serializer=mz.Mrz(abs=0.05), compressors=None,
    )
    z[:] = x
    back = zarr.open_array(str(tmp_path / "a.zarr"))
    assert back.metadata.to_dict()["codecs"][0] == {"name": "multires.mrz", "configuration": {"abs": 0.05, "transform": "interp"}}
    r = back[:]
    assert r.dtype == np.float32 and r.shape == x.shape
    assert np.abs(r - x).max() <= 0.05
    # Stored smaller than the raw chunks.
    stored = sum(p.stat().st_size for p in (tmp_path / "a.zarr").rglob("c/**/*") if p.is_file())
    assert stored < x.nbytes / 2


def test_zarr_fast_profile_chunks(rng, tmp_path):
    x = _field(rng)
    z = zarr.create_array(
        store=str(tmp_path / "f.zarr"), shape=x.shape, chunks=(32, 32, 32), dtype="float32",
        serializer=mz.Mrz(rel=1e-3, transform="lorenzo"), compressors=None,
    )
    z[:] = x
    r = zarr.open_array(str(tmp_path / "f.zarr"))[:]
    # A relative bound is relative to each chunk's range.
    for s in range(0, 64, 32):
        for t in range(0, 48, 32):
            for u in range(0, 40, 32):
                c = x[s:s + 32, t:t + 32, u:u + 32]
                got = r[s:s + 32, t:t + 32, u:u + 32]
                assert np.abs(got.astype(np.float64) - c).max() <= 1e-3 * (float(c.max()) - float(c.min()))


def test_dask_stores_into_an_mrz_array(rng, tmp_path):
    x = _field(rng, (64, 64), np.float64)
    d = da.from_array(x, chunks=(32, 32))
    z = zarr.create_array(store=str(tmp_path / "d.zarr"), shape=x.shape, chunks=(32, 32), dtype="float64",
                          serializer=mz.Mrz(rel=1e-4, transform="cdf97"), compressors=None)
    da.store(d, z)
    r = zarr.open_array(str(tmp_path / "d.zarr"))[:]
    # rel is of each chunk's value range: bound every chunk by its own range.
    for i in (0, 32):
        for j in (0, 32):
            c = x[i:i + 32, j:j + 32]
            assert np.abs(r[i:i + 32, j:j + 32] - c).max() <= 1e-4 * (c.max() - c.min()) * (1 + 1e-12)


def test_numcodecs_codec_and_registries(rng):
    x = _field(rng, (40, 30), np.float64)
    c = mz.MrzCodec(psnr=60)
    y = c.decode(c.encode(x))
    assert y.shape == x.shape and 10 * np.log10(np.ptp(x) ** 2 / np.mean((y - x) ** 2)) >= 60
    out = np.empty_like(x)
    assert c.decode(c.encode(x), out=out) is out
    again = numcodecs.get_codec(c.get_config())
    assert isinstance(again, mz.MrzCodec) and again.get_config() == {"id": "multires.mrz", "psnr": 60.0, "transform": "interp"}
    names = {e.name for e in importlib.metadata.entry_points(group="zarr.codecs")}
    assert "multires.mrz" in names
    assert "multires.mrz" in {e.name for e in importlib.metadata.entry_points(group="numcodecs.codecs")}


def test_bad_configurations_and_chunks_say_what_is_wrong():
    with pytest.raises(ValueError, match="exactly one"):
        mz.Mrz()
    with pytest.raises(ValueError, match="exactly one"):
        mz.MrzCodec(abs=1, rel=1)
    with pytest.raises(ValueError, match="above 0"):
        mz.Mrz(rel=-1)
    with pytest.raises(ValueError, match="transform"):
        mz.MrzCodec(abs=1, transform="fft")
    with pytest.raises(ValueError, match="1 to 4 axes"):
        mz.MrzCodec(abs=1).encode(np.zeros((2,) * 5))
    with pytest.raises(TypeError, match="float32"):
        mz.MrzCodec(abs=1).encode(np.zeros((8, 8), dtype=np.int64))
    with pytest.raises(ValueError, match="lossless"):
        mz.Mrz(abs=1, lossless=True)


def test_lossless_and_integer_zarr_arrays(rng, tmp_path):
    x = _field(rng, (40, 36), np.float64)
    x[3, 4] = np.nan
    img = (np.cumsum(rng.integers(-2, 3, size=(50, 60)), axis=1) + 500).astype(np.uint16)
    zx = zarr.create_array(store=str(tmp_path / "x.zarr"), shape=x.shape, chunks=(16, 36), dtype="float64",
                           serializer=mz.Mrz(lossless=True), compressors=None)
    zx[:] = x
    zi = zarr.create_array(store=str(tmp_path / "i.zarr"), shape=img.shape, chunks=(32, 32), dtype="uint16",
                           serializer=mz.Mrz(abs=1), compressors=None)
    zi[:] = img
    assert zarr.open_array(str(tmp_path / "x.zarr"))[:].tobytes() == x.tobytes()
    back = zarr.open_array(str(tmp_path / "i.zarr"))[:]
    assert back.dtype == np.uint16 and np.abs(back.astype(int) - img).max() <= 1
    c = mz.MrzCodec(lossless=True)
    s = np.cumsum(rng.standard_normal(1000)).astype(np.float32)
    assert c.decode(c.encode(s)).tobytes() == s.tobytes()
