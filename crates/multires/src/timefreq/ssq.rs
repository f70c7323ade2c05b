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
use crate::real::Real;
use crate::signal::Signal;
use crate::wavelets::Wavelet;
use ndarray::{Array2, ArrayView2};
use num_complex::{Complex, Complex64};
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

/// The synchrosqueezed plane and what it was made from, in float64 or
/// (`ssq_cwt_in::<f32>`) float32 as ssqueezepy keeps them.
#[derive(Debug, Clone)]
pub struct Synchrosqueezed<T: Real = f64> {
    /// Shape (frequencies, N).
    pub tx: Array2<Complex<T>>,
    /// The CWT, L1-normalized (ssqueezepy's `Wx`), shape (scales, N).
    pub wx: Array2<Complex<T>>,
    /// ∂W/∂t in units of the sampling rate, same shape.
    pub dwx: Array2<Complex<T>>,
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
/// frequency, or descending with `flipud`. The phase transform and the
/// sums are in float64 whatever T; each bin is rounded to T once.
pub fn ssqueeze<T: Real>(
    wx: ArrayView2<'_, Complex<T>>,
    dwx: ArrayView2<'_, Complex<T>>,
    weights: &[f64],
    freqs: &[f64],
    squeezing: Squeezing,
    gamma: f64,
    flipud: bool,
) -> Result<Array2<Complex<T>>, TimeFreqError> {
    if wx.dim() != dwx.dim() {
        return Err(TimeFreqError::Shape {
            what: "dWx",
            got: format!("{:?}", dwx.dim()),
            want: format!("{:?}, the shape of Wx", wx.dim()),
        });
    }
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
    // Each block sums into its own small buffer and writes its columns of
    // the output once (no second plane of blocks).
    const BLOCK: usize = 256;
    let g2 = gamma * gamma;
    let c64 = |c: Complex<T>| Complex64::new(c.re.f64(), c.im.f64());
    let mut out = Array2::<Complex<T>>::zeros((nf, n));
    out.axis_chunks_iter_mut(ndarray::Axis(1), BLOCK)
        .into_par_iter()
        .enumerate()
        .for_each_init(Vec::new, |acc: &mut Vec<Complex64>, (b, mut cols)| {
            let (j0, width) = (b * BLOCK, cols.ncols());
            acc.clear();
            acc.resize(nf * width, Complex64::new(0.0, 0.0));
            for (i, &wt) in weights.iter().enumerate() {
                let (wr, dr) = (wx.row(i), dwx.row(i));
                for d in 0..width {
                    let w = c64(wr[j0 + d]);
                    // |W| > gamma, without the square root.
                    if w.norm_sqr() <= g2 {
                        continue;
                    }
                    let mut k = bins.index(omega_of(w, c64(dr[j0 + d])));
                    if flipud {
                        k = bins.last - k;
                    }
                    acc[k * width + d] += match squeezing {
                        Squeezing::Sum => w * wt,
                        Squeezing::Lebesgue => Complex64::new(wt / na as f64, 0.0),
                    };
                }
            }
            for (k, mut row) in cols.outer_iter_mut().enumerate() {
                for (o, v) in row.iter_mut().zip(&acc[k * width..(k + 1) * width]) {
                    *o = complex_of(*v);
                }
            }
        });
    Ok(out)
}

fn complex_of<T: Real>(c: Complex64) -> Complex<T> {
    crate::real::complex_of(c)
}

/// `a` as an array of Complex<T>: moved when S is Complex<T>, else mapped.
fn own<T: Real, S: Copy + 'static>(
    a: Array2<S>,
    convert: impl Fn(S) -> Complex<T>,
) -> Array2<Complex<T>> {
    let any: Box<dyn std::any::Any> = Box::new(a);
    match any.downcast::<Array2<Complex<T>>>() {
        Ok(same) => *same,
        Err(any) => match any.downcast::<Array2<S>>() {
            Ok(a) => a.mapv(convert),
            // The box holds an Array2<S>: this arm is never taken.
            Err(_) => Array2::zeros((0, 0)),
        },
    }
}

/// The synchrosqueezed CWT of `signal` with the transform `options`
/// (complex output is implied; scales as given, in samples; the sampling
/// rate from `options.sample_rate`, else 1), on the CPU, in float64.
pub fn ssq_cwt(
    signal: &Signal,
    options: &CwtOptions,
    ssq: &SsqOptions,
) -> Result<Synchrosqueezed, TimeFreqError> {
    ssq_cwt_on(&crate::backend::CpuBackend, signal, options, ssq)
}

/// `ssq_cwt` with both transforms (W and ∂W/∂t) run by `backend`; the
/// squeezing itself runs on the host's cores. The planes come back in
/// float64 whatever the precision (see `ssq_cwt_in` to keep float32).
pub fn ssq_cwt_on(
    backend: &dyn Backend,
    signal: &Signal,
    options: &CwtOptions,
    ssq: &SsqOptions,
) -> Result<Synchrosqueezed, TimeFreqError> {
    match options.precision {
        Precision::F64 => ssq_cwt_in::<f64>(backend, signal, options, ssq),
        Precision::F32 => {
            let s = ssq_cwt_in::<f32>(backend, signal, options, ssq)?;
            let widen =
                |a: Array2<Complex<f32>>| a.mapv(|c| Complex64::new(c.re as f64, c.im as f64));
            Ok(Synchrosqueezed {
                tx: widen(s.tx),
                wx: widen(s.wx),
                dwx: widen(s.dwx),
                freqs: s.freqs,
                scales: s.scales,
            })
        }
    }
}

/// The two plans of a synchrosqueezing (W and ∂W/∂t), kept for the next
/// call with the same transform: their masks cost more than the
/// transforms (cwt-seed's 257 GMW masks: a fifth of the call).
fn plans(
    options: &CwtOptions,
    n: usize,
    complex: bool,
) -> Result<std::sync::Arc<(CwtPlan, CwtPlan)>, TimeFreqError> {
    type Kept = Option<(String, std::sync::Arc<(CwtPlan, CwtPlan)>)>;
    static LAST: std::sync::Mutex<Kept> = std::sync::Mutex::new(None);
    let key = format!("{n} {complex} {options:?}");
    if let Some(p) = LAST.lock().ok().and_then(|g| {
        g.as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, p)| p.clone())
    }) {
        return Ok(p);
    }
    let mut deriv = options.clone();
    deriv.wavelet = options.wavelet.time_derivative();
    let p = std::sync::Arc::new((
        CwtPlan::new(options.clone(), n, complex)?,
        CwtPlan::new(deriv, n, complex)?,
    ));
    if let Ok(mut g) = LAST.lock() {
        *g = Some((key, p.clone()));
    }
    Ok(p)
}

/// The planes of T: the transforms run in `options.precision`, which must
/// be T's (float32 planes take half the memory and its traffic).
pub fn ssq_cwt_in<T: Real>(
    backend: &dyn Backend,
    signal: &Signal,
    options: &CwtOptions,
    ssq: &SsqOptions,
) -> Result<Synchrosqueezed<T>, TimeFreqError> {
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
    let want = match options.precision {
        Precision::F32 => "f32",
        Precision::F64 => "f64",
    };
    if want != T::NAME {
        return Err(TimeFreqError::Options(format!(
            "{} planes from a transform in {want}: ask for the precision of the planes",
            T::NAME
        )));
    }
    let scales: Vec<f64> = options.scales.iter().map(|s| s.value()).collect();
    let weights = scale_weights(&scales)?;
    let fs = options.sample_rate.unwrap_or(1.0);
    let mut base = options.clone();
    base.output = OutputKind::Complex;
    base.half = None;
    let n = signal.len();
    let plans = plans(&base, n, signal.is_complex())?;
    let run = |plan: &CwtPlan| -> Result<Array2<Complex<T>>, TimeFreqError> {
        // The backend's array itself when it holds T (it does: the
        // precision is T's), else converted.
        let v = backend.cwt(plan, signal, None)?.values;
        Ok(match v {
            CwtValues::Complex64(a) => own::<T, _>(a, |c| complex_of(c)),
            CwtValues::Complex32(a) => {
                own::<T, _>(a, |c| complex_of(Complex64::new(c.re as f64, c.im as f64)))
            }
            other => other.to_complex64().mapv(complex_of::<T>),
        })
    };
    let mut wx = run(&plans.0)?;
    let mut dwx = run(&plans.1)?;
    let l1_of = |s: f64| match options.normalization {
        Normalization::L1 => 1.0,
        Normalization::L2 => 1.0 / s.sqrt(),
    };
    wx.outer_iter_mut()
        .into_par_iter()
        .zip(dwx.outer_iter_mut())
        .zip(scales.par_iter())
        .for_each(|((mut w, mut d), &s)| {
            let l1 = T::of(l1_of(s));
            let dd = T::of(-l1_of(s) * fs / s);
            w.mapv_inplace(|v| v * l1);
            d.mapv_inplace(|v| v * dd);
        });
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
