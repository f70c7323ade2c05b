"""multires.dask and multires.xarray on a distributed LocalCluster of two
worker processes: chunked results equal the whole-array calls (bit for bit
with the direct sums), wavedec equals PyWavelets', the codec writes zarr."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import multires
import multires.dask as md


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def signals(rng):
    return rng.standard_normal((3, 6000))


def test_cwt_chunks_equal_the_whole_transform(client, signals):
    x = da.from_array(signals, chunks=(2, (1500, 1000, 2000, 1500)))  # uneven chunks
    scales = np.geomspace(1, 80, 24)
    for kw in (dict(), dict(boundary="periodic"), dict(output="power", hop=4),
               dict(output="magnitude", precision="f32")):
        w, rows = md.cwt(x, scales, "cmor1.5-1.0", algorithm="direct", **kw)
        want, want_rows = multires.cwt(signals, scales, "cmor1.5-1.0", algorithm="direct", **kw)
        got = client.compute(w).result()
        assert got.dtype == want.dtype and got.shape == want.shape, kw
        assert got.tobytes() == want.tobytes(), kw
        np.testing.assert_array_equal(rows, want_rows)
    # The FFT algorithms plan per chunk: equal to round-off.
    w, _ = md.cwt(x, scales, "morl")
    want = multires.cwt(signals, scales, "morl")[0]
    assert np.abs(client.compute(w).result() - want).max() <= 1e-12 * np.abs(want).max()


def test_cwt_frequencies_small_chunks_and_errors(client, signals):
    # Chunks shorter than the widest mask's reach are rechunked, not refused.
    x = da.from_array(signals[0], chunks=200)
    w, f = md.cwt(x, freqs=np.geomspace(2, 40, 10), fs=200.0, wavelet="morl", algorithm="direct")
    want, wf = multires.cwt(signals[0], freqs=np.geomspace(2, 40, 10), fs=200.0, wavelet="morl", algorithm="direct")
    assert client.compute(w).result().tobytes() == want.tobytes()
    np.testing.assert_allclose(f, wf)
    with pytest.raises(TypeError, match="dask array"):
        md.cwt(signals, [1, 2])
    with pytest.raises(ValueError, match="hop=3"):
        md.cwt(da.from_array(signals, chunks=(3, 1000)), [1, 2], hop=3)
    with pytest.raises(ValueError, match="boundary"):
        md.cwt(da.from_array(signals, chunks=(3, 1000)), [1, 2], boundary="symmetric")


def test_fir_chunks_equal_the_whole_bank(client, signals, rng):
    x = da.from_array(signals, chunks=(3, 1100))
    for taps in (33, 64, 257):
        h = rng.standard_normal((4, taps))
        for post in (None, "power"):
            y = client.compute(md.fir(x, h, post=post, algorithm="direct")).result()
            want = multires.fir(signals, h, post=post, algorithm="direct")
            assert y.shape == want.shape and y.tobytes() == want.tobytes(), (taps, post)
    h = rng.standard_normal(50)
    y = client.compute(md.fir(x, h)).result()
    np.testing.assert_allclose(y, multires.fir(signals, h), rtol=0, atol=1e-12 * np.abs(y).max())
    with pytest.raises(ValueError, match="same"):
        md.fir(x, h, mode="full")
    with pytest.raises(ValueError, match="pointwise"):
        md.fir(x, h, post="derivative")


def test_wavedec_equals_pywavelets(client, signals):
    pywt = pytest.importorskip("pywt")
    x = da.from_array(signals, chunks=(2, 1024))
    big = np.concatenate([signals, signals[:, :144]], axis=1)[:, :6144]
    x = da.from_array(big, chunks=(2, 1024))
    for wavelet, level in (("db4", 3), ("sym8", 4), ("haar", 6)):
        got = [client.compute(c).result() for c in md.wavedec(x, wavelet, level=level)]
        want = pywt.wavedec(big, wavelet, mode="periodization", level=level)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="multiple of 2\\^level = 8"):
        md.wavedec(da.from_array(big, chunks=(2, 1004)), "db4", level=3)
    with pytest.raises(ValueError, match="periodization"):
        md.wavedec(x, "db4", mode="symmetric", level=2)


def test_compress_into_zarr(client, rng, tmp_path):
    zarr = pytest.importorskip("zarr")
    f = np.cumsum(np.cumsum(rng.standard_normal((64, 48, 40)), 0), 2).astype(np.float32)
    x = da.from_array(f, chunks=(32, 24, 40))
    z = md.compress(x, str(tmp_path / "f.zarr"), abs=0.01)
    back = zarr.open_array(str(tmp_path / "f.zarr"))[:]
    assert back.dtype == np.float32 and np.abs(back - f).max() <= 0.01
    assert z.metadata.to_dict()["codecs"][0]["name"] == "multires.mrz"
    with pytest.raises(ValueError, match="regular"):
        md.compress(da.from_array(f, chunks=((10, 54), 48, 40)), str(tmp_path / "g.zarr"), abs=0.1)


def test_xarray_keeps_dims_and_coords(client, signals):
    xr = pytest.importorskip("xarray")
    import multires.xarray as mx

    t = np.arange(signals.shape[1]) / 100.0
    a = xr.DataArray(signals, dims=("channel", "time"), coords={"channel": ["a", "b", "c"], "time": t},
                     attrs={"units": "uV"})
    freqs = np.geomspace(1, 20, 8)
    w = mx.cwt(a, freqs=freqs, fs=100.0, wavelet="morl", hop=2, algorithm="direct")
    assert w.dims == ("channel", "frequency", "time") and w.attrs["units"] == "uV"
    np.testing.assert_array_equal(w["time"].values, t[::2])
    assert list(w["channel"].values) == ["a", "b", "c"]
    want = multires.cwt(signals, freqs=freqs, fs=100.0, wavelet="morl", hop=2, algorithm="direct")[0]
    np.testing.assert_array_equal(w.values, want)
    lazy = mx.cwt(a.chunk({"time": 1500}), freqs=freqs, fs=100.0, wavelet="morl", hop=2, algorithm="direct")
    assert isinstance(lazy.data, da.Array)
    assert client.compute(lazy.data).result().tobytes() == want.tobytes()
    y = mx.fir(a.chunk({"time": 2000}), np.ones((2, 9)) / 9, algorithm="direct")
    assert y.dims == ("channel", "filter", "time")
    np.testing.assert_array_equal(client.compute(y.data).result(),
                                  multires.fir(signals, np.ones((2, 9)) / 9, algorithm="direct"))
    with pytest.raises(ValueError, match="dim"):
        mx.cwt(a, [1, 2], dim="space")
