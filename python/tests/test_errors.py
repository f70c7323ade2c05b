"""Bad inputs raise the exception a user expects, with a message that says what is wrong."""

import numpy as np
import pytest

import multires
import multires.pywt as mp


def test_wavelet_names():
    with pytest.raises(ValueError, match="Unknown wavelet name 'db99'"):
        mp.Wavelet("db99")
    with pytest.raises(ValueError, match="(?i)continuous"):
        mp.dwt(np.ones(8), "morl")
    with pytest.raises(ValueError, match="unknown|wavelet"):
        multires.cwt(np.ones(64), [2.0], "nosuchwavelet")
    with pytest.raises(ValueError, match="Unknown continuous wavelet"):
        mp.ContinuousWavelet("db2x")


def test_modes_and_axes():
    with pytest.raises(ValueError, match="Unknown mode name"):
        mp.dwt(np.ones(8), "db1", "wrap")
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else Exception):
        mp.dwt(np.ones((4, 4)), "db1", axis=2)
    with pytest.raises(ValueError, match="unique"):
        mp.dwtn(np.ones((4, 4)), "db1", axes=(0, 0))


def test_mismatched_coefficients():
    with pytest.raises(ValueError, match="shape"):
        mp.idwt(np.ones(5), np.ones(6), "db1")
    with pytest.raises(ValueError, match="At least one"):
        mp.idwt(None, None, "db1")
    c = mp.wavedec(np.ones(64), "db2", level=2)
    c[1] = np.ones(3)
    with pytest.raises(ValueError, match="coefficients|fit"):
        mp.waverec(c, "db2")
    d = mp.wavedecn(np.ones((16, 16)), "haar", level=1)
    d[1]["ad"] = np.ones((3, 3))
    with pytest.raises(ValueError, match="equal size"):
        mp.waverecn(d, "haar")


def test_cwt_inputs():
    with pytest.raises(ValueError, match="empty|shape"):
        multires.cwt(np.array([]), [2.0])
    with pytest.raises(ValueError, match="scale"):
        multires.cwt(np.ones(64), [0.0, 2.0])
    with pytest.raises(ValueError, match="non-finite"):
        multires.cwt(np.array([1.0, np.nan, 2.0] * 20), [2.0])
    with pytest.raises(TypeError, match="dtype"):
        multires.cwt(np.array(["a", "b"]), [2.0])
    plan = multires.CwtPlan(128, [2.0, 4.0])
    with pytest.raises(ValueError, match="128 samples"):
        plan(np.ones(100))
    with pytest.raises(ValueError, match="out has shape"):
        plan(np.ones(128), out=np.empty((2, 100), np.complex128))
    with pytest.raises(ValueError, match="out has shape"):
        plan(np.ones(128), out=np.empty((2, 128), np.complex64))
    with pytest.raises(ValueError, match="C-contiguous"):
        plan(np.ones(128), out=np.empty((128, 2), np.complex128).T)
    with pytest.raises(ValueError, match="output"):
        multires.cwt(np.ones(64), [2.0], output="real-ish")
    with pytest.raises(ValueError, match="device"):
        multires.cwt(np.ones(64), [2.0], device="tpu")
    with pytest.raises(MemoryError):
        multires.CwtPlan(1 << 40, [1.0] * 1000)


def test_fir_inputs():
    with pytest.raises(ValueError, match="filters has shape"):
        multires.fir(np.ones(10), np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="mode"):
        multires.fir(np.ones(10), np.ones(3), mode="middle")
    with pytest.raises(ValueError, match="non-finite"):
        multires.fir(np.array([1.0, np.inf, 0.0]), np.ones(2))


def test_nan_in_dwt_propagates_like_pywt():
    import pywt as ref

    x = np.ones(16)
    x[5] = np.nan
    a = mp.wavedec(x, "db2", level=2)
    b = ref.wavedec(x, "db2", level=2)
    for p, q in zip(a, b):
        np.testing.assert_array_equal(np.isnan(p), np.isnan(q))
