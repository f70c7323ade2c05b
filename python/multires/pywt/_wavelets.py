"""PyWavelets' wavelet objects: Wavelet, ContinuousWavelet, Modes, wavelist."""

from __future__ import annotations

import re

import numpy as np

from .. import _multires

_DISCRETE = tuple(_multires.discrete_names())

# (short name, family name) in pywt.families() order.
_FAMILIES = [
    ("haar", "Haar"),
    ("db", "Daubechies"),
    ("sym", "Symlets"),
    ("coif", "Coiflets"),
    ("bior", "Biorthogonal"),
    ("rbio", "Reverse biorthogonal"),
    ("dmey", "Discrete Meyer (FIR Approximation)"),
    ("gaus", "Gaussian"),
    ("mexh", "Mexican hat wavelet"),
    ("morl", "Morlet wavelet"),
    ("cgau", "Complex Gaussian wavelets"),
    ("shan", "Shannon wavelets"),
    ("fbsp", "Frequency B-Spline wavelets"),
    ("cmor", "Complex Morlet wavelets"),
]
_CONTINUOUS_NAMES = (
    [f"cgau{i}" for i in range(1, 9)]
    + ["cmor", "fbsp"]
    + [f"gaus{i}" for i in range(1, 9)]
    + ["mexh", "morl", "shan"]
)


class Modes:
    """Signal extension modes, PyWavelets' names and numbers.

    ``zero``, ``constant``, ``symmetric`` (default), ``periodic``, ``smooth``,
    ``periodization``, ``reflect``, ``antisymmetric``, ``antireflect``.
    """

    zero = 0
    symmetric = 1
    constant = 2
    smooth = 3
    periodic = 4
    periodization = 5
    reflect = 6
    antisymmetric = 7
    antireflect = 8
    modes = [
        "zero",
        "constant",
        "symmetric",
        "periodic",
        "smooth",
        "periodization",
        "reflect",
        "antisymmetric",
        "antireflect",
    ]
    _aliases = {"zpd": "zero", "cpd": "constant", "sym": "symmetric", "ppd": "periodic", "sp1": "smooth", "per": "periodization"}

    @classmethod
    def from_object(cls, mode) -> int:
        """The number of a mode given by name or number."""
        if isinstance(mode, (int, np.integer)) and not isinstance(mode, bool):
            if 0 <= int(mode) <= 8:
                return int(mode)
            raise ValueError(f"Invalid mode: {mode}")
        if isinstance(mode, str):
            m = cls._aliases.get(mode, mode)
            if m in cls.modes:
                return getattr(cls, m)
        raise ValueError(f"Unknown mode name '{mode}'; the modes are {', '.join(cls.modes)}")


def _mode_name(mode) -> str:
    n = Modes.from_object(mode)
    return next(m for m in Modes.modes if getattr(Modes, m) == n)


def families(short=True):
    """Wavelet families, short names (``'db'``) or long (``'Daubechies'``)."""
    return [s if short else f for s, f in _FAMILIES]


def wavelist(family=None, kind="all"):
    """Names of the wavelets of a family (all without one).

    ``kind`` is ``'all'``, ``'continuous'`` or ``'discrete'``.
    """
    if kind not in ("all", "continuous", "discrete"):
        raise ValueError(f"Unrecognized value for `kind`: {kind}")
    names = []
    if kind in ("all", "discrete"):
        names += list(_DISCRETE)
    if kind in ("all", "continuous"):
        names += _CONTINUOUS_NAMES
    if family is not None:
        short = [s for s, _ in _FAMILIES]
        if family not in short:
            raise ValueError(f"Invalid short family name '{family}'.")

        def fam(n):
            return re.match(r"[a-z]+", n).group(0)

        names = [n for n in names if fam(n) == family]
    return sorted(names, key=_natural_key)


def _natural_key(name):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _upcoef_full(part_a: bool, c, rec_lo, rec_hi, level: int, dtype=np.float64):
    """upcoef with take=0: `level` full upsampling convolutions in `dtype`,
    the first with rec_hi for details."""
    y = np.asarray(c, dtype=dtype)
    rl, rh = np.asarray(rec_lo, dtype), np.asarray(rec_hi, dtype)
    for i in range(level):
        up = np.zeros(2 * len(y) - 1, dtype=dtype)
        up[::2] = y
        y = np.convolve(up, rl if (part_a or i > 0) else rh).astype(dtype, copy=False)
    return y


class Wavelet:
    """A discrete wavelet, by name (``Wavelet('db4')``) or from a filter bank.

    Parameters
    ----------
    name : str
        Any of ``wavelist(kind='discrete')``, or a name for a custom bank.
    filter_bank : tuple of four sequences, or an object with ``filter_bank``
        (dec_lo, dec_hi, rec_lo, rec_hi) of a custom wavelet.
    """

    def __init__(self, name="", filter_bank=None):
        if filter_bank is None:
            if not isinstance(name, str) or not name:
                raise ValueError("Wavelet name or filter bank must be specified.")
            key = name.lower()
            if key not in _DISCRETE:
                if key in _CONTINUOUS_NAMES or re.match(r"(cmor|shan|fbsp|cgau|gaus)", key):
                    raise ValueError(f"The `Wavelet` class is for discrete wavelets, {name} is a continuous wavelet.")
                raise ValueError(f"Unknown wavelet name '{name}', check wavelist() for the list of available builtin wavelets.")
            info = _multires.wavelet_info(key)
            self.name = info["name"]
            self.family_name = info["family_name"]
            self.short_family_name = info["short_family_name"]
            self.orthogonal = bool(info["orthogonal"])
            self.biorthogonal = True
            self.symmetry = info["symmetry"]
            self.vanishing_moments_psi = info["vanishing_moments_psi"]
            self.vanishing_moments_phi = info["vanishing_moments_phi"]
            self._bank = tuple(list(map(float, info[k])) for k in ("dec_lo", "dec_hi", "rec_lo", "rec_hi"))
            digits = re.sub(r"[^0-9]", "", self.name)
            self.number = int(digits) if digits and self.short_family_name not in ("haar", "dmey") else 0
            self._filters = _multires.DiscreteFilters(self.name)
        else:
            fb = getattr(filter_bank, "filter_bank", filter_bank)
            try:
                bank = tuple(list(map(float, np.asarray(f, dtype=np.float64).ravel())) for f in fb)
            except (TypeError, ValueError) as e:
                raise ValueError(f"filter_bank must hold four sequences of numbers: {e}") from None
            if len(bank) != 4:
                raise ValueError(f"filter_bank must be (dec_lo, dec_hi, rec_lo, rec_hi), got {len(bank)} filters")
            if len({len(f) for f in bank}) != 1:
                raise ValueError("All filters in filter bank must have length {}".format(len(bank[0])))
            # PyWavelets pads odd-length banks with a zero to make them even.
            if len(bank[0]) % 2:
                bank = tuple(f + [0.0] for f in bank)
            self.name = name
            self.family_name = ""
            self.short_family_name = ""
            self.orthogonal = False
            self.biorthogonal = False
            self.symmetry = "unknown"
            self.vanishing_moments_psi = None
            self.vanishing_moments_phi = None
            self.number = None
            self._bank = bank
            self._filters = _multires.DiscreteFilters(None, *bank)

    dec_lo = property(lambda self: list(self._bank[0]), doc="Decomposition low-pass filter.")
    dec_hi = property(lambda self: list(self._bank[1]), doc="Decomposition high-pass filter.")
    rec_lo = property(lambda self: list(self._bank[2]), doc="Reconstruction low-pass filter.")
    rec_hi = property(lambda self: list(self._bank[3]), doc="Reconstruction high-pass filter.")
    dec_len = property(lambda self: len(self._bank[0]), doc="Decomposition filter length.")
    rec_len = property(lambda self: len(self._bank[2]), doc="Reconstruction filter length.")

    @property
    def filter_bank(self):
        """(dec_lo, dec_hi, rec_lo, rec_hi)."""
        return tuple(list(f) for f in self._bank)

    @property
    def inverse_filter_bank(self):
        """The filter bank of the inverse (dual) wavelet."""
        dl, dh, rl, rh = self._bank
        return (rl[::-1], rh[::-1], dl[::-1], dh[::-1])

    def __len__(self):
        return self.dec_len

    def __reduce__(self):
        # Pickles (for packet trees, multiprocessing) rebuild from the name or the bank.
        if self.family_name:
            return (Wavelet, (self.name,))
        return (Wavelet, (self.name, self.filter_bank))

    def __eq__(self, other):
        return isinstance(other, Wavelet) and self.filter_bank == other.filter_bank

    def __hash__(self):
        return hash(tuple(map(tuple, self._bank)))

    def __repr__(self):
        return f"multires.pywt.Wavelet(name='{self.name}', filter_bank={self.filter_bank})"

    def __str__(self):
        return "\n".join(
            [
                f"Wavelet {self.name}",
                f"  Family name:    {self.family_name}",
                f"  Short name:     {self.short_family_name}",
                f"  Filters length: {self.dec_len}",
                f"  Orthogonal:     {self.orthogonal}",
                f"  Biorthogonal:   {self.biorthogonal}",
                f"  Symmetry:       {self.symmetry}",
                "  DWT:            True",
                "  CWT:            False",
            ]
        )

    def wavefun(self, level=8):
        """Scaling and wavelet functions by the cascade algorithm.

        Returns ``[phi, psi, x]`` for orthogonal wavelets and
        ``[phi_d, psi_d, phi_r, psi_r, x]`` otherwise, on PyWavelets' grid.
        """
        level = int(level)
        n = np.sqrt(2.0) ** level
        p = 2.0**level

        def pieces(bank, length, mul):
            dl, dh, rl, rh = bank
            keep = 1
            for _ in range(level):
                keep = 2 * keep + len(dl) - 2
            length = max(length, keep + 2)
            right = length - keep - 1
            phi = np.concatenate(([0.0], _keep(_upcoef_full(True, [n], rl, rh, level), keep), np.zeros(right)))
            psi = np.concatenate(([0.0], _keep(_upcoef_full(False, [mul], rl, rh, level), keep), np.zeros(right)))
            return phi, psi, length

        if self.orthogonal:
            length = int((self.dec_len - 1) * p + 1)
            phi, psi, length = pieces(self._bank, length, n)
            return [phi, psi, np.linspace(0.0, (length - 1) / p, length)]
        mul = -n if (self.biorthogonal and (self.vanishing_moments_psi or 0) % 4 != 1) else n
        inv = self.inverse_filter_bank
        length = int((len(inv[0]) - 1) * p)
        phi_d, psi_d, _ = pieces(inv, length, mul)
        length = int((self.dec_len - 1) * p)
        phi_r, psi_r, length = pieces(self._bank, length, mul)
        return [phi_d, psi_d, phi_r, psi_r, np.linspace(0.0, (length - 1) / p, length)]


def _keep(arr, k):
    if k < len(arr):
        lo = (len(arr) - k) // 2
        return arr[lo : lo + k]
    return arr


# PyWavelets' effective supports, over which wavefun samples psi.
_BOUNDS = {"morl": 8.0, "mexh": 8.0, "gaus": 5.0, "cgau": 5.0, "cmor": 8.0, "shan": 20.0, "fbsp": 20.0}
_CFAMILY = {
    "morl": ("Morlet wavelet", "symmetric"),
    "mexh": ("Mexican hat wavelet", "symmetric"),
    "gaus": ("Gaussian", None),
    "cgau": ("Complex Gaussian wavelets", None),
    "cmor": ("Complex Morlet wavelets", "asymmetric"),
    "shan": ("Shannon wavelets", "asymmetric"),
    "fbsp": ("Frequency B-Spline wavelets", "asymmetric"),
}


class ContinuousWavelet:
    """A continuous wavelet of PyWavelets' families: ``morl``, ``mexh``,
    ``gausP``, ``cgauP``, ``cmorB-C``, ``shanB-C``, ``fbspM-B-C``.

    Without parameters ``cmor``, ``shan`` and ``fbsp`` take PyWavelets'
    defaults (B = C = 1, M = 1) with its warning.
    """

    def __init__(self, name="", dtype=np.float64):
        if not isinstance(name, str) or not name:
            raise ValueError("A continuous wavelet name must be given")
        key = name.lower()
        m = re.match(r"[a-z]+", key)
        fam = m.group(0) if m else ""
        if fam not in _CFAMILY or (fam in ("gaus", "cgau") and not re.fullmatch(r"(gaus|cgau)[1-8]", key)):
            raise ValueError(f"Unknown continuous wavelet name '{name}'; wavelist(kind='continuous') lists them")
        self.short_family_name = fam
        self.family_name, sym = _CFAMILY[fam]
        if sym is None:
            order = int(key[4:])
            sym = "symmetric" if order % 2 == 0 else "anti-symmetric"
        self.symmetry = sym
        self.complex_cwt = fam in ("cmor", "shan", "fbsp", "cgau")
        self.lower_bound, self.upper_bound = -_BOUNDS[fam], _BOUNDS[fam]
        self.center_frequency = None
        self.bandwidth_frequency = None
        self.fbsp_order = None
        params = key[len(fam) :]
        if fam in ("cmor", "shan", "fbsp"):
            if not params:
                import warnings

                warnings.warn(
                    f"Wavelets from the family {fam}, without parameters specified in the name are deprecated. "
                    f"The name should take the form {fam}B-C where B and C are floats representing the "
                    "bandwidth frequency and center frequency, respectively (example: {fam}1.5-1.0).",
                    FutureWarning,
                    stacklevel=2,
                )
                vals = [1.0, 1.5, 1.0] if fam == "fbsp" else [1.0, 1.0]
                if fam == "fbsp":
                    vals = [1, 1.0, 0.5]
            else:
                try:
                    vals = [float(v) for v in params.split("-")]
                except ValueError:
                    raise ValueError(f"Unknown continuous wavelet name '{name}'") from None
            if fam == "fbsp":
                if len(vals) != 3:
                    raise ValueError(f"fbsp needs fbspM-B-C, got '{name}'")
                self.fbsp_order, self.bandwidth_frequency, self.center_frequency = int(vals[0]), vals[1], vals[2]
            else:
                if len(vals) != 2:
                    raise ValueError(f"{fam} needs {fam}B-C, got '{name}'")
                self.bandwidth_frequency, self.center_frequency = vals
            self.name = name if params else self._full_name()
        else:
            self.name = key
        self._engine_name = self.name if params or fam not in ("cmor", "shan", "fbsp") else self._full_name()

    def _full_name(self):
        def g(v):
            return f"{v:g}" if float(v) != int(v) else f"{float(v):.1f}"

        if self.short_family_name == "fbsp":
            return f"fbsp{self.fbsp_order}-{g(self.bandwidth_frequency)}-{g(self.center_frequency)}"
        return f"{self.short_family_name}{g(self.bandwidth_frequency)}-{g(self.center_frequency)}"

    def __repr__(self):
        return f"multires.pywt.ContinuousWavelet(name='{self.name}')"

    def wavefun(self, level=8, length=None):
        """psi on ``length`` (default 2**level) points from lower_bound to upper_bound: (psi, x)."""
        n = int(2**level if length is None else length)
        x = np.linspace(self.lower_bound, self.upper_bound, n)
        psi = np.asarray(_multires.continuous_psi(self._engine_name, x.tolist()))
        return (psi if self.complex_cwt else psi.real.copy()), x


def DiscreteContinuousWavelet(name="", filter_bank=None):
    """A Wavelet or a ContinuousWavelet, whichever ``name`` names."""
    if filter_bank is not None:
        return Wavelet(name, filter_bank)
    if isinstance(name, str) and name.lower() in _DISCRETE:
        return Wavelet(name)
    return ContinuousWavelet(name)


def as_wavelet(wavelet) -> Wavelet:
    """A discrete Wavelet from a name or a Wavelet (or a filter-bank object)."""
    if isinstance(wavelet, Wavelet):
        return wavelet
    if isinstance(wavelet, ContinuousWavelet):
        raise ValueError(
            "A ContinuousWavelet object was provided, but only discrete Wavelet objects are supported by this function. "
            "A list of all supported discrete wavelets can be obtained by running:\nprint(multires.pywt.wavelist(kind='discrete'))"
        )
    if isinstance(wavelet, str):
        w = DiscreteContinuousWavelet(wavelet)
        return as_wavelet(w)
    if hasattr(wavelet, "filter_bank"):
        return Wavelet(getattr(wavelet, "name", ""), filter_bank=wavelet.filter_bank)
    raise TypeError(f"wavelet must be a name such as 'db4' or a Wavelet, got {type(wavelet).__name__}")
