//! The CWT of a stream: chunks of any length in, the columns that are final
//! so far out, bit for bit the columns of the whole signal's transform.
//!
//! Why the bits agree: every column is a per-column sum (direct rows) or
//! comes from an overlap-save segment whose place is fixed from column 0
//! (segment b of a group reads samples b valid - half ..), and a stream uses
//! the recipe every long signal gets (`best_fft_size` does not depend on
//! the length past the largest FFT). So a stream computes each segment once
//! it holds all its samples, from the same values, with the same FFTs. The
//! boundary is applied only at the true ends: the left one when the stream
//! starts, the right one at `finish`, from the tail the stream keeps.
//!
//! Memory: the masks, each FFT group's kernel spectra, a window of samples
//! of the largest FFT size plus twice the halo plus a chunk, and per row the
//! columns a group has computed but a slower group has not (at most the
//! largest FFT size). A stream shorter than its largest FFT (plus the halo)
//! is held whole and transformed at `finish`, where a short signal's recipe
//! may differ.

use super::direct::{self, Extended};
use super::output::{CwtValues, OutValue};
use super::plan::{Engine, Engines, Groups};
use super::strategy::ScaleAlgorithm;
use super::{CwtError, CwtOptions, CwtPlan, OutputKind};
use crate::boundary::Boundary;
use crate::overlap_save::{RealScratch, Scratch};
use crate::real::{complex_of, Real};
use crate::signal::Signal;
use ndarray::Array2;
use num_complex::{Complex, Complex64};
use rayon::prelude::*;

/// A CWT over a signal that arrives in chunks.
pub struct CwtStream {
    plan: CwtPlan,
    complex_signal: bool,
    /// Samples pushed so far.
    total: usize,
    /// Samples held until the stream is long enough to start (its first
    /// `tail` samples).
    head: Vec<Complex64>,
    state: Option<State>,
    /// Samples a window holds besides the chunk: the right boundary at
    /// `finish` reads this far back. Also when the stream starts: past the
    /// largest FFT, so its recipe is the whole signal's.
    tail: usize,
}

enum State {
    F32(Window<f32>),
    F64(Window<f64>),
}

/// The samples still needed, from absolute index `w0` (negative: the left
/// boundary's extension), in complex and split form.
struct Window<T: Real> {
    w0: i64,
    cx: Vec<Complex<T>>,
    re: Vec<T>,
    im: Vec<T>,
    /// Per FFT group: the next segment to compute.
    next: Vec<usize>,
    /// Per row (FFT rows only): coefficients of columns `emitted..`.
    pending: Vec<Vec<Complex<T>>>,
    emitted: usize,
}

impl CwtStream {
    /// A stream of real (`complex_signal = false`) or complex samples.
    pub fn new(options: CwtOptions, complex_signal: bool) -> Result<Self, CwtError> {
        if options.oversampling != 1 {
            return Err(CwtError::StreamOption {
                what: format!("oversampling {}", options.oversampling),
                why: "the interpolation reads the whole signal; oversample each block beforehand or use the whole transform".into(),
            });
        }
        if options.boundary == Boundary::Periodic {
            return Err(CwtError::StreamOption {
                what: "the periodic boundary".into(),
                why: "its first columns read the signal's last samples; use zero, symmetric or reflect".into(),
            });
        }
        let plan = CwtPlan::for_stream(options, complex_signal)?;
        let max_p = plan.recipe().groups.iter().map(|g| g.size).max();
        let max_p = max_p.unwrap_or(0);
        // The symmetric and reflect folds at the right end read back up to
        // the halo plus the largest segment, and one more sample.
        let tail = plan.halo() + max_p + 2;
        Ok(CwtStream {
            complex_signal,
            total: 0,
            head: Vec::new(),
            state: None,
            tail,
            plan,
        })
    }

    /// Samples pushed so far.
    pub fn samples(&self) -> usize {
        self.total
    }

    /// Columns returned so far.
    pub fn columns_emitted(&self) -> usize {
        match &self.state {
            Some(State::F32(w)) => w.emitted,
            Some(State::F64(w)) => w.emitted,
            None => 0,
        }
    }

    /// Samples held now (the window, or the samples before the start).
    pub fn held_samples(&self) -> usize {
        match &self.state {
            Some(State::F32(w)) => w.cx.len(),
            Some(State::F64(w)) => w.cx.len(),
            None => self.head.len(),
        }
    }

    /// Samples the stream must hold before its first column comes out.
    pub fn latency(&self) -> usize {
        self.tail
    }

    /// The numpy dtype of the columns (the whole transform's).
    pub fn output_dtype(&self) -> &'static str {
        self.plan.output_dtype()
    }

    pub fn options(&self) -> &CwtOptions {
        self.plan.options()
    }

    /// The recipe (per scale direct or FFT, and the FFT sizes), for `--explain`.
    pub fn recipe(&self) -> &super::Recipe {
        self.plan.recipe()
    }

    /// The bytes the stream holds besides a chunk and its output: masks,
    /// kernel spectra, the sample window and the pending columns.
    pub fn memory_bound(&self) -> u64 {
        let cplx: u64 = match self.plan.options().precision {
            super::Precision::F32 => 8,
            super::Precision::F64 => 16,
        };
        let r = self.plan.recipe();
        let max_p = r.groups.iter().map(|g| g.size).max().unwrap_or(0) as u64;
        let taps: u64 = r.halves.iter().map(|&h| 2 * h as u64 + 1).sum();
        let kernels: u64 = r
            .groups
            .iter()
            .map(|g| (g.scales.len() as u64 + 2) * g.size as u64)
            .sum();
        let window = 2 * (self.tail as u64 + self.plan.halo() as u64);
        taps * 16 + (kernels + r.halves.len() as u64 * max_p) * cplx + window * 2 * cplx
    }

    /// The bytes a push of `chunk` samples adds for its duration: the
    /// chunk's samples, its segments' spectra and its output columns.
    pub fn memory_per_chunk(&self, chunk: usize) -> u64 {
        let o = self.plan.options();
        let cplx: u64 = match o.precision {
            super::Precision::F32 => 8,
            super::Precision::F64 => 16,
        };
        let cols = chunk.div_ceil(o.hop) as u64;
        let spectra: u64 = self
            .plan
            .recipe()
            .groups
            .iter()
            .map(|g| (chunk.div_ceil(g.valid) as u64 + 1) * g.size as u64)
            .sum();
        chunk as u64 * 3 * cplx + spectra * 2 * cplx + o.scales.len() as u64 * cols * 2 * cplx
    }

    fn check_chunk(&self, chunk: &Signal) -> Result<(), CwtError> {
        if chunk.is_complex() && !self.complex_signal {
            return Err(CwtError::StreamKind {
                began: "real",
                got: "complex",
            });
        }
        self.plan.check_finite(chunk, self.total)
    }

    /// Appends `chunk` (any length, zero included) and returns the columns
    /// that no later sample can change: shape (scales, new columns).
    pub fn push(&mut self, chunk: &Signal) -> Result<CwtValues, CwtError> {
        self.check_chunk(chunk)?;
        let x = chunk.to_complex();
        self.total += x.len();
        if self.state.is_none() {
            self.head.extend_from_slice(&x);
            if self.total < self.tail {
                return Ok(self.empty());
            }
            let head = std::mem::take(&mut self.head);
            self.state = Some(self.start(&head));
        } else {
            self.append(&x);
        }
        Ok(self.advance(None))
    }

    /// The remaining columns, the right boundary applied at the true end.
    /// A stream that never started (shorter than `latency`) is transformed
    /// whole here.
    pub fn finish(mut self) -> Result<CwtValues, CwtError> {
        if self.total == 0 {
            return Err(CwtError::EmptySignal);
        }
        if self.state.is_none() {
            let head = std::mem::take(&mut self.head);
            let signal = if self.complex_signal {
                Signal::complex(head)
            } else {
                Signal::real(head.iter().map(|c| c.re).collect())
            };
            let plan = CwtPlan::new(self.plan.options().clone(), self.total, self.complex_signal)?;
            return Ok(plan.execute(&signal, None)?.values);
        }
        let n = self.total;
        let boundary = self.plan.options().boundary;
        // Every last segment and direct column reads at most this far past the end.
        let reach = self.tail - 2;
        match &mut self.state {
            Some(State::F32(w)) => w.extend_right(boundary, n, reach),
            Some(State::F64(w)) => w.extend_right(boundary, n, reach),
            None => {}
        }
        Ok(self.advance(Some(n)))
    }

    /// No columns, in the plan's dtype (so that joined parts keep it).
    fn empty(&self) -> CwtValues {
        let rows = self.plan.options().scales.len();
        match self.plan.options().precision {
            super::Precision::F32 => convert::<f32>(&self.plan, rows, 0, &[]),
            super::Precision::F64 => convert::<f64>(&self.plan, rows, 0, &[]),
        }
    }

    fn start(&self, head: &[Complex64]) -> State {
        let pad = self.plan.halo();
        let boundary = self.plan.options().boundary;
        let n = head.len();
        match self.plan.engines() {
            Engines::F32(e) => State::F32(Window::start(e, head, pad, boundary, n)),
            Engines::F64(e) => State::F64(Window::start(e, head, pad, boundary, n)),
        }
    }

    fn append(&mut self, x: &[Complex64]) {
        match &mut self.state {
            Some(State::F32(w)) => w.append(x),
            Some(State::F64(w)) => w.append(x),
            None => {}
        }
    }

    fn advance(&mut self, end: Option<usize>) -> CwtValues {
        let m_end = self.total;
        let plan = &self.plan;
        let complex = self.complex_signal;
        let rows = plan.options().scales.len();
        match (&mut self.state, plan.engines()) {
            (Some(State::F32(w)), Engines::F32(e)) => {
                let (cols, coefs) = w.advance(plan, e, m_end, end, complex, self.tail);
                convert(plan, rows, cols, &coefs)
            }
            (Some(State::F64(w)), Engines::F64(e)) => {
                let (cols, coefs) = w.advance(plan, e, m_end, end, complex, self.tail);
                convert(plan, rows, cols, &coefs)
            }
            _ => self.empty(),
        }
    }
}

/// Row-major coefficients (rows x cols) as the plan's output values, with
/// the same per-value conversion as the whole transform's store.
fn convert<T>(plan: &CwtPlan, rows: usize, cols: usize, coefs: &[Complex<T>]) -> CwtValues
where
    T: Real + OutValue<T>,
    Complex<T>: OutValue<T>,
{
    let kind = plan.options().output;
    let shape = (rows, cols);
    let to_real = || -> Vec<T> {
        coefs
            .par_iter()
            .map(|&c| <T as OutValue<T>>::from_coef(c, kind))
            .collect()
    };
    if let Some(h) = plan.options().half {
        let v: Vec<u16> = to_real()
            .iter()
            .map(|v| h.bits_of(v.f64() as f32))
            .collect();
        return CwtValues::Half(shaped(shape, v), h);
    }
    match (std::mem::size_of::<T>() == 4, kind) {
        (true, OutputKind::Complex) => CwtValues::Complex32(shaped(
            shape,
            coefs
                .iter()
                .map(|c| num_complex::Complex32::new(c.re.f64() as f32, c.im.f64() as f32))
                .collect(),
        )),
        (false, OutputKind::Complex) => CwtValues::Complex64(shaped(
            shape,
            coefs
                .iter()
                .map(|c| Complex64::new(c.re.f64(), c.im.f64()))
                .collect(),
        )),
        (true, _) => CwtValues::Real32(shaped(
            shape,
            to_real().iter().map(|v| v.f64() as f32).collect(),
        )),
        (false, _) => CwtValues::Real64(shaped(shape, to_real().iter().map(|v| v.f64()).collect())),
    }
}

fn shaped<V>(shape: (usize, usize), v: Vec<V>) -> Array2<V> {
    Array2::from_shape_vec(shape, v).expect("rows x cols values")
}

impl<T: Real> Window<T> {
    fn start(engine: &Engine<T>, head: &[Complex64], pad: usize, b: Boundary, n: usize) -> Self {
        let groups = match &engine.groups {
            Groups::Complex(g) => g.len(),
            Groups::Real(g) => g.len(),
        };
        // The left boundary: the stream holds more than `pad` samples, so
        // these folds are those of the whole signal, whatever its length.
        let mut cx = Vec::with_capacity(pad + head.len());
        for j in -(pad as i64)..0 {
            cx.push(
                b.fold(j, n)
                    .map_or(Complex::default(), |k| complex_of(head[k])),
            );
        }
        cx.extend(head.iter().map(|&v| complex_of::<T>(v)));
        let re = cx.iter().map(|c| c.re).collect();
        let im = cx.iter().map(|c| c.im).collect();
        Window {
            w0: -(pad as i64),
            cx,
            re,
            im,
            next: vec![0; groups],
            pending: vec![Vec::new(); engine.slot.len()],
            emitted: 0,
        }
    }

    fn append(&mut self, x: &[Complex64]) {
        for &v in x {
            let c = complex_of::<T>(v);
            self.cx.push(c);
            self.re.push(c.re);
            self.im.push(c.im);
        }
    }

    /// Samples past the end as the boundary folds them (the whole
    /// transform's extension), enough for every last segment.
    fn extend_right(&mut self, b: Boundary, n: usize, reach: usize) {
        let end = self.w0 + self.cx.len() as i64;
        for j in end..end + reach as i64 {
            let c = match b.fold(j, n) {
                Some(k) => self.cx[(k as i64 - self.w0) as usize],
                None => Complex::default(),
            };
            self.cx.push(c);
            self.re.push(c.re);
            self.im.push(c.im);
        }
    }

    /// Computes what samples up to `m_end` (or the whole signal of `end`
    /// samples) make final; returns (new columns, row-major coefficients).
    fn advance(
        &mut self,
        plan: &CwtPlan,
        engine: &Engine<T>,
        m_end: usize,
        end: Option<usize>,
        complex: bool,
        tail: usize,
    ) -> (usize, Vec<Complex<T>>) {
        let recipe = plan.recipe();
        let hop = plan.options().hop;
        // Per group: segments complete within m_end, and the output
        // samples they cover.
        let mut frontier = end.unwrap_or(usize::MAX);
        let mut todo = Vec::with_capacity(recipe.groups.len());
        for (gi, g) in recipe.groups.iter().enumerate() {
            // Segment b reads samples b valid - half .. b valid - half + size.
            let count = match end {
                Some(n) => n.div_ceil(g.valid),
                None => (m_end + g.half)
                    .checked_sub(g.size)
                    .map_or(0, |v| v / g.valid + 1),
            };
            let count = count.max(self.next[gi]);
            if end.is_none() {
                frontier = frontier.min(count * g.valid);
            }
            todo.push(count);
        }
        let direct_half = (0..recipe.per_scale.len())
            .filter(|&i| recipe.per_scale[i] == ScaleAlgorithm::Direct)
            .map(|i| recipe.halves[i])
            .max();
        if let (None, Some(h)) = (end, direct_half) {
            frontier = frontier.min(m_end.saturating_sub(h));
        }
        let limit = end.unwrap_or(frontier);
        self.compute_segments(plan, engine, &todo, end, complex);
        let c_hi = limit.div_ceil(hop).max(self.emitted);
        let cols = c_hi - self.emitted;
        let rows = recipe.per_scale.len();
        let mut out = vec![Complex::<T>::default(); rows * cols];
        if cols > 0 {
            let extended = Extended {
                re: &self.re,
                im: if complex { Some(&self.im) } else { None },
                pad: (self.emitted as i64 * hop as i64 - self.w0) as usize,
            };
            let kind = plan.options().output;
            let pending = &mut self.pending;
            out.par_chunks_mut(cols)
                .zip(pending.par_iter_mut())
                .enumerate()
                .for_each(|(i, (row, p))| match recipe.per_scale[i] {
                    ScaleAlgorithm::Direct => {
                        if let Some(mask) = &engine.direct[i] {
                            direct::row(&extended, mask, cols * hop, hop, kind, row);
                        }
                    }
                    ScaleAlgorithm::Fft { .. } => {
                        row.copy_from_slice(&p[..cols]);
                        p.drain(..cols);
                    }
                });
        }
        self.emitted = c_hi;
        self.trim(plan, hop, direct_half, m_end, tail);
        (cols, out)
    }

    /// Segments next..todo[g] of every group, their columns appended to the
    /// rows' pending coefficients.
    fn compute_segments(
        &mut self,
        plan: &CwtPlan,
        engine: &Engine<T>,
        todo: &[usize],
        end: Option<usize>,
        complex: bool,
    ) {
        let recipe = plan.recipe();
        let hop = plan.options().hop;
        for (gi, g) in recipe.groups.iter().enumerate() {
            let (first, count) = (self.next[gi], todo[gi]);
            if count <= first {
                continue;
            }
            let nb = count - first;
            let start = (first as i64 * g.valid as i64 - g.half as i64 - self.w0) as usize;
            // Outputs of these segments below `n`: all of them, or up to the end.
            let n = end.unwrap_or(count * g.valid);
            let rows: Vec<(usize, &mut Vec<Complex<T>>)> = self
                .pending
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| recipe.per_scale[*i] == ScaleAlgorithm::Fft { group: gi })
                .collect();
            match &engine.groups {
                Groups::Complex(groups) => {
                    let e = &groups[gi];
                    let spectra = e.segment_spectra_count(&self.cx, start, nb);
                    rows.into_par_iter().for_each_init(
                        || Scratch::<T>::new(e.size),
                        |scratch, (i, p)| {
                            e.row_from(&spectra, first, engine.slot[i], n, hop, scratch, |_, v| {
                                p.extend(v.iter().step_by(hop));
                            })
                        },
                    );
                }
                Groups::Real(groups) => {
                    let e = &groups[gi];
                    let sre = e.segment_spectra_count(&self.re, start, nb);
                    let sim = complex.then(|| e.segment_spectra_count(&self.im, start, nb));
                    rows.into_par_iter()
                        .for_each_init(RealScratch::<T>::new, |scratch, (i, p)| {
                            e.row_from(
                                &sre,
                                sim.as_deref(),
                                first,
                                engine.slot[i],
                                n,
                                hop,
                                scratch,
                                |_, r, m| match m {
                                    Some(m) => p.extend(
                                        r.iter()
                                            .zip(m)
                                            .step_by(hop)
                                            .map(|(&a, &b)| Complex::new(a, b)),
                                    ),
                                    None => p.extend(
                                        r.iter().step_by(hop).map(|&a| Complex::new(a, T::zero())),
                                    ),
                                },
                            )
                        });
                }
            }
            self.next[gi] = count;
        }
    }

    /// Drops samples no later segment, direct column or right fold reads.
    fn trim(
        &mut self,
        plan: &CwtPlan,
        hop: usize,
        direct_half: Option<usize>,
        m_end: usize,
        tail: usize,
    ) {
        let recipe = plan.recipe();
        let mut keep = m_end as i64 - tail as i64;
        for (gi, g) in recipe.groups.iter().enumerate() {
            keep = keep.min(self.next[gi] as i64 * g.valid as i64 - g.half as i64);
        }
        if let Some(h) = direct_half {
            keep = keep.min(self.emitted as i64 * hop as i64 - h as i64);
        }
        let drop = (keep - self.w0).max(0) as usize;
        // Compact only when the dead front outweighs the rest, so tiny
        // chunks do not move the whole window each time.
        if drop > 0 && drop >= self.cx.len() - drop {
            self.cx.drain(..drop);
            self.re.drain(..drop);
            self.im.drain(..drop);
            self.w0 += drop as i64;
        }
    }
}
