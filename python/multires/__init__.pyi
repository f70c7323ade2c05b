"""multires: wavelet analysis on CPUs and NVIDIA GPUs (type stubs)."""

from os import PathLike
from typing import Any, Literal, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import pywt as pywt

__version__: str
Device = Literal["auto", "cpu", "cuda"]
Output = Literal["complex", "magnitude", "power", "phase"]

def set_num_threads(n: int) -> None:
    """Sets the CPU threads the engine uses (0: every core, or RAYON_NUM_THREADS)."""

def get_num_threads() -> int:
    """The CPU threads the engine uses."""

def cuda_available() -> bool:
    """Whether the CUDA backend can be used (a GPU, its driver and NVRTC)."""

def scale_to_frequency(wavelet: str, scales: ArrayLike, fs: float = 1.0) -> NDArray[np.float64]:
    """Centre frequency (in units of ``fs``) of each scale (in samples)."""

def frequency_to_scale(wavelet: str, freqs: ArrayLike, fs: float = 1.0) -> NDArray[np.float64]:
    """The scale (in samples) whose centre frequency is each of ``freqs``."""

class CwtPlan:
    """A CWT planned once for signals of ``n`` samples; ``plan(x)`` gives
    ``(..., len(scales), columns)`` coefficients, ``plan(x, out=W)`` writes into W."""

    wavelet: str
    fs: Optional[float]
    scales: NDArray[np.float64]
    def __init__(
        self,
        n: int,
        scales: ArrayLike,
        wavelet: str = "morl",
        *,
        output: Output = "complex",
        precision: Literal["f32", "f64"] = "f64",
        boundary: str = "zero",
        normalization: Literal["l2", "l1"] = "l2",
        hop: int = 1,
        algorithm: Literal["auto", "direct", "fft"] = "auto",
        device: Device = "auto",
        fs: Optional[float] = None,
        complex_input: bool = False,
        allow_nonfinite: bool = False,
        dtype: Any = None,
    ) -> None: ...
    @property
    def n(self) -> int:
        """Samples per signal."""
    @property
    def columns(self) -> int:
        """Output columns per signal (n / hop, rounded up)."""
    @property
    def dtype(self) -> np.dtype:
        """The coefficients' dtype."""
    @property
    def device(self) -> str:
        """Where the plan runs: 'cpu' or 'cuda'."""
    @property
    def frequencies(self) -> Optional[NDArray[np.float64]]:
        """Centre frequency of each row, in the units of ``fs``."""
    def explain(self) -> str:
        """How each scale is computed."""
    def __call__(self, x: Any, out: Optional[np.ndarray] = None) -> Any:
        """Transforms ``x`` of shape (..., n); a CUDA array stays on the device."""

class CwtStream:
    """The CWT of a signal pushed in chunks: ``push(chunk)`` returns the
    columns final so far, ``finish()`` the rest; joined they equal
    ``cwt`` of the whole signal bit for bit."""

    wavelet: str
    fs: Optional[float]
    scales: NDArray[np.float64]
    def __init__(
        self,
        scales: Optional[ArrayLike] = None,
        wavelet: str = "morl",
        *,
        freqs: Optional[ArrayLike] = None,
        fs: Optional[float] = None,
        output: Output = "complex",
        precision: Literal["f32", "f64"] = "f64",
        boundary: Literal["zero", "symmetric", "reflect"] = "zero",
        normalization: Literal["l2", "l1"] = "l2",
        hop: int = 1,
        algorithm: Literal["auto", "direct", "fft"] = "auto",
        complex_input: Optional[bool] = None,
        allow_nonfinite: bool = False,
        dtype: Any = None,
        device: Device = "auto",
        chunk: int = 65536,
    ) -> None: ...
    @property
    def dtype(self) -> np.dtype: ...
    @property
    def device(self) -> str:
        """Where the stream runs: 'cpu' or 'cuda'."""
    @property
    def latency(self) -> int:
        """Samples held before the first column comes out."""
    @property
    def samples(self) -> int: ...
    @property
    def columns(self) -> int: ...
    @property
    def memory_bound(self) -> int:
        """Bytes held besides a chunk and its output."""
    @property
    def frequencies(self) -> Optional[NDArray[np.float64]]: ...
    def explain(self) -> str: ...
    def push(self, chunk: ArrayLike) -> np.ndarray: ...
    def finish(self) -> np.ndarray: ...

class FirStream:
    """A filter bank over a signal pushed in chunks, bit for bit ``fir`` of
    the whole signal once joined."""

    def __init__(
        self,
        filters: ArrayLike,
        mode: Literal["full", "same", "valid"] = "same",
        post: Optional[Literal["power", "magnitude", "derivative"]] = None,
        *,
        algorithm: Literal["auto", "direct", "overlap-save"] = "auto",
        complex_input: Optional[bool] = None,
        allow_nonfinite: bool = False,
    ) -> None: ...
    @property
    def latency(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def columns(self) -> int: ...
    def explain(self) -> str: ...
    def push(self, chunk: ArrayLike) -> np.ndarray: ...
    def finish(self) -> np.ndarray: ...

def cwt(
    x: Any,
    scales: Optional[ArrayLike] = None,
    wavelet: str = "morl",
    *,
    freqs: Optional[ArrayLike] = None,
    fs: Optional[float] = None,
    spacing: Literal["log", "linear"] = "log",
    output: Output = "complex",
    precision: Optional[Literal["f32", "f64"]] = None,
    boundary: str = "zero",
    normalization: Literal["l2", "l1"] = "l2",
    hop: int = 1,
    algorithm: Literal["auto", "direct", "fft"] = "auto",
    device: Device = "auto",
    dtype: Any = None,
) -> tuple[Any, NDArray[np.float64]]:
    """Continuous wavelet transform, the exact sum: ``(coefs, freqs_or_scales)``."""

def fir(
    x: Any,
    filters: ArrayLike,
    mode: Literal["full", "same", "valid"] = "same",
    post: Optional[Literal["power", "magnitude", "derivative"]] = None,
    *,
    algorithm: Literal["auto", "direct", "overlap-save"] = "auto",
    device: Device = "auto",
) -> Any:
    """Filter bank: every row of ``filters`` convolved with ``x`` as numpy.convolve."""

def ssq_cwt(
    x: ArrayLike,
    wavelet: str = "gmw",
    scales: Optional[ArrayLike] = None,
    nv: int = 32,
    fs: Optional[float] = None,
    ssq_freqs: Union[None, Literal["log", "linear"], ArrayLike] = None,
    squeezing: Literal["sum", "lebesgue"] = "sum",
    maprange: Union[Literal["peak", "maximal"], tuple[float, float]] = "peak",
    gamma: Optional[float] = None,
    *,
    boundary: str = "reflect",
    precision: Optional[Literal["f32", "f64"]] = None,
    device: Device = "auto",
    flipud: bool = True,
    get_w: bool = False,
    get_dWx: bool = False,
) -> tuple[Any, ...]:
    """Synchrosqueezed CWT (ssqueezepy's): ``(Tx, Wx, ssq_freqs, scales[, w][, dWx])``."""

def issq_cwt(
    Tx: ArrayLike,
    wavelet: str = "gmw",
    ssq_freqs: Optional[ArrayLike] = None,
    *,
    band: Optional[tuple[float, float]] = None,
    x_mean: float = 0.0,
) -> NDArray[np.float64]:
    """The signal of a synchrosqueezed plane (all rows, or those in ``band``)."""

def icwt(
    Wx: ArrayLike,
    wavelet: str = "gmw",
    scales: Optional[ArrayLike] = None,
    *,
    normalization: Literal["l1", "l2"] = "l2",
    band: Optional[tuple[float, float]] = None,
    x_mean: float = 0.0,
    real: bool = True,
) -> NDArray[Any]:
    """Inverse CWT by the single-integral formula (rows whose scale is in ``band``)."""

def extract_ridges(
    Tf: ArrayLike,
    scales: ArrayLike,
    penalty: float = 2.0,
    n_ridges: int = 1,
    bw: int = 15,
    transform: Literal["cwt", "stft"] = "cwt",
    get_params: bool = False,
) -> Any:
    """Ridges of a time-frequency plane: indices (N, n_ridges)[, values, energies]."""

def admissibility(wavelet: str = "gmw") -> dict[str, Any]:
    """K+ (adm_ssq), K-, C_psi (adm_cwt), the DC leak and whether the wavelet is analytic."""

def wct(
    y1: ArrayLike,
    y2: ArrayLike,
    dt: float,
    dj: float = 1 / 12,
    s0: float = -1,
    J: int = -1,
    sig: bool = False,
    significance_level: float = 0.95,
    wavelet: str = "morlet",
    normalize: bool = True,
    *,
    boundary: str = "zero",
    device: Device = "auto",
    mc_count: int = 300,
    seed: int = 0,
    progress: bool = False,
) -> tuple[Any, Any, Any, Any, Any]:
    """Wavelet coherence (pycwt's): ``(WCT, aWCT, coi, freq, sig)``; ``sig=True``
    adds the Monte Carlo significance level per scale (``wct_significance``)."""

def wct_significance(
    al1: float,
    al2: float,
    dt: float,
    dj: float = 1 / 12,
    s0: float = -1,
    J: int = -1,
    significance_level: float = 0.95,
    wavelet: str = "morlet",
    mc_count: int = 300,
    *,
    seed: int = 0,
    progress: bool = False,
    boundary: str = "zero",
    device: Device = "auto",
) -> Any:
    """Monte Carlo coherence level per scale of two AR(1) backgrounds (pycwt's)."""

def xwt(
    y1: ArrayLike,
    y2: ArrayLike,
    dt: float,
    dj: float = 1 / 12,
    s0: float = -1,
    J: int = -1,
    wavelet: str = "morlet",
    normalize: bool = True,
    *,
    boundary: str = "zero",
    device: Device = "auto",
) -> tuple[Any, Any, Any]:
    """Cross-wavelet transform (pycwt's): ``(W12, coi, freq)``."""

def global_wavelet_spectrum(W: ArrayLike, scales: Optional[ArrayLike] = None) -> NDArray[np.float64]:
    """Time average of |W|^2 per scale."""

def ar1(x: ArrayLike) -> tuple[float, float, float]:
    """Allen & Smith's AR(1) estimate (pycwt's): ``(g, a, mu2)``."""

def significance(
    signal: ArrayLike,
    dt: float,
    scales: ArrayLike,
    sigma_test: int = 0,
    alpha: Optional[float] = None,
    significance_level: float = 0.95,
    dof: Any = -1,
    wavelet: str = "morlet",
) -> tuple[Any, Any]:
    """Red-noise significance of wavelet power (pycwt's): ``(signif, fft_theor)``
    per scale, or two floats for ``sigma_test=2`` (the band ``dof=[s1, s2]``)."""

def compress(
    a: ArrayLike,
    *,
    abs: Optional[float] = None,
    rel: Optional[float] = None,
    psnr: Optional[float] = None,
    transform: Literal["interp", "cdf97", "cdf53", "haar", "lorenzo"] = "interp",
    profile: Literal["default", "fast"] = "default",
    device: Device = "auto",
    info: bool = False,
) -> Union[bytes, tuple[bytes, dict]]:
    """Compresses a 2-D or 3-D float array within an error bound into .mrz bytes."""

def decompress(
    b: Union[bytes, bytearray, memoryview],
    *,
    device: Literal["auto", "cpu", "cuda"] = "auto",
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """The array held by .mrz bytes (decoded on the GPU when one is usable, or into ``out``)."""

def save(
    path: Union[str, PathLike],
    a: ArrayLike,
    *,
    abs: Optional[float] = None,
    rel: Optional[float] = None,
    psnr: Optional[float] = None,
    transform: str = "interp",
    profile: Literal["default", "fast"] = "default",
    device: Device = "auto",
) -> dict:
    """Compresses ``a`` into the file ``path`` (written whole or not at all)."""

def load(path: Union[str, PathLike]) -> np.ndarray:
    """All values of a .mrz file."""

class MrzFile:
    """An open .mrz file; ``f[region]`` decodes only the bricks the region meets."""

    path: str
    shape: tuple[int, ...]
    dtype: np.dtype
    ndim: int
    info: dict
    def __init__(self, path: Union[str, PathLike]) -> None: ...
    def __enter__(self) -> "MrzFile": ...
    def __exit__(self, *exc: Any) -> bool: ...
    def __len__(self) -> int: ...
    def __getitem__(self, key: Any) -> np.ndarray: ...
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray: ...
def denoise(
    image: ArrayLike,
    sigma: Any = None,
    wavelet: Any = "db1",
    mode: str = "soft",
    wavelet_levels: Optional[int] = None,
    convert2ycbcr: bool = False,
    method: str = "BayesShrink",
    rescale_sigma: bool = True,
    *,
    channel_axis: Optional[int] = None,
    device: str = "cpu",
) -> np.ndarray:
    """Wavelet denoising as skimage.restoration.denoise_wavelet (and SureShrink)."""
denoise_wavelet = denoise
def estimate_sigma(image: ArrayLike, average_sigmas: bool = False, *, channel_axis: Optional[int] = None) -> Any:
    """The noise level as skimage's estimate_sigma."""
def cycle_spin(x: ArrayLike, func: Any, max_shifts: Any, shift_steps: Any = 1, num_workers: Optional[int] = None, func_kw: Any = None, *, workers: Optional[int] = None, channel_axis: Optional[int] = None) -> np.ndarray:
    """The mean of func over circular shifts, as skimage's cycle_spin."""
def modwt(x: ArrayLike, wavelet: Any = "sym4", level: Optional[int] = None, axis: int = -1, *, device: str = "cpu") -> np.ndarray:
    """MATLAB's maximal overlap DWT."""
def imodwt(w: ArrayLike, wavelet: Any = "sym4", *, device: str = "cpu") -> np.ndarray:
    """The signal of modwt's array."""
def modwtmra(w: ArrayLike, wavelet: Any = "sym4", *, device: str = "cpu") -> np.ndarray:
    """MATLAB's modwtmra."""
