"""multires.denoise / estimate_sigma / cycle_spin against scikit-image
itself, and SureShrink's threshold against Stein's risk by definition."""

import numpy as np
import pytest

skr = pytest.importorskip("skimage.restoration")

import multires


def _noisy(rng, shape, noise=0.1):
    grids = np.meshgrid(*[np.linspace(0, 1, n) for n in shape], indexing="ij")
    clean = np.prod([np.sin(3 * g + k) for k, g in enumerate(grids)], axis=0)
    return clean + noise * rng.standard_normal(shape)


CASES = [
    {},
    {"wavelet": "db4"},
    {"method": "VisuShrink"},
    {"method": "VisuShrink", "mode": "hard", "wavelet": "sym4"},
    {"mode": "hard", "wavelet_levels": 2},
    {"sigma": 0.08, "wavelet": "coif2"},
]


@pytest.mark.parametrize("shape", [(1000,), (96, 80), (24, 20, 18)])
@pytest.mark.parametrize("kw", CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "defaults")
def test_denoise_equals_skimage_1d_2d_3d(rng, shape, kw):
    x = _noisy(rng, shape)
    ours = multires.denoise(x, **kw)
    theirs = skr.denoise_wavelet(x, **kw)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
    assert np.abs(ours - theirs).max() < 1e-12  # in fact to float64 rounding


def test_denoise_integer_float32_channels_and_ycbcr(rng):
    img = np.clip(_noisy(rng, (64, 48), 0.05) * 100 + 128, 0, 255).astype(np.uint8)
    for kw in ({}, {"sigma": 5.0}, {"sigma": 5.0, "rescale_sigma": False}):
        np.testing.assert_allclose(multires.denoise(img, **kw), skr.denoise_wavelet(img, **kw), atol=1e-6)
    signed = (rng.standard_normal((40, 40)) * 1000).astype(np.int16)
    np.testing.assert_allclose(multires.denoise(signed), skr.denoise_wavelet(signed), atol=1e-6)
    f32 = _noisy(rng, (64, 64)).astype(np.float32)
    a, b = multires.denoise(f32, wavelet="db2"), skr.denoise_wavelet(f32, wavelet="db2")
    assert a.dtype == b.dtype == np.float32
    np.testing.assert_allclose(a, b, atol=1e-6)
    rgb = np.clip(np.stack([_noisy(rng, (48, 40), 0.05) * 0.4 + 0.5 for _ in range(3)], axis=-1), 0, 1)
    for kw in ({"channel_axis": -1}, {"channel_axis": -1, "convert2ycbcr": True}, {"channel_axis": -1, "sigma": [0.05, 0.04, 0.03]}):
        np.testing.assert_allclose(multires.denoise(rgb, **kw), skr.denoise_wavelet(rgb, **kw), atol=1e-6)
    first = np.moveaxis(rgb, -1, 0)
    np.testing.assert_allclose(multires.denoise(first, channel_axis=0), skr.denoise_wavelet(first, channel_axis=0), atol=1e-6)


def test_estimate_sigma_and_cycle_spin_equal_skimage(rng):
    x = _noisy(rng, (128, 96), 0.2)
    assert abs(multires.estimate_sigma(x) - skr.estimate_sigma(x)) < 1e-12
    rgb = np.stack([x, x * 0.5, x * 0.2], axis=-1)
    np.testing.assert_allclose(multires.estimate_sigma(rgb, channel_axis=-1), skr.estimate_sigma(rgb, channel_axis=-1), atol=1e-12)
    assert abs(multires.estimate_sigma(rgb, True, channel_axis=-1) - skr.estimate_sigma(rgb, True, channel_axis=-1)) < 1e-12
    for max_shifts, steps in ((3, 1), ((2, 4), (1, 2))):
        ours = multires.cycle_spin(x, multires.denoise, max_shifts, steps, workers=2, func_kw={"wavelet": "db2"})
        theirs = skr.cycle_spin(x, skr.denoise_wavelet, max_shifts, steps, workers=1, func_kw={"wavelet": "db2"})
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    ours = multires.cycle_spin(rgb, multires.denoise, 2, channel_axis=-1, workers=1, func_kw={"channel_axis": -1})
    theirs = skr.cycle_spin(rgb, skr.denoise_wavelet, 2, channel_axis=-1, workers=1, func_kw={"channel_axis": -1})
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


def _sure_by_definition(d, sigma):
    x = np.abs(d.ravel()) / sigma
    n = x.size
    universal = np.sqrt(2 * np.log(n))
    if (np.sum(x**2) - n) / n < np.log2(n) ** 1.5 / np.sqrt(n):
        return sigma * universal
    risk = [n - 2 * np.sum(x <= t) + np.sum(np.minimum(x, t) ** 2) for t in x]
    return sigma * min(x[int(np.argmin(risk))], universal)


def test_sureshrink_threshold_and_denoising(rng):
    for scale in (0.5, 3.0, 10.0):
        d = rng.standard_normal(500) * np.where(rng.random(500) < 0.2, scale, 1.0)
        assert abs(multires._denoise.sure_threshold(d, 1.0) - _sure_by_definition(d, 1.0)) < 1e-12
    sparse = rng.standard_normal(500)  # pure noise: the universal threshold
    assert abs(multires._denoise.sure_threshold(sparse, 1.0) - np.sqrt(2 * np.log(500))) < 1e-12
    clean = _noisy(rng, (128, 128), 0.0)
    x = clean + 0.2 * rng.standard_normal(clean.shape)
    y = multires.denoise(x, method="SureShrink", wavelet="db4", sigma=0.2)
    bayes = multires.denoise(x, wavelet="db4", sigma=0.2)
    mse = lambda v: float(np.mean((v - clean) ** 2))
    # SURE removes about three quarters of the noise here, as BayesShrink does.
    assert mse(y) < 0.3 * mse(x) and mse(y) < 1.5 * mse(bayes)


def test_denoise_errors_name_the_input():
    with pytest.raises(ValueError, match="method"):
        multires.denoise(np.zeros(64), method="Wiener")
    with pytest.raises(ValueError, match="mode"):
        multires.denoise(np.zeros(64), mode="garrote")
    with pytest.raises(ValueError, match="NaN"):
        multires.denoise(np.array([1.0, np.nan, 2.0, 3.0]))
    with pytest.raises(ValueError, match="channel_axis"):
        multires.denoise(np.zeros((8, 8, 3)), convert2ycbcr=True)
    with pytest.raises(ValueError, match="empty"):
        multires.denoise(np.zeros(0))
