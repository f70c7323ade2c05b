"""What `multires swt`, `iswt`, `modwt` and `denoise` write, read back
with numpy and compared with PyWavelets, scikit-image and multires'
Python API."""
import numpy as np
import pytest

from test_cli_outputs import run


def test_swt_npz_equals_pywt_and_iswt_inverts(tmp_path):
    pywt = pytest.importorskip("pywt")
    x = np.random.default_rng(5).standard_normal((3, 256))
    np.save(tmp_path / "x.npy", x)
    run(tmp_path, "swt", "x.npy", "-o", "c.npz", "--wavelet", "db4", "--level", "3")
    ref = pywt.swt(x, "db4", level=3)
    with np.load(tmp_path / "c.npz") as f:
        assert sorted(f.files) == ["cA1", "cA2", "cA3", "cD1", "cD2", "cD3"]
        for i, (a, d) in enumerate(ref):
            j = 3 - i
            np.testing.assert_allclose(f[f"cA{j}"], a, rtol=0, atol=1e-12)
            np.testing.assert_allclose(f[f"cD{j}"], d, rtol=0, atol=1e-12)
    run(tmp_path, "iswt", "c.npz", "-o", "back.npy", "--wavelet", "db4")
    np.testing.assert_allclose(np.load(tmp_path / "back.npy"), x, rtol=0, atol=1e-11)
    # Along axis 0, trimmed and normalized, as pywt.swt(..., trim_approx=True, norm=True).
    np.save(tmp_path / "t.npy", x.T.copy())
    run(tmp_path, "swt", "t.npy", "-o", "n.npz", "--wavelet", "sym3", "--level", "2", "--axis", "0",
        "--trim-approx", "--norm")
    ref = pywt.swt(x.T, "sym3", level=2, axis=0, trim_approx=True, norm=True)
    with np.load(tmp_path / "n.npz") as f:
        assert sorted(f.files) == ["cA2", "cD1", "cD2"]
        for key, r in zip(["cA2", "cD2", "cD1"], ref):
            np.testing.assert_allclose(f[key], r, rtol=0, atol=1e-12)
    run(tmp_path, "iswt", "n.npz", "-o", "nb.npy", "--wavelet", "sym3", "--axis", "0", "--norm")
    np.testing.assert_allclose(np.load(tmp_path / "nb.npy"), x.T, atol=1e-10)
    r = run(tmp_path, "swt", "x.npy", "-o", "bad.npz", "--wavelet", "db1", "--level", "9", ok=False)
    assert r.returncode != 0 and "level" in r.stderr and not (tmp_path / "bad.npz").exists()
    np.save(tmp_path / "odd.npy", x[0, :101])
    r = run(tmp_path, "swt", "odd.npy", "-o", "odd.npz", "--wavelet", "db1", ok=False)
    assert r.returncode != 0 and "pad" in r.stderr and not (tmp_path / "odd.npz").exists()


def test_modwt_npy_and_mra_plot(tmp_path):
    mr = pytest.importorskip("multires")
    x = np.random.default_rng(6).standard_normal(1000)
    np.save(tmp_path / "x.npy", x)
    run(tmp_path, "modwt", "x.npy", "-o", "w.npy", "--wavelet", "db2", "--level", "5")
    w = np.load(tmp_path / "w.npy")
    assert w.shape == (6, 1000)
    np.testing.assert_allclose(w, mr.modwt(x, "db2", 5), rtol=0, atol=1e-12)
    assert abs(np.sum(w**2) - np.sum(x**2)) < 1e-9 * np.sum(x**2)
    run(tmp_path, "modwt", "x.npy", "-o", "m.npy", "--wavelet", "db2", "--level", "5", "--mra", "--plot", "m.png")
    m = np.load(tmp_path / "m.npy")
    np.testing.assert_allclose(m.sum(axis=0), x, rtol=0, atol=1e-12)
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_denoise_npy_equals_skimage(tmp_path):
    skr = pytest.importorskip("skimage.restoration")
    rng = np.random.default_rng(7)
    g = np.linspace(0, 1, 128)
    clean = np.outer(np.sin(4 * g), np.cos(3 * g))
    x = clean + 0.1 * rng.standard_normal(clean.shape)
    np.save(tmp_path / "x.npy", x)
    for flags, kw in [((), {}), (("--method", "visu", "--wavelet", "db4", "--mode", "hard"),
                                  {"method": "VisuShrink", "wavelet": "db4", "mode": "hard"}),
                      (("--sigma", "0.1", "--levels", "2", "--wavelet", "sym4"), {"sigma": 0.1, "wavelet_levels": 2, "wavelet": "sym4"})]:
        run(tmp_path, "denoise", "x.npy", "-o", "y.npy", *flags)
        np.testing.assert_allclose(np.load(tmp_path / "y.npy"), skr.denoise_wavelet(x, **kw), rtol=0, atol=1e-6)
    v = (clean[:, :64] + 0.1 * rng.standard_normal((128, 64))).astype(np.float32)
    np.save(tmp_path / "v.npy", v)
    run(tmp_path, "denoise", "v.npy", "-o", "vy.npy", "--wavelet", "db2")
    y = np.load(tmp_path / "vy.npy")
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, skr.denoise_wavelet(v, wavelet="db2"), atol=1e-5)
    mr = pytest.importorskip("multires")
    run(tmp_path, "denoise", "x.npy", "-o", "s.npy", "--method", "sure", "--wavelet", "db4")
    np.testing.assert_allclose(np.load(tmp_path / "s.npy"), mr.denoise(x, method="SureShrink", wavelet="db4"), atol=1e-12)
    r = run(tmp_path, "denoise", "x.npy", "-o", "z.npy", "--method", "wiener", ok=False)
    assert r.returncode != 0 and "method" in r.stderr and not (tmp_path / "z.npy").exists()
    x[3, 4] = np.nan
    np.save(tmp_path / "nan.npy", x)
    r = run(tmp_path, "denoise", "nan.npy", "-o", "z.npy", ok=False)
    assert r.returncode != 0 and "finite" in r.stderr and not (tmp_path / "z.npy").exists()
    r = run(tmp_path, "denoise", "x.npy", "-o", "z.npy", "--sigma", "-1", ok=False)
    assert r.returncode != 0 and "--sigma" in r.stderr
