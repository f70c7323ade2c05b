"""The codec from Python: every value within the bound, region reads equal
to crops of the full decode, files written whole."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import multires


def field(rng, shape, dtype=np.float64):
    z, y, x = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij") if len(shape) == 3 else (None, *np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij"))
    base = np.sin(2 * y) * np.cos(3 * x) if z is None else np.sin(2 * y + z) * np.cos(3 * x)
    return (base + 0.01 * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", ["interp", "cdf97", "cdf53", "haar"])
def test_abs_bound_holds_everywhere(rng, dtype, transform):
    a = field(rng, (37, 50, 29), dtype)
    b, info = multires.compress(a, abs=1e-3, transform=transform, info=True)
    assert isinstance(b, bytes) and len(b) < a.nbytes
    back = multires.decompress(b)
    assert back.dtype == a.dtype and back.shape == a.shape
    assert np.max(np.abs(back.astype(np.float64) - a)) <= 1e-3
    assert info["max_error"] <= 1e-3 and info["ratio"] > 1


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
    with pytest.raises(ValueError, match="2-D or 3-D"):
        multires.compress(np.zeros(16), abs=1e-3)
    a = np.ones((8, 8))
    a[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN|not finite|nan"):
        multires.compress(a, abs=1e-3)
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
