"""Cross-wavelet transform and wavelet coherence against pycwt 0.5.0b0 on
the same inputs (scripts/test installs it)."""

import numpy as np
import pytest

import multires

pycwt = pytest.importorskip("pycwt", reason="pip install pycwt==0.5.0b0 (scripts/test does)")


def pair(n=1024, seed=4):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    shared = np.sin(2 * np.pi * t / 32.0)
    return shared + 0.5 * rng.standard_normal(n), 0.8 * np.roll(shared, 4) + 0.5 * rng.standard_normal(n)


def normal(y):
    return (y - y.mean()) / y.std()


def test_the_smoothing_of_pycwts_own_planes_gives_its_coherence():
    y1, y2 = pair()
    dt, dj = 1.0, 1 / 12
    W1, sj, *_ = pycwt.cwt(normal(y1), dt, dj=dj)
    W2, *_ = pycwt.cwt(normal(y2), dt, dj=dj)
    WCT, aWCT, *_ = pycwt.wct(y1, y2, dt, dj=dj, sig=False)
    ours, phase, cross = multires._multires.wavelet_coherence(W1, W2, list(sj / dt), dj)
    np.testing.assert_allclose(ours, WCT, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(phase, aWCT, rtol=0, atol=1e-12)
    wav = pycwt.Morlet(6)
    S = wav.smooth(np.abs(W1) ** 2 / sj[:, None], dt, dj, sj)
    np.testing.assert_allclose(multires._timefreq.smooth(np.abs(W1) ** 2 / sj[:, None], sj / dt, dj).real, S,
                               rtol=1e-10, atol=1e-12)


def test_wct_and_xwt_equal_pycwt():
    y1, y2 = pair()
    dt = 1.0
    WCT0, aWCT0, coi0, freq0, _ = pycwt.wct(y1, y2, dt, sig=False)
    W12_0, *_ = pycwt.xwt(y1, y2, dt)
    scale = 1 / (freq0 * multires._timefreq._PYCWT_FLAMBDA)
    # pycwt's CWT is circular (its FFT over the power-of-two length):
    # multires' periodic boundary is the same sum, the same to rounding at
    # scales from 4 samples (below, its band-limited product and the
    # sampled masks differ by aliasing); the scale smoothing reaches 0.6
    # octave, so coherence from 8 samples.
    WCT, aWCT, coi, freq, sig = multires.wct(y1, y2, dt, boundary="periodic")
    np.testing.assert_allclose(freq, freq0, rtol=1e-14)
    np.testing.assert_allclose(coi, coi0, rtol=1e-14)
    np.testing.assert_allclose(WCT[scale >= 8], WCT0[scale >= 8], rtol=0, atol=1e-8)
    d = np.angle(np.exp(1j * (aWCT - aWCT0)))[scale >= 4]
    assert np.abs(d).max() < 1e-8
    W12, _, _ = multires.xwt(y1, y2, dt, boundary="periodic")
    assert np.abs(W12 - W12_0)[scale >= 4].max() < 1e-8 * np.abs(W12_0).max()
    # With zeros past the ends (the default), cells six scales from either
    # end agree to 2e-3 (the edges reach in through the CWT and the smoothing).
    WCT, *_ = multires.wct(y1, y2, dt)
    t = np.arange(y1.size)
    edge = np.minimum(t, y1.size - 1 - t)
    inside = (scale[:, None] >= 8) & (edge[None, :] > 6 * scale[:, None])
    assert inside.mean() > 0.2
    assert np.abs(WCT - WCT0)[inside].max() < 2e-3


def test_coherence_is_high_in_the_shared_band_and_low_elsewhere():
    y1, y2 = pair(n=4096)
    WCT, aWCT, coi, freq, _ = multires.wct(y1, y2, 1.0)
    period = 1 / freq
    band = np.abs(np.log2(period / 32.0)) < 0.15
    far = (period < 8) & (period > 2.5)
    mid = slice(512, -512)
    assert WCT[band][:, mid].mean() > 0.9
    assert WCT[far][:, mid].mean() < 0.5
    # y2 lags y1 by 4 samples of a 32-sample period: y1 leads by 2 pi 4 / 32.
    lead = np.angle(np.exp(1j * aWCT[band][:, mid]).mean())
    assert abs(lead - 2 * np.pi * 4 / 32) < 0.1
    gws = multires.global_wavelet_spectrum(multires.xwt(y1, y1, 1.0)[0])
    assert np.argmax(gws) == np.argmin(np.abs(np.log2(period / 32.0)))


def test_bad_inputs_are_named():
    y1, y2 = pair(256)
    with pytest.raises(ValueError, match="Morlet"):
        multires.wct(y1, y2, 1.0, wavelet="paul")
    with pytest.raises(ValueError, match="one length"):
        multires.wct(y1, y2[:100], 1.0)


def test_red_noise_significance_equals_pycwt():
    rng = np.random.default_rng(8)
    y = np.zeros(2000)
    for i in range(1, y.size):
        y[i] = 0.7 * y[i - 1] + rng.standard_normal()
    np.testing.assert_allclose(multires.ar1(y), pycwt.ar1(y), rtol=1e-12)
    W, sj, *_ = pycwt.cwt(normal(y), 1.0)
    g = multires.ar1(y)[0]
    f = 1.0 / (sj * multires._timefreq._PYCWT_FLAMBDA)
    # Torrence & Compo's eq. 16 at f = dt / period; pycwt 0.5.0b0 evaluates
    # cos(2 pi f / N), N the series' length, which leaves its red-noise
    # spectrum flat at var (1 + a) / (1 - a), and with sigma_test=1 returns
    # the levels in place of the spectrum.
    red = y.var() * (1 - g**2) / (1 + g**2 - 2 * g * np.cos(2 * np.pi * f))
    flat = y.var() * (1 - g**2) / (1 + g**2 - 2 * g * np.cos(2 * np.pi * f / y.size))
    # (pycwt's sigma_test=1 takes one dof per scale: its single-dof branch
    # calls np.zeros(1, J + 1), which raises.)
    for test, dof in ((0, -1), (1, np.full(len(sj), 50.0))):
        s0, t0 = pycwt.significance(y, 1.0, sj, sigma_test=test, dof=dof.copy() if test else dof)
        s1, t1 = multires.significance(y, 1.0, sj, sigma_test=test, dof=dof)
        np.testing.assert_allclose(t1, red, rtol=1e-12)
        # The chi-square factor (with eq. 23's dof) equals pycwt's.
        np.testing.assert_allclose(s1 / t1, s0 / flat, rtol=1e-10)
        if test == 0:
            np.testing.assert_allclose(t0, flat, rtol=1e-12)
    # About 5% of red noise's power lies above its 95% level.
    signif, _ = multires.significance(1.0, 1.0, sj, alpha=multires.ar1(y)[0])
    power = np.abs(W) ** 2
    frac = (power > signif[:, None]).mean()
    assert 0.02 < frac < 0.1, frac
    with pytest.raises(ValueError, match="sigma_test"):
        multires.significance(y, 1.0, sj, sigma_test=3)


def _shared_band_pair(n=256, period=16, seed=1):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y1 = np.sin(2 * np.pi * t / period) + rng.standard_normal(n)
    y2 = np.sin(2 * np.pi * t / period + 1) + rng.standard_normal(n)
    return y1, y2


def test_wct_significance_repeats_with_its_seed_and_moves_with_another():
    y1, y2 = _shared_band_pair()
    *_, a = multires.wct(y1, y2, 1.0, dj=1 / 2, sig=True, mc_count=20, seed=3)
    *_, b = multires.wct(y1, y2, 1.0, dj=1 / 2, sig=True, mc_count=20, seed=3)
    *_, c = multires.wct(y1, y2, 1.0, dj=1 / 2, sig=True, mc_count=20, seed=4)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a[1:-1], c[1:-1])


def test_wct_significance_agrees_with_pycwts_monte_carlo():
    """Both draw their own noise, so the levels agree to the Monte Carlo
    spread (about 0.01 at 80 pairs), not bit for bit; the smallest scale
    (about one sample, where the exact sampled Morlet and pycwt's Fourier one
    differ) and the largest (NaN in pycwt) are left out."""
    y1, y2 = _shared_band_pair()
    *_, ours = multires.wct(y1, y2, 1.0, dj=1 / 2, sig=True, mc_count=80, seed=3)
    np.random.seed(5)
    *_, theirs = pycwt.wct(y1, y2, 1.0, dj=1 / 2, sig=True, mc_count=80, cache=False, progress=False)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours[2:-2], theirs[2:-2], atol=0.04)
    assert np.all((ours[2:-2] > 0.5) & (ours[2:-2] < 0.9))


def test_coherence_of_a_shared_band_passes_its_significance_there_only():
    y1, y2 = _shared_band_pair(n=1024, period=16)
    WCT, _, coi, freq, level = multires.wct(y1, y2, 1.0, dj=1 / 4, sig=True, mc_count=40, seed=0)
    period = 1 / freq
    inside = period[:, None] <= coi[None, :]
    passes = (WCT > level[:, None]) & inside
    band = np.abs(np.log2(period / 16)) < 0.3
    off = (np.abs(np.log2(period / 16)) > 1.5) & inside.any(axis=1)
    assert passes[band].mean() > 0.8
    assert passes[off].mean() < 0.15


def test_wct_significance_names_a_bad_mc_count():
    with pytest.raises(ValueError, match="mc_count"):
        multires.wct_significance(0.5, 0.5, 1.0, 1 / 2, -1, 8, mc_count=0)
    with pytest.raises(ValueError, match="not below 1"):
        multires.wct_significance(1.0, 0.5, 1.0, 1 / 2, -1, 8, mc_count=2)


def test_scale_averaged_significance_equals_pycwt():
    """pycwt's sigma_test=2 over its flat spectrum (see above): the band's
    spectrum equals Savg * sum(P_k / s_k) of that spectrum, and the level
    over it (eq. 26 with eq. 28's dof) equals pycwt's ratio."""
    rng = np.random.default_rng(9)
    y = np.zeros(1024)
    for i in range(1, y.size):
        y[i] = 0.5 * y[i - 1] + rng.standard_normal()
    _, sj, *_ = pycwt.cwt(normal(y), 1.0, dj=1 / 8)
    g = multires.ar1(y)[0]
    band = [4.0, 16.0]
    s0, t0 = pycwt.significance(y, 1.0, sj, sigma_test=2, alpha=g, dof=band)
    s1, t1 = multires.significance(y, 1.0, sj, sigma_test=2, alpha=g, dof=band)
    sel = (sj >= 4) & (sj <= 16)
    f = 1.0 / (sj * multires._timefreq._PYCWT_FLAMBDA)
    red = y.var() * (1 - g**2) / (1 + g**2 - 2 * g * np.cos(2 * np.pi * f))
    savg = 1 / np.sum(1 / sj[sel])
    np.testing.assert_allclose(t1, savg * np.sum(red[sel] / sj[sel]), rtol=1e-12)
    np.testing.assert_allclose(s1 / t1, s0 / t0, rtol=1e-10)
    with pytest.raises(ValueError, match="no scale lies"):
        multires.significance(y, 1.0, sj, sigma_test=2, alpha=g, dof=[1000.0, 2000.0])
    with pytest.raises(ValueError, match=r"dof=\[s1, s2\]"):
        multires.significance(y, 1.0, sj, sigma_test=2, alpha=g, dof=5)
