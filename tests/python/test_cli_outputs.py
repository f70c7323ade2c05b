"""Files the `multires` command writes, read back the way users read them:
with numpy (and PyWavelets to compare against, Pillow for PNG)."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def binary():
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "multires"
        if p.exists():
            return p
    pytest.fail("build the multires binary first (cargo build)")


def run(tmp, *args, ok=True):
    r = subprocess.run([str(binary()), *map(str, args)], cwd=tmp, capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture
def x(tmp_path):
    rng = np.random.default_rng(3)
    v = rng.standard_normal(1001)
    np.save(tmp_path / "x.npy", v)
    return v


def test_wavedec_npz_keys_are_numpys_and_equal_pywavelets(tmp_path, x):
    pywt = pytest.importorskip("pywt")
    run(tmp_path, "wavedec", "x.npy", "-o", "c.npz", "--wavelet", "db4", "--level", "4",
        "--mode", "symmetric", "--device", "cpu")
    with np.load(tmp_path / "c.npz") as f:
        assert sorted(f.files) == [f"arr_{i}" for i in range(5)]
        ours = [f[f"arr_{i}"] for i in range(5)]
    ref = pywt.wavedec(x, "db4", mode="symmetric", level=4)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # numpy.savez of pywt's own coefficients goes back through waverec.
    np.savez(tmp_path / "p.npz", *ref)
    run(tmp_path, "waverec", "p.npz", "-o", "r.npy", "--wavelet", "db4", "--mode", "symmetric",
        "--device", "cpu")
    # As pywt.waverec, an odd signal comes back one sample longer.
    expect = pywt.waverec(ref, "db4", mode="symmetric")
    np.testing.assert_allclose(np.load(tmp_path / "r.npy"), expect, rtol=0, atol=1e-12)


def test_wavedecn_npz_detail_keys(tmp_path):
    pywt = pytest.importorskip("pywt")
    img = np.random.default_rng(1).standard_normal((40, 24))
    np.save(tmp_path / "img.npy", img)
    run(tmp_path, "wavedecn", "img.npy", "-o", "c.npz", "--wavelet", "haar", "--level", "2",
        "--mode", "periodization", "--device", "cpu")
    ref = pywt.wavedecn(img, "haar", mode="periodization", level=2)
    with np.load(tmp_path / "c.npz") as f:
        np.testing.assert_allclose(f["arr_0"], ref[0], atol=1e-12)
        for i, d in enumerate(ref[1:], start=1):
            for key, v in d.items():
                np.testing.assert_allclose(f[f"d{i}_{key}"], v, atol=1e-12)


def test_cwt_npy_and_cone_of_influence(tmp_path, x):
    run(tmp_path, "cwt", "x.npy", "-o", "W.npy", "--scales", "1:8", "--coi-out", "coi.npy",
        "--device", "cpu")
    w = np.load(tmp_path / "W.npy")
    assert w.shape == (8, x.size) and w.dtype == np.complex128
    # Scale 1 of the real Morlet: the definition's sum, by numpy.
    k = np.arange(-8, 9)
    psi = np.exp(-0.5 * k**2) * np.cos(5 * k)
    ref = np.correlate(np.pad(x, 8), psi, mode="valid")
    np.testing.assert_allclose(w[0].real, ref, rtol=1e-10, atol=1e-12)
    coi = np.load(tmp_path / "coi.npy")
    assert coi.shape == (x.size,) and coi[0] == 0 and coi[x.size // 2] > coi[1]


def test_cwt_float16_and_bfloat16_files(tmp_path, x):
    run(tmp_path, "cwt", "x.npy", "-o", "W32.npy", "--scales", "1:8", "--output-kind", "magnitude",
        "--precision", "f32", "--device", "cpu")
    run(tmp_path, "cwt", "x.npy", "-o", "W16.npy", "--scales", "1:8", "--output-kind", "magnitude",
        "--output-dtype", "f16", "--precision", "f32", "--device", "cpu")
    run(tmp_path, "cwt", "x.npy", "-o", "Wb.npy", "--scales", "1:8", "--output-kind", "magnitude",
        "--output-dtype", "bf16", "--precision", "f32", "--device", "cpu")
    w32, w16, wb = (np.load(tmp_path / f) for f in ("W32.npy", "W16.npy", "Wb.npy"))
    assert w16.dtype == np.float16 and w16.shape == w32.shape == (8, x.size)
    np.testing.assert_array_equal(w16, w32.astype(np.float16))
    # bfloat16 as its bits (numpy has no bfloat16): the upper half of float32, rounded to even.
    assert wb.dtype == np.uint16
    b = w32.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(wb, ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16))
    r = run(tmp_path, "cwt", "x.npy", "-o", "Wc.npy", "--scales", "1:8", "--output-dtype", "f16",
            "--device", "cpu", ok=False)
    assert r.returncode != 0 and "magnitude or power" in r.stderr
    assert not (tmp_path / "Wc.npy").exists()


def test_fir_and_codec_outputs(tmp_path, x):
    bank = np.random.default_rng(2).standard_normal((3, 17))
    np.save(tmp_path / "bank.npy", bank)
    run(tmp_path, "fir", "x.npy", "--filters", "bank.npy", "-o", "y.npy", "--mode", "same",
        "--device", "cpu")
    y = np.load(tmp_path / "y.npy")
    for f in range(3):
        np.testing.assert_allclose(y[f], np.convolve(x, bank[f], mode="same"), atol=1e-12)
    run(tmp_path, "make-field", "--kind", "turbulent", "--size", "40", "-o", "t.npy")
    t = np.load(tmp_path / "t.npy")
    assert t.shape == (40, 40, 40) and t.dtype == np.float32
    run(tmp_path, "compress", "t.npy", "-o", "t.mrz", "--error-bound", "abs:1e-3", "--device", "cpu")
    run(tmp_path, "decompress", "t.mrz", "-o", "back.npy", "--device", "cpu")
    back = np.load(tmp_path / "back.npy")
    assert back.dtype == np.float32 and back.shape == t.shape
    assert np.abs(back.astype(np.float64) - t).max() <= 1e-3
    run(tmp_path, "decompress", "t.mrz", "-o", "part.npy", "--region", "0:8,10:20,:",
        "--device", "cpu")
    np.testing.assert_array_equal(np.load(tmp_path / "part.npy"), back[0:8, 10:20, :])


def test_pngs_are_images(tmp_path, x):
    Image = pytest.importorskip("PIL.Image")
    run(tmp_path, "cwt", "x.npy", "-o", "W.npy", "--scales", "1:16", "--fs", "100", "--plot",
        "p.png", "--device", "cpu")
    run(tmp_path, "wavedec", "x.npy", "-o", "c.npz", "--wavelet", "db2", "--plot", "l.png",
        "--device", "cpu")
    for name in ("p.png", "l.png"):
        with Image.open(tmp_path / name) as im:
            a = np.asarray(im)
        assert a.ndim == 3 and a.shape[2] == 3 and a.std() > 10, name


def test_nothing_half_written_on_error(tmp_path, x):
    r = run(tmp_path, "cwt", "x.npy", "-o", "x.npy", ok=False)
    assert r.returncode != 0 and "would destroy" in r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), x)
    assert sorted(os.listdir(tmp_path)) == ["x.npy"]


def test_ssq_writes_the_plane_its_frequencies_ridges_and_a_plot(tmp_path):
    from PIL import Image

    n = 2048
    t = np.arange(n)
    np.save(tmp_path / "c.npy", np.cos(2 * np.pi * (0.02 * t + 0.5 * 0.15 / n * t**2)))
    r = run(tmp_path, "ssq", "c.npy", "-o", "T.npy", "--wavelet", "cmor1.5-1.0",
            "--scales-voices", "4:400:16", "--boundary", "reflect", "--freqs-out", "f.npy",
            "--ridges", "1", "--ridges-out", "r.npy", "--plot", "T.png", "--device", "cpu")
    assert "ridge 0" in r.stdout
    T, f, rid = np.load(tmp_path / "T.npy"), np.load(tmp_path / "f.npy"), np.load(tmp_path / "r.npy")
    assert T.dtype == np.complex128 and T.shape == (f.size, n)
    assert np.all(np.diff(f) < 0), "rows run from the highest frequency down"
    assert rid.dtype == np.int64 and rid.shape == (n, 1)
    true = 0.02 + 0.15 * t / n
    mid = slice(n // 4, 3 * n // 4)
    # The ridge follows the chirp to within two bins (16 per octave).
    assert np.max(np.abs(np.log2(f[rid[mid, 0]] / true[mid]))) < 2 / 16
    with Image.open(tmp_path / "T.png") as im:
        assert im.size == (1200, 640)
    # A real wavelet is refused with the reason, and no output is left.
    r = run(tmp_path, "ssq", "c.npy", "-o", "U.npy", "--wavelet", "morl", ok=False)
    assert r.returncode != 0 and "analytic" in r.stderr
    assert not (tmp_path / "U.npy").exists()


def test_coherence_writes_an_npz_numpy_reads_and_a_plot(tmp_path):
    from PIL import Image

    n = 1024
    rng = np.random.default_rng(4)
    t = np.arange(n)
    s = np.sin(2 * np.pi * t / 32.0)
    np.save(tmp_path / "a.npy", s + 0.5 * rng.standard_normal(n))
    np.save(tmp_path / "b.npy", np.roll(s, 4) + 0.5 * rng.standard_normal(n))
    run(tmp_path, "coherence", "a.npy", "b.npy", "-o", "C.npz", "--plot", "C.png", "--device", "cpu")
    with np.load(tmp_path / "C.npz") as f:
        assert sorted(f.files) == ["coi", "freq", "phase", "scales", "wct"]
        wct, freq, coi = f["wct"], f["freq"], f["coi"]
    assert wct.shape == (freq.size, n) and coi.shape == (n,)
    assert np.all((wct >= 0) & (wct <= 1 + 1e-9))
    band = np.abs(np.log2(1 / freq / 32.0)) < 0.15
    assert wct[band][:, 200:-200].mean() > 0.85
    with Image.open(tmp_path / "C.png") as im:
        assert im.size == (1200, 640)
    np.save(tmp_path / "short.npy", np.ones(10))
    r = run(tmp_path, "coherence", "a.npy", "short.npy", "-o", "D.npz", ok=False)
    assert r.returncode != 0 and "length" in r.stderr and not (tmp_path / "D.npz").exists()


def _wav16(path, v, fs=8000, channels=1):
    import wave

    pcm = np.clip(np.round(v * 32767), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(fs)
        w.writeframes(pcm.tobytes())


@pytest.mark.parametrize(
    "name,flags",
    [
        ("x.npy", ["--wavelet", "cmor1.5-1.0", "--scales-log", "2:60:14"]),
        ("x32.npy", ["--wavelet", "morl", "--scales-log", "2:60:14", "--precision", "f32",
                     "--boundary", "symmetric", "--out", "magnitude", "--output-dtype", "f16"]),
        ("xc.npy", ["--wavelet", "cmor1.5-1.0", "--scales-log", "2:40:9", "--hop", "3"]),
        ("x.f64", ["--raw", "f64", "--wavelet", "mexh", "--scales", "1:30:3", "--boundary", "reflect"]),
        ("x.wav", ["--wavelet", "cmor1.5-1.0", "--freqs", "50:2000:12", "--channel", "1"]),
    ],
)
def test_cwt_stream_files_equal_the_whole_transform(tmp_path, name, flags):
    """--stream reads the input a chunk at a time and writes the columns as
    they are final: the file numpy reads is the whole transform's, bit for bit."""
    rng = np.random.default_rng(5)
    n = 150_001
    v = rng.standard_normal(n)
    if name == "x32.npy":
        np.save(tmp_path / name, v.astype(np.float32))
    elif name == "xc.npy":
        np.save(tmp_path / name, v + 1j * rng.standard_normal(n))
    elif name == "x.f64":
        v.astype("<f8").tofile(tmp_path / name)
    elif name == "x.wav":
        stereo = np.stack([0.3 * np.tanh(v), 0.3 * np.sin(np.arange(n) / 7.0)], axis=1).ravel()
        _wav16(tmp_path / name, stereo, channels=2)
    else:
        np.save(tmp_path / name, v)
    run(tmp_path, "cwt", name, "-o", "whole.npy", "--device", "cpu", *flags)
    r = run(tmp_path, "cwt", name, "-o", "stream.npy", "--coi-out", "coi.npy", "--stream",
            "--chunk", "7777", "--explain", "--device", "cpu", *flags)
    assert "holds at most" in r.stdout and "first columns come after" in r.stdout
    whole = np.load(tmp_path / "whole.npy")
    streamed = np.load(tmp_path / "stream.npy")
    assert streamed.dtype == whole.dtype and streamed.shape == whole.shape
    assert streamed.tobytes() == whole.tobytes()
    coi = np.load(tmp_path / "coi.npy")
    assert coi.shape == (whole.shape[1],) and coi[0] == 0 and coi.max() > 0


def test_cwt_stream_refusals_leave_nothing(tmp_path, x):
    r = run(tmp_path, "cwt", "x.npy", "-o", "w.npy", "--stream", "--boundary", "periodic", ok=False)
    assert r.returncode != 0 and "periodic" in r.stderr
    r = run(tmp_path, "cwt", "x.npy", "-o", "w.npy", "--stream", "--plot", "p.png", ok=False)
    assert r.returncode != 0 and "--plot" in r.stderr
    assert not (tmp_path / "w.npy").exists() and not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("mode,post", [("full", "none"), ("same", "derivative"), ("valid", "power")])
def test_fir_stream_file_equals_the_whole_bank(tmp_path, mode, post):
    rng = np.random.default_rng(8)
    x = rng.standard_normal(60_001)
    h = rng.standard_normal((3, 700))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "h.npy", h)
    args = ["x.npy", "--filters", "h.npy", "--mode", mode, "--post", post, "--device", "cpu"]
    run(tmp_path, "fir", *args, "-o", "whole.npy")
    run(tmp_path, "fir", *args, "-o", "stream.npy", "--stream", "--chunk", "5000")
    whole, streamed = np.load(tmp_path / "whole.npy"), np.load(tmp_path / "stream.npy")
    assert streamed.dtype == whole.dtype and streamed.tobytes() == whole.tobytes()
    if post == "none" and mode == "full":
        np.testing.assert_allclose(streamed[1], np.convolve(x, h[1]), rtol=1e-10, atol=1e-10)


def test_icwt_inverts_what_cwt_wrote(tmp_path):
    """multires cwt then multires icwt with the same scale flags: numpy reads
    a signal equal to multires.icwt's, and a band well inside the scales
    comes back."""
    import multires

    n = 4096
    t = np.arange(n)
    x = np.cos(2 * np.pi * t / 40.0) * np.hanning(n)
    np.save(tmp_path / "x.npy", x)
    flags = ["--wavelet", "cmor1.5-1.0", "--scales-voices", "2:1024:32"]
    run(tmp_path, "cwt", "x.npy", "-o", "W.npy", "--device", "cpu", *flags)
    run(tmp_path, "icwt", "W.npy", "-o", "x2.npy", *flags)
    x2 = np.load(tmp_path / "x2.npy")
    assert x2.shape == (n,) and x2.dtype == np.float64
    inner = slice(n // 4, 3 * n // 4)
    assert np.linalg.norm(x2[inner] - x[inner]) <= 1e-3 * np.linalg.norm(x[inner])
    W = np.load(tmp_path / "W.npy")
    scales = 2.0 ** (np.arange(0, 32 * 9 + 1) / 32) * 2
    ref = multires.icwt(W, "cmor1.5-1.0", scales)
    np.testing.assert_allclose(x2, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    run(tmp_path, "icwt", "W.npy", "-o", "band.npy", "--band", "20:80", *flags)
    assert np.linalg.norm(np.load(tmp_path / "band.npy")[inner] - x[inner]) <= 1e-2 * np.linalg.norm(x[inner])
    r = run(tmp_path, "icwt", "W.npy", "-o", "bad.npy", "--wavelet", "cmor1.5-1.0", "--scales", "1:10", ok=False)
    assert r.returncode != 0 and "rows" in r.stderr and not (tmp_path / "bad.npy").exists()


def test_coherence_significance_in_the_npz_and_on_the_plot(tmp_path):
    """--sig: the Monte Carlo level per scale in the .npz (numpy reads it),
    near multires.wct_significance's (other draws: the Monte Carlo spread),
    the shared band above it, and its contour drawn on the plot."""
    import multires
    from PIL import Image

    n = 512
    rng = np.random.default_rng(4)
    t = np.arange(n)
    s = np.sin(2 * np.pi * t / 16.0)
    a, b = s + 0.5 * rng.standard_normal(n), np.roll(s, 3) + 0.5 * rng.standard_normal(n)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    common = ["coherence", "a.npy", "b.npy", "--dj", "0.25", "--device", "cpu"]
    run(tmp_path, *common, "-o", "C.npz", "--plot", "C.png", "--sig", "--mc-count", "80", "--seed", "5")
    run(tmp_path, *common, "-o", "N.npz", "--plot", "N.png")
    with np.load(tmp_path / "C.npz") as f:
        assert "sig" in f.files
        sig, wct, freq = f["sig"], f["wct"], f["freq"]
    assert sig.shape == freq.shape and np.nanmax(sig) < 1 and np.nanmin(sig) > 0
    al1, al2 = multires.ar1(a)[0], multires.ar1(b)[0]
    J = freq.size - 1
    ref = multires.wct_significance(al1, al2, 1.0, dj=0.25, J=J, mc_count=80, seed=5)
    ok = np.isfinite(ref) & np.isfinite(sig)
    assert ok[2:-2].all() and np.abs(sig - ref)[ok][2:-2].max() < 0.1
    band = np.abs(np.log2(1 / freq / 16.0)) < 0.2
    assert (wct[band][:, 150:-150] > sig[band][:, None]).mean() > 0.8
    with Image.open(tmp_path / "C.png") as im, Image.open(tmp_path / "N.png") as nm:
        black = lambda m: int((np.asarray(m.convert("RGB")).sum(axis=-1) == 0).sum())
        assert black(im) > black(nm) + 200  # the contour, beyond the arrows both draw
    run(tmp_path, *common, "-o", "D.npz", "--sig", "--mc-count", "80", "--seed", "5")
    with np.load(tmp_path / "D.npz") as f:
        np.testing.assert_array_equal(f["sig"], sig)  # seeded: a run repeats


def test_codec_files_keep_integers_shapes_nan_and_bits(tmp_path):
    rng = np.random.default_rng(8)
    img = (np.cumsum(rng.integers(-3, 4, (60, 70)), 1) + 1000).astype(np.uint16)
    sig = np.cumsum(rng.standard_normal(3000))
    v4 = np.cumsum(rng.standard_normal((3, 5, 20, 24)), -1).astype(np.float32)
    nan = np.cumsum(rng.standard_normal((30, 40)), 1).astype(np.float32)
    nan[3] = np.nan
    nan[5, 5] = -np.inf
    for name, a in [("img", img), ("sig", sig), ("v4", v4), ("nan", nan)]:
        np.save(tmp_path / f"{name}.npy", a)
    run(tmp_path, "compress", "img.npy", "-o", "img.mrz", "--error-bound", "abs:2", "--device", "cpu")
    run(tmp_path, "decompress", "img.mrz", "-o", "img2.npy", "--device", "cpu")
    back = np.load(tmp_path / "img2.npy")
    assert back.dtype == np.uint16 and np.abs(back.astype(int) - img).max() <= 2
    info = run(tmp_path, "info", "img.mrz").stdout
    assert "uint16" in info and "integers within 2" in info
    # Lossless: the same bytes, also for a region of a 1-D signal.
    r = run(tmp_path, "compress", "sig.npy", "-o", "sig.mrz", "--error-bound", "lossless", "--device", "cpu")
    assert "max error 0.000e0" in r.stdout
    run(tmp_path, "decompress", "sig.mrz", "-o", "part.npy", "--region", "100:2500", "--device", "cpu")
    assert np.load(tmp_path / "part.npy").tobytes() == sig[100:2500].tobytes()
    # 4-D, whole and a box across steps of the first axis.
    run(tmp_path, "compress", "v4.npy", "-o", "v4.mrz", "--error-bound", "abs:0.01", "--device", "cpu")
    run(tmp_path, "decompress", "v4.mrz", "-o", "v4b.npy", "--device", "cpu")
    run(tmp_path, "decompress", "v4.mrz", "-o", "box.npy", "--region", "1:3,2:4,:,5:9", "--device", "cpu")
    whole, box = np.load(tmp_path / "v4b.npy"), np.load(tmp_path / "box.npy")
    assert whole.shape == v4.shape and np.abs(whole - v4).max() <= 0.01
    np.testing.assert_array_equal(box, whole[1:3, 2:4, :, 5:9])
    # NaN and infinities come back where they were; the rest within the bound.
    run(tmp_path, "compress", "nan.npy", "-o", "nan.mrz", "--error-bound", "rel:1e-3", "--device", "cpu")
    run(tmp_path, "decompress", "nan.mrz", "-o", "nan2.npy", "--device", "cpu")
    got = np.load(tmp_path / "nan2.npy")
    fin = np.isfinite(nan)
    assert np.array_equal(np.isnan(got), np.isnan(nan)) and got[5, 5] == -np.inf
    assert np.abs(got[fin] - nan[fin]).max() <= 1e-3 * np.ptp(nan[fin])
    # What cannot be done says so and writes nothing.
    r = run(tmp_path, "decompress", "v4.mrz", "-o", "v4.png", ok=False)
    assert r.returncode != 0 and "2-D" in r.stderr and not (tmp_path / "v4.png").exists()
    r = run(tmp_path, "compress", "sig.npy", "-o", "bad.mrz", "--error-bound", "lossless", "--transform", "cdf97", ok=False)
    assert r.returncode != 0 and "interp" in r.stderr and not (tmp_path / "bad.mrz").exists()


def test_decompress_level_is_the_coarse_view(tmp_path):
    rng = np.random.default_rng(9)
    z, y, x = np.meshgrid(*[np.linspace(0, 3, n) for n in (50, 60, 40)], indexing="ij")
    a = (np.sin(2 * y + z) * np.cos(3 * x) + 0.01 * rng.standard_normal(z.shape)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    run(tmp_path, "compress", "a.npy", "-o", "a.mrz", "--error-bound", "abs:1e-3", "--brick", "33",
        "--device", "cpu")
    r = run(tmp_path, "decompress", "a.mrz", "-o", "c.npy", "--level", "2", "--device", "cpu")
    assert "every 4th point of each brick of [33, 33, 33]" in r.stdout
    c = np.load(tmp_path / "c.npy")
    keep = [np.array([i for i in range(n) if (i % 33) % 4 == 0]) for n in a.shape]
    assert c.shape == tuple(len(k) for k in keep)
    assert np.abs(c - a[np.ix_(*keep)]).max() <= 1e-3
    r = run(tmp_path, "decompress", "a.mrz", "-o", "cr.npy", "--level", "1", "--region", "5:40,:,10:", "--device", "cpu")
    keep = [np.array([i for i in range(lo, hi) if (i % 33) % 2 == 0]) for lo, hi in ((5, 40), (0, 60), (10, 40))]
    assert np.abs(np.load(tmp_path / "cr.npy") - a[np.ix_(*keep)]).max() <= 1e-3
    r = run(tmp_path, "decompress", "a.mrz", "-o", "bad.npy", "--level", "40", ok=False)
    assert r.returncode != 0 and "level" in r.stderr and not (tmp_path / "bad.npy").exists()


def test_fast_profile_file_holds_the_bound_and_equals_pythons(tmp_path):
    multires = pytest.importorskip("multires")
    rng = np.random.default_rng(11)
    z, y, xx = np.meshgrid(*[np.linspace(0, 4, n) for n in (41, 37, 66)], indexing="ij")
    a = (np.sin(2 * y + z) * np.cos(3 * xx) + 0.01 * rng.standard_normal(z.shape)).astype(np.float32)
    a[7] = np.nan                      # a masked plane
    a[3, 5, 9] = -np.inf
    np.save(tmp_path / "a.npy", a)
    for rel in (1e-2, 1e-3, 1e-4):
        run(tmp_path, "compress", "a.npy", "-o", "f.mrz", "--profile", "fast",
            "--error-bound", f"rel:{rel}", "--device", "cpu")
        run(tmp_path, "decompress", "f.mrz", "-o", "f.npy", "--device", "cpu")
        y = np.load(tmp_path / "f.npy")
        assert y.dtype == np.float32 and y.shape == a.shape
        fin = np.isfinite(a)
        e = rel * (a[fin].max() - a[fin].min())
        assert np.abs(y[fin].astype(np.float64) - a[fin]).max() <= e
        assert np.array_equal(np.isnan(y), np.isnan(a)) and y[3, 5, 9] == -np.inf
        data = (tmp_path / "f.mrz").read_bytes()
        assert data == multires.compress(a, rel=rel, profile="fast", device="cpu")
        assert len(data) < a.nbytes / 2
    info = run(tmp_path, "info", "f.mrz").stdout
    assert "lorenzo" in info and "version 9" in info
    r = run(tmp_path, "compress", "a.npy", "-o", "g.mrz", "--profile", "fast", "--transform", "cdf97",
            ok=False)
    assert r.returncode != 0 and "--transform cdf97" in r.stderr and not (tmp_path / "g.mrz").exists()
