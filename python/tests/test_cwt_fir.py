"""multires.cwt, CwtPlan and fir against independent numpy evaluations of
their definitions, batched against looped, and the zero-copy contract."""

import numpy as np
import pytest
import pywt as ref

import multires
import multires.pywt as mp


def morlet(t):
    return np.exp(-(t**2) / 2) * np.cos(5 * t)


def cmor(t, b=1.5, c=1.0):
    return (np.pi * b) ** -0.5 * np.exp(-(t**2) / b) * np.exp(2j * np.pi * c * t)


def definition(x, scales, psi, half):
    """W[s, n] = s^-1/2 sum_k x[n + k] conj(psi(k / s)), |k| <= ceil(half s), zeros beyond x."""
    n = len(x)
    out = np.zeros((len(scales), n), dtype=np.complex128)
    for i, s in enumerate(scales):
        K = int(np.ceil(half * s))
        k = np.arange(-K, K + 1)
        m = s**-0.5 * psi(k / s)
        xp = np.concatenate([np.zeros(K), x, np.zeros(K)])
        for j in range(n):
            out[i, j] = np.sum(xp[j : j + 2 * K + 1] * np.conj(m))
    return out


def half_support(name):
    return multires._multires.continuous_info(name)["half_support"]


@pytest.mark.parametrize("wavelet,psi", [("morl", morlet), ("cmor1.5-1.0", cmor)])
def test_cwt_is_the_exact_sum(rng, wavelet, psi):
    x = rng.standard_normal(301)
    scales = np.array([1.0, 1.7, 4.0, 12.5, 30.0])
    W, s = multires.cwt(x, scales, wavelet)
    assert W.shape == (5, 301) and W.dtype == np.complex128
    np.testing.assert_array_equal(s, scales)
    want = definition(x, scales, psi, half_support(wavelet))
    np.testing.assert_allclose(W, want, rtol=0, atol=1e-12 * np.abs(want).max())


def test_cwt_float32_and_outputs(rng):
    x = rng.standard_normal(500).astype(np.float32)
    scales = np.geomspace(2, 40, 6)
    W, _ = multires.cwt(x, scales, "cmor1.5-1.0")
    assert W.dtype == np.complex64
    want = definition(x.astype(np.float64), scales, cmor, half_support("cmor1.5-1.0"))
    np.testing.assert_allclose(W, want, rtol=0, atol=2e-5 * np.abs(want).max())
    for output, f in (("magnitude", np.abs), ("power", lambda w: np.abs(w) ** 2)):
        V, _ = multires.cwt(x, scales, "cmor1.5-1.0", output=output, precision="f64")
        assert V.dtype == np.float64
        np.testing.assert_allclose(V, f(want), rtol=0, atol=1e-9 * max(1, np.abs(f(want)).max()))
    # the phase, compared on the unit circle (it wraps at +-pi), weighted by |W|
    V, _ = multires.cwt(x, scales, "cmor1.5-1.0", output="phase", precision="f64")
    err = np.abs(np.exp(1j * V) - np.exp(1j * np.angle(want))) * np.abs(want)
    assert err.max() <= 1e-9 * np.abs(want).max()


def test_cwt_frequencies_and_hop(rng):
    x = rng.standard_normal(1000)
    W, f = multires.cwt(x, wavelet="cmor1.5-1.0", freqs=[10, 50, 100], fs=1000.0, hop=4)
    assert W.shape == (3, 250)
    np.testing.assert_allclose(f, [10, 50, 100])
    full, _ = multires.cwt(x, wavelet="cmor1.5-1.0", freqs=[10, 50, 100], fs=1000.0)
    np.testing.assert_allclose(W, full[:, ::4], atol=1e-12)
    D, s = multires.cwt(x)
    assert D.shape == (len(s), 1000) and s[0] == 1.0 and np.all(np.diff(s) > 0)


def test_batched_equals_looped_and_plan_reuse(rng):
    x = rng.standard_normal((2, 3, 256))
    scales = [2.0, 5.0, 9.0]
    W, _ = multires.cwt(x, scales, "morl")
    assert W.shape == (2, 3, 3, 256)
    plan = multires.CwtPlan(256, scales, "morl")
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(W[i, j], plan(x[i, j]))
    out = np.empty(plan_shape := (2, 3, 3, 256), dtype=plan.dtype)
    got = plan(x, out=out)
    assert got is out and out.shape == plan_shape
    assert np.shares_memory(got, out)
    np.testing.assert_array_equal(out, W)


def test_complex_input(rng):
    z = rng.standard_normal(200) + 1j * rng.standard_normal(200)
    W, _ = multires.cwt(z, [3.0, 8.0], "cmor1.5-1.0")
    want = definition(z, [3.0, 8.0], cmor, half_support("cmor1.5-1.0"))
    np.testing.assert_allclose(W, want, atol=1e-12 * np.abs(want).max())


def test_pywt_cwt_shape_dtype_and_agreement_at_large_scales(rng):
    x = rng.standard_normal(2048)
    scales = np.array([16.0, 32.0, 64.0])
    for wavelet in ("morl", "cmor1.5-1.0", "mexh", "gaus2"):
        a, fa = mp.cwt(x, scales, wavelet)
        b, fb = ref.cwt(x, scales, wavelet)
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(fa, fb)
        # PyWavelets' integrated-wavelet approximation is not the exact sum
        # (see multires.pywt.cwt); the conventions (sign, orientation, the
        # s^-1/2 gain, conjugation) must still agree: the same waveform
        # with the same energy at every scale.
        core = slice(600, 1400)
        for i in range(3):
            p, q = a[i, core], b[i, core]
            corr = abs(np.vdot(p, q)) / np.linalg.norm(p) / np.linalg.norm(q)
            assert corr > 0.9, (wavelet, scales[i], corr)
            assert abs(np.linalg.norm(p) / np.linalg.norm(q) - 1) < 0.1, (wavelet, scales[i])
            assert np.vdot(p, q).real > 0
    a, _ = mp.cwt(x.astype(np.float32), scales, "morl")
    assert a.dtype == ref.cwt(x.astype(np.float32), scales, "morl")[0].dtype
    x2 = rng.standard_normal((3, 400))
    a, _ = mp.cwt(x2, [8.0, 20.0], "morl", axis=1)
    b, _ = ref.cwt(x2, [8.0, 20.0], "morl", axis=1)
    assert a.shape == b.shape == (2, 3, 400)
    a0, _ = mp.cwt(x2.T, [8.0, 20.0], "morl", axis=0)
    np.testing.assert_allclose(a0, np.swapaxes(a, 1, 2), atol=1e-12)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fir_equals_numpy_convolve(rng, mode):
    x = rng.standard_normal(777)
    h = rng.standard_normal((4, 31))
    y = multires.fir(x, h, mode)
    want = np.stack([np.convolve(x, f, mode) for f in h])
    assert y.shape == (1,) * 0 + want.shape
    np.testing.assert_allclose(y, want, atol=1e-12 * np.abs(want).max())
    hc = h + 1j * rng.standard_normal((4, 31))
    yc = multires.fir(x, hc, mode)
    np.testing.assert_allclose(yc, np.stack([np.convolve(x, f, mode) for f in hc]), atol=1e-11)
    p = multires.fir(x, h, mode, post="power")
    np.testing.assert_allclose(p, want**2, atol=1e-10 * (want**2).max())
    d = multires.fir(x, h, mode, post="derivative")
    np.testing.assert_allclose(d, np.gradient(want, axis=-1), atol=1e-10 * np.abs(want).max())


def test_fir_batch(rng):
    x = rng.standard_normal((3, 2, 100))
    h = rng.standard_normal(9)
    y = multires.fir(x, h)
    assert y.shape == (3, 2, 1, 100)
    for i in range(3):
        for j in range(2):
            np.testing.assert_allclose(y[i, j, 0], np.convolve(x[i, j], h, "same"), atol=1e-12)


def test_thread_count_is_settable_and_results_do_not_depend_on_it(rng):
    x = rng.standard_normal(5000)
    try:
        multires.set_num_threads(1)
        assert multires.get_num_threads() == 1
        one, _ = multires.cwt(x, [2.0, 30.0, 200.0], "cmor1.5-1.0")
        c1 = mp.wavedec(x, "db4", level=4)
        multires.set_num_threads(2)
        assert multires.get_num_threads() == 2
        two, _ = multires.cwt(x, [2.0, 30.0, 200.0], "cmor1.5-1.0")
        c2 = mp.wavedec(x, "db4", level=4)
        np.testing.assert_array_equal(one, two)
        for a, b in zip(c1, c2):
            np.testing.assert_array_equal(a, b)
        with pytest.raises(ValueError, match="4 a core"):
            multires.set_num_threads(100000)
    finally:
        multires.set_num_threads(0)


def test_cwt_reuses_the_last_plan_for_the_same_transform(rng):
    x = rng.standard_normal(512)
    W1, _ = multires.cwt(x, [2.0, 8.0], "morl")
    plan = multires._LAST_PLAN[1]
    W2, _ = multires.cwt(x * 2, [2.0, 8.0], "morl")
    assert multires._LAST_PLAN[1] is plan
    np.testing.assert_allclose(W2, 2 * W1, atol=1e-12)
    multires.cwt(x, [2.0, 9.0], "morl")
    assert multires._LAST_PLAN[1] is not plan


def test_every_public_function_has_a_docstring():
    import inspect

    for mod in (multires, mp):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                assert obj.__doc__ and len(obj.__doc__.strip()) > 20, f"{mod.__name__}.{name}"


def _bf16_bits(v):
    """float32 to bfloat16 bits, rounded to nearest even (NaN kept a NaN)."""
    b = np.asarray(v, np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(v, np.float32))
    r[nan] = ((b[nan] >> 16) | 0x40).astype(np.uint16)
    return r


@pytest.mark.parametrize("output", ["magnitude", "power"])
def test_16_bit_outputs_are_the_float32_values_rounded_once(rng, output):
    x = rng.standard_normal(3000)
    scales = np.geomspace(1, 200, 24)
    w32, _ = multires.cwt(x, scales, "cmor1.5-1.0", output=output, precision="f32", device="cpu")
    w16, _ = multires.cwt(x, scales, "cmor1.5-1.0", output=output, precision="f32", dtype="float16", device="cpu")
    assert w16.dtype == np.float16 and w16.shape == w32.shape
    np.testing.assert_array_equal(w16, w32.astype(np.float16))
    plan = multires.CwtPlan(x.size, scales, "cmor1.5-1.0", output=output, precision="f32", dtype="bf16", device="cpu")
    wb = plan(x)
    assert wb.dtype.itemsize == 2
    np.testing.assert_array_equal(wb.view(np.uint16), _bf16_bits(w32))
    # Against float64: float16 keeps 11 significant bits.
    w64, _ = multires.cwt(x, scales, "cmor1.5-1.0", output=output, device="cpu")
    big = w64 > 1e-3 * w64.max()
    rel = np.abs(w16[big].astype(np.float64) - w64[big]) / w64[big]
    assert rel.max() < 2.0**-10


def test_16_bit_outputs_need_magnitude_or_power(rng):
    with pytest.raises(ValueError, match="magnitude or power"):
        multires.cwt(rng.standard_normal(100), [1, 2], dtype="float16")
    with pytest.raises(ValueError, match="dtype must be"):
        multires.cwt(rng.standard_normal(100), [1, 2], output="magnitude", dtype="int8")
    # float32/float64 dtypes set the precision.
    w, _ = multires.cwt(rng.standard_normal(100), [1, 2], output="magnitude", dtype=np.float32)
    assert w.dtype == np.float32
