//! The continuous wavelet transform as DESIGN.md defines it:
//! W[s, n] = Σ_k x[n + k] conj(m_s[k]), m_s[k] = g(s) s^(-p) ψ((k(1+ε(s)) + δ(s)) / s),
//! |k| <= ceil(B s), p = 1/2 (L2) or 1 (L1), g, ε, δ the seed's optional
//! compensations (identity by default).
//!
//! Every algorithm (direct, overlap-save FFT, and later the GPU kernels)
//! computes this same sum from the same packed masks.

mod compensation;
mod direct;
mod masks;
mod output;
mod oversampling;
pub mod plan;
mod strategy;
mod stream;

pub use compensation::ScaleFunction;
pub use masks::PackedMasks;
pub use output::{CwtOutput, CwtSlice, CwtValues};
pub use oversampling::{oversample, Interpolator};
pub use plan::{cone_of_influence, CwtPlan};
pub use strategy::{CostModel, Recipe, ScaleAlgorithm};
pub use stream::CwtStream;

use crate::boundary::Boundary;
use crate::scales::{Scale, ScaleError};
use crate::wavelets::Wavelet;
use std::fmt;
use std::str::FromStr;

/// What the caller wants back per coefficient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputKind {
    #[default]
    Complex,
    Magnitude,
    Power,
    Phase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    F32,
    #[default]
    F64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Chosen per scale by the cost model.
    #[default]
    Auto,
    Direct,
    Fft,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Normalization {
    /// s^(-1/2): equal energy across scales.
    #[default]
    L2,
    /// s^(-1): equal amplitude response across scales.
    L1,
}

/// A 16-bit float for magnitude or power outputs (plots, ML features): half
/// or a quarter of the bytes of float32 or float64, rounded to nearest even.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HalfFloat {
    /// IEEE binary16 (numpy float16): 11 significant bits, largest 65504.
    F16,
    /// bfloat16: float32's range with 8 significant bits.
    BF16,
}

impl HalfFloat {
    /// Rounds to nearest even, as CUDA's conversions do.
    pub fn bits_of(self, v: f32) -> u16 {
        match self {
            HalfFloat::F16 => half::f16::from_f32(v).to_bits(),
            HalfFloat::BF16 => half::bf16::from_f32(v).to_bits(),
        }
    }
    pub fn value_of(self, b: u16) -> f32 {
        match self {
            HalfFloat::F16 => half::f16::from_bits(b).to_f32(),
            HalfFloat::BF16 => half::bf16::from_bits(b).to_f32(),
        }
    }
    /// The numpy name of the values (bfloat16 is ml_dtypes' name; numpy
    /// itself holds its bits as uint16).
    pub fn numpy_name(self) -> &'static str {
        match self {
            HalfFloat::F16 => "float16",
            HalfFloat::BF16 => "bfloat16",
        }
    }
}

named_enum!(HalfFloat, "output dtype", ["f16" => HalfFloat::F16, "float16" => HalfFloat::F16, "bf16" => HalfFloat::BF16, "bfloat16" => HalfFloat::BF16]);
named_enum!(OutputKind, "output", ["complex" => OutputKind::Complex, "magnitude" => OutputKind::Magnitude, "power" => OutputKind::Power, "phase" => OutputKind::Phase]);
named_enum!(Precision, "precision", ["f32" => Precision::F32, "f64" => Precision::F64]);
named_enum!(Algorithm, "algorithm", ["auto" => Algorithm::Auto, "direct" => Algorithm::Direct, "fft" => Algorithm::Fft]);
named_enum!(Normalization, "normalization", ["l2" => Normalization::L2, "l1" => Normalization::L1]);

/// Everything a CWT plan needs besides the signal length.
#[derive(Debug, Clone)]
pub struct CwtOptions {
    pub wavelet: Wavelet,
    /// In samples of the input signal, in the order rows are wanted.
    pub scales: Vec<Scale>,
    pub boundary: Boundary,
    pub normalization: Normalization,
    pub output: OutputKind,
    pub precision: Precision,
    pub algorithm: Algorithm,
    /// Keep every `hop`-th column (time decimation); 1 keeps all.
    pub hop: usize,
    /// Seed V-A: per-scale gain g(s) applied to the mask.
    pub amplitude_gain: Option<ScaleFunction>,
    /// Seed V-C: per-scale shift δ(s) of the mask sample positions, in samples.
    pub timing_offset: Option<ScaleFunction>,
    /// Seed V-C: per-scale clock deviation ε(s): positions k(1 + ε(s)).
    pub timing_skew: Option<ScaleFunction>,
    /// Seed V-B: digital oversampling of the input before the transform.
    pub oversampling: usize,
    pub interpolator: Interpolator,
    /// Propagate NaN/Inf instead of refusing them.
    pub allow_nonfinite: bool,
    /// Sampling rate, for frequencies in the output (optional).
    pub sample_rate: Option<f64>,
    /// Largest number of bytes masks, spectra and output may take together.
    pub memory_limit: Option<u64>,
    pub cost_model: CostModel,
    /// Magnitude or power stored as 16-bit floats (computed in `precision`,
    /// rounded once at the store).
    pub half: Option<HalfFloat>,
}

impl CwtOptions {
    pub fn new(wavelet: Wavelet, scales: Vec<Scale>) -> Self {
        CwtOptions {
            wavelet,
            scales,
            boundary: Boundary::Zero,
            normalization: Normalization::L2,
            output: OutputKind::Complex,
            precision: Precision::F64,
            algorithm: Algorithm::Auto,
            hop: 1,
            amplitude_gain: None,
            timing_offset: None,
            timing_skew: None,
            oversampling: 1,
            interpolator: Interpolator::Cubic,
            allow_nonfinite: false,
            sample_rate: None,
            memory_limit: None,
            cost_model: CostModel::default(),
            half: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CwtError {
    #[error("the signal is empty: a CWT needs at least one sample")]
    EmptySignal,
    #[error("the signal has a non-finite value ({value}) at sample {index}; clean it or pass --allow-nonfinite to propagate NaN/Inf")]
    NonFinite { index: usize, value: String },
    #[error("the signal has a non-finite value ({value}) at sample {index}: the FFT path would spread it over a whole segment; pass --algorithm direct to propagate NaN/Inf exactly where the masks touch it")]
    NonFiniteFft { index: usize, value: String },
    #[error(transparent)]
    Scales(#[from] ScaleError),
    #[error("a {dtype} output holds magnitude or power, not '{output}': pass --output magnitude or --output power (or keep float32)")]
    HalfNeedsRealOutput {
        dtype: &'static str,
        output: OutputKind,
    },
    #[error("hop must be >= 1, got {0}")]
    BadHop(usize),
    #[error("oversampling factor must be 1, 2 or 4, got {0}")]
    BadOversampling(usize),
    #[error("{what} needs {}, more than the {} allowed; use fewer or smaller scales, a shorter signal, --hop, or f32", crate::memory::human_bytes(u64::try_from(*need).unwrap_or(u64::MAX)), crate::memory::human_bytes(*limit))]
    TooLarge {
        what: String,
        need: u128,
        limit: u64,
    },
    #[error("scale function: {0}")]
    ScaleFunction(String),
    #[error("the plan was made for {planned} samples but the signal has {got}")]
    LengthMismatch { planned: usize, got: usize },
    #[error("a stream cannot use {what}: {why}")]
    StreamOption { what: String, why: String },
    #[error("the stream began with {began} samples and this chunk is {got}: push one kind of sample (convert real chunks to complex for a complex stream)")]
    StreamKind {
        began: &'static str,
        got: &'static str,
    },
    #[error("the output buffer does not fit this plan: it needs {want}, got {got}")]
    OutputMismatch { want: String, got: String },
}

/// The overlap-save FFT size the cost model picks for a kernel of `len` taps
/// over `n` outputs (shared with the FIR bank).
pub fn strategy_fft_size(len: usize, n: usize, cost: &CostModel) -> (usize, f64) {
    strategy::best_fft_size(len, n, cost)
}
