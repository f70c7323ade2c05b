//! FIR filter bank (seed 001): one long signal convolved with F short filters,
//! y_f[n] = Σ_k h_f[k] x[n - k], with numpy.convolve's output alignments and an
//! optional post-processing step applied as each row is stored.

mod direct;
mod stream;

pub use stream::FirStream;

use crate::cwt::CostModel;
use crate::overlap_save::{GroupEngine, Scratch};
use crate::signal::Signal;
use ndarray::Array2;
use num_complex::Complex64;
use rayon::prelude::*;
use rustfft::FftPlanner;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FirMode {
    /// N + M - 1 outputs.
    #[default]
    Full,
    /// max(N, M) outputs, centred as numpy.convolve(mode="same").
    Same,
    /// max(N, M) - min(N, M) + 1 outputs: only where the filter fully overlaps.
    Valid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FirPost {
    #[default]
    None,
    /// |y|²
    Power,
    /// |y|
    Magnitude,
    /// dy/dn as numpy.gradient: central differences inside, one-sided at the ends.
    Derivative,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FirAlgorithm {
    #[default]
    Auto,
    Direct,
    OverlapSave,
}

named_enum!(FirMode, "mode", ["full" => FirMode::Full, "same" => FirMode::Same, "valid" => FirMode::Valid]);
named_enum!(FirPost, "post-processing", ["none" => FirPost::None, "power" => FirPost::Power, "magnitude" => FirPost::Magnitude, "derivative" => FirPost::Derivative]);
named_enum!(FirAlgorithm, "algorithm", ["auto" => FirAlgorithm::Auto, "direct" => FirAlgorithm::Direct, "overlap-save" => FirAlgorithm::OverlapSave, "fft" => FirAlgorithm::OverlapSave]);

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FirError {
    #[error("the signal is empty")]
    EmptySignal,
    #[error(
        "the filter bank is empty: expected shape (F, M) with F >= 1 and M >= 1, got ({0}, {1})"
    )]
    EmptyFilters(usize, usize),
    #[error("the signal has a non-finite value ({value}) at sample {index}; pass --allow-nonfinite to propagate it")]
    NonFinite { index: usize, value: String },
    #[error("the signal has a non-finite value ({value}) at sample {index}: the FFT (overlap-save) path would spread it over a whole segment; pass --algorithm direct (on the CPU) to propagate NaN/Inf exactly where the sums touch it")]
    NonFiniteFft { index: usize, value: String },
    #[error("the stream began with real samples and this chunk is complex: push one kind of sample (convert real chunks to complex for a complex stream)")]
    StreamKind,
    #[error("filter {filter} has a non-finite tap at {tap}")]
    NonFiniteFilter { filter: usize, tap: usize },
    #[error("the output needs {}, more than the {} allowed; use fewer filters, a shorter signal or --mode valid", crate::memory::human_bytes(u64::try_from(*need).unwrap_or(u64::MAX)), crate::memory::human_bytes(*limit))]
    TooLarge { need: u128, limit: u64 },
}

/// Filters, shape (F, M), real or complex.
#[derive(Debug, Clone)]
pub enum FilterBank {
    Real(Array2<f64>),
    Complex(Array2<Complex64>),
}

impl FilterBank {
    pub fn dim(&self) -> (usize, usize) {
        match self {
            FilterBank::Real(a) => a.dim(),
            FilterBank::Complex(a) => a.dim(),
        }
    }
    pub fn row(&self, f: usize) -> Vec<Complex64> {
        match self {
            FilterBank::Real(a) => a.row(f).iter().map(|&v| Complex64::new(v, 0.0)).collect(),
            FilterBank::Complex(a) => a.row(f).to_vec(),
        }
    }
    pub fn is_complex(&self) -> bool {
        matches!(self, FilterBank::Complex(_))
    }
}

#[derive(Debug, Clone, Default)]
pub struct FirOptions {
    pub mode: FirMode,
    pub post: FirPost,
    pub algorithm: FirAlgorithm,
    pub allow_nonfinite: bool,
    pub memory_limit: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FirValues {
    Real(Array2<f64>),
    Complex(Array2<Complex64>),
}

impl FirValues {
    pub fn dim(&self) -> (usize, usize) {
        match self {
            FirValues::Real(a) => a.dim(),
            FirValues::Complex(a) => a.dim(),
        }
    }
}

/// What the planner chose, for `--explain`.
#[derive(Debug, Clone, PartialEq)]
pub struct FirRecipe {
    pub algorithm: FirAlgorithm,
    pub fft_size: Option<usize>,
    pub filters: usize,
    pub taps: usize,
    pub signal_len: usize,
}

impl fmt::Display for FirRecipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fft_size {
            Some(p) => write!(
                f,
                "FIR bank: {} filters of {} taps on {} samples, overlap-save with segment (FFT) size {} ({} outputs per segment)",
                self.filters, self.taps, self.signal_len, p, p - self.taps + 1
            ),
            None => write!(
                f,
                "FIR bank: {} filters of {} taps on {} samples, direct sum",
                self.filters, self.taps, self.signal_len
            ),
        }
    }
}

pub fn output_range(n: usize, m: usize, mode: FirMode) -> (usize, usize) {
    let full = n + m - 1;
    match mode {
        FirMode::Full => (0, full),
        FirMode::Same => {
            let len = n.max(m);
            let start = (full - len) / 2;
            (start, len)
        }
        FirMode::Valid => (n.min(m) - 1, n.max(m) - n.min(m) + 1),
    }
}

pub fn plan(n: usize, m: usize, filters: usize, options: &FirOptions) -> FirRecipe {
    let cost = CostModel::default();
    let full = n + m - 1;
    let (p, fft_cost) = crate::cwt::strategy_fft_size(m, full, &cost);
    let direct_cost = m as f64 * cost.direct_per_tap * 2.0;
    let use_fft = match options.algorithm {
        FirAlgorithm::Direct => false,
        FirAlgorithm::OverlapSave => true,
        FirAlgorithm::Auto => fft_cost < direct_cost,
    };
    FirRecipe {
        algorithm: if use_fft {
            FirAlgorithm::OverlapSave
        } else {
            FirAlgorithm::Direct
        },
        fft_size: use_fft.then_some(p),
        filters,
        taps: m,
        signal_len: n,
    }
}

/// The checks every backend makes: a signal and filters that are not
/// empty, finite samples (unless allowed) and finite taps.
pub fn validate(
    signal: &Signal,
    filters: &FilterBank,
    options: &FirOptions,
) -> Result<(), FirError> {
    if signal.is_empty() {
        return Err(FirError::EmptySignal);
    }
    validate_filters(filters)?;
    check_finite(signal, options, 0)
}

/// NaN/Inf samples are refused unless allowed, and allowed only with the
/// direct sum; the error names sample `offset +` its index (a stream's
/// chunk starts at `offset`).
pub fn check_finite(signal: &Signal, options: &FirOptions, offset: usize) -> Result<(), FirError> {
    if let Some((index, value)) = signal.first_nonfinite() {
        let index = index + offset;
        if !options.allow_nonfinite {
            return Err(FirError::NonFinite { index, value });
        }
        // An FFT spreads one NaN over its whole segment; only the direct
        // sum gives NaN exactly where a product touches it.
        if options.algorithm != FirAlgorithm::Direct {
            return Err(FirError::NonFiniteFft { index, value });
        }
    }
    Ok(())
}

/// A bank that is not empty and has finite taps.
pub fn validate_filters(filters: &FilterBank) -> Result<(), FirError> {
    let (nf, m) = filters.dim();
    if nf == 0 || m == 0 {
        return Err(FirError::EmptyFilters(nf, m));
    }
    for f in 0..nf {
        if let Some(tap) = filters
            .row(f)
            .iter()
            .position(|v| !(v.re.is_finite() && v.im.is_finite()))
        {
            return Err(FirError::NonFiniteFilter { filter: f, tap });
        }
    }
    Ok(())
}

pub fn fir(
    signal: &Signal,
    filters: &FilterBank,
    options: &FirOptions,
) -> Result<(FirValues, FirRecipe), FirError> {
    validate(signal, filters, options)?;
    let n = signal.len();
    if n == 0 {
        return Err(FirError::EmptySignal);
    }
    let (nf, m) = filters.dim();
    let (start, len) = output_range(n, m, options.mode);
    let limit = options
        .memory_limit
        .unwrap_or_else(crate::memory::default_limit);
    let need = nf as u128 * (n + m) as u128 * 16 * 2;
    if need > limit as u128 {
        return Err(FirError::TooLarge { need, limit });
    }
    let recipe = plan(n, m, nf, options);
    let x = signal.to_complex();
    let full = n + m - 1;
    let mut rows = vec![Complex64::new(0.0, 0.0); nf * len];
    match recipe.fft_size {
        None => {
            rows.par_chunks_mut(len).enumerate().for_each(|(f, out)| {
                let h = filters.row(f);
                direct::convolve_range(&x, &h, start, out);
            });
        }
        Some(p) => {
            let mut planner = FftPlanner::<f64>::new();
            let mut planner64 = FftPlanner::<f64>::new();
            let kernels = (0..nf).map(|f| filters.row(f)).collect();
            let engine = GroupEngine::new(p, m, kernels, &mut planner, &mut planner64);
            // xe = [M-1 zeros, x, zeros]: full output j reads xe[j ..= j + M - 1].
            let mut xe = vec![Complex64::new(0.0, 0.0); full + m - 1 + p];
            xe[m - 1..m - 1 + n].copy_from_slice(&x);
            let spectra = engine.segment_spectra(&xe, 0, full);
            rows.par_chunks_mut(len).enumerate().for_each_init(
                || Scratch::new(p),
                |scratch, (f, out)| {
                    engine.row(&spectra, f, full, 1, scratch, |c0, v| {
                        // The run covers columns c0..c0 + v.len(); keep those in the window.
                        let lo = c0.max(start);
                        let hi = (c0 + v.len()).min(start + len);
                        if lo < hi {
                            out[lo - start..hi - start].copy_from_slice(&v[lo - c0..hi - c0]);
                        }
                    });
                },
            );
        }
    }
    let real = !signal.is_complex() && !filters.is_complex();
    let values = post_process(rows, nf, len, options.post, real);
    Ok((values, recipe))
}

fn post_process(
    rows: Vec<Complex64>,
    nf: usize,
    len: usize,
    post: FirPost,
    real: bool,
) -> FirValues {
    let shape = (nf, len);
    let to_real = |f: &(dyn Fn(Complex64) -> f64 + Sync)| -> FirValues {
        let v: Vec<f64> = rows.par_iter().map(|&c| f(c)).collect();
        FirValues::Real(Array2::from_shape_vec(shape, v).expect("shape"))
    };
    match post {
        FirPost::Power => to_real(&|c| c.norm_sqr()),
        FirPost::Magnitude => to_real(&|c| c.norm()),
        FirPost::None if real => to_real(&|c| c.re),
        FirPost::None => FirValues::Complex(Array2::from_shape_vec(shape, rows).expect("shape")),
        FirPost::Derivative => {
            let mut d = vec![Complex64::new(0.0, 0.0); rows.len()];
            d.par_chunks_mut(len)
                .zip(rows.par_chunks(len))
                .for_each(|(o, y)| gradient(y, o));
            if real {
                let v: Vec<f64> = d.iter().map(|c| c.re).collect();
                FirValues::Real(Array2::from_shape_vec(shape, v).expect("shape"))
            } else {
                FirValues::Complex(Array2::from_shape_vec(shape, d).expect("shape"))
            }
        }
    }
}

/// numpy.gradient with unit spacing and edge_order=1.
fn gradient(y: &[Complex64], out: &mut [Complex64]) {
    let n = y.len();
    if n < 2 {
        out.iter_mut().for_each(|v| *v = Complex64::new(0.0, 0.0));
        return;
    }
    out[0] = y[1] - y[0];
    out[n - 1] = y[n - 1] - y[n - 2];
    for i in 1..n - 1 {
        out[i] = (y[i + 1] - y[i - 1]) * 0.5;
    }
}
