"""multires.hdf5: the HDF5 filter plugin, written and read through h5py's
bundled HDF5 and by the system's HDF5 tools (h5dump, h5repack, h5diff)
with HDF5_PLUGIN_PATH set, as other HDF5 programs would use it."""
import os
import shutil
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

import multires.hdf5 as mh

TOOLS = all(shutil.which(t) for t in ("h5dump", "h5repack", "h5diff"))
need_tools = pytest.mark.skipif(
    not TOOLS and not os.environ.get("CI"), reason="the HDF5 tools (apt: hdf5-tools) are not installed"
)


def _field(rng, shape=(48, 40, 36), dtype=np.float32):
    x = np.cumsum(np.cumsum(rng.standard_normal(shape), axis=0), axis=-1)
    return x.astype(dtype)


def _env():
    return dict(os.environ, HDF5_PLUGIN_PATH=mh.plugin_dir())


def test_filter_keywords_and_plugin():
    kw = mh.filter(rel=1e-3)
    assert kw["compression"] == mh.FILTER_ID == 333
    opts = kw["compression_opts"]
    assert opts[:2] == (1, 1) and opts[4] == 3
    assert np.frombuffer(np.array(opts[2:4], dtype="<u4").tobytes(), "<f8")[0] == 1e-3
    assert os.path.isfile(os.path.join(mh.plugin_dir(), "libh5multires.so"))
    assert h5py.h5z.filter_avail(mh.FILTER_ID)
    for bad, msg in [(dict(), "exactly one"), (dict(abs=1, rel=2), "exactly one"),
                     (dict(abs=-1.0), "not negative"), (dict(psnr=0), "psnr above 0"),
                     (dict(lossless=True, rel=1e-3), "lossless"), (dict(abs=1, transform="db4"), "transform")]:
        with pytest.raises(ValueError, match=msg):
            mh.filter(**bad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_h5py_round_trip_within_the_bound(rng, tmp_path, dtype):
    x = _field(rng, dtype=dtype)
    p = tmp_path / "f.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("abs", data=x, chunks=(24, 20, 36), **mh.filter(abs=0.05))
        f.create_dataset("rel", data=x, chunks=(16, 40, 36), **mh.filter(rel=1e-3))
        f.create_dataset("exact", data=x, chunks=(48, 40, 12), **mh.filter(lossless=True))
    with h5py.File(p) as f:
        assert str(mh.FILTER_ID) in f["abs"]._filters
        a, r, e = f["abs"][...], f["rel"][...], f["exact"][...]
        part = f["abs"][5:30, 3:9, 7]
        assert f["abs"].id.get_storage_size() < x.nbytes / 2
    assert a.dtype == dtype and a.shape == x.shape
    assert np.abs(a.astype(np.float64) - x).max() <= 0.05
    np.testing.assert_array_equal(part, a[5:30, 3:9, 7])
    # A relative bound is relative to each chunk's range.
    for s in range(0, 48, 16):
        c = x[s:s + 16]
        assert np.abs(r[s:s + 16].astype(np.float64) - c).max() <= 1e-3 * (c.max() - c.min())
    assert e.tobytes() == x.tobytes()


def test_h5py_fast_profile_chunks(rng, tmp_path):
    x = _field(rng, dtype=np.float32)
    p = tmp_path / "fast.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=x, chunks=(24, 20, 36), **mh.filter(abs=0.05, transform="lorenzo"))
    with h5py.File(p) as f:
        y = f["x"][...]
        assert f["x"].id.get_storage_size() < x.nbytes / 2
    assert np.abs(y.astype(np.float64) - x).max() <= 0.05


def test_h5py_integers_and_edge_chunks(rng, tmp_path):
    img = (np.cumsum(rng.integers(-3, 4, size=(70, 50)), axis=1) + 3000).astype(np.int16)
    u8 = rng.integers(0, 256, size=(33, 17), dtype=np.uint8)
    p = tmp_path / "i.h5"
    with h5py.File(p, "w") as f:
        # Chunks that do not divide the shape: HDF5 pads the edge chunks.
        f.create_dataset("i16", data=img, chunks=(32, 32), **mh.filter(abs=2))
        f.create_dataset("i16x", data=img, chunks=(32, 32), **mh.filter(abs=0))
        f.create_dataset("u8", data=u8, chunks=(16, 16), **mh.filter(lossless=True))
    with h5py.File(p) as f:
        a, b, c = f["i16"][...], f["i16x"][...], f["u8"][...]
    assert a.dtype == np.int16 and np.abs(a.astype(int) - img).max() <= 2
    np.testing.assert_array_equal(b, img)
    np.testing.assert_array_equal(c, u8)


def test_h5py_nan_field(rng, tmp_path):
    x = _field(rng, (32, 32, 32))
    x[3, :, 5] = np.nan
    x[10, 10, 10] = np.inf
    with h5py.File(tmp_path / "n.h5", "w") as f:
        f.create_dataset("u", data=x, chunks=(16, 16, 16), **mh.filter(abs=0.01))
    with h5py.File(tmp_path / "n.h5") as f:
        r = f["u"][...]
    fin = np.isfinite(x)
    np.testing.assert_array_equal(np.isnan(r), np.isnan(x))
    assert r[10, 10, 10] == np.inf
    assert np.abs(r[fin] - x[fin]).max() <= 0.01


def test_unsupported_dtype_is_refused(tmp_path):
    with h5py.File(tmp_path / "c.h5", "w") as f:
        with pytest.raises((ValueError, OSError, RuntimeError)):
            f.create_dataset("c", data=np.ones((8, 8), np.complex64), chunks=(8, 8), **mh.filter(abs=0.1))


@need_tools
def test_system_hdf5_tools_read_it(rng, tmp_path):
    x = _field(rng, (32, 24, 20), np.float64)
    src, out = tmp_path / "src.h5", tmp_path / "repacked.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("u", data=x, chunks=(16, 24, 20), **mh.filter(abs=1e-3))
        f.create_dataset("raw", data=x, chunks=(16, 24, 20))
    env = _env()
    # h5dump decodes the chunks and names the filter's parameters.
    d = subprocess.run(["h5dump", "-d", "/u", "-p", str(src)], env=env, capture_output=True, text=True)
    assert d.returncode == 0, d.stderr
    assert "USER_DEFINED_FILTER" in d.stdout and f"FILTER_ID {mh.FILTER_ID}" in d.stdout
    first = float(d.stdout.split("(0,0,0):")[1].split(",")[0])
    assert abs(first - x[0, 0, 0]) <= 1e-3
    # h5repack applies the filter to a raw dataset from the command line.
    opts = mh.filter_options(rel=1e-4)
    ud = f"UD={mh.FILTER_ID},0,{len(opts)}," + ",".join(map(str, opts))
    r = subprocess.run(["h5repack", "-f", f"raw:{ud}", str(src), str(out)], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with h5py.File(out) as f:
        assert f["raw"].id.get_storage_size() < x.nbytes
        got = f["raw"][...]
    for s in (0, 16):
        c = x[s:s + 16]
        assert np.abs(got[s:s + 16] - c).max() <= 1e-4 * np.ptp(c)
    # h5diff compares the decoded datasets: equal within the bound, different past it.
    ok = subprocess.run(["h5diff", "-d", "2e-3", str(src), str(src), "/u", "/raw"], env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = subprocess.run(["h5diff", "-d", "1e-9", str(src), str(src), "/u", "/raw"], env=env, capture_output=True, text=True)
    assert bad.returncode == 1, bad.stdout + bad.stderr
