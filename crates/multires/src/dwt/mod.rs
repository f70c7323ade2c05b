//! The discrete wavelet transform, equal to PyWavelets: its filters, its
//! nine extension modes, its output lengths and coefficient order, in 1-D
//! (dwt, idwt, wavedec, waverec) and n-D (dwtn, idwtn, wavedecn, waverecn),
//! computed by the seed's matrix and lattice algorithms or by lifting.

pub mod denoise;
mod extension;
#[rustfmt::skip]
#[allow(clippy::approx_constant, clippy::excessive_precision)]
mod filter_table;
mod fused;
pub mod lattice;
pub mod lifting;
mod matrix;
pub mod modwt;
pub mod multilevel;
pub mod nd;
pub mod polyphase;
mod single;
pub mod swt;
mod wavelet;

pub use extension::Mode;
pub use multilevel::{wavedec, waverec, Wavedec1d, Waverec1d, MAX_LEVELS};
pub use nd::{
    dwt2, dwt_axis, dwtn, idwt2, idwt_axis, idwtn, wavedec2, wavedecn, waverec2, waverecn,
    Coefficients2d, DetailKey, NdCoefficients,
};
pub use single::{dwt, idwt, Transform};
pub use wavelet::{DiscreteWavelet, Symmetry};

use crate::real::Real;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DwtError {
    #[error("unknown discrete wavelet '{0}'; `multires wavelets` lists them (haar, db1-38, sym2-20, coif1-17, bior*, rbio*, dmey)")]
    UnknownWavelet(String),
    #[error("the signal is empty")]
    EmptySignal,
    #[error("sample {index} is {value} (not finite); pass --allow-nonfinite to let it propagate")]
    NonFinite { index: usize, value: f64 },
    #[error("{0}")]
    NotAvailable(String),
    #[error("coefficients do not fit together: {0}")]
    CoefficientMismatch(String),
    #[error("level {level} is not possible: {why}")]
    BadLevel { level: usize, why: String },
    #[error("axis {axis} is out of range for an array of {ndim} dimensions")]
    BadAxis { axis: isize, ndim: usize },
    #[error("mode {mode} needs at least 2 samples along the axis, got {n} (as in PyWavelets); use another mode or fewer levels")]
    TooShort { n: usize, mode: Mode },
    #[error("repeated axis {0}")]
    RepeatedAxis(usize),
}

/// The seed's algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Matrix form with wrapping (the fastest measured on CPUs).
    #[default]
    Auto,
    Matrix,
    MatrixNoWrap,
    /// Lattice (orthogonal wavelets); circular for periodization.
    Lattice,
    LatticeNoWrap,
    /// Lifting steps from the Euclidean factorization.
    Lifting,
}

named_enum!(Algorithm, "algorithm", [
    "auto" => Algorithm::Auto,
    "matrix" => Algorithm::Matrix,
    "matrix-nowrap" => Algorithm::MatrixNoWrap,
    "lattice" => Algorithm::Lattice,
    "lattice-nowrap" => Algorithm::LatticeNoWrap,
    "lifting" => Algorithm::Lifting,
]);

/// Outputs per step of the matrix form (the seed's m1, m2, m4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Granularity {
    One,
    #[default]
    Two,
    Four,
}

named_enum!(Granularity, "granularity", ["1" => Granularity::One, "2" => Granularity::Two, "4" => Granularity::Four]);

/// PyWavelets' dwt_coeff_len: ceil(N/2) for periodization, else
/// floor((N + F - 1) / 2).
pub fn coeff_len(n: usize, filter_len: usize, mode: Mode) -> usize {
    if n == 0 {
        return 0;
    }
    if mode == Mode::Periodization {
        n.div_ceil(2)
    } else {
        (n + filter_len - 1) / 2
    }
}

/// PyWavelets' dwt_max_level: floor(log2(N / (F - 1))), 0 when N < F - 1.
pub fn max_level(n: usize, filter_len: usize) -> usize {
    if filter_len <= 1 || n < filter_len - 1 {
        return 0;
    }
    (n / (filter_len - 1)).ilog2() as usize
}

/// PyWavelets' idwt output length for coefficient arrays of length nc.
pub fn rec_len(nc: usize, filter_len: usize, mode: Mode) -> usize {
    if mode == Mode::Periodization {
        2 * nc
    } else {
        (2 * nc + 2).saturating_sub(filter_len)
    }
}

/// Where PyWavelets' idwt output n reads the synthesis sum y: y[n + shift]
/// (mod 2 Nc for periodization): F - 2 for the valid part of the full
/// synthesis, 2 floor(F/4) - [F/2 even] for periodization.
pub fn synthesis_shift(filter_len: usize, mode: Mode) -> isize {
    let f = filter_len as isize;
    if mode == Mode::Periodization {
        2 * (f / 4) - if (f / 2) % 2 == 0 { 1 } else { 0 }
    } else {
        f - 2
    }
}

/// The coefficient index a synthesis tap at position q reads: wrapped for
/// periodization, none (a zero) outside [0, nc) for every other mode.
#[inline(always)]
pub(crate) fn coefficient_at(q: isize, nc: usize, periodic: bool) -> Option<usize> {
    let n = nc as isize;
    if periodic {
        Some(q.rem_euclid(n) as usize)
    } else if (0..n).contains(&q) {
        Some(q as usize)
    } else {
        None
    }
}

/// The filters of one wavelet in the working precision, laid out for the
/// loops: reversed decomposition filters (dot products run forward) and the
/// even and odd taps of the reconstruction filters, reversed.
#[derive(Debug, Clone)]
pub struct Bank<T> {
    pub len: usize,
    pub dec_lo_rev: Vec<T>,
    pub dec_hi_rev: Vec<T>,
    pub rec_lo: Vec<T>,
    pub rec_hi: Vec<T>,
    pub rec_lo_even_rev: Vec<T>,
    pub rec_lo_odd_rev: Vec<T>,
    pub rec_hi_even_rev: Vec<T>,
    pub rec_hi_odd_rev: Vec<T>,
}

impl<T: Real> Bank<T> {
    pub fn new(w: &DiscreteWavelet) -> Self {
        let cast = |v: &[f64]| v.iter().map(|&x| T::of(x)).collect::<Vec<T>>();
        let rev = |v: &[f64]| v.iter().rev().map(|&x| T::of(x)).collect::<Vec<T>>();
        let phase_rev = |v: &[f64], p: usize| {
            v.iter()
                .skip(p)
                .step_by(2)
                .rev()
                .map(|&x| T::of(x))
                .collect::<Vec<T>>()
        };
        Bank {
            len: w.filter_len(),
            dec_lo_rev: rev(&w.dec_lo),
            dec_hi_rev: rev(&w.dec_hi),
            rec_lo: cast(&w.rec_lo),
            rec_hi: cast(&w.rec_hi),
            rec_lo_even_rev: phase_rev(&w.rec_lo, 0),
            rec_lo_odd_rev: phase_rev(&w.rec_lo, 1),
            rec_hi_even_rev: phase_rev(&w.rec_hi, 0),
            rec_hi_odd_rev: phase_rev(&w.rec_hi, 1),
        }
    }
}

impl<T> Bank<T> {
    /// The reversed even and odd taps of (rec_lo, rec_hi): what a synthesis
    /// output pair's dot products run over.
    pub fn rec_phases_rev(&self) -> (&[T], &[T], &[T], &[T]) {
        (
            &self.rec_lo_even_rev,
            &self.rec_lo_odd_rev,
            &self.rec_hi_even_rev,
            &self.rec_hi_odd_rev,
        )
    }
}

/// First non-finite sample, for the error that names it.
pub fn first_nonfinite<T: Real>(x: &[T]) -> Option<(usize, f64)> {
    x.iter()
        .position(|v| !v.is_finite())
        .map(|i| (i, x[i].f64()))
}
