"""mra/imra (and 2-D, n-D) against PyWavelets; MODWT against MATLAB's
documented algorithm (written here in numpy's FFT) and its properties."""

import numpy as np
import pytest
import pywt as ref

import multires.pywt as mp
from coeff_lists import flat




@pytest.mark.parametrize("transform,mode", [("swt", "periodization"), ("dwt", "symmetric"), ("dwt", "periodization")])
def test_mra_equals_pywt_and_sums_to_signal(rng, transform, mode):
    x = rng.standard_normal(256)
    ours = mp.mra(x, "db3", level=4, transform=transform, mode=mode)
    theirs = ref.mra(x, "db3", level=4, transform=transform, mode=mode)
    assert len(ours) == len(theirs) == 5
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mp.imra(ours), x, rtol=0, atol=1e-12)


def test_mra2_mran_equal_pywt(rng):
    x = rng.standard_normal((32, 32))
    for transform in ("swt2", "dwt2"):
        mode = "periodization" if transform == "swt2" else "symmetric"
        ours = mp.mra2(x, "sym4", 2, transform=transform, mode=mode)
        theirs = ref.mra2(x, "sym4", 2, transform=transform, mode=mode)
        for a, b in zip(flat(ours), flat(theirs)):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mp.imra2(ours), x, atol=1e-10)
    y = rng.standard_normal((16, 8, 8))
    for transform in ("swtn", "dwtn"):
        ours = mp.mran(y, "db2", 2, transform=transform)
        theirs = ref.mran(y, "db2", 2, transform=transform)
        for a, b in zip(flat(ours), flat(theirs)):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mp.imran(ours), y, atol=1e-11)
    with pytest.raises(ValueError, match="periodization"):
        mp.mra(np.zeros(16), "db1", transform="swt", mode="symmetric")


def _matlab_modwt(x, wavelet, level):
    """MATLAB's modwt.m algorithm: synthesis filters / sqrt(2), their
    N-point DFTs (periodized), at level j sampled at 2^(j-1) k mod N."""
    w = ref.Wavelet(wavelet)
    n = len(x)
    g = np.array(w.rec_lo) / np.sqrt(2)
    h = np.array(w.rec_hi) / np.sqrt(2)
    wrap = lambda f: np.bincount(np.arange(len(f)) % n, weights=f, minlength=n)
    G, H = np.fft.fft(wrap(g)), np.fft.fft(wrap(h))
    k = np.arange(n)
    V = np.fft.fft(x)
    out = []
    for j in range(1, level + 1):
        up = (2 ** (j - 1) * k) % n
        out.append(np.fft.ifft(H[up] * V).real)
        V = G[up] * V
    out.append(np.fft.ifft(V).real)
    return np.array(out)


@pytest.mark.parametrize("wavelet,n", [("haar", 64), ("db4", 100), ("sym4", 37), ("coif3", 20), ("db10", 15)])
def test_modwt_matches_matlab_algorithm_and_properties(rng, wavelet, n):
    x = rng.standard_normal(n)
    w = mp.modwt(x, wavelet)
    level = int(np.log2(n))
    assert w.shape == (level + 1, n)
    np.testing.assert_allclose(w, _matlab_modwt(x, wavelet, level), rtol=0, atol=1e-12)
    # Energy preservation, exact inverse, the MRA sums to the signal: to
    # 1e-12 plus what the tabulated filters lack of orthogonality (pywt's
    # sym4 taps are orthogonal to 5e-13 only).
    g = np.array(ref.Wavelet(wavelet).rec_lo)
    defect = max(abs(np.dot(g[: len(g) - 2 * m], g[2 * m :]) - (m == 0)) for m in range(len(g) // 2))
    tol = 1e-12 + 20 * defect
    assert abs(np.sum(w**2) - np.sum(x**2)) < 1e-10 * np.sum(x**2)
    np.testing.assert_allclose(mp.imodwt(w, wavelet), x, rtol=0, atol=tol)
    m = mp.modwtmra(w, wavelet)
    assert m.shape == w.shape
    np.testing.assert_allclose(m.sum(axis=0), x, rtol=0, atol=tol)
    # Shift equivariance: circularly shifting the signal shifts every plane.
    np.testing.assert_allclose(mp.modwt(np.roll(x, 5), wavelet), np.roll(w, 5, axis=-1), rtol=0, atol=1e-12)


def test_modwt_batches_levels_dtypes_and_errors(rng):
    x = rng.standard_normal((3, 50))
    w = mp.modwt(x, "db2", 3)
    assert w.shape == (4, 3, 50)
    for r in range(3):
        np.testing.assert_allclose(w[:, r], _matlab_modwt(x[r], "db2", 3), atol=1e-12)
    np.testing.assert_allclose(mp.modwt(x.T, "db2", 3, axis=0), w, atol=0)
    w32 = mp.modwt(x.astype(np.float32), "db2", 3)
    assert w32.dtype == np.float32
    np.testing.assert_allclose(w32, w, atol=1e-5)
    z = x + 1j * rng.standard_normal(x.shape)
    np.testing.assert_allclose(mp.imodwt(mp.modwt(z, "sym3"), "sym3"), z, atol=1e-12)
    with pytest.raises(ValueError, match="level"):
        mp.modwt(np.zeros(8), "db1", 4)
    with pytest.raises(ValueError, match="orthogonal"):
        mp.modwt(np.zeros(8), "bior2.2", 1)
    with pytest.raises(ValueError, match="shape"):
        mp.imodwt(np.zeros(8), "db1")
