"""PyWavelets' API on the multires engine.

``import multires.pywt as pywt`` runs code written for PyWavelets
unchanged: the same names, signatures, defaults, return structures and
dtypes, with results equal to PyWavelets' to 1e-12 in float64. Extra
keyword: ``device='cuda'`` on :func:`wavedec`/:func:`waverec` (and
:func:`cwt`) runs batches on the GPU.

Beyond the decimated transforms: the stationary transforms (``swt``,
``swt2``, ``swtn`` and inverses, ``device=`` on ``swt``), ``mra`` and its
2-D/n-D forms, ``fswavedecn``, wavelet packets (``WaveletPacket``,
``WaveletPacket2D``, ``WaveletPacketND``, with ``best_basis`` and
``energies`` added) and MATLAB's ``modwt``/``imodwt``/``modwtmra``.
PyWavelets' sample data (``pywt.data``) is not included.
"""

from ._coeffs import (
    array_to_coeffs,
    coeffs_to_array,
    ravel_coeffs,
    unravel_coeffs,
    wavedecn_shapes,
    wavedecn_size,
)
from ._cwt import (
    central_frequency,
    cwt,
    frequency2scale,
    integrate_wavelet,
    orthogonal_filter_bank,
    qmf,
    scale2frequency,
)
from ._dwt import (
    downcoef,
    dwt,
    dwt2,
    dwt_coeff_len,
    dwt_max_level,
    dwtn,
    dwtn_max_level,
    idwt,
    idwt2,
    idwtn,
    pad,
    upcoef,
    wavedec,
    wavedec2,
    wavedecn,
    waverec,
    waverec2,
    waverecn,
)
from ._fswt import FswavedecnResult, fswavedecn, fswaverecn
from ._mra import imodwt, imra, imra2, imran, modwt, modwtmra, mra, mra2, mran
from ._packets import BaseNode, Node, Node2D, NodeND, WaveletPacket, WaveletPacket2D, WaveletPacketND, get_graycode_order
from ._swt import iswt, iswt2, iswtn, swt, swt2, swt_max_level, swtn
from ._thresholding import threshold, threshold_firm
from ._wavelets import ContinuousWavelet, DiscreteContinuousWavelet, Modes, Wavelet, families, wavelist


__all__ = [
    "Wavelet", "ContinuousWavelet", "DiscreteContinuousWavelet", "Modes", "wavelist", "families",
    "dwt", "idwt", "downcoef", "upcoef", "pad", "wavedec", "waverec", "dwt2", "idwt2", "wavedec2", "waverec2",
    "dwtn", "idwtn", "wavedecn", "waverecn", "dwt_max_level", "dwt_coeff_len", "dwtn_max_level",
    "wavedecn_shapes", "wavedecn_size", "coeffs_to_array", "array_to_coeffs", "ravel_coeffs", "unravel_coeffs",
    "cwt", "scale2frequency", "frequency2scale", "central_frequency", "integrate_wavelet", "qmf",
    "orthogonal_filter_bank", "threshold", "threshold_firm", "swt", "iswt", "swt_max_level",
    "swt2", "iswt2", "swtn", "iswtn", "mra", "imra", "mra2", "imra2", "mran", "imran",
    "modwt", "imodwt", "modwtmra", "fswavedecn", "fswaverecn", "FswavedecnResult",
    "WaveletPacket", "WaveletPacket2D", "WaveletPacketND", "Node", "Node2D", "NodeND", "BaseNode", "get_graycode_order",
]
