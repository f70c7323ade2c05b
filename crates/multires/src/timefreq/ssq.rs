//! Synchrosqueezing of the CWT (Daubechies, Lu & Wu 2011; Thakur, Brevdo
//! et al. 2013), with ssqueezepy 0.6's definitions: the phase transform
//! ω(a, b) = |Im(∂_b W / W)| / 2π, each coefficient W(a, b) w(a) added to
//! the output frequency bin nearest ω(a, b) (nearest in log2 for geometric
//! bins, ties to even as numpy rounds), w(a) the scale weights of
//! `scale_weights`, coefficients L1-normalized.
//!
//! ∂_b W is exact: a second CWT whose mask is dψ/dt (d/dn Σ_k x[n+k]
//! conj(m(k)) = -(1/s) Σ_k x[n+k] conj(s^-p ψ'(k/s))), not a difference
//! of W's columns and not a frequency-domain product.
use super::{check_scales, scale_weights, TimeFreqError};
use crate::backend::Backend;
use crate::cwt::{CwtOptions, CwtPlan, CwtValues, Normalization, OutputKind, Precision};
use crate::signal::Signal;
use crate::wavelets::Wavelet;
use ndarray::{Array2, ArrayView2};
use num_complex::Complex64;
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// What each reassigned coefficient adds to its bin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Squeezing {
    /// W(a, b) w(a): the squeezed plane inverts to the signal.
    #[default]
    Sum,
    /// w(a) / (number of scales): a count of where the energy is,
    /// regardless of its size (Lebesgue measure; ssqueezepy's 'lebesgue').
    Lebesgue,
}

named_enum!(Squeezing, "squeezing", ["sum" => Squeezing::Sum, "lebesgue" => Squeezing::Lebesgue]);

/// How the output frequencies are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreqSpacing {
    Log,
    Linear,
}

named_enum!(FreqSpacing, "frequency spacing", ["log" => FreqSpacing::Log, "linear" => FreqSpacing::Linear]);

/// Which frequencies the output spans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MapRange {
    /// The wavelet's peak frequency at the largest and the smallest scale.
    Peak,
    /// From the record's fundamental fs/N to Nyquist fs/2.
    Maximal,
    /// From the first to the second (in the units of the sampling rate).
    Range(f64, f64),
}

/// Options of the synchrosqueezed CWT.
#[derive(Debug, Clone, PartialEq)]
pub struct SsqOptions {
    pub squeezing: Squeezing,
    /// Output frequency spacing; None: like the scales (log for geometric).
    pub spacing: Option<FreqSpacing>,
    pub maprange: MapRange,
    /// The output frequencies themselves (geometric or linear, either
    /// order); overrides `spacing` and `maprange`.
    pub freqs: Option<Vec<f64>>,
    /// |W| at or below which a coefficient is not reassigned (L1 units);
    /// None: 10 ε of the precision, ssqueezepy's default.
    pub gamma: Option<f64>,
    /// Rows from the highest frequency down, as the CWT's rows run from
    /// the smallest scale (ssqueezepy's `flipud=True`).
    pub flipud: bool,
}

impl Default for SsqOptions {
    fn default() -> Self {
        SsqOptions {
            squeezing: Squeezing::Sum,
            spacing: None,
            maprange: MapRange::Peak,
            freqs: None,
            gamma: None,
            flipud: true,
        }
    }
}

/// The synchrosqueezed plane and what it was made from.
#[derive(Debug, Clone)]
pub struct Synchrosqueezed {
    /// Shape (frequencies, N).
    pub tx: Array2<Complex64>,
    /// The CWT, L1-normalized (ssqueezepy's `Wx`), shape (scales, N).
    pub wx: Array2<Complex64>,
    /// ∂W/∂t in units of the sampling rate, same shape.
    pub dwx: Array2<Complex64>,
    /// Frequency of each row of `tx`, in the units of the sampling rate.
    pub freqs: Vec<f64>,
    /// Scales of the rows of `wx`, in samples.
    pub scales: Vec<f64>,
}

/// The output frequencies, ascending, for `scales` of an `n`-sample record.
pub fn ssq_frequencies(
    scales: &[f64],
    n: usize,
    wavelet: &Wavelet,
    spacing: FreqSpacing,
    maprange: MapRange,
    fs: f64,
) -> Result<Vec<f64>, TimeFreqError> {
    check_scales(scales)?;
    let na = scales.len();
    if na < 2 {
        return Err(TimeFreqError::TooFewScales("synchrosqueezing"));
    }
    let (smin, smax) = scales
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &s| (a.min(s), b.max(s)));
    let cf = wavelet.center_frequency();
    let (fm, fmx) = match maprange {
        MapRange::Peak => (cf * fs / smax, cf * fs / smin),
        MapRange::Maximal => (fs / n.max(1) as f64, fs / 2.0),
        MapRange::Range(a, b) => (a.min(b), a.max(b)),
    };
    if !(fm.is_finite() && fm > 0.0 && fmx > fm && fmx.is_finite()) {
        return Err(TimeFreqError::Options(format!(
            "the frequency range {fm}..{fmx} is empty or not positive"
        )));
    }
    let last = (na - 1) as f64;
    Ok(match spacing {
        FreqSpacing::Log => (0..na)
            .map(|k| fm * (fmx / fm).powf(k as f64 / last))
            .collect(),
        FreqSpacing::Linear => (0..na).map(|k| fm + (fmx - fm) * k as f64 / last).collect(),
    })
}

/// Which bin a frequency falls in: ssqueezepy's `find_closest` arithmetic.
#[derive(Debug, Clone, Copy)]
struct Bins {
    log: bool,
    start: f64,
    step: f64,
    last: usize,
}

impl Bins {
    /// From ascending frequencies, geometric or linear.
    fn of(freqs: &[f64]) -> Result<Self, TimeFreqError> {
        if freqs.len() < 2 {
            return Err(TimeFreqError::Options(
                "synchrosqueezing needs at least 2 output frequencies".into(),
            ));
        }
        if freqs.iter().any(|f| !(f.is_finite() && *f > 0.0))
            || freqs.windows(2).any(|p| p[1] <= p[0])
        {
            return Err(TimeFreqError::Options(
                "output frequencies must be finite, positive and strictly monotonic".into(),
            ));
        }
        let last = freqs.len() - 1;
        let dl = freqs[1].log2() - freqs[0].log2();
        let geometric = freqs
            .windows(2)
            .all(|p| ((p[1].log2() - p[0].log2()) - dl).abs() <= 1e-9 * dl);
        if geometric {
            return Ok(Bins {
                log: true,
                start: freqs[0].log2(),
                step: dl,
                last,
            });
        }
        let d = freqs[1] - freqs[0];
        if freqs
            .windows(2)
            .all(|p| ((p[1] - p[0]) - d).abs() <= 1e-9 * d.abs().max(freqs[last]))
        {
            return Ok(Bins {
                log: false,
                start: freqs[0],
                step: d,
                last,
            });
        }
        Err(TimeFreqError::Options(
            "output frequencies must be geometrically or linearly spaced".into(),
        ))
    }

    #[inline]
    fn index(&self, w: f64) -> usize {
        let v = if self.log { w.log2() } else { w };
        // max(NaN, 0) is 0, as numpy's is for the w = 0 that log2 makes -inf.
        let k = ((v - self.start) / self.step).max(0.0).round_ties_even();
        (k.min(self.last as f64)) as usize
    }
}

/// ω = |Im(dW / W)| / 2π for every coefficient (in the units of `dwx`'s
/// time), infinite where |W| < gamma (ssqueezepy's `phase_cwt`).
pub fn phase_transform(
    wx: ArrayView2<'_, Complex64>,
    dwx: ArrayView2<'_, Complex64>,
    gamma: f64,
) -> Result<Array2<f64>, TimeFreqError> {
    same_shape(wx, dwx)?;
    Ok(ndarray::Zip::from(&wx)
        .and(&dwx)
        .par_map_collect(|w, d| omega(*w, *d, gamma).unwrap_or(f64::INFINITY)))
}

#[inline]
fn omega(w: Complex64, d: Complex64, gamma: f64) -> Option<f64> {
    if w.norm() < gamma {
        return None;
    }
    Some(omega_of(w, d))
}

/// |Im(d / w)| / 2π in ssqueezepy's operation order, so that bins agree
/// on its own inputs.
#[inline]
fn omega_of(w: Complex64, d: Complex64) -> f64 {
    let (a, b, c, e) = (d.re, d.im, w.re, w.im);
    ((b * c - a * e) / ((c * c + e * e) * std::f64::consts::TAU)).abs()
}

fn same_shape(
    wx: ArrayView2<'_, Complex64>,
    dwx: ArrayView2<'_, Complex64>,
) -> Result<(), TimeFreqError> {
    if wx.dim() != dwx.dim() {
        return Err(TimeFreqError::Shape {
            what: "dWx",
            got: format!("{:?}", dwx.dim()),
            want: format!("{:?}, the shape of Wx", wx.dim()),
        });
    }
    Ok(())
}

/// Reassigns `wx` (L1-normalized, scales x time) to the frequencies
/// `freqs` (ascending) by the phase transform of `dwx` (∂W/∂t in the
/// units of `freqs`); `weights` per row. Returns rows in ascending
/// frequency, or descending with `flipud`.
pub fn ssqueeze(
    wx: ArrayView2<'_, Complex64>,
    dwx: ArrayView2<'_, Complex64>,
    weights: &[f64],
    freqs: &[f64],
    squeezing: Squeezing,
    gamma: f64,
    flipud: bool,
) -> Result<Array2<Complex64>, TimeFreqError> {
    same_shape(wx, dwx)?;
    let (na, n) = wx.dim();
    if weights.len() != na {
        return Err(TimeFreqError::Shape {
            what: "the scale weights",
            got: weights.len().to_string(),
            want: format!("{na}, one per row"),
        });
    }
    let bins = Bins::of(freqs)?;
    let nf = freqs.len();
    // Blocks of columns in parallel, each walked row by row (contiguous
    // reads; a column-by-column walk strided by N and ran 5x slower), so
    // every bin still sums its terms in row order, as ssqueezepy's loop.
    const BLOCK: usize = 256;
    let g2 = gamma * gamma;
    let blocks: Vec<Vec<Complex64>> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let (j0, j1) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
            let width = j1 - j0;
            let mut acc = vec![Complex64::new(0.0, 0.0); nf * width];
            for (i, &wt) in weights.iter().enumerate() {
                let (wr, dr) = (wx.row(i), dwx.row(i));
                for j in j0..j1 {
                    let w = wr[j];
                    // |W| > gamma, without the square root.
                    if w.norm_sqr() <= g2 {
                        continue;
                    }
                    let mut k = bins.index(omega_of(w, dr[j]));
                    if flipud {
                        k = bins.last - k;
                    }
                    acc[k * width + (j - j0)] += match squeezing {
                        Squeezing::Sum => w * wt,
                        Squeezing::Lebesgue => Complex64::new(wt / na as f64, 0.0),
                    };
                }
            }
            acc
        })
        .collect();
    let mut out = Array2::zeros((nf, n));
    out.axis_iter_mut(ndarray::Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(k, mut row)| {
            for (b, acc) in blocks.iter().enumerate() {
                let (j0, width) = (b * BLOCK, acc.len() / nf);
                for (d, v) in acc[k * width..(k + 1) * width].iter().enumerate() {
                    row[j0 + d] = *v;
                }
            }
        });
    Ok(out)
}

/// The synchrosqueezed CWT of `signal` with the transform `options`
/// (complex output is implied; scales as given, in samples; the sampling
/// rate from `options.sample_rate`, else 1), on the CPU.
pub fn ssq_cwt(
    signal: &Signal,
    options: &CwtOptions,
    ssq: &SsqOptions,
) -> Result<Synchrosqueezed, TimeFreqError> {
    ssq_cwt_on(&crate::backend::CpuBackend, signal, options, ssq)
}

/// `ssq_cwt` with both transforms (W and ∂W/∂t) run by `backend`; the
/// squeezing itself runs on the host's cores.
pub fn ssq_cwt_on(
    backend: &dyn Backend,
    signal: &Signal,
    options: &CwtOptions,
    ssq: &SsqOptions,
) -> Result<Synchrosqueezed, TimeFreqError> {
    let wavelet = &options.wavelet;
    if !wavelet.admissibility().is_analytic() {
        return Err(TimeFreqError::NotAnalytic(wavelet.name().into()));
    }
    if options.hop != 1
        || options.oversampling != 1
        || options.timing_offset.is_some()
        || options.timing_skew.is_some()
    {
        return Err(TimeFreqError::Options(
            "synchrosqueezing needs every column (hop 1), no oversampling and no timing compensation".into(),
        ));
    }
    let scales: Vec<f64> = options.scales.iter().map(|s| s.value()).collect();
    let weights = scale_weights(&scales)?;
    let fs = options.sample_rate.unwrap_or(1.0);
    let mut base = options.clone();
    base.output = OutputKind::Complex;
    base.half = None;
    let mut deriv = base.clone();
    deriv.wavelet = wavelet.time_derivative();
    let n = signal.len();
    let run = |o: CwtOptions| -> Result<Array2<Complex64>, TimeFreqError> {
        let plan = CwtPlan::new(o, n, signal.is_complex())?;
        Ok(match backend.cwt(&plan, signal, None)?.values {
            CwtValues::Complex64(a) => a,
            other => other.to_complex64(),
        })
    };
    let mut wx = run(base)?;
    let mut dwx = run(deriv)?;
    for (i, &s) in scales.iter().enumerate() {
        let l1 = match options.normalization {
            Normalization::L1 => 1.0,
            Normalization::L2 => 1.0 / s.sqrt(),
        };
        wx.row_mut(i).mapv_inplace(|v| v * l1);
        let d = -l1 * fs / s;
        dwx.row_mut(i).mapv_inplace(|v| v * d);
    }
    let freqs = match &ssq.freqs {
        Some(f) => {
            let mut f = f.clone();
            if f.len() > 1 && f[0] > f[f.len() - 1] {
                f.reverse();
            }
            f
        }
        None => {
            // scale_weights gives every row ln(s1/s0) exactly when geometric.
            let geometric = weights.windows(2).all(|p| p[0] == p[1]);
            let spacing = ssq.spacing.unwrap_or(if geometric {
                FreqSpacing::Log
            } else {
                FreqSpacing::Linear
            });
            ssq_frequencies(&scales, n, wavelet, spacing, ssq.maprange, fs)?
        }
    };
    let gamma = ssq.gamma.unwrap_or(match options.precision {
        Precision::F64 => 10.0 * f64::EPSILON,
        Precision::F32 => 10.0 * f32::EPSILON as f64,
    });
    let tx = ssqueeze(
        wx.view(),
        dwx.view(),
        &weights,
        &freqs,
        ssq.squeezing,
        gamma,
        ssq.flipud,
    )?;
    let mut freqs = freqs;
    if ssq.flipud {
        freqs.reverse();
    }
    Ok(Synchrosqueezed {
        tx,
        wx,
        dwx,
        freqs,
        scales,
    })
}

/// The signal from a plane of `ssqueeze(.., Squeezing::Sum, ..)`:
/// x = 2 Re(Σ_k Tx[k, n] / K+) + mean, the rows whose frequency lies in
/// `band` only when it is given (a component of the signal).
pub fn issq_cwt(
    tx: ArrayView2<'_, Complex64>,
    freqs: &[f64],
    wavelet: &Wavelet,
    band: Option<(f64, f64)>,
    mean: f64,
) -> Result<Vec<f64>, TimeFreqError> {
    let (nf, n) = tx.dim();
    if freqs.len() != nf {
        return Err(TimeFreqError::Shape {
            what: "the synchrosqueezed plane",
            got: format!("({nf}, {n})"),
            want: format!("({}, N): one row per frequency", freqs.len()),
        });
    }
    let k = wavelet.admissibility();
    if !k.is_analytic() {
        return Err(TimeFreqError::NotAnalytic(wavelet.name().into()));
    }
    if k.positive.norm().is_nan() || k.positive.norm() <= 0.0 {
        return Err(TimeFreqError::NotAdmissible {
            name: wavelet.name().into(),
            k: format!("{:.3e}", k.positive),
        });
    }
    let keep: Vec<bool> = match band {
        None => vec![true; nf],
        Some((lo, hi)) => {
            let (lo, hi) = (lo.min(hi), lo.max(hi));
            freqs.iter().map(|&f| f >= lo && f <= hi).collect()
        }
    };
    let scale = 2.0 / k.positive;
    Ok((0..n)
        .into_par_iter()
        .map(|j| {
            let mut acc = Complex64::new(0.0, 0.0);
            for (i, &kp) in keep.iter().enumerate() {
                if kp {
                    acc += tx[[i, j]];
                }
            }
            (acc * scale).re + mean
        })
        .collect())
}
