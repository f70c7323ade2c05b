"""The codec from Python: every value within the bound, region reads equal
to crops of the full decode, files written whole."""

import os
import signal
import subprocess
import sys
import zlib

import numpy as np
import pytest

import multires


def field(rng, shape, dtype=np.float64):
    z, y, x = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij") if len(shape) == 3 else (None, *np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij"))
    base = np.sin(2 * y) * np.cos(3 * x) if z is None else np.sin(2 * y + z) * np.cos(3 * x)
    return (base + 0.01 * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", ["interp", "cdf97", "cdf53", "haar", "lorenzo"])
def test_abs_bound_holds_everywhere(rng, dtype, transform):
    a = field(rng, (37, 50, 29), dtype)
    b, info = multires.compress(a, abs=1e-3, transform=transform, info=True)
    assert isinstance(b, bytes) and len(b) < a.nbytes
    back = multires.decompress(b)
    assert back.dtype == a.dtype and back.shape == a.shape
    assert np.max(np.abs(back.astype(np.float64) - a)) <= 1e-3
    assert info["max_error"] <= 1e-3 and info["ratio"] > 1


def test_decompress_into_a_callers_array(rng):
    a = field(rng, (30, 41, 17), np.float32)
    b = multires.compress(a, abs=1e-3)
    want = multires.decompress(b, device="cpu")
    out = np.full_like(a, np.nan)
    assert multires.decompress(b, device="cpu", out=out) is out
    np.testing.assert_array_equal(out, want)
    for bad in (np.empty((30, 41, 18), np.float32), np.empty((30, 41, 17), np.float64), np.empty((17, 41, 30), np.float32).T):
        with pytest.raises(ValueError, match=r"writable, C-contiguous float32 array of shape \[30, 41, 17\]"):
            multires.decompress(b, device="cpu", out=bad)
    ro = np.empty_like(a)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        multires.decompress(b, device="cpu", out=ro)
    with pytest.raises(TypeError, match="out must be a numpy array"):
        multires.decompress(b, out=[0.0])
    # Integer files come back as integers: out= is refused with the way out.
    q = rng.integers(0, 255, (20, 30)).astype(np.uint8)
    with pytest.raises(ValueError, match="out= takes files of float values"):
        multires.decompress(multires.compress(q, abs=0), device="cpu", out=np.empty((20, 30), np.uint8))
    # A lossless file decodes on the CPU, and device='cuda' says so.
    with pytest.raises(ValueError, match="lossless file decodes on the CPU"):
        multires.decompress(multires.compress(a, lossless=True), device="cuda")


def test_rel_and_psnr_bounds(rng):
    a = field(rng, (100, 120))
    span = a.max() - a.min()
    back = multires.decompress(multires.compress(a, rel=1e-4))
    assert np.max(np.abs(back - a)) <= 1e-4 * span
    back = multires.decompress(multires.compress(a, psnr=60))
    rmse = np.sqrt(np.mean((back - a) ** 2))
    assert 20 * np.log10(span / rmse) >= 60


def test_file_regions_equal_crops(rng, tmp_path):
    a = field(rng, (40, 70, 33), np.float32)
    p = tmp_path / "f.mrz"
    stats = multires.save(p, a, abs=1e-2)
    assert stats["max_error"] <= 1e-2
    full = multires.load(p)
    with multires.MrzFile(p) as f:
        assert f.shape == a.shape and f.dtype == np.float32
        assert f.info["transform"] == "interp" and f.info["file_bytes"] == os.path.getsize(p)
        for key in [(slice(0, 64), slice(None), slice(10, 20)), (5,), (slice(3, 30, 4), -1, slice(None, None, -3)),
                    (Ellipsis, 7), (slice(-5, None), slice(2, 2))]:
            np.testing.assert_array_equal(f[key], full[key])
        np.testing.assert_array_equal(np.asarray(f), full)
        with pytest.raises(IndexError):
            f[40]
        with pytest.raises(IndexError):
            f[0, 0, 0, 0]


def test_bad_codec_inputs(rng, tmp_path):
    with pytest.raises(ValueError, match="exactly one error bound"):
        multires.compress(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="exactly one error bound"):
        multires.compress(np.zeros((4, 4)), abs=1, rel=1)
    with pytest.raises(ValueError, match="1 to 4 axes"):
        multires.compress(np.zeros((2, 2, 2, 2, 2)), abs=1e-3)
    with pytest.raises(TypeError, match="int8|uint8|dtype"):
        multires.compress(np.zeros((4, 4), np.int64), abs=1)
    with pytest.raises(ValueError, match="lossless"):
        multires.compress(np.zeros((4, 4)), abs=1, lossless=True)
    with pytest.raises(ValueError, match="interp"):
        multires.compress(np.zeros((4, 4)), lossless=True, transform="cdf97")
    with pytest.raises(ValueError, match="transform"):
        multires.compress(np.ones((8, 8)), abs=1e-3, transform="jpeg")
    with pytest.raises(ValueError, match="mrz"):
        multires.decompress(b"not an mrz file at all")
    with pytest.raises(OSError):
        multires.MrzFile(tmp_path / "missing.mrz")
    good = multires.compress(np.ones((16, 16)), abs=1e-3)
    with pytest.raises(ValueError):
        multires.decompress(good[: len(good) // 2])


def test_interrupted_save_leaves_nothing(tmp_path):
    """Ctrl-C during save: no partial file at the target path."""
    target = tmp_path / "big.mrz"
    code = (
        "import numpy as np, multires, sys\n"
        "a = np.random.default_rng(0).standard_normal((256, 512, 512))\n"
        "print('go', flush=True)\n"
        f"multires.save({str(target)!r}, a, abs=1e-6)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"go"
    p.send_signal(signal.SIGINT)
    p.wait(timeout=120)
    # Either the save finished before the signal (a whole file) or nothing is there.
    if target.exists():
        assert multires.MrzFile(target).shape == (256, 512, 512)
    leftovers = [f for f in os.listdir(tmp_path) if f != "big.mrz"]
    assert leftovers == []


def _adversarial(rng, dtype):
    """Every kind of bit pattern a float field can hold: NaNs with payloads
    and sign, infinities, both zeros, subnormals, the extremes, noise."""
    it = np.uint32 if dtype == np.float32 else np.uint64
    info = np.finfo(dtype)
    x = field(rng, (23, 31, 17), dtype)
    flat = x.reshape(-1)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, info.tiny, -info.tiny,
                        info.max, info.min, info.eps], dtype=dtype)
    idx = rng.choice(flat.size, 400, replace=False)
    flat[idx[:special.size * 20]] = np.tile(special, 20)
    bits = flat.view(it)
    nbits = 32 if dtype == np.float32 else 64
    mant = (1 << (23 if dtype == np.float32 else 52)) - 1
    # NaN payloads (quiet and signalling) and subnormals of random mantissas.
    exp_all = it(((1 << (nbits - 1)) - 1) ^ mant)
    bits[idx[220:260]] = exp_all | rng.integers(1, mant, 40, dtype=np.uint64).astype(it)
    bits[idx[260:300]] = rng.integers(1, mant, 40, dtype=np.uint64).astype(it)
    bits[idx[300:320]] = (exp_all | it(1 << (nbits - 1))) | it(5)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lossless_keeps_every_bit(rng, dtype, tmp_path):
    x = _adversarial(rng, dtype)
    b = multires.compress(x, lossless=True)
    y = multires.decompress(b)
    assert y.dtype == dtype and y.shape == x.shape
    assert y.tobytes() == x.tobytes()
    p = tmp_path / "l.mrz"
    multires.save(p, x, lossless=True)
    with multires.MrzFile(p) as f:
        assert f.info["lossless"]
        part = f[3:20, 5:9, ::2]
    assert part.tobytes() == np.ascontiguousarray(x[3:20, 5:9, ::2]).tobytes()
    # A smooth field shrinks, more than under zlib: lossless is a codec, not a copy.
    z, y, w = np.meshgrid(*[np.linspace(0, 3, 64)] * 3, indexing="ij")
    s = (np.sin(2 * y + z) * np.cos(3 * w)).astype(dtype)
    n = len(multires.compress(s, lossless=True))
    assert n < s.nbytes / 1.5 and n < len(zlib.compress(s.tobytes(), 9)) / 1.3


@pytest.mark.parametrize("transform", ["interp", "cdf97"])
def test_nan_and_inf_kept_with_the_bound_on_finite_values(rng, transform):
    x = field(rng, (40, 33, 20), np.float32)
    x[5, :, :] = np.nan           # a masked plane
    x[:, 7, 3] = -np.inf
    x[rng.random(x.shape) < 0.02] = np.nan
    x[0, 0, 0] = np.inf
    for kw in (dict(abs=1e-3), dict(rel=1e-3)):
        b, st = multires.compress(x, transform=transform, info=True, **kw)
        y = multires.decompress(b)
        fin = np.isfinite(x)
        assert np.array_equal(np.isnan(y), np.isnan(x))
        assert np.array_equal(y[~fin & ~np.isnan(x)], x[~fin & ~np.isnan(x)])
        # rel is of the range of the finite values.
        e = 1e-3 if "abs" in kw else 1e-3 * (x[fin].max() - x[fin].min())
        assert np.abs(y[fin].astype(np.float64) - x[fin]).max() <= e
        assert st["ratio"] > 2


def test_fast_profile(rng):
    x = field(rng, (40, 33, 20), np.float32)
    x[5] = np.nan
    b, st = multires.compress(x, rel=1e-3, profile="fast", info=True)
    assert b == multires.compress(x, rel=1e-3, transform="lorenzo")
    y = multires.decompress(b)
    fin = np.isfinite(x)
    e = 1e-3 * (x[fin].max() - x[fin].min())
    assert np.abs(y[fin].astype(np.float64) - x[fin]).max() <= e and np.isnan(y[5]).all()
    assert st["ratio"] > 2 and st["max_error"] <= e
    with pytest.raises(ValueError, match="profile='fast'"):
        multires.compress(x, rel=1e-3, profile="fast", transform="haar")
    with pytest.raises(ValueError, match="'default' or 'fast'"):
        multires.compress(x, rel=1e-3, profile="quick")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16, np.int32])
def test_integers_back_as_integers(rng, dtype):
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    span = min(hi - lo, 60000)
    base = (np.sin(np.linspace(0, 6, 90))[:, None] * np.cos(np.linspace(0, 4, 70))[None] + 1) / 2
    x = np.clip(lo + np.round(base * span) + rng.integers(0, 3, base.shape), lo, hi).astype(dtype)
    x[0, :4] = [lo, hi, lo, hi]
    for e in (0, 1, 5):
        b, st = multires.compress(x, abs=e, info=True)
        y = multires.decompress(b)
        assert y.dtype == dtype and y.shape == x.shape
        assert np.abs(y.astype(np.int64) - x).max() <= e
        # The ratio is against the input's own size, not float64's.
        assert abs(st["ratio"] - x.nbytes / len(b)) < 1e-6 * st["ratio"]
    assert multires.decompress(multires.compress(x, lossless=True)).tobytes() == x.tobytes()


def test_one_and_four_axes(rng, tmp_path):
    s = np.cumsum(rng.standard_normal(5000))
    y = multires.decompress(multires.compress(s, abs=1e-2))
    assert y.shape == s.shape and np.abs(y - s).max() <= 1e-2
    v = np.cumsum(rng.standard_normal((3, 10, 20, 24)), axis=-1).astype(np.float32)
    y = multires.decompress(multires.compress(v, rel=1e-3))
    assert y.shape == v.shape and np.abs(y - v).max() <= 1e-3 * np.ptp(v) * (1 + 1e-6)
    p = tmp_path / "v.mrz"
    multires.save(p, v, abs=1e-2)
    full = multires.load(p)
    assert full.shape == v.shape
    with multires.MrzFile(p) as f:
        assert f.shape == v.shape and f.ndim == 4
        np.testing.assert_array_equal(f[1, 2:7, :, 5:9], full[1, 2:7, :, 5:9])
        np.testing.assert_array_equal(f[:, 3], full[:, 3])
    p1 = tmp_path / "s.mrz"
    multires.save(p1, s, lossless=True)
    with multires.MrzFile(p1) as f:
        assert f.shape == s.shape
        assert f[100:2000:7].tobytes() == s[100:2000:7].tobytes()


@pytest.mark.parametrize("kw", [dict(rel=1e-4), dict(lossless=True), dict(abs=2)])
def test_coarse_views(rng, tmp_path, kw):
    if "abs" in kw:
        a = (np.cumsum(rng.integers(-3, 4, (70, 90)), axis=1) + 30000).astype(np.uint16)
    else:
        a = field(rng, (70, 90, 40), np.float32)
    p = tmp_path / "c.mrz"
    multires.save(p, a, **kw)
    full = multires.load(p)
    with multires.MrzFile(p) as f:
        for level in (1, 2, 3):
            v = f.read(level=level)
            pos = f.positions(level)
            brick = f.info["brick"]
            for ax, (idx, n, b) in enumerate(zip(pos, a.shape, brick)):
                np.testing.assert_array_equal(idx, [i for i in range(n) if (i % b) % 2 ** level == 0])
            assert v.dtype == a.dtype and v.shape == tuple(len(i) for i in pos)
            # The stated reconstruction: the full decode at those points...
            np.testing.assert_array_equal(v, full[np.ix_(*pos)])
            # ...within the bound of the original decimated to them.
            err = np.abs(v.astype(np.float64) - a[np.ix_(*pos)])
            if "lossless" in kw:
                assert v.tobytes() == np.ascontiguousarray(a[np.ix_(*pos)]).tobytes()
            elif "abs" in kw:
                assert err.max() <= 2
            else:
                assert err.max() <= 1e-4 * np.ptp(a) * (1 + 1e-6)
            region = tuple(slice(3, n - 5) for n in a.shape)
            vr, pr = f.read(level=level, region=region), f.positions(level, region)
            np.testing.assert_array_equal(vr, full[np.ix_(*pr)])
        with pytest.raises(ValueError, match="level"):
            f.read(level=-1)
        with pytest.raises(ValueError, match="slices"):
            f.read(level=1, region=(3, 4))


def test_coarse_view_of_a_signal(rng, tmp_path):
    s = np.cumsum(rng.standard_normal(10000))
    p = tmp_path / "s.mrz"
    multires.save(p, s, abs=1e-3)
    with multires.MrzFile(p) as f:
        v, (i,) = f.read(level=4), f.positions(4)
    assert v.shape == i.shape and np.abs(v - s[i]).max() <= 1e-3


def test_unaligned_arrays_are_taken(rng):
    """Arrays unpickled from a buffer (as Dask's workers get them) may start
    at any byte: coded and transformed like any other."""
    buf = np.zeros(4 * 600 + 1, np.uint8)
    a = np.frombuffer(buf.data, dtype=np.float32, count=600, offset=1).reshape(20, 30)
    assert not a.flags.aligned
    b = np.ascontiguousarray(a)
    b[...] = field(rng, (20, 30), np.float32)
    buf[1:] = np.frombuffer(b.tobytes(), np.uint8)
    assert np.abs(multires.decompress(multires.compress(a, abs=1e-3, device="cpu")) - b).max() <= 1e-3
    np.testing.assert_array_equal(multires.cwt(a[0], [1, 2])[0], multires.cwt(b[0], [1, 2])[0])
