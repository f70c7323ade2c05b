"""The CUDA backend from Python: numpy and device arrays (CuPy, PyTorch)
give what the CPU gives. Skipped with a notice without a GPU; run with
MULTIRES_REQUIRE_GPU=1 on the device so that a skip fails."""

import numpy as np
import pytest

import multires
import multires.pywt as mp

pytestmark = pytest.mark.gpu


def test_cwt_on_the_gpu_equals_the_cpu(rng):
    x = rng.standard_normal((3, 4096))
    scales = np.geomspace(1, 300, 40)
    for precision, tol in (("f64", 1e-10), ("f32", 2e-4)):
        plan_g = multires.CwtPlan(4096, scales, "cmor1.5-1.0", precision=precision, device="cuda")
        plan_c = multires.CwtPlan(4096, scales, "cmor1.5-1.0", precision=precision, device="cpu")
        assert plan_g.device == "cuda"
        g, c = plan_g(x), plan_c(x)
        assert g.dtype == c.dtype
        np.testing.assert_allclose(g, c, rtol=0, atol=tol * np.abs(c).max())
        out = np.empty_like(g)
        assert plan_g(x, out=out) is out
        np.testing.assert_array_equal(out, g)


@pytest.mark.parametrize("wavelet", ["morl", "mexh", "gaus2", "cgau3", "cmor1.5-1.0", "shan1.5-1.0", "fbsp2-1.0-0.5", "paul4", "dog2"])
def test_every_wavelet_on_the_gpu_equals_the_cpu(rng, wavelet):
    x = rng.standard_normal(3000)
    scales = [1.0, 2.5, 16.0, 64.0]
    g, _ = multires.cwt(x, scales, wavelet, device="cuda")
    c, _ = multires.cwt(x, scales, wavelet, device="cpu")
    np.testing.assert_allclose(g, c, rtol=0, atol=1e-10 * np.abs(c).max())


def test_fir_on_the_gpu(rng):
    x = rng.standard_normal(100_000)
    h = rng.standard_normal((8, 129))
    np.testing.assert_allclose(multires.fir(x, h, device="cuda"), multires.fir(x, h, device="cpu"), atol=1e-9)


def test_wavedec_on_the_gpu_equals_pywt(rng):
    import pywt as ref

    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-4)):
        x = rng.standard_normal((16, 4099)).astype(dtype)
        for mode in ("periodization", "symmetric"):
            c = mp.wavedec(x, "db4", mode, level=5, device="cuda")
            r = ref.wavedec(x, "db4", mode, level=5)
            for a, b in zip(c, r):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_allclose(a, b, atol=tol * np.abs(b).max())
            y = mp.waverec(c, "db4", mode, device="cuda")
            np.testing.assert_allclose(y, ref.waverec(r, "db4", mode), atol=tol * 10)
        c = mp.wavedec(x, "sym3", level=3, axis=0, device="cuda")
        for a, b in zip(c, ref.wavedec(x, "sym3", level=3, axis=0)):
            np.testing.assert_allclose(a, b, atol=tol * np.abs(b).max())


def test_codec_on_the_gpu(rng):
    a = np.cumsum(rng.standard_normal((64, 96, 80)), axis=2).astype(np.float32)
    b, info = multires.compress(a, abs=1e-2, device="cuda", info=True)
    assert info["device"] == "cuda"
    assert b == multires.compress(a, abs=1e-2, device="cpu"), "the GPU's bytes are the CPU's"
    cpu = multires.decompress(b, device="cpu")
    gpu = multires.decompress(b, device="cuda")
    assert np.max(np.abs(gpu - a)) <= 1e-2
    assert gpu.dtype == np.float32 and gpu.shape == a.shape
    np.testing.assert_array_equal(gpu, cpu)
    # Into a caller's array, reused; a wrong one is named.
    out = np.full_like(a, np.nan)
    assert multires.decompress(b, device="cuda", out=out) is out
    np.testing.assert_array_equal(out, cpu)
    with pytest.raises(ValueError, match="C-contiguous float32 array of shape"):
        multires.decompress(b, device="cuda", out=np.empty((64, 96, 81), np.float32))
    # float64, 1-D and 4-D fields, and a relative bound.
    for x in (a.astype(np.float64)[:20], a.reshape(-1)[:100_000].copy(), a.reshape(4, 16, 96, 80)):
        b = multires.compress(x, rel=1e-3, device="cuda")
        assert b == multires.compress(x, rel=1e-3, device="cpu")
        np.testing.assert_array_equal(multires.decompress(b, device="cuda"), multires.decompress(b, device="cpu"))


def test_fast_profile_float64_stays_on_the_cpu(rng):
    a = np.cumsum(rng.standard_normal((20, 30, 40)), axis=2)
    b, info = multires.compress(a, abs=1e-3, profile="fast", info=True)
    assert info["device"] == "cpu"
    assert np.max(np.abs(multires.decompress(b) - a)) <= 1e-3
    with pytest.raises(ValueError, match="float64 file of the fast profile decodes on the CPU"):
        multires.decompress(b, device="cuda")
    with pytest.raises(ValueError, match="float64 fields of the fast profile"):
        multires.compress(a, abs=1e-3, profile="fast", device="cuda")
    y = a.astype(np.float32)
    b, info = multires.compress(y, abs=1e-3, profile="fast", info=True)
    assert info["device"] == "cuda"
    np.testing.assert_array_equal(multires.decompress(b, device="cuda"), multires.decompress(b, device="cpu"))


def test_codec_with_nan_on_the_gpu_falls_back_or_says_why(rng):
    a = np.cumsum(rng.standard_normal((32, 48, 40)), axis=2).astype(np.float32)
    a[3, 4, 5] = np.nan
    b, info = multires.compress(a, abs=1e-2, device="auto", info=True)
    assert info["device"] == "cpu"
    y = multires.decompress(b, device="cuda")
    assert np.isnan(y[3, 4, 5]) and np.nanmax(np.abs(y - a)) <= 1e-2
    with pytest.raises(ValueError, match="finite values; value 5925 is NaN"):
        multires.compress(a, abs=1e-2, device="cuda")


def _device_libs():
    libs = []
    try:
        import cupy

        libs.append(("cupy", lambda a: cupy.asarray(a), lambda a: cupy.asnumpy(a), cupy.ndarray))
    except Exception:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            libs.append(("torch", lambda a: torch.from_numpy(a).cuda(), lambda a: a.cpu().numpy(), torch.Tensor))
    except Exception:
        pass
    return libs


def test_device_arrays_come_back_as_device_arrays(rng):
    libs = _device_libs()
    if not libs:
        pytest.fail("neither CuPy nor PyTorch with CUDA is importable on this GPU machine")
    x = rng.standard_normal((2, 2048)).astype(np.float32)
    scales = np.geomspace(2, 100, 16)
    want, _ = multires.cwt(x, scales, "cmor1.5-1.0", device="cpu")
    for name, to_dev, to_host, kind in libs:
        W, _ = multires.cwt(to_dev(x), scales, "cmor1.5-1.0", device="cuda")
        assert isinstance(W, kind), name
        np.testing.assert_allclose(to_host(W), want, atol=2e-4 * np.abs(want).max())
        c = mp.wavedec(to_dev(x), "db2", level=3, device="cuda")
        assert all(isinstance(v, kind) for v in c)


def test_16_bit_outputs_on_the_gpu_round_the_gpus_float32(rng):
    x = rng.standard_normal(20000).astype(np.float32)
    scales = np.geomspace(1, 500, 40)
    for output in ("magnitude", "power"):
        w32, _ = multires.cwt(x, scales, "cmor1.5-1.0", output=output, device="cuda")
        w16, _ = multires.cwt(x, scales, "cmor1.5-1.0", output=output, dtype="float16", device="cuda")
        assert w16.dtype == np.float16
        np.testing.assert_array_equal(w16, w32.astype(np.float16))
        wb = multires.CwtPlan(x.size, scales, "cmor1.5-1.0", output=output, precision="f32", dtype="bfloat16", device="cuda")(x)
        b = w32.view(np.uint32).astype(np.uint64)
        np.testing.assert_array_equal(wb.view(np.uint16), ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16))


def test_float32_rows_on_the_gpu_equal_the_cpu_batched_and_looped(rng):
    x = rng.standard_normal((5, 30000)).astype(np.float32)
    scales = np.geomspace(1, 300, 30)
    plan = multires.CwtPlan(x.shape[1], scales, "cmor1.5-1.0", precision="f32", device="cuda", boundary="symmetric")
    batched = plan(x)
    looped = np.stack([plan(r) for r in x])
    np.testing.assert_array_equal(batched, looped)
    cpu = multires.CwtPlan(x.shape[1], scales, "cmor1.5-1.0", precision="f32", device="cpu", boundary="symmetric")(x)
    assert np.linalg.norm(batched - cpu) / np.linalg.norm(cpu) < 1e-5


def test_ssq_cwt_on_the_gpu_equals_the_cpu(rng):
    x = rng.standard_normal(20_000)
    scales = 2.0 * 2 ** (np.arange(96) / 16)
    for wavelet in ("gmw", "cmor1.5-1.0"):
        Tg, Wg, fg, _ = multires.ssq_cwt(x, wavelet, scales, device="cuda")
        Tc, Wc, fc, _ = multires.ssq_cwt(x, wavelet, scales, device="cpu")
        np.testing.assert_array_equal(fg, fc)
        assert np.linalg.norm(Wg - Wc) <= 1e-12 * np.linalg.norm(Wc)
        assert np.linalg.norm(Tg - Tc) <= 1e-9 * np.linalg.norm(Tc)


@pytest.mark.parametrize("precision", ["f64", "f32"])
@pytest.mark.parametrize("boundary,complex_x", [("zero", False), ("symmetric", True)])
def test_cwt_stream_on_the_gpu_equals_the_gpu_transform(rng, precision, boundary, complex_x):
    """The GPU stream keeps its window on the device; joined, its columns
    are cwt(device='cuda') bit for bit."""
    scales = np.geomspace(1.5, 300, 30)
    kw = dict(precision=precision, boundary=boundary)
    s = multires.CwtStream(scales, "cmor1.5-1.0", device="cuda", chunk=4000, **kw)
    assert s.device == "cuda"
    n = 3 * s.latency + 5
    x = rng.standard_normal(n)
    if complex_x:
        x = x + 1j * rng.standard_normal(n)
    W, _ = multires.cwt(x, scales, "cmor1.5-1.0", device="cuda", **kw)
    cuts = np.sort(rng.integers(0, n, size=40))
    s = multires.CwtStream(scales, "cmor1.5-1.0", device="cuda", chunk=4000, **kw)
    parts = [s.push(c) for c in np.split(x, cuts)]
    before = sum(p.shape[-1] for p in parts)
    got = np.concatenate(parts + [s.finish()], axis=-1)
    assert got.dtype == W.dtype and got.tobytes() == W.tobytes()
    assert before >= n - 2 * s.latency


def test_swt_and_modwt_on_the_gpu_equal_the_cpu_bit_for_bit(rng):
    x = rng.standard_normal((4, 4096))
    for kw in ({"level": 5}, {"level": 3, "start_level": 2, "norm": True, "trim_approx": True}):
        g = mp.swt(x, "db4", device="cuda", **kw)
        c = mp.swt(x, "db4", **kw)
        flat = lambda r: [v for p in r for v in (p if isinstance(p, tuple) else (p,))]
        for a, b in zip(flat(g), flat(c)):
            np.testing.assert_array_equal(a, b)
    y = rng.standard_normal((3, 1000))
    w = mp.modwt(y, "sym4", 6, device="cuda")
    np.testing.assert_array_equal(w, mp.modwt(y, "sym4", 6))
    np.testing.assert_array_equal(mp.imodwt(w, "sym4", device="cuda"), mp.imodwt(w, "sym4"))
    np.testing.assert_array_equal(mp.modwtmra(w, "sym4", device="cuda"), mp.modwtmra(w, "sym4"))
    w32 = mp.modwt(y.astype(np.float32), "sym4", 6, device="cuda")
    assert w32.dtype == np.float32
    np.testing.assert_allclose(w32, w, atol=1e-5)


def test_wavelet_packets_on_the_gpu_equal_the_cpu(rng):
    x = rng.standard_normal(1 << 16)
    g = mp.WaveletPacket(x, "db4", "symmetric", maxlevel=5, device="cuda")
    c = mp.WaveletPacket(x, "db4", "symmetric", maxlevel=5)
    for a, b in zip(g.get_level(5), c.get_level(5)):
        assert a.path == b.path
        np.testing.assert_allclose(a.data, b.data, rtol=0, atol=1e-12 * np.abs(b.data).max())
    np.testing.assert_allclose(g.reconstruct(), c.reconstruct(), rtol=0, atol=1e-11)


def test_denoise_with_the_transforms_on_the_gpu(rng):
    g = np.linspace(0, 1, 256)
    x = np.outer(np.sin(5 * g), np.cos(3 * g)) + 0.1 * rng.standard_normal((256, 256))
    for kw in ({}, {"wavelet": "db4", "method": "VisuShrink"}, {"wavelet": "sym4", "method": "SureShrink", "mode": "hard"}):
        np.testing.assert_allclose(multires.denoise(x, device="cuda", **kw), multires.denoise(x, **kw), rtol=0, atol=1e-10)
    v = rng.standard_normal((8, 1000)).astype(np.float32)
    np.testing.assert_allclose(multires.denoise(v, device="cuda"), multires.denoise(v), atol=1e-5)


def test_swt_of_device_arrays_stays_on_the_device_bit_for_bit(rng):
    libs = _device_libs()
    if not libs:
        pytest.fail("neither CuPy nor PyTorch with CUDA is importable on this GPU machine")
    x = rng.standard_normal((3, 1024))
    want = mp.swt(x, "sym4", level=4, trim_approx=True)
    for name, to_dev, to_host, kind in libs:
        got = mp.swt(to_dev(x), "sym4", level=4, trim_approx=True, device="cuda")
        assert all(isinstance(v, kind) for v in got), name
        for a, b in zip(got, want):
            np.testing.assert_array_equal(to_host(a), b)
        # Along axis 0 of a transposed copy.
        got = mp.swt(to_dev(np.ascontiguousarray(x.T)), "sym4", level=2, axis=0, device="cuda")
        for (a, d), (ra, rd) in zip(got, mp.swt(x.T, "sym4", level=2, axis=0)):
            np.testing.assert_array_equal(to_host(a), ra)
            np.testing.assert_array_equal(to_host(d), rd)


def test_swt2_and_swtn_on_the_gpu_equal_the_cpu_bit_for_bit(rng):
    x = rng.standard_normal((32, 48, 3))
    for kw in ({}, {"norm": True, "trim_approx": True}, {"start_level": 1}):
        g = mp.swt2(x, "db2", 2, axes=(0, 1), device="cuda", **kw)
        c = mp.swt2(x, "db2", 2, axes=(0, 1), **kw)
        flat = lambda r: [v for p in r for v in (p if isinstance(p, tuple) else (p,)) for v in (v if isinstance(v, tuple) else (v,))]
        for a, b in zip(flat(g), flat(c)):
            np.testing.assert_array_equal(a, b)
    g = mp.swtn(x[:16, :16], ("haar", "sym3"), 3, axes=(1, 0), device="cuda")
    c = mp.swtn(x[:16, :16], ("haar", "sym3"), 3, axes=(1, 0))
    for dg, dc in zip(g, c):
        for k in dc:
            np.testing.assert_array_equal(dg[k], dc[k])
