//! Cross-wavelet spectrum and wavelet coherence (Torrence & Webster 1999;
//! Grinsted, Moore & Jevrejeva 2004) with pycwt 0.5's smoothing for the
//! Morlet wavelet: in time, each row filtered by the Gaussian
//! exp(-t²/2s²) (s the row's scale in samples) through an FFT over the
//! next power of two, zero-padded; in scale, a boxcar of round(2·0.6/dj)
//! rows with half-weight ends, normalized, centred as scipy's 'same'
//! convolution (zeros past the first and last scale).
use super::TimeFreqError;
use ndarray::{Array2, ArrayView2, Axis};
use num_complex::Complex64;
use rayon::prelude::*;
use std::f64::consts::PI;

/// Coherence and what it is made of.
#[derive(Debug, Clone)]
pub struct Coherence {
    /// |S(W₁W₂*/s)|² / (S(|W₁|²/s) S(|W₂|²/s)), in [0, 1].
    pub wct: Array2<f64>,
    /// The angle of W₁W₂* (pycwt's `aWCT`, unsmoothed): W₁ leads by it.
    pub phase: Array2<f64>,
    /// The cross-wavelet spectrum W₁W₂*.
    pub cross: Array2<Complex64>,
}

/// pycwt's `Morlet.smooth` of `w` (rows at `scales`, in samples; `dj` the
/// scale spacing in octaves; 0.6 is the Morlet's decorrelation length in
/// scale, Torrence & Compo's δj₀).
pub fn smooth(
    w: ArrayView2<'_, Complex64>,
    scales: &[f64],
    dj: f64,
) -> Result<Array2<Complex64>, TimeFreqError> {
    let (rows, n) = w.dim();
    if rows != scales.len() {
        return Err(TimeFreqError::Shape {
            what: "the plane to smooth",
            got: format!("({rows}, {n})"),
            want: format!("({}, N): one row per scale", scales.len()),
        });
    }
    if !(dj.is_finite() && dj > 0.0) {
        return Err(TimeFreqError::Options(format!(
            "dj must be finite and > 0, got {dj}"
        )));
    }
    super::check_scales(scales)?;
    let npad = n.max(1).next_power_of_two();
    let mut planner = rustfft::FftPlanner::new();
    let (fwd, inv) = (
        planner.plan_fft_forward(npad),
        planner.plan_fft_inverse(npad),
    );
    // numpy's fftfreq(npad) times 2π.
    let k: Vec<f64> = (0..npad)
        .map(|j| {
            let f = if j < npad.div_ceil(2) {
                j as f64
            } else {
                j as f64 - npad as f64
            };
            2.0 * PI * f / npad as f64
        })
        .collect();
    let mut t = Array2::<Complex64>::zeros((rows, n));
    t.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut out)| {
            let mut buf = vec![Complex64::new(0.0, 0.0); npad];
            for (b, v) in buf.iter_mut().zip(w.row(i)) {
                *b = *v;
            }
            fwd.process(&mut buf);
            let s2 = scales[i] * scales[i];
            for (b, kk) in buf.iter_mut().zip(&k) {
                *b *= (-0.5 * s2 * kk * kk).exp();
            }
            inv.process(&mut buf);
            for (o, b) in out.iter_mut().zip(&buf) {
                *o = b / npad as f64;
            }
        });
    if w.iter().all(|v| v.im == 0.0) {
        t.mapv_inplace(|v| Complex64::new(v.re, 0.0));
    }
    // The boxcar in scale: int(round(1.2 / dj)) taps (numpy rounds half to even).
    let len = ((0.6 / dj * 2.0).round_ties_even() as usize).max(1);
    let mut win = vec![1.0; len];
    win[0] = 0.5;
    win[len - 1] = 0.5;
    if len == 1 {
        win[0] = 1.0;
    }
    let total: f64 = win.iter().sum();
    win.iter_mut().for_each(|v| *v /= total);
    let c = (len - 1) / 2;
    let mut out = Array2::<Complex64>::zeros((rows, n));
    out.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut o)| {
            // same[i] = full[i + c], full[m] = Σ_j T[m - j] win[j].
            let m = i + c;
            for (j, &wj) in win.iter().enumerate() {
                if m >= j && m - j < rows {
                    o.scaled_add(Complex64::new(wj, 0.0), &t.row(m - j));
                }
            }
        });
    Ok(out)
}

/// Coherence of two planes of the same scales (each from its signal).
pub fn wavelet_coherence(
    w1: ArrayView2<'_, Complex64>,
    w2: ArrayView2<'_, Complex64>,
    scales: &[f64],
    dj: f64,
) -> Result<Coherence, TimeFreqError> {
    if w1.dim() != w2.dim() {
        return Err(TimeFreqError::Shape {
            what: "the second plane",
            got: format!("{:?}", w2.dim()),
            want: format!("{:?}, the first's", w1.dim()),
        });
    }
    let cross = ndarray::Zip::from(&w1)
        .and(&w2)
        .par_map_collect(|a, b| a * b.conj());
    let per_scale = |f: &dyn Fn(usize, usize) -> Complex64| -> Array2<Complex64> {
        Array2::from_shape_fn(w1.dim(), |(i, j)| f(i, j) / scales[i])
    };
    let s1 = smooth(
        per_scale(&|i, j| Complex64::new(w1[[i, j]].norm_sqr(), 0.0)).view(),
        scales,
        dj,
    )?;
    let s2 = smooth(
        per_scale(&|i, j| Complex64::new(w2[[i, j]].norm_sqr(), 0.0)).view(),
        scales,
        dj,
    )?;
    let s12 = smooth(per_scale(&|i, j| cross[[i, j]]).view(), scales, dj)?;
    let wct = ndarray::Zip::from(&s12)
        .and(&s1)
        .and(&s2)
        .par_map_collect(|c, a, b| c.norm_sqr() / (a.re * b.re));
    let phase = cross.mapv(|c| c.im.atan2(c.re));
    Ok(Coherence { wct, phase, cross })
}
