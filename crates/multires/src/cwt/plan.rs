//! A CWT plan: masks generated once, algorithm chosen per scale, FFT kernels
//! transformed once; `execute` may then run on many signals of the planned length.

use super::direct::{self, DirectMask, Extended};
use super::masks::{half_length, PackedMasks};
use super::output::{CwtOutput, CwtSlice, CwtValues, OutValue};
use super::strategy::{Recipe, ScaleAlgorithm, STREAM_DESIGN_LEN};
use super::{oversample, Algorithm, CwtError, CwtOptions, OutputKind, Precision};
use crate::overlap_save::{GroupEngine, RealGroupEngine, RealScratch, Scratch};
use crate::real::{complex_of, Real};
use crate::scales::Scale;
use crate::signal::Signal;
use ndarray::Array2;
use num_complex::{Complex, Complex64};
use rayon::prelude::*;
use rustfft::FftPlanner;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Called with (rows done, rows in all) as rows complete, from worker threads.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// FFT groups: complex kernels, or real ones when the wavelet is real.
pub(super) enum Groups<T: Real> {
    Complex(Vec<GroupEngine<T>>),
    Real(Vec<RealGroupEngine<T>>),
}

pub(super) struct Engine<T: Real> {
    pub(super) direct: Vec<Option<DirectMask<T>>>,
    pub(super) groups: Groups<T>,
    /// Place of each scale inside its FFT group.
    pub(super) slot: Vec<usize>,
}

pub(super) enum Engines {
    F32(Engine<f32>),
    F64(Engine<f64>),
}

pub struct CwtPlan {
    options: CwtOptions,
    signal_len: usize,
    /// Length after oversampling: the columns the masks slide over.
    work_len: usize,
    work_scales: Vec<Scale>,
    /// Lengths and offsets, made at once; the values and the CPU engine are
    /// made on first use, so a GPU backend (which samples the masks on the
    /// device) never pays for them.
    layout: PackedMasks,
    masks: OnceLock<PackedMasks>,
    recipe: Recipe,
    halo: usize,
    engines: OnceLock<Engines>,
}

fn size_of_out(kind: OutputKind, precision: Precision) -> u128 {
    let base = match precision {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    if kind == OutputKind::Complex {
        2 * base
    } else {
        base
    }
}

impl CwtPlan {
    /// Plans a transform of signals of `signal_len` samples; `complex_signal`
    /// only informs the cost model.
    pub fn new(
        options: CwtOptions,
        signal_len: usize,
        complex_signal: bool,
    ) -> Result<Self, CwtError> {
        Self::build(options, signal_len, complex_signal, false)
    }

    /// The plan a stream runs: the recipe every signal longer than its
    /// largest FFT gets (see `best_fft_size`), masks never cut to a length,
    /// and a memory check of what a stream holds (masks, kernel spectra,
    /// one segment per group) rather than of a whole output. A GPU stream
    /// plans its windows from it too.
    pub fn for_stream(options: CwtOptions, complex_signal: bool) -> Result<Self, CwtError> {
        Self::build(options, STREAM_DESIGN_LEN, complex_signal, true)
    }

    fn build(
        options: CwtOptions,
        signal_len: usize,
        complex_signal: bool,
        stream: bool,
    ) -> Result<Self, CwtError> {
        if signal_len == 0 {
            return Err(CwtError::EmptySignal);
        }
        if options.hop == 0 {
            return Err(CwtError::BadHop(0));
        }
        if let (Some(h), OutputKind::Complex | OutputKind::Phase) = (options.half, options.output) {
            return Err(CwtError::HalfNeedsRealOutput {
                dtype: h.numpy_name(),
                output: options.output,
            });
        }
        if ![1, 2, 4].contains(&options.oversampling) {
            return Err(CwtError::BadOversampling(options.oversampling));
        }
        if options.scales.is_empty() {
            return Err(CwtError::Scales(crate::scales::ScaleError::Empty(
                "the scale list".into(),
            )));
        }
        for (index, s) in options.scales.iter().enumerate() {
            let v = s.value();
            if !(v.is_finite() && v > 0.0) {
                return Err(CwtError::Scales(crate::scales::ScaleError::NotPositive {
                    index,
                    value: v,
                }));
            }
        }
        for f in [
            &options.amplitude_gain,
            &options.timing_offset,
            &options.timing_skew,
        ]
        .into_iter()
        .flatten()
        {
            f.check(options.scales.len())?;
        }
        let limit = options
            .memory_limit
            .unwrap_or_else(crate::memory::default_limit);
        let r = options.oversampling;
        let work_len = signal_len
            .checked_mul(r)
            .ok_or_else(|| CwtError::TooLarge {
                what: "the oversampled signal".into(),
                need: signal_len as u128 * r as u128 * 16,
                limit,
            })?;
        let work_scales: Vec<Scale> = options
            .scales
            .iter()
            .map(|s| Scale {
                numerator: s.numerator * r as f64,
                denominator: s.denominator,
            })
            .collect();
        // Refuse absurd masks before generating anything.
        let b = options.wavelet.half_support();
        // With zero boundaries, mask taps |k| >= the work length only ever
        // multiply zeros (W[n] reads x[n + k], 0 <= n < N): masks longer
        // than twice the signal are cut to it, the same sum with less work
        // (pycwt's scales reach the record's length, masks eight times it).
        // Families sampled by a whole-grid evaluation (Morse) keep their
        // grid, whose values depend on its extent.
        let cap = if options.boundary == crate::Boundary::Zero && !options.wavelet.has_psi_grid() {
            work_len.saturating_sub(1)
        } else {
            usize::MAX
        };
        let halves_f: Vec<f64> = work_scales
            .iter()
            .map(|s| half_length(b, *s).min(cap as f64))
            .collect();
        let taps: f64 = halves_f.iter().map(|h| 2.0 * h + 1.0).sum();
        if taps * 16.0 > limit as f64 {
            return Err(CwtError::TooLarge {
                what: format!("the masks ({taps:.0} taps in all)"),
                need: (taps * 16.0) as u128,
                limit,
            });
        }
        let halves: Vec<usize> = halves_f.iter().map(|&h| h as usize).collect();
        let recipe = Recipe::design(
            &halves,
            work_len,
            options.algorithm,
            complex_signal,
            &options.cost_model,
        );
        // Everything execute will hold at once.
        let cplx = match options.precision {
            Precision::F32 => 8u128,
            Precision::F64 => 16,
        };
        let cols = work_len.div_ceil(options.hop) as u128;
        let mut need = taps as u128 * 16;
        if stream {
            // The pending columns of every row and two segments' spectra per group.
            let widest = recipe.groups.iter().map(|g| g.size).max().unwrap_or(0) as u128;
            need += options.scales.len() as u128 * widest * cplx;
            for g in &recipe.groups {
                need += (2 + g.scales.len() as u128) * g.size as u128 * cplx;
            }
        } else {
            need += options.scales.len() as u128
                * cols
                * size_of_out(options.output, options.precision);
            for g in &recipe.groups {
                let nb = work_len.div_ceil(g.valid) as u128;
                need += (nb + g.scales.len() as u128) * g.size as u128 * cplx;
            }
        }
        if need > limit as u128 {
            return Err(CwtError::TooLarge {
                what: format!(
                    "a transform of {} samples at {} scales",
                    signal_len,
                    options.scales.len()
                ),
                need,
                limit,
            });
        }
        let layout = PackedMasks::layout_capped(&options, &work_scales, limit, cap)?;
        let halo = halves.iter().copied().max().unwrap_or(0);
        Ok(CwtPlan {
            options,
            signal_len,
            work_len,
            work_scales,
            layout,
            masks: OnceLock::new(),
            recipe,
            halo,
            engines: OnceLock::new(),
        })
    }

    pub(super) fn engines(&self) -> &Engines {
        self.engines.get_or_init(|| {
            let masks = self.masks();
            let real_masks = !self.options.wavelet.is_complex();
            match self.options.precision {
                Precision::F32 => Engines::F32(build_engine(masks, &self.recipe, real_masks)),
                Precision::F64 => Engines::F64(build_engine(masks, &self.recipe, real_masks)),
            }
        })
    }

    /// The masks' lengths, order and offsets, without their values.
    pub fn mask_layout(&self) -> &PackedMasks {
        &self.layout
    }

    /// The scales the masks are sampled at (after oversampling), in user order.
    pub fn work_scales(&self) -> &[Scale] {
        &self.work_scales
    }

    pub fn recipe(&self) -> &Recipe {
        &self.recipe
    }
    pub fn masks(&self) -> &PackedMasks {
        self.masks.get_or_init(|| {
            self.layout
                .clone()
                .with_values(&self.options, &self.work_scales)
        })
    }
    pub fn options(&self) -> &CwtOptions {
        &self.options
    }
    pub fn signal_len(&self) -> usize {
        self.signal_len
    }

    /// Output columns: ceil(N R / hop).
    pub fn columns(&self) -> usize {
        self.work_len.div_ceil(self.options.hop)
    }

    pub fn execute(
        &self,
        signal: &Signal,
        progress: Option<Progress>,
    ) -> Result<CwtOutput, CwtError> {
        let mut values = CwtValues::zeroed_for(self);
        self.execute_into(signal, &mut values, progress)?;
        Ok(self.describe(values))
    }

    /// Like `execute`, into coefficients the caller holds (from an earlier
    /// `execute`, say), so a stream of signals reuses one output buffer.
    pub fn execute_into(
        &self,
        signal: &Signal,
        values: &mut CwtValues,
        progress: Option<Progress>,
    ) -> Result<(), CwtError> {
        let want = (self.options.scales.len(), self.columns());
        if values.shape() != want {
            return Err(CwtError::OutputMismatch {
                want: format!("{} x {} {}", want.0, want.1, self.output_dtype()),
                got: format!(
                    "{} x {} {}",
                    values.shape().0,
                    values.shape().1,
                    values.dtype()
                ),
            });
        }
        let contiguous = || CwtError::OutputMismatch {
            want: "a contiguous row-major array".into(),
            got: "a strided view".into(),
        };
        let out = match values {
            CwtValues::Complex32(a) => {
                CwtSlice::Complex32(a.as_slice_mut().ok_or_else(contiguous)?)
            }
            CwtValues::Complex64(a) => {
                CwtSlice::Complex64(a.as_slice_mut().ok_or_else(contiguous)?)
            }
            CwtValues::Real32(a) => CwtSlice::Real32(a.as_slice_mut().ok_or_else(contiguous)?),
            CwtValues::Real64(a) => CwtSlice::Real64(a.as_slice_mut().ok_or_else(contiguous)?),
            CwtValues::Half(a, h) => CwtSlice::Half(a.as_slice_mut().ok_or_else(contiguous)?, *h),
        };
        self.execute_into_slice(signal, out, progress)
    }

    /// The numpy dtype of this plan's coefficients.
    pub fn output_dtype(&self) -> &'static str {
        if let Some(h) = self.options.half {
            return h.numpy_name();
        }
        match (self.options.precision, self.options.output) {
            (Precision::F32, OutputKind::Complex) => "complex64",
            (Precision::F32, _) => "float32",
            (Precision::F64, OutputKind::Complex) => "complex128",
            (Precision::F64, _) => "float64",
        }
    }

    /// Like `execute_into`, into row-major memory the caller owns (a numpy
    /// array's buffer), scales x columns values of `output_dtype`.
    pub fn execute_into_slice(
        &self,
        signal: &Signal,
        out: CwtSlice<'_>,
        progress: Option<Progress>,
    ) -> Result<(), CwtError> {
        self.check_signal(signal)?;
        self.check_output(&out)?;
        let want = out.len();
        let x = oversample(
            &signal.to_complex(),
            self.options.oversampling,
            self.options.interpolator,
        );
        let complex_signal = signal.is_complex();
        if let CwtSlice::Half(o, h) = out {
            // Computed in the plan's precision, rounded once per value.
            use rayon::prelude::*;
            match self.engines() {
                Engines::F32(e) => {
                    let mut t = crate::memory::zeroed_vec::<f32>(want);
                    self.run(e, &x, complex_signal, progress, &mut t);
                    o.par_iter_mut()
                        .zip(&t)
                        .for_each(|(d, &v)| *d = h.bits_of(v));
                }
                Engines::F64(e) => {
                    let mut t = crate::memory::zeroed_vec::<f64>(want);
                    self.run(e, &x, complex_signal, progress, &mut t);
                    o.par_iter_mut()
                        .zip(&t)
                        .for_each(|(d, &v)| *d = h.bits_of(v as f32));
                }
            }
            return Ok(());
        }
        match (self.engines(), out) {
            (Engines::F32(e), CwtSlice::Complex32(o)) => {
                self.run(e, &x, complex_signal, progress, o)
            }
            (Engines::F32(e), CwtSlice::Real32(o)) => self.run(e, &x, complex_signal, progress, o),
            (Engines::F64(e), CwtSlice::Complex64(o)) => {
                self.run(e, &x, complex_signal, progress, o)
            }
            (Engines::F64(e), CwtSlice::Real64(o)) => self.run(e, &x, complex_signal, progress, o),
            // The dtype check above pairs engines and value types.
            _ => unreachable!("dtype checked above"),
        }
        Ok(())
    }

    /// That `out` holds this plan's coefficients: scales x columns of
    /// `output_dtype` (every backend's check of a caller's memory).
    pub fn check_output(&self, out: &CwtSlice<'_>) -> Result<(), CwtError> {
        let want = self.options.scales.len() * self.columns();
        if out.dtype() != self.output_dtype() || out.len() != want {
            return Err(CwtError::OutputMismatch {
                want: format!("{want} values of {}", self.output_dtype()),
                got: format!("{} values of {}", out.len(), out.dtype()),
            });
        }
        Ok(())
    }

    /// The checks every backend makes before running: length as planned,
    /// finite samples unless allowed.
    pub fn check_signal(&self, signal: &Signal) -> Result<(), CwtError> {
        if signal.is_empty() {
            return Err(CwtError::EmptySignal);
        }
        if signal.len() != self.signal_len {
            return Err(CwtError::LengthMismatch {
                planned: self.signal_len,
                got: signal.len(),
            });
        }
        self.check_finite(signal, 0)
    }

    /// NaN/Inf samples are refused unless allowed, and allowed only with
    /// direct sums; the error names sample `offset +` its index (a stream's
    /// chunk starts at `offset`).
    pub fn check_finite(&self, signal: &Signal, offset: usize) -> Result<(), CwtError> {
        if let Some((index, value)) = signal.first_nonfinite() {
            let index = index + offset;
            if !self.options.allow_nonfinite {
                return Err(CwtError::NonFinite { index, value });
            }
            // An FFT spreads one NaN over its whole segment; only the
            // direct sum gives NaN exactly where a mask touches it.
            if self.options.algorithm != Algorithm::Direct {
                return Err(CwtError::NonFiniteFft { index, value });
            }
        }
        Ok(())
    }

    /// The largest mask half-length: how far a column reads on either side.
    pub fn halo(&self) -> usize {
        self.halo
    }

    /// Columns the masks slide over (the signal length after oversampling).
    pub fn work_len(&self) -> usize {
        self.work_len
    }

    /// The signal as another backend needs it: checked, oversampled and
    /// extended by `pad` samples on both sides by the boundary mode, so
    /// that W[s, c] = sum_k xe[c hop + k + pad] conj(m_s[k]).
    pub fn extended_signal(&self, signal: &Signal, pad: usize) -> Result<Vec<Complex64>, CwtError> {
        self.check_signal(signal)?;
        let x = oversample(
            &signal.to_complex(),
            self.options.oversampling,
            self.options.interpolator,
        );
        let n = self.work_len;
        let boundary = self.options.boundary;
        let mut xe = vec![Complex64::new(0.0, 0.0); n + 2 * pad];
        xe.par_iter_mut().enumerate().for_each(|(i, v)| {
            if let Some(k) = boundary.fold(i as i64 - pad as i64, n) {
                *v = x[k];
            }
        });
        Ok(xe)
    }

    /// The output in CwtOutput's form, with scales, frequencies and cone of influence.
    pub fn describe(&self, values: CwtValues) -> CwtOutput {
        let scales: Vec<f64> = self.options.scales.iter().map(|s| s.value()).collect();
        let w = &self.options.wavelet;
        let frequencies = self.options.sample_rate.map(|fs| {
            scales
                .iter()
                .map(|&s| w.scale_to_frequency(s, fs))
                .collect()
        });
        let step = self.options.hop as f64 / self.options.oversampling as f64;
        let coi = self.coi();
        CwtOutput {
            values,
            scales,
            frequencies,
            coi,
            column_step: step,
            sample_rate: self.options.sample_rate,
            output: self.options.output,
        }
    }

    /// Per column: the largest scale not affected by the edges (cone of influence).
    pub fn coi(&self) -> Vec<f64> {
        cone_of_influence(
            self.signal_len,
            self.options.hop,
            self.options.oversampling,
            self.options.wavelet.coi_factor(),
        )
    }

    fn run<T: Real, O: OutValue<T>>(
        &self,
        engine: &Engine<T>,
        x: &[Complex64],
        complex_signal: bool,
        progress: Option<Progress>,
        out: &mut [O],
    ) {
        let n = self.work_len;
        let pad = self.halo;
        let max_p = self.recipe.groups.iter().map(|g| g.size).max().unwrap_or(0);
        let ext_len = n + 2 * pad + max_p;
        let boundary = self.options.boundary;
        let mut xe = vec![Complex::<T>::default(); ext_len];
        xe.par_iter_mut().enumerate().for_each(|(i, v)| {
            let j = i as i64 - pad as i64;
            if let Some(k) = boundary.fold(j, n) {
                *v = complex_of(x[k]);
            }
        });
        // Split form, built once for the direct rows and the real-kernel groups.
        let need_split =
            engine.direct.iter().any(|d| d.is_some()) || matches!(engine.groups, Groups::Real(_));
        let (xr, xi): (Vec<T>, Vec<T>) = if need_split {
            xe.iter().map(|c| (c.re, c.im)).unzip()
        } else {
            (Vec::new(), Vec::new())
        };
        let extended = Extended {
            re: &xr,
            im: if complex_signal { Some(&xi) } else { None },
            pad,
        };
        // Segment spectra per group: (real part or whole signal, imaginary part).
        type Spectra<T> = Vec<(Vec<Complex<T>>, Option<Vec<Complex<T>>>)>;
        let spectra: Spectra<T> = match &engine.groups {
            Groups::Complex(groups) => groups
                .iter()
                .map(|g| (g.segment_spectra(&xe, pad - (g.taps - 1) / 2, n), None))
                .collect(),
            Groups::Real(groups) => groups
                .iter()
                .map(|g| {
                    let start = pad - (g.taps - 1) / 2;
                    (
                        g.segment_spectra(&xr, start, n),
                        extended.im.map(|xi| g.segment_spectra(xi, start, n)),
                    )
                })
                .collect(),
        };
        drop(xe);
        let cols = self.columns();
        let rows = self.options.scales.len();
        let hop = self.options.hop;
        let kind = self.options.output;
        debug_assert_eq!(out.len(), rows * cols);
        let done = AtomicUsize::new(0);
        out.par_chunks_mut(cols).enumerate().for_each_init(
            || (Scratch::<T>::new(max_p), RealScratch::<T>::new()),
            |(scratch, rscratch), (i, row)| {
                match self.recipe.per_scale[i] {
                    ScaleAlgorithm::Direct => {
                        if let Some(mask) = &engine.direct[i] {
                            direct::row(&extended, mask, n, hop, kind, row);
                        }
                    }
                    ScaleAlgorithm::Fft { group } => {
                        let (re, im) = &spectra[group];
                        match &engine.groups {
                            Groups::Complex(g) => {
                                g[group].row(re, engine.slot[i], n, hop, scratch, |c0, v| {
                                    let count = (v.len() - 1) / hop + 1;
                                    O::store_run(&mut row[c0..c0 + count], v, hop, kind)
                                })
                            }
                            Groups::Real(g) => g[group].row(
                                re,
                                im.as_deref(),
                                engine.slot[i],
                                n,
                                hop,
                                rscratch,
                                |c0, r, m| {
                                    let count = (r.len() - 1) / hop + 1;
                                    O::store_split(&mut row[c0..c0 + count], r, m, hop, kind)
                                },
                            ),
                        }
                    }
                }
                if let Some(p) = progress {
                    p(done.fetch_add(1, Ordering::Relaxed) + 1, rows);
                }
            },
        );
    }
}

fn zeroed<O: bytemuck::Zeroable + Clone>(rows: usize, cols: usize) -> Array2<O> {
    let v = crate::memory::zeroed_vec::<O>(rows * cols);
    Array2::from_shape_vec((rows, cols), v).expect("rows * cols elements")
}

/// Per column of a signal of `n` samples: the largest scale whose support
/// (`factor` scales, the wavelet's e-folding time) stays inside the signal.
pub fn cone_of_influence(n: usize, hop: usize, oversampling: usize, factor: f64) -> Vec<f64> {
    let step = hop as f64 / oversampling as f64;
    let last = (n.max(1) - 1) as f64;
    let columns = (n * oversampling).div_ceil(hop);
    (0..columns)
        .map(|c| {
            let t = c as f64 * step;
            let d = t.min(last - t).max(0.0);
            if factor > 0.0 {
                d / factor
            } else {
                f64::INFINITY
            }
        })
        .collect()
}

fn build_engine<T: Real>(masks: &PackedMasks, recipe: &Recipe, real: bool) -> Engine<T> {
    let n_scales = recipe.per_scale.len();
    let direct = (0..n_scales)
        .map(|i| match recipe.per_scale[i] {
            ScaleAlgorithm::Direct => Some(DirectMask::new(masks.mask(i))),
            ScaleAlgorithm::Fft { .. } => None,
        })
        .collect();
    let mut slot = vec![0; n_scales];
    let mut planner = FftPlanner::<T>::new();
    let mut planner64 = FftPlanner::<f64>::new();
    let mut rplanner = realfft::RealFftPlanner::<T>::new();
    let mut rplanner64 = realfft::RealFftPlanner::<f64>::new();
    let mut groups_real = Vec::new();
    let mut groups_complex = Vec::new();
    for g in &recipe.groups {
        {
            // Conjugated, reversed mask centred in 2 hmax + 1 taps, so every
            // kernel of the group lines up with the same segments.
            let taps = 2 * g.half + 1;
            let kernels: Vec<Vec<Complex64>> = g
                .scales
                .iter()
                .map(|&i| {
                    let mask = masks.mask(i);
                    let h = mask.len() / 2;
                    let mut k = vec![Complex64::new(0.0, 0.0); taps];
                    for (e, m) in mask.iter().enumerate() {
                        k[g.half + h - e] = m.conj();
                    }
                    k
                })
                .collect();
            for (k, &i) in g.scales.iter().enumerate() {
                slot[i] = k;
            }
            if real {
                let kernels = kernels
                    .iter()
                    .map(|k| k.iter().map(|c| c.re).collect())
                    .collect();
                groups_real.push(RealGroupEngine::new(
                    g.size,
                    taps,
                    kernels,
                    &mut rplanner,
                    &mut rplanner64,
                ));
            } else {
                groups_complex.push(GroupEngine::new(
                    g.size,
                    taps,
                    kernels,
                    &mut planner,
                    &mut planner64,
                ));
            }
        }
    }
    let groups = if real {
        Groups::Real(groups_real)
    } else {
        Groups::Complex(groups_complex)
    };
    Engine {
        direct,
        groups,
        slot,
    }
}

impl CwtValues {
    /// A zeroed output of the plan's shape and dtype. Zeroed allocations come
    /// untouched from the OS, so the pages are first touched by the workers
    /// that fill them, in parallel.
    pub fn zeroed_for(plan: &CwtPlan) -> CwtValues {
        let (rows, cols) = (plan.options.scales.len(), plan.columns());
        let complex = plan.options.output == OutputKind::Complex;
        if let Some(h) = plan.options.half {
            return CwtValues::Half(zeroed(rows, cols), h);
        }
        match (plan.options.precision, complex) {
            (Precision::F32, true) => CwtValues::Complex32(zeroed(rows, cols)),
            (Precision::F32, false) => CwtValues::Real32(zeroed(rows, cols)),
            (Precision::F64, true) => CwtValues::Complex64(zeroed(rows, cols)),
            (Precision::F64, false) => CwtValues::Real64(zeroed(rows, cols)),
        }
    }
}
