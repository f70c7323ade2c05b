//! The FIR bank over a stream: chunks in, the outputs that are final so far
//! out, bit for bit those of `fir` on the whole signal.
//!
//! The same reasons as the CWT stream's: a direct output is one sum over
//! the taps, an overlap-save segment's place is fixed from the first output
//! (segment b reads samples b valid - (M - 1) ..), and past its largest FFT
//! the recipe does not depend on the length. The derivative post-step
//! (numpy.gradient) needs each output's right neighbour, so it trails the
//! outputs by one until `finish`.

use super::{
    output_range, plan, validate_filters, FilterBank, FirError, FirOptions, FirPost, FirRecipe,
    FirValues,
};
use crate::overlap_save::{GroupEngine, Scratch};
use crate::signal::Signal;
use ndarray::Array2;
use num_complex::Complex64;
use rayon::prelude::*;
use rustfft::FftPlanner;

/// Length a stream's recipe is designed for: past every FFT size the
/// search considers.
const STREAM_DESIGN_LEN: usize = 1 << 40;

/// A filter bank over a signal that arrives in chunks.
pub struct FirStream {
    filters: FilterBank,
    options: FirOptions,
    complex_signal: bool,
    recipe: FirRecipe,
    engine: Option<GroupEngine<f64>>,
    taps: Vec<Vec<Complex64>>,
    /// Samples pushed so far.
    total: usize,
    latency: usize,
    /// Samples from absolute index `origin` (negative: the M - 1 zeros
    /// before the signal that overlap-save reads).
    buf: Vec<Complex64>,
    origin: i64,
    started: bool,
    /// Next overlap-save segment, and next full-convolution output not
    /// yet computed.
    next_segment: usize,
    y_next: usize,
    /// Per filter: outputs from `start + emitted` to `y_next`.
    pending: Vec<Vec<Complex64>>,
    /// Per filter: the output just before the pending ones (the derivative's
    /// left neighbour).
    prev: Vec<Complex64>,
    emitted: usize,
}

impl FirStream {
    /// A stream of real (`complex_signal = false`) or complex samples.
    pub fn new(
        filters: FilterBank,
        options: FirOptions,
        complex_signal: bool,
    ) -> Result<Self, FirError> {
        validate_filters(&filters)?;
        let (nf, m) = filters.dim();
        let recipe = plan(STREAM_DESIGN_LEN, m, nf, &options);
        let taps: Vec<Vec<Complex64>> = (0..nf).map(|f| filters.row(f)).collect();
        let engine = recipe.fft_size.map(|p| {
            let mut planner = FftPlanner::<f64>::new();
            let mut planner64 = FftPlanner::<f64>::new();
            GroupEngine::new(p, m, taps.clone(), &mut planner, &mut planner64)
        });
        // Longer than the FFT (the recipe is the long signals' one) and
        // than the filter (the output window starts where it will).
        let latency = recipe.fft_size.unwrap_or(0).max(m) + 1;
        let origin = if engine.is_some() { -(m as i64 - 1) } else { 0 };
        Ok(FirStream {
            filters,
            options,
            complex_signal,
            recipe,
            engine,
            taps,
            total: 0,
            latency,
            buf: vec![Complex64::new(0.0, 0.0); (-origin) as usize],
            origin,
            started: false,
            next_segment: 0,
            y_next: 0,
            pending: vec![Vec::new(); nf],
            prev: vec![Complex64::new(0.0, 0.0); nf],
            emitted: 0,
        })
    }

    /// Samples the stream holds before its first output.
    pub fn latency(&self) -> usize {
        self.latency
    }

    /// Samples pushed so far.
    pub fn samples(&self) -> usize {
        self.total
    }

    /// Output columns returned so far.
    pub fn columns_emitted(&self) -> usize {
        self.emitted
    }

    /// Direct or overlap-save, and the FFT size, for `--explain`.
    pub fn recipe(&self) -> &FirRecipe {
        &self.recipe
    }

    /// Bytes held besides a chunk: the kernel spectra, the sample window
    /// and the outputs that wait for the derivative's neighbour.
    pub fn memory_bound(&self) -> u64 {
        let (nf, m) = self.filters.dim();
        let p = self.recipe.fft_size.unwrap_or(0);
        ((nf * (p + m + 2) + 2 * (p + m)) * 16) as u64
    }

    fn real_output(&self) -> bool {
        !self.complex_signal && !self.filters.is_complex()
    }

    /// The output window's first full-convolution index for a long signal.
    fn start(&self) -> usize {
        let m = self.filters.dim().1;
        output_range(self.latency.max(m), m, self.options.mode).0
    }

    /// Appends `chunk` and returns the outputs no later sample changes:
    /// shape (filters, new columns).
    pub fn push(&mut self, chunk: &Signal) -> Result<FirValues, FirError> {
        if chunk.is_complex() && !self.complex_signal {
            return Err(FirError::StreamKind);
        }
        super::check_finite(chunk, &self.options, self.total)?;
        self.buf.extend(chunk.to_complex());
        self.total += chunk.len();
        if !self.started && self.total < self.latency {
            return Ok(self.values(Vec::new(), 0));
        }
        if !self.started {
            self.started = true;
            self.y_next = self.start();
        }
        Ok(self.advance(None))
    }

    /// The remaining outputs, with the zeros after the true end. A stream
    /// shorter than `latency` is filtered whole here.
    pub fn finish(mut self) -> Result<FirValues, FirError> {
        if self.total == 0 {
            return Err(FirError::EmptySignal);
        }
        if !self.started {
            let skip = (-self.origin) as usize;
            let x = self.buf.split_off(skip);
            let signal = if self.complex_signal {
                Signal::complex(x)
            } else {
                Signal::real(x.iter().map(|c| c.re).collect())
            };
            return Ok(super::fir(&signal, &self.filters, &self.options)?.0);
        }
        let n = self.total;
        Ok(self.advance(Some(n)))
    }

    fn advance(&mut self, end: Option<usize>) -> FirValues {
        let (_, m) = self.filters.dim();
        let m_end = self.total;
        let start = self.start();
        let stop = end.map(|n| {
            let (s, len) = output_range(n, m, self.options.mode);
            s + len
        });
        // Outputs below `frontier` are final.
        let frontier = match (&self.engine, end) {
            (_, Some(_)) => stop.unwrap_or(0),
            (Some(e), None) => {
                // Segment b reads buf samples b valid .. b valid + size (from -(M - 1)).
                let avail = (m_end + m - 1).checked_sub(e.size);
                let count = avail.map_or(0, |v| v / e.valid + 1);
                count * e.valid
            }
            (None, None) => m_end,
        };
        let frontier = frontier.max(self.y_next);
        if frontier > self.y_next {
            self.compute(frontier, end);
        }
        // The derivative waits for each output's right neighbour.
        let cur = start + self.emitted;
        let last = match (self.options.post, end) {
            (FirPost::Derivative, None) => self.y_next.saturating_sub(1),
            _ => self.y_next,
        };
        let cols = last.saturating_sub(cur);
        let nf = self.pending.len();
        let mut out = vec![Complex64::new(0.0, 0.0); nf * cols];
        if cols > 0 {
            let post = self.options.post;
            let stop = stop.unwrap_or(usize::MAX);
            out.par_chunks_mut(cols)
                .zip(self.pending.par_iter_mut())
                .zip(self.prev.par_iter_mut())
                .for_each(|((o, y), prev)| {
                    if post == FirPost::Derivative {
                        for (i, v) in o.iter_mut().enumerate() {
                            let j = cur + i;
                            let left = if j == start {
                                None
                            } else if i == 0 {
                                Some(*prev)
                            } else {
                                Some(y[i - 1])
                            };
                            let right = (j + 1 < stop).then(|| y[i + 1]);
                            *v = match (left, right) {
                                (Some(l), Some(r)) => (r - l) * 0.5,
                                (None, Some(r)) => r - y[i],
                                (Some(l), None) => y[i] - l,
                                (None, None) => Complex64::new(0.0, 0.0),
                            };
                        }
                    } else {
                        o.copy_from_slice(&y[..cols]);
                    }
                    *prev = y[cols - 1];
                    y.drain(..cols);
                });
        }
        self.emitted += cols;
        self.trim(m);
        self.values(out, cols)
    }

    /// Outputs y_next..frontier of every filter into the pending rows.
    fn compute(&mut self, frontier: usize, end: Option<usize>) {
        let m = self.filters.dim().1;
        let lo = self.y_next;
        match &self.engine {
            None => {
                // x starts at buffer index -origin = 0 for the direct path;
                // at the end the buffer ends at the signal's end, so the
                // sums' clamps are those of the whole signal.
                let x0 = self.origin as usize;
                let x = &self.buf;
                let taps = &self.taps;
                self.pending.par_iter_mut().enumerate().for_each(|(f, p)| {
                    let at = p.len();
                    p.resize(at + frontier - lo, Complex64::new(0.0, 0.0));
                    super::direct::convolve_range(x, &taps[f], lo - x0, &mut p[at..]);
                });
            }
            Some(e) => {
                let first = self.next_segment;
                let count = match end {
                    Some(_) => frontier.div_ceil(e.valid),
                    None => frontier / e.valid,
                };
                if end.is_some() {
                    // The zeros after the signal, as far as the last segment reads.
                    let need = (count * e.valid + e.size) as i64 - self.origin;
                    let need = need.max(0) as usize;
                    if self.buf.len() < need {
                        self.buf.resize(need, Complex64::new(0.0, 0.0));
                    }
                }
                let at = (first as i64 * e.valid as i64 - (m as i64 - 1) - self.origin) as usize;
                let spectra = e.segment_spectra_count(&self.buf, at, count - first);
                let n = end.map_or(count * e.valid, |_| frontier);
                let keep_lo = lo;
                self.pending.par_iter_mut().enumerate().for_each_init(
                    || Scratch::new(e.size),
                    |scratch, (f, p)| {
                        e.row_from(&spectra, first, f, n, 1, scratch, |c0, v| {
                            let a = keep_lo.max(c0);
                            let b = (c0 + v.len()).min(frontier);
                            if a < b {
                                p.extend_from_slice(&v[a - c0..b - c0]);
                            }
                        })
                    },
                );
                self.next_segment = count;
            }
        }
        self.y_next = frontier;
    }

    /// Drops samples no later output reads.
    fn trim(&mut self, m: usize) {
        let keep = match &self.engine {
            Some(e) => self.next_segment as i64 * e.valid as i64 - (m as i64 - 1),
            None => self.y_next as i64 - (m as i64 - 1),
        };
        let drop = (keep - self.origin).max(0) as usize;
        if drop > 0 && drop >= self.buf.len() - drop {
            self.buf.drain(..drop);
            self.origin += drop as i64;
        }
    }

    fn values(&self, rows: Vec<Complex64>, cols: usize) -> FirValues {
        let shape = (self.pending.len(), cols);
        let real = |f: fn(&Complex64) -> f64| {
            FirValues::Real(
                Array2::from_shape_vec(shape, rows.iter().map(f).collect()).expect("shape"),
            )
        };
        match self.options.post {
            FirPost::Power => real(|c| c.norm_sqr()),
            FirPost::Magnitude => real(|c| c.norm()),
            FirPost::None | FirPost::Derivative if self.real_output() => real(|c| c.re),
            _ => FirValues::Complex(Array2::from_shape_vec(shape, rows).expect("shape")),
        }
    }
}
