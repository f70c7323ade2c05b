"""multires.pywt wavelet packets against PyWavelets' own trees."""

import pickle

import numpy as np
import pytest
import pywt as ref

import multires.pywt as mp


def _same_nodes(ours, theirs, atol=1e-12):
    assert [n.path for n in ours] == [n.path for n in theirs]
    for a, b in zip(ours, theirs):
        assert a.level == b.level and a.data.shape == b.data.shape and a.data.dtype == b.data.dtype
        np.testing.assert_allclose(a.data, b.data, rtol=0, atol=atol * max(1.0, np.abs(b.data).max()))


@pytest.mark.parametrize("wavelet,mode", [("db2", "symmetric"), ("sym5", "periodization"), ("bior2.2", "zero"), ("haar", "smooth")])
def test_wavelet_packet_1d_levels_paths_and_reconstruct(rng, wavelet, mode):
    x = rng.standard_normal(173)
    ours, theirs = mp.WaveletPacket(x, wavelet, mode), ref.WaveletPacket(x, wavelet, mode)
    assert ours.maxlevel == theirs.maxlevel
    for level in range(1, ours.maxlevel + 1):
        for order in ("natural", "freq"):
            _same_nodes(ours.get_level(level, order), theirs.get_level(level, order))
    np.testing.assert_allclose(ours["ad"].data, theirs["ad"].data, atol=1e-12)
    assert ours["ad"].path == "ad" and ours["ad"].node_name == "d" and ours[("a", "d")].level == 2
    assert ours["da"].path_tuple == ("d", "a")
    _same_nodes(ours.get_leaf_nodes(), theirs.get_leaf_nodes())
    np.testing.assert_allclose(ours.reconstruct(update=False), theirs.reconstruct(update=False), rtol=0, atol=1e-11)
    # Editing, deleting and reconstructing as pywt does.
    for tree in (ours, theirs):
        tree["aa"].data = np.zeros_like(tree["aa"].data)
        del tree["ad"]
        del tree["da"]["a"]
    _same_nodes(ours.get_leaf_nodes(), theirs.get_leaf_nodes())
    np.testing.assert_allclose(ours.reconstruct(), theirs.reconstruct(), rtol=0, atol=1e-11)
    np.testing.assert_allclose(ours.data, theirs.data, rtol=0, atol=1e-11)


def test_wavelet_packet_1d_batches_axis_float32_and_errors(rng):
    x = rng.standard_normal((3, 128, 2)).astype(np.float32)
    ours, theirs = mp.WaveletPacket(x, "db3", axis=1, maxlevel=3), ref.WaveletPacket(x, "db3", axis=1, maxlevel=3)
    _same_nodes(ours.get_level(3), theirs.get_level(3), atol=1e-6)
    np.testing.assert_allclose(ours.reconstruct(), theirs.reconstruct(), atol=1e-5)
    with pytest.raises(ValueError, match="greater than the maximum"):
        ours.get_level(4)
    with pytest.raises(IndexError, match="out of range"):
        ours["aaaa"]
    with pytest.raises(ValueError, match="Subnode name"):
        ours["x"]
    with pytest.raises(ValueError, match="Maximum decomposition level"):
        ours["aaa"].decompose()
    # A tree built from nodes (data=None), as pywt allows.
    y = rng.standard_normal(64)
    full = mp.WaveletPacket(y, "db1", maxlevel=2)
    built, built_ref = mp.WaveletPacket(None, "db1", maxlevel=2), ref.WaveletPacket(None, "db1", maxlevel=2)
    for p in ("aa", "ad", "d"):
        built[p] = full[p].data
        built_ref[p] = full[p].data
    np.testing.assert_allclose(built.reconstruct(), built_ref.reconstruct(), atol=1e-12)
    np.testing.assert_allclose(built.reconstruct(), y, atol=1e-12)
    again = pickle.loads(pickle.dumps(mp.WaveletPacket(y, "db2")))
    np.testing.assert_allclose(again["ad"].data, ref.WaveletPacket(y, "db2")["ad"].data, atol=1e-12)


def test_wavelet_packet_2d_and_nd(rng):
    x = rng.standard_normal((40, 36))
    ours, theirs = mp.WaveletPacket2D(x, "db2", "symmetric", maxlevel=3), ref.WaveletPacket2D(x, "db2", "symmetric", maxlevel=3)
    for level in (1, 2, 3):
        _same_nodes(ours.get_level(level), theirs.get_level(level))
        fo, ft = ours.get_level(level, "freq"), theirs.get_level(level, "freq")
        assert [len(r) for r in fo] == [len(r) for r in ft]
        _same_nodes([n for r in fo for n in r], [n for r in ft for n in r])
    assert ours["hv"].path == "hv" and ours.expand_2d_path("hv") == theirs.expand_2d_path("hv")
    np.testing.assert_allclose(ours.reconstruct(), theirs.reconstruct(), rtol=0, atol=1e-11)
    y = rng.standard_normal((16, 6, 16))
    ours, theirs = mp.WaveletPacketND(y, "db1", maxlevel=2, axes=(0, 2)), ref.WaveletPacketND(y, "db1", maxlevel=2, axes=(0, 2))
    _same_nodes(ours.get_level(2), theirs.get_level(2))
    assert ours["adda"].path == "adda"
    np.testing.assert_allclose(ours.reconstruct(), theirs.reconstruct(), rtol=0, atol=1e-12)


def test_best_basis_and_energies(rng):
    t = np.arange(1024)
    x = np.sin(2 * np.pi * 0.31 * t) + 0.05 * rng.standard_normal(1024)
    wp = mp.WaveletPacket(x, "db4", "periodization", maxlevel=5)
    e = wp.energies(4)
    assert e.shape == (16,)
    # Periodization with an orthogonal wavelet keeps the energy at every level.
    assert abs(e.sum() - np.sum(x**2)) < 1e-9 * np.sum(x**2)
    # The tone at 0.31 cycles/sample lies in band floor(0.31 / (0.5 / 16)) = 9 in frequency order.
    assert int(np.argmax(e)) == 9
    basis = wp.best_basis("shannon")
    # A basis: the leaves' bands tile [0, 1) exactly once.
    cover = sum(2.0 ** -n.level for n in basis)
    assert abs(cover - 1.0) < 1e-12
    cost = lambda nodes: sum(-np.sum(c * np.log(c)) for c in (n.data**2 for n in nodes) for c in [c[c > 0]])
    assert cost(basis) <= cost([wp]) + 1e-9 and cost(basis) <= cost(wp.get_level(5)) + 1e-9
    for level in range(1, 6):
        assert cost(basis) <= cost(wp.get_level(level)) + 1e-9
    assert len(wp.best_basis("log energy")) >= 1
    with pytest.raises(ValueError, match="entropy"):
        wp.best_basis("tsallis")
