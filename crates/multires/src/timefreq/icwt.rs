//! The inverse CWT by the single-integral (Morlet) formula.
//!
//! With L1-normalized coefficients W(a, n) (multires' L2 rows divided by
//! √a), ∫₀^∞ W(a, n) da/a = K+ x₊(n) + K- x₋(n), x± the signal's positive
//! and negative frequency parts and K± = ∫₀^∞ conj(ψ̂(±u)) du/u. So:
//! - analytic ψ (K- = 0), real x: x = 2 Re(Σ w_i W_i / K+), ssqueezepy's and
//!   MATLAB's `icwt` (Theorem 4.5 of Daubechies, Lu & Wu 2011);
//! - real even ψ (K- = K+, real): x = Σ w_i W_i / K+;
//! - any other ψ (odd real ones such as gaus1, or cgauP): the spectrum of
//!   Σ w_i W_i divided by K+ at positive and K- at negative frequencies.
//!
//! What it cannot give back: the mean (no finite scale sees DC; pass it as
//! `mean`), and any band the scales do not cover; near the ends, what the
//! boundary mode invented.
use super::{scale_weights, TimeFreqError};
use crate::cwt::Normalization;
use crate::wavelets::Wavelet;
use ndarray::ArrayView2;
use num_complex::Complex64;
use rayon::prelude::*;

/// How to read the coefficients and what to rebuild.
#[derive(Debug, Clone, PartialEq)]
pub struct IcwtOptions {
    /// The normalization the coefficients were computed with.
    pub normalization: Normalization,
    /// Keep only rows whose scale lies in lo..=hi (a band of the signal);
    /// the weights stay those of the full grid.
    pub band: Option<(f64, f64)>,
    /// Added to every sample: the signal's mean, which the CWT does not hold.
    pub mean: f64,
    /// The signal was real (the imaginary part of the result is then zero).
    pub real: bool,
}

impl Default for IcwtOptions {
    fn default() -> Self {
        IcwtOptions {
            normalization: Normalization::L2,
            band: None,
            mean: 0.0,
            real: true,
        }
    }
}

/// The signal of CWT coefficients `w` (scales x time, rows in the order of
/// `scales`, in samples) by `wavelet`.
pub fn icwt(
    w: ArrayView2<'_, Complex64>,
    scales: &[f64],
    wavelet: &Wavelet,
    options: &IcwtOptions,
) -> Result<Vec<Complex64>, TimeFreqError> {
    let (rows, n) = w.dim();
    if rows != scales.len() {
        return Err(TimeFreqError::Shape {
            what: "the coefficients",
            got: format!("({rows}, {n})"),
            want: format!("({}, N): one row per scale", scales.len()),
        });
    }
    let weights = scale_weights(scales)?;
    let keep: Vec<bool> = match options.band {
        None => vec![true; rows],
        Some((lo, hi)) => {
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            let keep: Vec<bool> = scales.iter().map(|&s| s >= lo && s <= hi).collect();
            if !keep.iter().any(|&k| k) {
                return Err(TimeFreqError::EmptyBand {
                    lo,
                    hi,
                    first: scales[0],
                    last: scales[rows - 1],
                });
            }
            keep
        }
    };
    let factor: Vec<f64> = (0..rows)
        .map(|i| match (keep[i], options.normalization) {
            (false, _) => 0.0,
            (true, Normalization::L1) => weights[i],
            (true, Normalization::L2) => weights[i] / scales[i].sqrt(),
        })
        .collect();
    // y[n] = Σ_i w_i W_L1[i, n], summed in row order for every column.
    let y: Vec<Complex64> = (0..n)
        .into_par_iter()
        .map(|j| {
            let mut acc = Complex64::new(0.0, 0.0);
            for i in 0..rows {
                if factor[i] != 0.0 {
                    acc += w[[i, j]] * factor[i];
                }
            }
            acc
        })
        .collect();
    let k = wavelet.admissibility();
    let (kp, km) = (k.positive, k.negative);
    let big = kp.norm().max(km.norm());
    let not_admissible = || TimeFreqError::NotAdmissible {
        name: wavelet.name().into(),
        k: format!("{kp:.3e}"),
    };
    if !(big.is_finite() && big > 0.0) {
        return Err(not_admissible());
    }
    let mut x: Vec<Complex64> = if k.is_analytic() {
        if !options.real {
            return Err(TimeFreqError::ComplexWithAnalytic(wavelet.name().into()));
        }
        // ssqueezepy's and MATLAB's formula: y holds only x's positive part.
        y.iter()
            .map(|v| Complex64::new(2.0 * (v / kp).re, 0.0))
            .collect()
    } else if (kp - km).norm() <= 1e-9 * big {
        y.iter().map(|v| v / kp).collect()
    } else if options.real {
        // A real x is known from its positive frequencies, which y holds
        // times K+ (times K- for a wavelet that looks the other way).
        if kp.norm() >= km.norm() {
            divide_by_sides(&y, kp, None)
        } else {
            divide_by_sides(&y, None, km)
        }
    } else {
        if kp.norm() < 1e-3 * big || km.norm() < 1e-3 * big {
            return Err(not_admissible());
        }
        divide_by_sides(&y, kp, km)
    };
    for v in x.iter_mut() {
        if options.real {
            v.im = 0.0;
        }
        v.re += options.mean;
    }
    Ok(x)
}

/// X(ω) = Y(ω)/K+ for ω > 0 and Y(ω)/K- for ω < 0, the mean of the two
/// at Nyquist; the DC bin is dropped (the caller adds the mean). With one
/// side only (a real signal), the other is its mirror: X(-ω) = conj X(ω).
fn divide_by_sides(
    y: &[Complex64],
    kp: impl Into<Option<Complex64>>,
    km: impl Into<Option<Complex64>>,
) -> Vec<Complex64> {
    let (kp, km) = (kp.into(), km.into());
    let n = y.len();
    let mut planner = rustfft::FftPlanner::new();
    let mut buf = y.to_vec();
    planner.plan_fft_forward(n).process(&mut buf);
    let spec = buf.clone();
    for (j, v) in buf.iter_mut().enumerate() {
        let mirror = (n - j) % n;
        let pos = |i: usize| kp.map(|k| spec[i] / k);
        let neg = |i: usize| km.map(|k| spec[i] / k);
        *v = if j == 0 {
            Complex64::new(0.0, 0.0)
        } else if 2 * j == n {
            match (pos(j), neg(j)) {
                (Some(a), Some(b)) => 0.5 * (a + b),
                (Some(a), None) | (None, Some(a)) => Complex64::new(a.re, 0.0),
                (None, None) => Complex64::new(0.0, 0.0),
            }
        } else if 2 * j < n {
            pos(j).unwrap_or_else(|| neg(mirror).unwrap_or_default().conj())
        } else {
            neg(j).unwrap_or_else(|| pos(mirror).unwrap_or_default().conj())
        };
    }
    planner.plan_fft_inverse(n).process(&mut buf);
    buf.iter().map(|v| v / n as f64).collect()
}
