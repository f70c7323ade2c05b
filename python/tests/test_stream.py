"""CwtStream and FirStream: chunks of any length give multires.cwt and
multires.fir of the whole signal bit for bit."""

import numpy as np
import pytest

import multires


def chunked(x, rng, most):
    """x split at random points, empty chunks included."""
    cuts = np.sort(rng.integers(0, len(x) + 1, size=max(1, len(x) // max(1, most // 2))))
    return np.split(x, cuts)


def run(stream, parts):
    got = [stream.push(p) for p in parts]
    before = sum(g.shape[-1] for g in got)
    got.append(stream.finish())
    return np.concatenate(got, axis=-1), before


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize(
    "wavelet,kw",
    [
        ("morl", {}),
        ("cmor1.5-1.0", {"boundary": "symmetric", "hop": 3, "output": "magnitude"}),
        ("mexh", {"boundary": "reflect", "algorithm": "fft", "precision": "f32"}),
        ("cmor1.5-1.0", {"algorithm": "direct", "output": "power", "dtype": "float16"}),
    ],
)
def test_cwt_stream_is_the_whole_transform(rng, wavelet, kw):
    scales = np.geomspace(1.5, 60, 18)
    s = multires.CwtStream(scales, wavelet, device="cpu", **kw)
    n = 3 * s.latency + 17
    x = rng.standard_normal(n)
    W, _ = multires.cwt(x, scales, wavelet, device="cpu", **kw)
    for most in (64, 5000, n):
        s = multires.CwtStream(scales, wavelet, device="cpu", **kw)
        got, before = run(s, chunked(x, rng, most))
        assert same_bits(got, W), (most, kw)
        assert before * kw.get("hop", 1) >= n - 2 * s.latency
        assert s.columns == W.shape[-1]


def test_complex_chunks_decide_the_stream(rng):
    scales = np.geomspace(2, 40, 10)
    x = rng.standard_normal(20_000) + 1j * rng.standard_normal(20_000)
    W, _ = multires.cwt(x, scales, "cmor1.5-1.0", device="cpu")
    s = multires.CwtStream(scales, "cmor1.5-1.0", device="cpu")
    got, _ = run(s, chunked(x, rng, 3000))
    assert same_bits(got, W)
    s = multires.CwtStream(scales, "cmor1.5-1.0", device="cpu")
    s.push(x.real[:10])
    with pytest.raises(ValueError, match="complex_input=True"):
        s.push(x[10:20])


def test_short_streams_and_misuse(rng):
    scales = np.geomspace(2, 40, 10)
    x = rng.standard_normal(50)
    s = multires.CwtStream(scales, device="cpu")
    assert s.push(x).shape == (10, 0)
    assert same_bits(s.finish(), multires.cwt(x, scales, device="cpu")[0])
    with pytest.raises(ValueError, match="finished"):
        s.push(x)
    with pytest.raises(ValueError, match="periodic"):
        multires.CwtStream(scales, boundary="periodic")
    with pytest.raises(ValueError, match="1-D"):
        multires.CwtStream(scales).push(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="sample 12"):
        t = multires.CwtStream(scales)
        t.push(np.zeros(10))
        t.push(np.array([0.0, 0.0, np.nan]))
    with pytest.raises(ValueError, match="empty"):
        multires.CwtStream(scales).finish()


def test_cwt_stream_frequencies_and_explain():
    s = multires.CwtStream(freqs=[5, 10, 20], fs=100.0, wavelet="cmor1.5-1.0")
    np.testing.assert_allclose(s.frequencies, [5, 10, 20], rtol=1e-12)
    assert "recipe" in s.explain()
    assert s.memory_bound > 0 and s.dtype == np.complex128


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("post", [None, "power", "derivative"])
@pytest.mark.parametrize("taps,algorithm", [(7, "direct"), (300, "overlap-save"), (900, "auto")])
def test_fir_stream_is_the_whole_bank(rng, mode, post, taps, algorithm):
    h = rng.standard_normal((3, taps))
    s = multires.FirStream(h, mode, post, algorithm=algorithm)
    n = 3 * s.latency + 5
    x = rng.standard_normal(n)
    y = multires.fir(x, h, mode, post, algorithm=algorithm, device="cpu")
    for most in (50, s.latency + 7):
        s = multires.FirStream(h, mode, post, algorithm=algorithm)
        got, before = run(s, chunked(x, rng, most))
        assert same_bits(got, y), (mode, post, most)
        assert before >= n - 2 * s.latency


def test_fir_stream_matches_numpy_convolve(rng):
    h = rng.standard_normal(31)
    x = rng.standard_normal(5000) + 1j * rng.standard_normal(5000)
    s = multires.FirStream(h, "full")
    got, _ = run(s, chunked(x, rng, 400))
    np.testing.assert_allclose(got[0], np.convolve(x, h, "full"), rtol=1e-12, atol=1e-12)
