//! Wavelet shrinkage: pywt's thresholding rules, the noise level by the
//! median absolute deviation of the finest diagonal details, the per
//! subband thresholds of BayesShrink (Chang, Yu & Vetterli), VisuShrink
//! (Donoho & Johnstone's universal threshold) and SureShrink (their
//! hybrid SURE rule, MATLAB's 'heursure'), and the whole denoiser as
//! scikit-image's `denoise_wavelet` runs it on a float image.

use super::nd::{dwtn, wavedecn, waverecn_into, NdCoefficients};
use super::{max_level, DwtError, Transform};
use crate::real::Real;
use ndarray::{ArrayD, ArrayViewD};
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// scipy.stats.norm.ppf(0.75): the median of |N(0, 1)|.
pub const MAD_TO_SIGMA: f64 = 0.674_489_750_196_081_7;

/// Elements per task in the parallel reductions and maps.
const CHUNK: usize = 1 << 16;

/// pywt's thresholding rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdMode {
    /// sign(x) max(|x| - t, 0).
    Soft,
    /// x where |x| >= t.
    Hard,
    /// The non-negative garrote, x max(1 - t²/x², 0).
    Garrote,
    /// x where x >= t.
    Greater,
    /// x where x <= t.
    Less,
}

named_enum!(ThresholdMode, "threshold mode", [
    "soft" => ThresholdMode::Soft,
    "hard" => ThresholdMode::Hard,
    "garrote" => ThresholdMode::Garrote,
    "greater" => ThresholdMode::Greater,
    "less" => ThresholdMode::Less,
]);

/// The threshold rules of the denoiser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShrinkMethod {
    Bayes,
    Visu,
    Sure,
}

named_enum!(ShrinkMethod, "denoising method", [
    "bayes" => ShrinkMethod::Bayes,
    "bayesshrink" => ShrinkMethod::Bayes,
    "visu" => ShrinkMethod::Visu,
    "visushrink" => ShrinkMethod::Visu,
    "sure" => ShrinkMethod::Sure,
    "sureshrink" => ShrinkMethod::Sure,
]);

/// `pywt.threshold(x, value, mode, substitute)` in place.
pub fn threshold_in_place<T: Real>(x: &mut [T], value: f64, mode: ThresholdMode, substitute: f64) {
    let (t, s) = (T::of(value), T::of(substitute));
    x.par_chunks_mut(CHUNK).for_each(|c| {
        for v in c.iter_mut() {
            let a = v.abs();
            *v = match mode {
                ThresholdMode::Soft if a < t => s,
                ThresholdMode::Soft => v.signum() * (a - t),
                ThresholdMode::Hard if a < t => s,
                ThresholdMode::Hard => *v,
                ThresholdMode::Garrote if a < t || a == T::zero() => s,
                ThresholdMode::Garrote => *v * (T::one() - (t * t) / (*v * *v)),
                ThresholdMode::Greater if *v < t => s,
                ThresholdMode::Less if *v > t => s,
                ThresholdMode::Greater | ThresholdMode::Less => *v,
            };
        }
    });
}

/// The mean of x², accumulated in float64.
pub fn mean_square<T: Real>(x: &[T]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let s: f64 = x
        .par_chunks(CHUNK)
        .map(|c| c.iter().map(|v| v.f64() * v.f64()).sum::<f64>())
        .sum();
    s / x.len() as f64
}

/// numpy's median of |x| over the nonzero entries (the mean of the two
/// middle values for an even count; NaN when all are zero).
pub fn median_abs_nonzero<T: Real>(x: &[T]) -> f64 {
    let mut a: Vec<f64> = x
        .par_chunks(CHUNK)
        .flat_map_iter(|c| c.iter().map(|v| v.f64().abs()).filter(|&v| v != 0.0))
        .collect();
    let n = a.len();
    if n == 0 {
        return f64::NAN;
    }
    let (_, &mut hi, _) = a.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return hi;
    }
    let lo = a[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo + hi) / 2.0
}

/// The noise level of the finest diagonal details: median(|d|) / 0.6745.
pub fn sigma_mad<T: Real>(finest_diagonal: &[T]) -> f64 {
    median_abs_nonzero(finest_diagonal) / MAD_TO_SIGMA
}

/// `sigma_mad` of a subband in any layout.
fn band_sigma<T: Real>(band: &ArrayD<T>) -> f64 {
    match band.as_slice() {
        Some(v) => sigma_mad(v),
        None => sigma_mad(&band.iter().copied().collect::<Vec<_>>()),
    }
}

/// BayesShrink's threshold of one subband: σ² / sqrt(max(E[d²] - σ², eps)).
pub fn bayes_threshold<T: Real>(details: &[T], sigma: f64) -> f64 {
    let var = sigma * sigma;
    let eps = T::epsilon().f64();
    var / (mean_square(details) - var).max(eps).sqrt()
}

/// The universal threshold σ sqrt(2 ln n) for n samples.
pub fn universal_threshold(n: usize, sigma: f64) -> f64 {
    sigma * (2.0 * (n as f64).ln()).sqrt()
}

/// SureShrink's threshold of one subband (MATLAB's 'heursure'): the
/// magnitude minimising Stein's unbiased risk estimate of soft
/// thresholding, capped at the universal threshold; the universal
/// threshold itself when the band is too sparse for SURE to be reliable.
pub fn sure_threshold<T: Real>(details: &[T], sigma: f64) -> f64 {
    let n = details.len();
    if n == 0 || sigma <= 0.0 {
        return 0.0;
    }
    let nf = n as f64;
    let universal = if n > 1 { (2.0 * nf.ln()).sqrt() } else { 0.0 };
    let mut s2: Vec<f64> = details.iter().map(|v| (v.f64() / sigma).powi(2)).collect();
    let eta = (s2.iter().sum::<f64>() - nf) / nf;
    let crit = nf.log2().powf(1.5) / nf.sqrt();
    if eta < crit {
        return sigma * universal;
    }
    s2.par_sort_unstable_by(f64::total_cmp);
    // risk(k) = (n - 2k + Σ_{i<=k} s2_i + (n - k) s2_k) / n, k = 1..n.
    let (mut best, mut best_risk, mut cum) = (0usize, f64::INFINITY, 0.0);
    for (i, &v) in s2.iter().enumerate() {
        cum += v;
        let k = (i + 1) as f64;
        let risk = (nf - 2.0 * k + cum + (nf - k) * v) / nf;
        if risk < best_risk {
            best_risk = risk;
            best = i;
        }
    }
    sigma * s2[best].sqrt().min(universal)
}

/// What `denoise` does: skimage's `denoise_wavelet` defaults are
/// `levels: None` (the deepest level minus 3, at least 1), `sigma: None`
/// (the MAD estimate), soft BayesShrink.
#[derive(Debug, Clone, Copy)]
pub struct DenoiseOptions {
    pub method: ShrinkMethod,
    pub mode: ThresholdMode,
    pub sigma: Option<f64>,
    pub levels: Option<usize>,
}

impl Default for DenoiseOptions {
    fn default() -> Self {
        DenoiseOptions {
            method: ShrinkMethod::Bayes,
            mode: ThresholdMode::Soft,
            sigma: None,
            levels: None,
        }
    }
}

/// skimage's default levels: the deepest every axis allows, minus 3, at least 1.
pub fn default_levels(shape: &[usize], filter_len: usize) -> usize {
    let deepest = shape
        .iter()
        .map(|&n| max_level(n, filter_len))
        .min()
        .unwrap_or(0);
    deepest.saturating_sub(3).max(1)
}

/// Thresholds every detail subband of `c` (the wavedecn of an array of
/// `size` values) in place by `o`; returns the noise level used.
pub fn shrink<T: Real>(
    c: &mut NdCoefficients<T>,
    size: usize,
    o: &DenoiseOptions,
) -> Result<f64, DwtError> {
    if !matches!(o.mode, ThresholdMode::Soft | ThresholdMode::Hard) {
        return Err(DwtError::NotAvailable(
            "the denoiser thresholds 'soft' or 'hard'".into(),
        ));
    }
    let ndim = c.approx.ndim();
    let sigma = match o.sigma {
        Some(s) => s,
        None => {
            let finest = c
                .details
                .last()
                .and_then(|d| d.get(&"d".repeat(ndim)))
                .ok_or(DwtError::EmptySignal)?;
            band_sigma(finest)
        }
    };
    let universal = universal_threshold(size, sigma);
    for band in c.details.iter_mut().flat_map(|d| d.values_mut()) {
        let v = band
            .as_slice_mut()
            .ok_or_else(|| DwtError::NotAvailable("a non-contiguous subband".into()))?;
        let thr = match o.method {
            ShrinkMethod::Bayes => bayes_threshold(v, sigma),
            ShrinkMethod::Visu => universal,
            ShrinkMethod::Sure => sure_threshold(v, sigma),
        };
        threshold_in_place(v, thr, o.mode, 0.0);
    }
    Ok(sigma)
}

/// `x` cut to `shape` (odd lengths reconstruct one longer).
pub fn cut_to<T: Real>(y: ArrayD<T>, shape: &[usize]) -> ArrayD<T> {
    if y.shape() == shape {
        return y;
    }
    let mut v = y.view();
    for (k, &n) in shape.iter().enumerate() {
        v.slice_axis_inplace(ndarray::Axis(k), ndarray::Slice::from(0..n));
    }
    v.to_owned()
}

/// Refuses what the denoiser cannot take: no values, NaN or Inf.
pub fn check_input<T: Real>(x: &ArrayViewD<T>) -> Result<(), DwtError> {
    if x.is_empty() {
        return Err(DwtError::EmptySignal);
    }
    if let Some((index, v)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(DwtError::NonFinite {
            index,
            value: v.f64(),
        });
    }
    Ok(())
}

/// The denoised array and the noise level used, on the CPU.
pub fn denoise<T: Real>(
    x: ArrayViewD<T>,
    t: &Transform<T>,
    o: &DenoiseOptions,
) -> Result<(ArrayD<T>, f64), DwtError> {
    check_input(&x)?;
    let axes: Vec<isize> = (0..x.ndim() as isize).collect();
    let levels = o
        .levels
        .unwrap_or_else(|| default_levels(x.shape(), t.filter_len()));
    let mut c = wavedecn(x.view(), t, Some(levels), &axes)?;
    let sigma = shrink(&mut c, x.len(), o)?;
    Ok((cut_to(waverecn_into(c, t, &axes)?, x.shape()), sigma))
}

/// skimage's `estimate_sigma` of one channel: the MAD estimate of the
/// finest db2 diagonal details.
pub fn estimate_sigma<T: Real>(x: ArrayViewD<T>, db2: &Transform<T>) -> Result<f64, DwtError> {
    let axes: Vec<isize> = (0..x.ndim() as isize).collect();
    let c = dwtn(x, db2, &axes)?;
    let d = c
        .get(&"d".repeat(axes.len()))
        .ok_or(DwtError::EmptySignal)?;
    Ok(band_sigma(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_match_pywt_on_a_few_values() {
        let x = [-3.0f64, -1.0, 0.0, 0.5, 2.0];
        let run = |m| {
            let mut v = x;
            threshold_in_place(&mut v, 1.0, m, 0.0);
            v
        };
        assert_eq!(run(ThresholdMode::Soft), [-2.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(run(ThresholdMode::Hard), [-3.0, -1.0, 0.0, 0.0, 2.0]);
        assert_eq!(run(ThresholdMode::Greater), [0.0, 0.0, 0.0, 0.0, 2.0]);
        assert_eq!(run(ThresholdMode::Less), [-3.0, -1.0, 0.0, 0.5, 0.0]);
        let g = run(ThresholdMode::Garrote);
        assert!(
            (g[0] - (-3.0 + 1.0 / 3.0)).abs() < 1e-15 && g[1] == 0.0 && (g[4] - 1.5).abs() < 1e-15
        );
    }

    #[test]
    fn median_and_sure_against_brute_force() {
        assert_eq!(median_abs_nonzero(&[0.0f64, -3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_abs_nonzero(&[0.0f64, -3.0, 1.0, 2.0, 4.0]), 2.5);
        // SURE by its definition at every candidate magnitude.
        let x: Vec<f64> = (0..400)
            .map(|i| ((i * 7919) % 997) as f64 / 100.0 - 5.0 + if i % 50 == 0 { 20.0 } else { 0.0 })
            .collect();
        let n = x.len() as f64;
        let risk = |t: f64| {
            let mut r = n;
            for v in &x {
                r += if v.abs() <= t { v * v - 2.0 } else { t * t };
            }
            r / n
        };
        let best = x
            .iter()
            .map(|v| v.abs())
            .min_by(|a, b| risk(*a).total_cmp(&risk(*b)))
            .unwrap();
        let ours = sure_threshold(&x, 1.0);
        assert!(
            (ours - best.min((2.0 * n.ln()).sqrt())).abs() < 1e-12,
            "{ours} vs {best}"
        );
    }
}
