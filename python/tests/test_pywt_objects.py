"""Wavelet objects, lists, coefficient packing and thresholds against PyWavelets."""

import numpy as np
import pytest
import pywt as ref

import multires.pywt as mp


def test_wavelist_and_families():
    assert mp.wavelist() == ref.wavelist()
    assert mp.wavelist(kind="discrete") == ref.wavelist(kind="discrete")
    assert mp.wavelist(kind="continuous") == ref.wavelist(kind="continuous")
    for fam in ref.families():
        assert mp.wavelist(fam) == ref.wavelist(fam), fam
    assert mp.families() == ref.families()
    assert mp.families(short=False) == ref.families(short=False)
    assert {m: mp.Modes.from_object(m) for m in ref.Modes.modes} == {m: ref.Modes.from_object(m) for m in ref.Modes.modes}
    assert mp.Modes.modes == ref.Modes.modes


@pytest.mark.parametrize("name", ref.wavelist(kind="discrete"))
def test_wavelet_properties(name):
    a, b = mp.Wavelet(name), ref.Wavelet(name)
    for attr in ("name", "family_name", "short_family_name", "orthogonal", "biorthogonal", "symmetry",
                 "vanishing_moments_psi", "vanishing_moments_phi", "dec_len", "rec_len", "number"):
        assert getattr(a, attr) == getattr(b, attr), attr
    for f, g in zip(a.filter_bank, b.filter_bank):
        np.testing.assert_allclose(f, g, rtol=0, atol=1e-15)
    for f, g in zip(a.inverse_filter_bank, b.inverse_filter_bank):
        np.testing.assert_allclose(f, g, rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", ["haar", "db2", "db7", "sym5", "coif3", "bior2.2", "bior3.5", "rbio1.3", "rbio4.4", "dmey"])
def test_wavefun(name):
    for level in (3, 6):
        a = mp.Wavelet(name).wavefun(level=level)
        b = ref.Wavelet(name).wavefun(level=level)
        assert len(a) == len(b)
        for p, q in zip(a, b):
            np.testing.assert_allclose(p, q, rtol=0, atol=1e-10)


def test_custom_filter_bank(rng):
    bank = ref.Wavelet("db3").filter_bank
    a = mp.Wavelet("mine", filter_bank=bank)
    b = ref.Wavelet("mine", filter_bank=bank)
    for attr in ("name", "family_name", "orthogonal", "biorthogonal", "symmetry", "dec_len"):
        assert getattr(a, attr) == getattr(b, attr), attr
    x = rng.standard_normal(45)
    for p, q in zip(mp.wavedec(x, a, level=3), ref.wavedec(x, b, level=3)):
        np.testing.assert_allclose(p, q, atol=1e-12)


@pytest.mark.parametrize("name", ["morl", "mexh", "gaus1", "gaus4", "cgau2", "cmor1.5-1.0", "shan1.5-1.0", "fbsp2-1.0-0.5"])
def test_continuous_wavelets(name):
    a, b = mp.ContinuousWavelet(name), ref.ContinuousWavelet(name)
    for attr in ("family_name", "short_family_name", "complex_cwt", "lower_bound", "upper_bound", "symmetry",
                 "center_frequency", "bandwidth_frequency", "fbsp_order"):
        assert getattr(a, attr) == getattr(b, attr), attr
    pa, xa = a.wavefun(level=10)
    pb, xb = b.wavefun(level=10)
    np.testing.assert_allclose(xa, xb, atol=1e-14)
    assert pa.dtype.kind == pb.dtype.kind
    np.testing.assert_allclose(pa, pb, rtol=0, atol=1e-10 * max(1, np.abs(pb).max()))
    assert np.isclose(mp.central_frequency(name), ref.central_frequency(name))
    assert np.isclose(mp.scale2frequency(name, 4.0), ref.scale2frequency(name, 4.0))
    assert np.isclose(mp.frequency2scale(name, 0.1), ref.frequency2scale(name, 0.1))


def test_central_frequency_of_discrete_wavelets():
    for name in ("db2", "sym4", "bior2.2"):
        assert np.isclose(mp.central_frequency(name), ref.central_frequency(name))
        ia = mp.integrate_wavelet(name, precision=6)
        ib = ref.integrate_wavelet(name, precision=6)
        for p, q in zip(ia, ib):
            np.testing.assert_allclose(p, q, atol=1e-10)


@pytest.mark.parametrize("fmt", ["wavedec", "wavedec2", "wavedecn"])
def test_coeffs_to_array_and_ravel(rng, fmt):
    if fmt == "wavedec":
        x = rng.standard_normal(77)
        c_m, c_r = mp.wavedec(x, "db2", level=3), ref.wavedec(x, "db2", level=3)
    elif fmt == "wavedec2":
        x = rng.standard_normal((33, 20))
        c_m, c_r = mp.wavedec2(x, "db2", level=2), ref.wavedec2(x, "db2", level=2)
    else:
        x = rng.standard_normal((9, 16, 11))
        c_m, c_r = mp.wavedecn(x, "haar", level=2), ref.wavedecn(x, "haar", level=2)
    for padding in (0, -1.5):
        a, s = mp.coeffs_to_array(c_m, padding=padding)
        b, t = ref.coeffs_to_array(c_r, padding=padding)
        np.testing.assert_allclose(a, b, atol=1e-12)
        assert s == t
        back = mp.array_to_coeffs(a, s, output_format=fmt)
        assert len(back) == len(c_r)
    a, s, sh = mp.ravel_coeffs(c_m)
    b, t, th = ref.ravel_coeffs(c_r)
    np.testing.assert_allclose(a, b, atol=1e-12)
    assert s == t and sh == th
    back = mp.unravel_coeffs(a, s, sh, output_format=fmt)
    ref_back = ref.unravel_coeffs(b, t, th, output_format=fmt)
    np.testing.assert_allclose(back[0], ref_back[0])
    try:
        ref.coeffs_to_array(c_r, padding=None)
        tight = True
    except ValueError:
        tight = False
    if tight:
        np.testing.assert_allclose(mp.coeffs_to_array(c_m, padding=None)[0], ref.coeffs_to_array(c_r, padding=None)[0])
    else:
        with pytest.raises(ValueError, match="tightly"):
            mp.coeffs_to_array(c_m, padding=None)


@pytest.mark.parametrize("mode", ["soft", "hard", "garrote", "greater", "less"])
def test_threshold(rng, mode):
    x = rng.standard_normal(200) * 3
    for sub in (0, 0.5):
        np.testing.assert_allclose(mp.threshold(x, 1.2, mode, sub), ref.threshold(x, 1.2, mode, sub), atol=1e-15)
    if mode in ("soft", "hard", "garrote"):
        z = x[:100] + 1j * x[100:]
        np.testing.assert_allclose(mp.threshold(z, 1.2, mode), ref.threshold(z, 1.2, mode), atol=1e-15)
    np.testing.assert_allclose(mp.threshold_firm(x, 0.5, 2.0), ref.threshold_firm(x, 0.5, 2.0), atol=1e-15)


def test_qmf_and_orthogonal_filter_bank():
    f = np.asarray(ref.Wavelet("db3").rec_lo)
    np.testing.assert_allclose(mp.qmf(f), ref.qmf(f))
    for p, q in zip(mp.orthogonal_filter_bank(f), ref.orthogonal_filter_bank(f)):
        np.testing.assert_allclose(p, q, atol=1e-15)


def test_every_public_pywt_name_exists():
    import inspect

    def public(n):
        v = getattr(ref, n)
        # functions and classes; not submodules, __future__ flags or deprecated aliases
        return not n.startswith("_") and (inspect.isclass(v) or callable(v)) and not inspect.ismodule(v) and n not in (
            "test", "intwave", "centrfrq", "scal2frq", "orthfilt", "MODES")

    missing = [n for n in dir(ref) if public(n) and not hasattr(mp, n)]
    assert missing == []
