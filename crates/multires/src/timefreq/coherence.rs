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
    check_plane(rows, n, scales, dj)?;
    let mut t = smooth_time(rows, n, scales, |i, buf| {
        for (b, v) in buf.iter_mut().zip(w.row(i)) {
            *b = *v;
        }
    });
    if w.iter().all(|v| v.im == 0.0) {
        t.mapv_inplace(|v| Complex64::new(v.re, 0.0));
    }
    let (win, c) = boxcar(dj);
    let mut out = Array2::<Complex64>::zeros((rows, n));
    out.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut o)| {
            if let Some(o) = o.as_slice_mut() {
                smooth_scale(&t, i, &win, c, o);
            }
        });
    Ok(out)
}

fn check_plane(rows: usize, n: usize, scales: &[f64], dj: f64) -> Result<(), TimeFreqError> {
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
    super::check_scales(scales)
}

/// Each row `fill(i, ..)` writes, filtered in time by exp(-t²/2s²) of its
/// scale through an FFT over the next power of two, zero-padded.
fn smooth_time(
    rows: usize,
    n: usize,
    scales: &[f64],
    fill: impl Fn(usize, &mut [Complex64]) + Sync,
) -> Array2<Complex64> {
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
        .for_each_init(
            || vec![Complex64::new(0.0, 0.0); npad],
            |buf, (i, mut out)| {
                buf.iter_mut().for_each(|b| *b = Complex64::new(0.0, 0.0));
                fill(i, &mut buf[..n]);
                fwd.process(buf);
                let s2 = scales[i] * scales[i];
                for (b, kk) in buf.iter_mut().zip(&k) {
                    *b *= (-0.5 * s2 * kk * kk).exp();
                }
                inv.process(buf);
                for (o, b) in out.iter_mut().zip(buf.iter()) {
                    *o = b / npad as f64;
                }
            },
        );
    t
}

/// The boxcar in scale: int(round(1.2 / dj)) taps (numpy rounds half to
/// even) with half-weight ends, normalized; and its centre.
fn boxcar(dj: f64) -> (Vec<f64>, usize) {
    let len = ((0.6 / dj * 2.0).round_ties_even() as usize).max(1);
    let mut win = vec![1.0; len];
    win[0] = 0.5;
    win[len - 1] = 0.5;
    if len == 1 {
        win[0] = 1.0;
    }
    let total: f64 = win.iter().sum();
    win.iter_mut().for_each(|v| *v /= total);
    (win, (len - 1) / 2)
}

/// Row i of the scale smoothing of `t`, as scipy's 'same' convolution:
/// same[i] = full[i + c], full[m] = Σ_j t[m - j] win[j].
fn smooth_scale(t: &Array2<Complex64>, i: usize, win: &[f64], c: usize, o: &mut [Complex64]) {
    o.iter_mut().for_each(|v| *v = Complex64::new(0.0, 0.0));
    let m = i + c;
    for (j, &wj) in win.iter().enumerate() {
        if m >= j && m - j < t.nrows() {
            for (a, b) in o.iter_mut().zip(t.row(m - j)) {
                *a += Complex64::new(wj, 0.0) * b;
            }
        }
    }
}

/// Coherence of two planes of the same scales (each from its signal).
/// S(|W₁|²/s) and S(|W₂|²/s) are smoothed together as the real and
/// imaginary parts of one plane (the smoothing is real and linear), and the
/// scale smoothing and the ratio are made row by row: three planes fewer
/// than smoothing each apart, and a third of the FFTs.
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
    let (rows, n) = w1.dim();
    check_plane(rows, n, scales, dj)?;
    let cross = ndarray::Zip::from(&w1)
        .and(&w2)
        .par_map_collect(|a, b| a * b.conj());
    let powers = smooth_time(rows, n, scales, |i, buf| {
        for ((b, a), c) in buf.iter_mut().zip(w1.row(i)).zip(w2.row(i)) {
            *b = Complex64::new(a.norm_sqr() / scales[i], c.norm_sqr() / scales[i]);
        }
    });
    let crossed = smooth_time(rows, n, scales, |i, buf| {
        for (b, c) in buf.iter_mut().zip(cross.row(i)) {
            *b = c / scales[i];
        }
    });
    let (win, c) = boxcar(dj);
    let mut wct = Array2::<f64>::zeros((rows, n));
    wct.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each_init(
            || {
                (
                    vec![Complex64::new(0.0, 0.0); n],
                    vec![Complex64::new(0.0, 0.0); n],
                )
            },
            |(p, x), (i, mut o)| {
                smooth_scale(&powers, i, &win, c, p);
                smooth_scale(&crossed, i, &win, c, x);
                for ((o, p), x) in o.iter_mut().zip(p.iter()).zip(x.iter()) {
                    *o = x.norm_sqr() / (p.re * p.im);
                }
            },
        );
    let phase = ndarray::Zip::from(&cross).par_map_collect(|c| c.im.atan2(c.re));
    Ok(Coherence { wct, phase, cross })
}

/// pycwt's Morlet (f0 = 6): ψ̂(ω) = π^-¼ exp(-(ω - 6)²/2), multires'
/// cmor2.0-(6/2π) times √2 π^¼; its Fourier period is `FLAMBDA` scales.
pub const PYCWT_F0: f64 = 6.0;

/// Fourier period over scale of pycwt's Morlet (Torrence & Compo table 1).
pub fn morlet_flambda() -> f64 {
    4.0 * PI / (PYCWT_F0 + (2.0 + PYCWT_F0 * PYCWT_F0).sqrt())
}

/// How two series are transformed for coherence, in pycwt's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct MorletCoherenceOptions {
    /// Sampling interval (the units of scales, periods and the cone).
    pub dt: f64,
    /// Scale spacing in octaves.
    pub dj: f64,
    /// Smallest scale in the units of `dt`; None: 2 dt / flambda.
    pub s0: Option<f64>,
    /// Largest scale index; None: round(log2(N dt / s0) / dj).
    pub j: Option<usize>,
    /// Subtract the mean and divide by the standard deviation first.
    pub normalize: bool,
    pub boundary: crate::boundary::Boundary,
}

/// Coherence of two series with everything a plot needs.
#[derive(Debug, Clone)]
pub struct SeriesCoherence {
    pub coherence: Coherence,
    /// Scales in the units of dt (pycwt's `sj`).
    pub scales: Vec<f64>,
    /// 1 / (flambda sj).
    pub freqs: Vec<f64>,
    /// The cone of influence per column, as a Fourier period (pycwt's `coi`).
    pub coi: Vec<f64>,
}

/// The two series' CWTs by pycwt's Morlet at its scales (one plan, run
/// twice), with the scales, frequencies and cone of a `SeriesCoherence`.
#[allow(clippy::type_complexity)]
pub fn morlet_transforms(
    backend: &dyn crate::backend::Backend,
    y1: &[f64],
    y2: &[f64],
    o: &MorletCoherenceOptions,
) -> Result<
    (
        Array2<Complex64>,
        Array2<Complex64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
    ),
    TimeFreqError,
> {
    use crate::cwt::{CwtOptions, CwtPlan, CwtValues};
    use crate::scales::Scale;
    use crate::signal::Signal;
    let n = y1.len();
    if y2.len() != n || n < 4 {
        return Err(TimeFreqError::Options(format!(
            "coherence needs two series of one length >= 4, got {} and {}",
            n,
            y2.len()
        )));
    }
    if !(o.dt.is_finite() && o.dt > 0.0 && o.dj.is_finite() && o.dj > 0.0) {
        return Err(TimeFreqError::Options(format!(
            "dt and dj must be finite and > 0, got {} and {}",
            o.dt, o.dj
        )));
    }
    let fl = morlet_flambda();
    let s0 = o.s0.unwrap_or(2.0 * o.dt / fl);
    if !(s0.is_finite() && s0 > 0.0) {
        return Err(TimeFreqError::Options(format!("s0 must be > 0, got {s0}")));
    }
    let j = o.j.unwrap_or_else(|| {
        ((n as f64 * o.dt / s0).log2() / o.dj)
            .round_ties_even()
            .max(0.0) as usize
    });
    let scales: Vec<f64> = (0..=j).map(|k| s0 * 2f64.powf(k as f64 * o.dj)).collect();
    let samples: Vec<f64> = scales.iter().map(|s| s / o.dt).collect();
    let prep = |y: &[f64]| -> Vec<f64> {
        if !o.normalize {
            return y.to_vec();
        }
        let m = y.iter().sum::<f64>() / n as f64;
        let sd = (y.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64).sqrt();
        y.iter().map(|v| (v - m) / sd).collect()
    };
    let wavelet =
        crate::wavelets::Wavelet::from_name(&format!("cmor2.0-{}", PYCWT_F0 / (2.0 * PI)))
            .map_err(|e| TimeFreqError::Options(e.to_string()))?;
    let gain = 2f64.sqrt() * PI.powf(0.25);
    // The last plan is kept: its masks and spectra (scales up to half the
    // record) cost more than the transforms, and analyses call again with
    // the same length and scales.
    static LAST: std::sync::Mutex<Option<(String, std::sync::Arc<CwtPlan>)>> =
        std::sync::Mutex::new(None);
    let key = format!("{n} {:?} {:?}", o.boundary, samples);
    let cached = LAST.lock().ok().and_then(|g| {
        g.as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, p)| p.clone())
    });
    let plan = match cached {
        Some(p) => p,
        None => {
            let mut c = CwtOptions::new(wavelet, samples.iter().map(|&s| Scale::new(s)).collect());
            c.boundary = o.boundary;
            let p = std::sync::Arc::new(CwtPlan::new(c, n, false)?);
            if let Ok(mut g) = LAST.lock() {
                *g = Some((key, p.clone()));
            }
            p
        }
    };
    let run = |y: Vec<f64>| -> Result<Array2<Complex64>, TimeFreqError> {
        let mut w = match backend.cwt(&plan, &Signal::real(y), None)?.values {
            CwtValues::Complex64(a) => a,
            other => other.to_complex64(),
        };
        w.mapv_inplace(|v| v * gain);
        Ok(w)
    };
    let (w1, w2) = (run(prep(y1))?, run(prep(y2))?);
    let coi = (0..n)
        .map(|k| {
            let c = n as f64 / 2.0 - (k as f64 - (n as f64 - 1.0) / 2.0).abs();
            fl * std::f64::consts::FRAC_1_SQRT_2 * o.dt * c
        })
        .collect();
    let freqs = scales.iter().map(|s| 1.0 / (fl * s)).collect();
    Ok((w1, w2, scales, freqs, coi))
}

/// pycwt's `wct` of two series on `backend`: `morlet_transforms`, then
/// `wavelet_coherence`.
pub fn morlet_coherence(
    backend: &dyn crate::backend::Backend,
    y1: &[f64],
    y2: &[f64],
    o: &MorletCoherenceOptions,
) -> Result<SeriesCoherence, TimeFreqError> {
    let (w1, w2, scales, freqs, coi) = morlet_transforms(backend, y1, y2, o)?;
    let samples: Vec<f64> = scales.iter().map(|s| s / o.dt).collect();
    let coherence = wavelet_coherence(w1.view(), w2.view(), &samples, o.dj)?;
    Ok(SeriesCoherence {
        coherence,
        scales,
        freqs,
        coi,
    })
}
