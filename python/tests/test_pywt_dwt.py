"""multires.pywt against PyWavelets itself: same shapes, dtypes and values."""

import numpy as np
import pytest
import pywt as ref

import multires.pywt as mp

MODES = ref.Modes.modes
WAVELETS = ["haar", "db2", "db5", "sym4", "coif2", "bior3.5", "rbio2.4", "dmey"]


def close(a, b, dtype):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    scale = max(1.0, float(np.max(np.abs(b)))) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wavelet", WAVELETS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dwt_idwt_1d(rng, mode, wavelet, dtype):
    for n in (1, 2, 7, 33, 101):
        if n < 2 and mode in ("reflect", "antireflect"):
            continue
        x = rng.standard_normal(n).astype(dtype)
        ca, cd = mp.dwt(x, wavelet, mode)
        ra, rd = ref.dwt(x, wavelet, mode)
        close(ca, ra, dtype)
        close(cd, rd, dtype)
        close(mp.idwt(ca, cd, wavelet, mode), ref.idwt(ra, rd, wavelet, mode), dtype)
        close(mp.idwt(ca, None, wavelet, mode), ref.idwt(ra, None, wavelet, mode), dtype)
        close(mp.idwt(None, cd, wavelet, mode), ref.idwt(None, rd, wavelet, mode), dtype)


def test_every_wavelet_one_level(rng):
    x = rng.standard_normal(77)
    for name in ref.wavelist(kind="discrete"):
        for mode in ("symmetric", "periodization"):
            for a, b in zip(mp.dwt(x, name, mode), ref.dwt(x, name, mode)):
                close(a, b, np.float64)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_wavedec_waverec(rng, mode, dtype):
    for wavelet in ("db4", "bior2.2", "sym3"):
        for n, level in ((257, None), (1000, 3), (63, 2)):
            x = rng.standard_normal(n).astype(dtype)
            c = mp.wavedec(x, wavelet, mode, level)
            r = ref.wavedec(x, wavelet, mode, level)
            assert len(c) == len(r)
            for a, b in zip(c, r):
                close(a, b, dtype)
            close(mp.waverec(c, wavelet, mode), ref.waverec(r, wavelet, mode), dtype)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_wavedec_axis_3d(rng, axis):
    x = rng.standard_normal((9, 14, 11))
    c = mp.wavedec(x, "db3", "smooth", 2, axis=axis)
    r = ref.wavedec(x, "db3", "smooth", 2, axis=axis)
    for a, b in zip(c, r):
        close(a, b, np.float64)
    close(mp.waverec(c, "db3", "smooth", axis=axis), ref.waverec(r, "db3", "smooth", axis=axis), np.float64)
    ca, cd = mp.dwt(x, "sym2", "reflect", axis=axis)
    ra, rd = ref.dwt(x, "sym2", "reflect", axis=axis)
    close(ca, ra, np.float64)
    close(mp.idwt(ca, cd, "sym2", "reflect", axis=axis), ref.idwt(ra, rd, "sym2", "reflect", axis=axis), np.float64)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_2d(rng, mode, dtype):
    x = rng.standard_normal((31, 40)).astype(dtype)
    a, (h, v, d) = mp.dwt2(x, "db2", mode)
    ra, (rh, rv, rd) = ref.dwt2(x, "db2", mode)
    for p, q in ((a, ra), (h, rh), (v, rv), (d, rd)):
        close(p, q, dtype)
    close(mp.idwt2((a, (h, v, d)), "db2", mode), ref.idwt2((ra, (rh, rv, rd)), "db2", mode), dtype)
    close(mp.idwt2((a, (None, v, None)), "db2", mode), ref.idwt2((ra, (None, rv, None)), "db2", mode), dtype)
    c = mp.wavedec2(x, "bior1.3", mode, level=2)
    r = ref.wavedec2(x, "bior1.3", mode, level=2)
    close(c[0], r[0], dtype)
    for lc, lr in zip(c[1:], r[1:]):
        for p, q in zip(lc, lr):
            close(p, q, dtype)
    close(mp.waverec2(c, "bior1.3", mode), ref.waverec2(r, "bior1.3", mode), dtype)


def test_2d_axes_and_3d_input(rng):
    x = rng.standard_normal((5, 12, 9))
    for axes in ((0, 2), (2, 1), (-1, -3)):
        c = mp.wavedec2(x, "haar", "periodic", level=1, axes=axes)
        r = ref.wavedec2(x, "haar", "periodic", level=1, axes=axes)
        close(c[0], r[0], np.float64)
        close(mp.waverec2(c, "haar", "periodic", axes=axes), ref.waverec2(r, "haar", "periodic", axes=axes), np.float64)


@pytest.mark.parametrize("mode", ["symmetric", "periodization", "zero", "antireflect"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nd(rng, mode, dtype):
    x = rng.standard_normal((7, 10, 13)).astype(dtype)
    c = mp.dwtn(x, "db2", mode)
    r = ref.dwtn(x, "db2", mode)
    assert sorted(c) == sorted(r)
    for k in r:
        close(c[k], r[k], dtype)
    close(mp.idwtn(c, "db2", mode), ref.idwtn(r, "db2", mode), dtype)
    c = mp.wavedecn(x, "sym3", mode, level=2, axes=(0, 2))
    r = ref.wavedecn(x, "sym3", mode, level=2, axes=(0, 2))
    close(c[0], r[0], dtype)
    for dc, dr in zip(c[1:], r[1:]):
        assert sorted(dc) == sorted(dr)
        for k in dr:
            close(dc[k], dr[k], dtype)
    close(mp.waverecn(c, "sym3", mode, axes=(0, 2)), ref.waverecn(r, "sym3", mode, axes=(0, 2)), dtype)


def test_nd_per_axis_wavelets_and_modes(rng):
    x = rng.standard_normal((12, 17))
    w, m = ("db2", "haar"), ("symmetric", "periodization")
    c = mp.wavedecn(x, w, m, level=2)
    r = ref.wavedecn(x, w, m, level=2)
    for dc, dr in zip(c[1:], r[1:]):
        for k in dr:
            close(dc[k], dr[k], np.float64)
    close(mp.waverecn(c, w, m), ref.waverecn(r, w, m), np.float64)
    d = mp.dwtn(x, w, m)
    d["ad"] = None
    rr = ref.dwtn(x, w, m)
    rr["ad"] = None
    close(mp.idwtn(d, w, m), ref.idwtn(rr, w, m), np.float64)


def test_complex_and_integer_inputs(rng):
    z = rng.standard_normal(50) + 1j * rng.standard_normal(50)
    for a, b in zip(mp.wavedec(z, "db3", level=2), ref.wavedec(z, "db3", level=2)):
        close(a, b, np.complex128)
    i = np.arange(20)
    for a, b in zip(mp.dwt(i, "db1"), ref.dwt(i, "db1")):
        close(a, b, np.float64)
    h = np.arange(10, dtype=np.float16)
    assert mp.dwt(h, "db1")[0].dtype == ref.dwt(h, "db1")[0].dtype == np.float32
    assert mp.dwt([1, 2, 3, 4], "db1")[0].dtype == np.float64


def test_lengths_and_levels():
    for n in (1, 5, 64, 1000, 12345):
        for w in ("haar", "db4", "coif5", "dmey"):
            assert mp.dwt_max_level(n, w) == ref.dwt_max_level(n, w)
            assert mp.dwt_max_level(n, ref.Wavelet(w).dec_len) == ref.dwt_max_level(n, ref.Wavelet(w).dec_len)
            for mode in MODES:
                assert mp.dwt_coeff_len(n, ref.Wavelet(w).dec_len, mode) == ref.dwt_coeff_len(n, ref.Wavelet(w).dec_len, mode)
    assert mp.dwtn_max_level((64, 1000, 17), "db2") == ref.dwtn_max_level((64, 1000, 17), "db2")
    s = mp.wavedecn_shapes((33, 64), "db2", "symmetric", 3)
    assert s == ref.wavedecn_shapes((33, 64), "db2", "symmetric", 3)
    assert mp.wavedecn_size(s) == ref.wavedecn_size(s)


def test_level_too_high_warns_like_pywt(rng):
    x = rng.standard_normal(16)
    with pytest.warns(UserWarning):
        c = mp.wavedec(x, "db4", level=4)
    with pytest.warns(UserWarning):
        r = ref.wavedec(x, "db4", level=4)
    for a, b in zip(c, r):
        close(a, b, np.float64)


def test_downcoef_upcoef_pad(rng):
    x = rng.standard_normal(37)
    for part in "ad":
        for level in (1, 2, 3):
            close(mp.downcoef(part, x, "db2", "smooth", level), ref.downcoef(part, x, "db2", "smooth", level), np.float64)
            c = ref.downcoef(part, x, "db2", "smooth", level)
            close(mp.upcoef(part, c, "db2", level), ref.upcoef(part, c, "db2", level), np.float64)
            close(mp.upcoef(part, c, "db2", level, take=20), ref.upcoef(part, c, "db2", level, take=20), np.float64)
    y = rng.standard_normal((4, 6))
    for mode in MODES:
        np.testing.assert_allclose(mp.pad(y, ((2, 3), (1, 4)), mode), ref.pad(y, ((2, 3), (1, 4)), mode), atol=1e-12)


def test_fswavedecn_fswaverecn_equal_pywt(rng):
    x = rng.standard_normal((20, 33, 6))
    for kw in ({}, {"levels": 2}, {"levels": (1, 3), "axes": (0, 1), "wavelet": ("db1", "sym3"), "mode": ("zero", "periodization")}):
        kw = {"wavelet": "db2", **kw}
        ours, theirs = mp.fswavedecn(x, **kw), ref.fswavedecn(x, **kw)
        np.testing.assert_allclose(ours.coeffs, theirs.coeffs, rtol=0, atol=1e-12)
        assert ours.levels == theirs.levels and ours.axes == tuple(theirs.axes)
        assert ours.modes == theirs.modes and ours.wavelet_names == theirs.wavelet_names
        assert ours.detail_keys() == theirs.detail_keys()
        for key in ours.detail_keys()[:5]:
            np.testing.assert_allclose(ours[key], theirs[key], rtol=0, atol=1e-12)
        np.testing.assert_allclose(ours.approx, theirs.approx, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mp.fswaverecn(ours), ref.fswaverecn(theirs), rtol=0, atol=1e-12)
        # Zeroing one block and reconstructing agrees too.
        key = ours.detail_keys()[-1]
        ours[key] = np.zeros_like(ours[key])
        theirs[key] = np.zeros_like(theirs[key])
        np.testing.assert_allclose(mp.fswaverecn(ours), ref.fswaverecn(theirs), rtol=0, atol=1e-12)
    r = mp.fswavedecn(x, "db1")
    with pytest.raises(ValueError, match="exceed"):
        r[(9, 0, 0)]
    with pytest.raises(ValueError, match="shape"):
        r[(0, 0, 0)] = np.zeros(3)
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else ValueError, match="unique"):
        mp.fswavedecn(x, "db1", axes=(0, 0))
