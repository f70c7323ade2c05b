"""PyWavelets' API on the multires engine (type stubs)."""

from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

WaveletLike = Union[str, "Wavelet"]
ModeLike = Union[str, int]
Axes = Optional[Sequence[int]]

class Modes:
    """Signal extension modes with PyWavelets' names and numbers."""

    zero: int
    symmetric: int
    constant: int
    smooth: int
    periodic: int
    periodization: int
    reflect: int
    antisymmetric: int
    antireflect: int
    modes: list[str]
    @classmethod
    def from_object(cls, mode: ModeLike) -> int:
        """The number of a mode given by name or number."""

class Wavelet:
    """A discrete wavelet by name or from a filter bank."""

    name: str
    family_name: str
    short_family_name: str
    orthogonal: bool
    biorthogonal: bool
    symmetry: str
    vanishing_moments_psi: Optional[int]
    vanishing_moments_phi: Optional[int]
    number: Optional[int]
    dec_lo: list[float]
    dec_hi: list[float]
    rec_lo: list[float]
    rec_hi: list[float]
    dec_len: int
    rec_len: int
    filter_bank: tuple[list[float], list[float], list[float], list[float]]
    inverse_filter_bank: tuple[list[float], list[float], list[float], list[float]]
    def __init__(self, name: str = "", filter_bank: Any = None) -> None: ...
    def wavefun(self, level: int = 8) -> list[NDArray[np.float64]]:
        """[phi, psi, x] (orthogonal) or [phi_d, psi_d, phi_r, psi_r, x] by the cascade algorithm."""

class ContinuousWavelet:
    """A continuous wavelet of PyWavelets' families."""

    name: str
    family_name: str
    short_family_name: str
    complex_cwt: bool
    lower_bound: float
    upper_bound: float
    symmetry: str
    center_frequency: Optional[float]
    bandwidth_frequency: Optional[float]
    fbsp_order: Optional[int]
    def __init__(self, name: str = "", dtype: Any = ...) -> None: ...
    def wavefun(self, level: int = 8, length: Optional[int] = None) -> tuple[np.ndarray, NDArray[np.float64]]:
        """(psi, x) on ``length`` points from lower_bound to upper_bound."""

def DiscreteContinuousWavelet(name: str = "", filter_bank: Any = None) -> Union[Wavelet, ContinuousWavelet]:
    """A Wavelet or a ContinuousWavelet, whichever ``name`` names."""
def wavelist(family: Optional[str] = None, kind: str = "all") -> list[str]:
    """Names of the wavelets of a family (all without one)."""
def families(short: bool = True) -> list[str]:
    """Wavelet family names."""
def dwt(data: ArrayLike, wavelet: WaveletLike, mode: ModeLike = "symmetric", axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """One level of the DWT: (cA, cD)."""
def idwt(cA: Optional[ArrayLike], cD: Optional[ArrayLike], wavelet: WaveletLike, mode: ModeLike = "symmetric", axis: int = -1) -> np.ndarray:
    """One level of the inverse DWT; either input may be None."""
def downcoef(part: str, data: ArrayLike, wavelet: WaveletLike, mode: ModeLike = "symmetric", level: int = 1) -> np.ndarray:
    """Approximation or detail coefficients of one level."""
def upcoef(part: str, coeffs: ArrayLike, wavelet: WaveletLike, level: int = 1, take: int = 0) -> np.ndarray:
    """Direct reconstruction from one kind of coefficients."""
def pad(x: ArrayLike, pad_widths: Any, mode: ModeLike) -> np.ndarray:
    """Extends x with a DWT extension mode."""
def wavedec(data: Any, wavelet: WaveletLike, mode: ModeLike = "symmetric", level: Optional[int] = None, axis: int = -1, *, device: str = "cpu") -> list[Any]:
    """Multilevel 1-D DWT: [cA_n, cD_n, ..., cD_1]; device='cuda' batches on the GPU."""
def waverec(coeffs: Sequence[Any], wavelet: WaveletLike, mode: ModeLike = "symmetric", axis: int = -1, *, device: str = "cpu") -> np.ndarray:
    """Inverse of wavedec."""
def dwt2(data: ArrayLike, wavelet: Any, mode: Any = "symmetric", axes: Sequence[int] = (-2, -1)) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """One level of the 2-D DWT: (cA, (cH, cV, cD))."""
def idwt2(coeffs: Any, wavelet: Any, mode: Any = "symmetric", axes: Sequence[int] = (-2, -1)) -> np.ndarray:
    """Inverse of dwt2."""
def wavedec2(data: ArrayLike, wavelet: Any, mode: Any = "symmetric", level: Optional[int] = None, axes: Sequence[int] = (-2, -1)) -> list[Any]:
    """Multilevel 2-D DWT: [cAn, (cHn, cVn, cDn), ..., (cH1, cV1, cD1)]."""
def waverec2(coeffs: Sequence[Any], wavelet: Any, mode: Any = "symmetric", axes: Sequence[int] = (-2, -1)) -> np.ndarray:
    """Inverse of wavedec2."""
def dwtn(data: ArrayLike, wavelet: Any, mode: Any = "symmetric", axes: Axes = None) -> dict[str, np.ndarray]:
    """One level of the n-D DWT: a dict of 'a'/'d' keys."""
def idwtn(coeffs: dict[str, Any], wavelet: Any, mode: Any = "symmetric", axes: Axes = None) -> np.ndarray:
    """Inverse of dwtn (missing or None entries are zeros)."""
def wavedecn(data: ArrayLike, wavelet: Any, mode: Any = "symmetric", level: Optional[int] = None, axes: Axes = None) -> list[Any]:
    """Multilevel n-D DWT: [cAn, {details_n}, ..., {details_1}]."""
def waverecn(coeffs: Sequence[Any], wavelet: Any, mode: Any = "symmetric", axes: Axes = None) -> np.ndarray:
    """Inverse of wavedecn."""
def dwt_max_level(data_len: int, filter_len: Union[int, str, Wavelet]) -> int:
    """floor(log2(data_len / (filter_len - 1)))."""
def dwt_coeff_len(data_len: int, filter_len: Union[int, str, Wavelet], mode: ModeLike) -> int:
    """Coefficients per level."""
def dwtn_max_level(shape: Sequence[int], wavelet: Any, axes: Axes = None) -> int:
    """The deepest level every transformed axis allows."""
def wavedecn_shapes(shape: Sequence[int], wavelet: Any, mode: Any = "symmetric", level: Optional[int] = None, axes: Axes = None) -> list[Any]:
    """The shapes wavedecn would return."""
def wavedecn_size(shapes: Sequence[Any]) -> int:
    """Coefficients in a wavedecn_shapes result."""
def coeffs_to_array(coeffs: list[Any], padding: Optional[float] = 0, axes: Axes = None) -> tuple[np.ndarray, list[Any]]:
    """Packs multilevel coefficients into one array."""
def array_to_coeffs(arr: ArrayLike, coeff_slices: list[Any], output_format: str = "wavedecn") -> list[Any]:
    """Inverse of coeffs_to_array."""
def ravel_coeffs(coeffs: list[Any], axes: Axes = None) -> tuple[np.ndarray, list[Any], list[Any]]:
    """Flattens multilevel coefficients into one 1-D array."""
def unravel_coeffs(arr: ArrayLike, coeff_slices: list[Any], coeff_shapes: list[Any], output_format: str = "wavedecn") -> list[Any]:
    """Inverse of ravel_coeffs."""
def cwt(data: Any, scales: ArrayLike, wavelet: Any, sampling_period: float = 1.0, method: str = "conv", axis: int = -1, *, precision: int = 12, device: str = "auto") -> tuple[Any, NDArray[np.float64]]:
    """PyWavelets' cwt signature computing the exact sum: (coefs, frequencies)."""
def scale2frequency(wavelet: Any, scale: Any, precision: int = 8) -> Any:
    """Normalized frequency of a CWT scale."""
def frequency2scale(wavelet: Any, freq: Any, precision: int = 8) -> Any:
    """CWT scale of a normalized frequency."""
def central_frequency(wavelet: Any, precision: int = 8) -> float:
    """PyWavelets' centre frequency (the FFT peak of psi)."""
def integrate_wavelet(wavelet: Any, precision: int = 8) -> tuple[np.ndarray, ...]:
    """Running integral of psi on PyWavelets' grid."""
def qmf(filt: ArrayLike) -> np.ndarray:
    """Quadrature mirror filter."""
def orthogonal_filter_bank(scaling_filter: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The filter bank of an orthogonal wavelet from its scaling filter."""
def threshold(data: ArrayLike, value: float, mode: str = "soft", substitute: float = 0) -> np.ndarray:
    """soft, hard, garrote, greater or less thresholding."""
def threshold_firm(data: ArrayLike, value_low: float, value_high: float) -> np.ndarray:
    """Firm thresholding."""

def swt(
    data: ArrayLike,
    wavelet: Any,
    level: Optional[int] = None,
    start_level: int = 0,
    axis: int = -1,
    trim_approx: bool = False,
    norm: bool = False,
    *,
    device: str = "cpu",
) -> list[Any]:
    """Multilevel 1-D stationary wavelet transform, as pywt.swt (device='cuda': on the GPU)."""
def iswt(coeffs: Any, wavelet: Any, norm: bool = False, axis: int = -1) -> np.ndarray:
    """The signal of swt's coefficients, as pywt.iswt."""
def swt2(data: ArrayLike, wavelet: Any, level: int, start_level: int = 0, axes: Sequence[int] = (-2, -1), trim_approx: bool = False, norm: bool = False, *, device: str = "cpu") -> list[Any]:
    """2-D stationary wavelet transform, as pywt.swt2."""
def iswt2(coeffs: Any, wavelet: Any, norm: bool = False, axes: Sequence[int] = (-2, -1)) -> np.ndarray:
    """Inverse of swt2, as pywt.iswt2."""
def swtn(data: ArrayLike, wavelet: Any, level: int, start_level: int = 0, axes: Axes = None, trim_approx: bool = False, norm: bool = False, *, device: str = "cpu") -> list[Any]:
    """n-D stationary wavelet transform, as pywt.swtn."""
def iswtn(coeffs: Any, wavelet: Any, axes: Axes = None, norm: bool = False) -> np.ndarray:
    """Inverse of swtn, as pywt.iswtn."""
def swt_max_level(input_len: Any) -> int:
    """How many times input_len halves evenly (pywt.swt_max_level)."""
def mra(data: ArrayLike, wavelet: Any, level: Optional[int] = None, axis: int = -1, transform: str = "swt", mode: str = "periodization") -> list[np.ndarray]:
    """1-D multiresolution analysis, as pywt.mra."""
def imra(mra_coeffs: Sequence[Any]) -> np.ndarray:
    """The sum of mra's components."""
def mra2(data: ArrayLike, wavelet: Any, level: Optional[int] = None, axes: Sequence[int] = (-2, -1), transform: str = "swt2", mode: str = "periodization") -> list[Any]:
    """2-D multiresolution analysis, as pywt.mra2."""
def imra2(mra_coeffs: Sequence[Any]) -> np.ndarray:
    """The sum of mra2's components."""
def mran(data: ArrayLike, wavelet: Any, level: Optional[int] = None, axes: Axes = None, transform: str = "swtn", mode: str = "periodization") -> list[Any]:
    """n-D multiresolution analysis, as pywt.mran."""
def imran(mra_coeffs: Sequence[Any]) -> np.ndarray:
    """The sum of mran's components."""
def modwt(x: ArrayLike, wavelet: Any = "sym4", level: Optional[int] = None, axis: int = -1, *, device: str = "cpu") -> np.ndarray:
    """MATLAB's maximal overlap DWT: (level + 1, ..., N), W_1 ... W_J then V_J."""
def imodwt(w: ArrayLike, wavelet: Any = "sym4", *, device: str = "cpu") -> np.ndarray:
    """The signal of modwt's array."""
def modwtmra(w: ArrayLike, wavelet: Any = "sym4", *, device: str = "cpu") -> np.ndarray:
    """MATLAB's modwtmra: details and smooth that sum to the signal."""
class FswavedecnResult:
    coeffs: np.ndarray
    coeff_slices: list[Any]
    axes: tuple[int, ...]
    levels: list[int]
    wavelets: list[Wavelet]
    wavelet_names: list[str]
    modes: list[str]
    approx: np.ndarray
    ndim: int
    ndim_transform: int
    def __getitem__(self, levels: Sequence[int]) -> np.ndarray: ...
    def __setitem__(self, levels: Sequence[int], x: ArrayLike) -> None: ...
    def detail_keys(self) -> list[tuple[int, ...]]: ...
def fswavedecn(data: ArrayLike, wavelet: Any, mode: Any = "symmetric", levels: Any = None, axes: Axes = None) -> FswavedecnResult:
    """Fully separable wavelet transform, as pywt.fswavedecn."""
def fswaverecn(fswavedecn_result: FswavedecnResult) -> np.ndarray:
    """Inverse of fswavedecn."""
def get_graycode_order(level: int, x: str = "a", y: str = "d") -> list[str]:
    """A level's paths in frequency order."""
class BaseNode:
    path: str
    level: int
    data: Any
    parent: Optional["BaseNode"]
    maxlevel: int
    node_name: str
    path_tuple: tuple[str, ...]
    is_empty: bool
    has_any_subnode: bool
    def __getitem__(self, path: Any) -> "BaseNode": ...
    def __setitem__(self, path: str, data: Any) -> None: ...
    def __delitem__(self, path: str) -> None: ...
    def decompose(self) -> tuple["BaseNode", ...]: ...
    def reconstruct(self, update: bool = False) -> np.ndarray: ...
    def get_subnode(self, part: str, decompose: bool = True) -> Optional["BaseNode"]: ...
    def get_leaf_nodes(self, decompose: bool = False) -> list["BaseNode"]: ...
    def walk(self, func: Any, args: tuple[Any, ...] = (), kwargs: Any = None, decompose: bool = True) -> None: ...
    def walk_depth(self, func: Any, args: tuple[Any, ...] = (), kwargs: Any = None, decompose: bool = True) -> None: ...
    def energies(self, level: int, order: str = "freq") -> np.ndarray: ...
    def best_basis(self, entropy: str = "shannon", level: Optional[int] = None) -> list["BaseNode"]: ...
class Node(BaseNode): ...
class Node2D(BaseNode): ...
class NodeND(BaseNode): ...
class WaveletPacket(Node):
    def __init__(self, data: Any, wavelet: Any, mode: str = "symmetric", maxlevel: Optional[int] = None, axis: int = -1, *, device: str = "cpu") -> None: ...
    def get_level(self, level: int, order: str = "natural", decompose: bool = True) -> list[Node]: ...
class WaveletPacket2D(Node2D):
    def __init__(self, data: Any, wavelet: Any, mode: str = "smooth", maxlevel: Optional[int] = None, axes: Sequence[int] = (-2, -1)) -> None: ...
    def get_level(self, level: int, order: str = "natural", decompose: bool = True) -> list[Any]: ...
class WaveletPacketND(NodeND):
    def __init__(self, data: Any, wavelet: Any, mode: str = "smooth", maxlevel: Optional[int] = None, axes: Axes = None) -> None: ...
    def get_level(self, level: int, decompose: bool = True) -> list[NodeND]: ...
