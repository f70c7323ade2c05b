"""multires.pywt.swt / iswt / swt_max_level against PyWavelets itself."""

import numpy as np
import pytest
import pywt as ref

import multires.pywt as mp
from coeff_lists import flat

WAVELETS = ["haar", "db2", "db4", "sym5", "coif2", "bior2.2", "rbio3.1", "dmey"]


@pytest.mark.parametrize("wavelet", WAVELETS)
@pytest.mark.parametrize("trim_approx", [False, True])
def test_swt_equals_pywt(rng, wavelet, trim_approx):
    x = rng.standard_normal(256)
    for level, start in [(None, 0), (3, 0), (2, 2)]:
        ours = mp.swt(x, wavelet, level=level, start_level=start, trim_approx=trim_approx)
        theirs = ref.swt(x, wavelet, level=level, start_level=start, trim_approx=trim_approx)
        assert len(ours) == len(theirs)
        flat = lambda c: [v for p in c for v in (p if isinstance(p, tuple) else (p,))]
        for a, b in zip(flat(ours), flat(theirs)):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("wavelet", ["db3", "sym4", "bior3.3"])
def test_iswt_equals_pywt_and_inverts(rng, wavelet):
    x = rng.standard_normal(128)
    for trim in (False, True):
        c = ref.swt(x, wavelet, level=4, trim_approx=trim)
        ours, theirs = mp.iswt(c, wavelet), ref.iswt(c, wavelet)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mp.iswt(mp.swt(x, wavelet, 3), wavelet), x, rtol=0, atol=1e-11)


def test_norm_axis_float32_and_complex(rng):
    x = rng.standard_normal((3, 64, 5))
    for norm in (False, True):
        ours = mp.swt(x, "db2", level=2, axis=1, norm=norm)
        theirs = ref.swt(x, "db2", level=2, axis=1, norm=norm)
        for (a, b), (c, d) in zip(ours, theirs):
            np.testing.assert_allclose(a, c, atol=1e-12)
            np.testing.assert_allclose(b, d, atol=1e-12)
        back = mp.iswt(ours, "db2", norm=norm, axis=1)
        np.testing.assert_allclose(back, ref.iswt(theirs, "db2", norm=norm, axis=1), atol=1e-12)
    # norm=True keeps an orthogonal wavelet's energy (a tight frame).
    y = rng.standard_normal(512)
    c = mp.swt(y, "sym4", level=4, norm=True, trim_approx=True)
    assert abs(sum(float(np.sum(v**2)) for v in c) - float(np.sum(y**2))) < 1e-9 * float(np.sum(y**2))
    x32 = rng.standard_normal(64).astype(np.float32)
    (a, d), = mp.swt(x32, "db2", level=1)
    (c, e), = ref.swt(x32, "db2", level=1)
    assert a.dtype == np.float32 and c.dtype == np.float32
    np.testing.assert_allclose(a, c, atol=1e-6)
    z = rng.standard_normal(32) + 1j * rng.standard_normal(32)
    for (a, b), (c, d) in zip(mp.swt(z, "db1", 2), ref.swt(z, "db1", 2)):
        np.testing.assert_allclose(a, c, atol=1e-12)
        np.testing.assert_allclose(b, d, atol=1e-12)


def test_max_level_and_length_rules():
    for n in (2, 6, 96, 1024):
        assert mp.swt_max_level(n) == ref.swt_max_level(n)
    with pytest.warns(UserWarning, match="No levels"):
        assert mp.swt_max_level(7) == 0
    assert mp.swt_max_level((64, 96)) == 5  # the smallest over the axes
    with pytest.raises(ValueError, match="divisible"):
        mp.swt(np.zeros(100), "db1", level=3)
    with pytest.raises(ValueError, match="too high"):
        mp.swt(np.zeros(64), "db1", level=4, start_level=3)
    with pytest.raises(ValueError, match="start_level"):
        mp.swt(np.zeros(64), "db1", level=1, start_level=6)




def _close(ours, theirs, atol=1e-12):
    a, b = flat(ours), flat(theirs)
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert u.shape == v.shape and u.dtype == v.dtype
        np.testing.assert_allclose(u, v, rtol=0, atol=atol * max(1.0, np.abs(v).max()))


@pytest.mark.parametrize("wavelet", ["haar", "db3", "sym4", "bior2.2"])
@pytest.mark.parametrize("trim_approx", [False, True])
def test_swt2_iswt2_equal_pywt(rng, wavelet, trim_approx):
    x = rng.standard_normal((32, 48))
    for level, start, norm in [(2, 0, False), (1, 2, False), (3, 0, True)]:
        ours = mp.swt2(x, wavelet, level, start, trim_approx=trim_approx, norm=norm)
        theirs = ref.swt2(x, wavelet, level, start, trim_approx=trim_approx, norm=norm)
        _close(ours, theirs)
        if start == 0:
            np.testing.assert_allclose(
                mp.iswt2(ours, wavelet, norm=norm), ref.iswt2(theirs, wavelet, norm=norm), rtol=0, atol=1e-11
            )


def test_swtn_iswtn_equal_pywt_on_axes_and_wavelet_per_axis(rng):
    x = rng.standard_normal((8, 16, 12))
    for axes, wavelet in [(None, "db2"), ((0, 2), ("haar", "sym3")), ((1,), "coif1"), ((2, 0), "db1")]:
        for trim in (False, True):
            ours = mp.swtn(x, wavelet, 2, axes=axes, trim_approx=trim)
            theirs = ref.swtn(x, wavelet, 2, axes=axes, trim_approx=trim)
            _close(ours, theirs)
            back = mp.iswtn(ours, wavelet, axes=axes)
            np.testing.assert_allclose(back, ref.iswtn(theirs, wavelet, axes=axes), rtol=0, atol=1e-11)
            # pywt's sym3 taps are given to ~1e-11, so its round trip is that close too.
            np.testing.assert_allclose(back, x, rtol=0, atol=1e-10)
    # swt2 on other axes of a 3-D array, and float32 kept.
    y = rng.standard_normal((4, 16, 3, 8)).astype(np.float32)
    _close(mp.swt2(y, "db2", 2, axes=(1, 3)), ref.swt2(y, "db2", 2, axes=(1, 3)), atol=1e-6)
    c = mp.swt2(y, "db2", 2, axes=(1, 3))
    np.testing.assert_allclose(mp.iswt2(c, "db2", axes=(1, 3)), y, atol=1e-5)


def test_swtn_complex_and_errors(rng):
    z = rng.standard_normal((16, 8)) + 1j * rng.standard_normal((16, 8))
    _close(mp.swtn(z, "db1", 2), ref.swtn(z, "db1", 2))
    np.testing.assert_allclose(mp.iswtn(mp.swtn(z, "db1", 2), "db1"), z, atol=1e-12)
    with pytest.raises(ValueError, match="too high"):
        mp.swtn(np.zeros((16, 12)), "db1", 3)
    with pytest.raises(ValueError, match="unique"):
        mp.swt2(np.zeros((8, 8)), "db1", 1, axes=(0, 0))
    with pytest.raises(ValueError, match="number of axes"):
        mp.iswtn(mp.swtn(np.zeros((8, 8)), "db1", 1), "db1", axes=(0,))
