//! Overlap-save FFT convolution of one signal with a bank of filters of one
//! FFT size, shared by the CWT (a bank of complex filters of different
//! lengths, seed 000) and the FIR bank (seed 001). The spectra of the input
//! segments are computed once and reused by every filter of the group.

use crate::real::{complex_of, Real};
use num_complex::{Complex, Complex64};
use rayon::prelude::*;
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

/// The outputs segment `b` yields that the hop keeps, as one strided run:
/// (first output column, its index among the segment's valid outputs, count),
/// for outputs below `n`. Runs let the store step work on slices.
fn kept_run(b: usize, valid: usize, n: usize, hop: usize) -> (usize, usize, usize) {
    let first = b * valid;
    let last = (first + valid).min(n);
    let c0 = first.div_ceil(hop);
    let count = last.div_ceil(hop).saturating_sub(c0);
    (c0, c0 * hop - first, count)
}

/// Bins of a kernel spectrum that matter at precision T: |K| above
/// epsilon(T) / 1000 of the peak. The rest lie far below the rounding of the
/// inverse FFT, so the product skips them (large scales are narrow-band).
fn band<T: Real>(spectrum: &[Complex<T>]) -> (usize, usize) {
    // |K|^2 in float64: squaring a float32 bin far below the peak gives a
    // subnormal, and each such product cost about a hundred cycles (these
    // scans took a sixth of planning cwt-seed in float32).
    let mag = |c: &Complex<T>| {
        let (re, im) = (c.re.f64(), c.im.f64());
        re * re + im * im
    };
    let peak = spectrum.iter().map(mag).fold(0.0, f64::max);
    let floor = peak * (T::epsilon().f64() * 1e-3).powi(2);
    let lo = spectrum.iter().position(|c| mag(c) > floor);
    let hi = spectrum.iter().rposition(|c| mag(c) > floor);
    match (lo, hi) {
        (Some(lo), Some(hi)) => (lo, hi + 1),
        _ => (0, 0),
    }
}

/// buf = seg * kernel inside the band, zero outside.
fn band_product<T: Real>(
    buf: &mut [Complex<T>],
    seg: &[Complex<T>],
    kernel: &[Complex<T>],
    (lo, hi): (usize, usize),
) {
    buf[..lo].fill(Complex::default());
    buf[hi..].fill(Complex::default());
    for ((o, s), k) in buf[lo..hi]
        .iter_mut()
        .zip(&seg[lo..hi])
        .zip(&kernel[lo..hi])
    {
        *o = s * k;
    }
}

pub struct GroupEngine<T: Real> {
    pub size: usize,
    /// Kernel length K: each segment yields size - K + 1 outputs.
    pub taps: usize,
    pub valid: usize,
    fwd: Arc<dyn Fft<T>>,
    inv: Arc<dyn Fft<T>>,
    /// Kernel spectra with 1/size folded in.
    kernels: Vec<Vec<Complex<T>>>,
    bands: Vec<(usize, usize)>,
}

/// Buffers one worker reuses across rows.
pub struct Scratch<T> {
    buf: Vec<Complex<T>>,
    fft: Vec<Complex<T>>,
}

impl<T: Real> Scratch<T> {
    pub fn new(size: usize) -> Self {
        Scratch {
            buf: vec![Complex::default(); size],
            fft: Vec::new(),
        }
    }
}

impl<T: Real> GroupEngine<T> {
    /// `kernels[f][j]` is tap j (convolution order) of filter f, j < taps.
    /// Spectra are computed in f64 and rounded once to T.
    pub fn new(
        size: usize,
        taps: usize,
        kernels: Vec<Vec<Complex64>>,
        planner: &mut FftPlanner<T>,
        planner64: &mut FftPlanner<f64>,
    ) -> Self {
        assert!(taps >= 1 && taps <= size, "kernel longer than the FFT");
        let fwd = planner.plan_fft_forward(size);
        let inv = planner.plan_fft_inverse(size);
        let fwd64 = planner64.plan_fft_forward(size);
        let scale = 1.0 / size as f64;
        let kernels: Vec<Vec<Complex<T>>> = kernels
            .into_par_iter()
            .map(|k| {
                let mut g = k;
                g.resize(size, Complex64::new(0.0, 0.0));
                fwd64.process(&mut g);
                g.iter().map(|v| complex_of::<T>(v * scale)).collect()
            })
            .collect();
        let bands = kernels.par_iter().map(|k| band(k)).collect();
        GroupEngine {
            size,
            taps,
            valid: size - taps + 1,
            fwd,
            inv,
            kernels,
            bands,
        }
    }

    /// Spectra of the segments producing outputs 0..n; output j of the
    /// convolution reads xe[start + j - (taps - 1) ..= start + j].
    pub fn segment_spectra(&self, xe: &[Complex<T>], start: usize, n: usize) -> Vec<Complex<T>> {
        self.segment_spectra_count(xe, start, n.div_ceil(self.valid))
    }

    /// Spectra of `nb` consecutive segments, the first read from xe[start..]
    /// (a stream computes its segments a few at a time, with these bits).
    pub fn segment_spectra_count(
        &self,
        xe: &[Complex<T>],
        start: usize,
        nb: usize,
    ) -> Vec<Complex<T>> {
        let p = self.size;
        let mut spectra = vec![Complex::default(); nb * p];
        spectra.par_chunks_mut(p).enumerate().for_each_init(
            || vec![Complex::default(); self.fwd.get_inplace_scratch_len()],
            |scratch, (b, seg)| {
                let a = start + b * self.valid;
                let end = (a + p).min(xe.len());
                let take = end.saturating_sub(a);
                if take > 0 {
                    seg[..take].copy_from_slice(&xe[a..end]);
                }
                self.fwd.process_with_scratch(seg, scratch);
            },
        );
        spectra
    }

    /// Outputs n = 0, hop, 2 hop, ... below `n` of filter `slot`, handed to
    /// `store(c0, values)` in runs: column c0 + j is values[j * hop].
    pub fn row(
        &self,
        spectra: &[Complex<T>],
        slot: usize,
        n: usize,
        hop: usize,
        scratch: &mut Scratch<T>,
        store: impl FnMut(usize, &[Complex<T>]),
    ) {
        self.row_from(spectra, 0, slot, n, hop, scratch, store)
    }

    /// Like `row` for spectra whose first segment is segment `first` of the
    /// signal; the runs still name absolute columns.
    #[allow(clippy::too_many_arguments)]
    pub fn row_from(
        &self,
        spectra: &[Complex<T>],
        first: usize,
        slot: usize,
        n: usize,
        hop: usize,
        scratch: &mut Scratch<T>,
        mut store: impl FnMut(usize, &[Complex<T>]),
    ) {
        let p = self.size;
        let kernel = &self.kernels[slot];
        if scratch.buf.len() < p {
            scratch.buf.resize(p, Complex::default());
        }
        let need = self.inv.get_inplace_scratch_len();
        if scratch.fft.len() < need {
            scratch.fft.resize(need, Complex::default());
        }
        let buf = &mut scratch.buf[..p];
        let lead = self.taps - 1;
        let band = self.bands[slot];
        for (b, seg) in spectra.chunks_exact(p).enumerate() {
            band_product(buf, seg, kernel, band);
            self.inv.process_with_scratch(buf, &mut scratch.fft[..need]);
            let (c0, i, count) = kept_run(first + b, self.valid, n, hop);
            if count > 0 {
                store(c0, &buf[lead + i..lead + i + (count - 1) * hop + 1]);
            }
        }
    }
}

/// The same overlap-save for real kernels: real-to-complex segment spectra
/// and complex-to-real inverses, half the work of the complex path. A complex
/// signal is handled as two real ones (its real and imaginary parts).
pub struct RealGroupEngine<T: Real> {
    pub size: usize,
    pub taps: usize,
    pub valid: usize,
    fwd: Arc<dyn realfft::RealToComplex<T>>,
    inv: Arc<dyn realfft::ComplexToReal<T>>,
    kernels: Vec<Vec<Complex<T>>>,
    bands: Vec<(usize, usize)>,
}

/// Buffers one worker reuses across rows of the real path.
pub struct RealScratch<T> {
    spec: Vec<Complex<T>>,
    re: Vec<T>,
    im: Vec<T>,
    fft: Vec<Complex<T>>,
}

impl<T: Real> RealScratch<T> {
    pub fn new() -> Self {
        RealScratch {
            spec: Vec::new(),
            re: Vec::new(),
            im: Vec::new(),
            fft: Vec::new(),
        }
    }
}

impl<T: Real> Default for RealScratch<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real> RealGroupEngine<T> {
    /// `kernels[f][j]`: real tap j (convolution order) of filter f.
    pub fn new(
        size: usize,
        taps: usize,
        kernels: Vec<Vec<f64>>,
        planner: &mut realfft::RealFftPlanner<T>,
        planner64: &mut realfft::RealFftPlanner<f64>,
    ) -> Self {
        assert!(taps >= 1 && taps <= size, "kernel longer than the FFT");
        let fwd = planner.plan_fft_forward(size);
        let inv = planner.plan_fft_inverse(size);
        let fwd64 = planner64.plan_fft_forward(size);
        let scale = 1.0 / size as f64;
        let kernels: Vec<Vec<Complex<T>>> = kernels
            .into_par_iter()
            .map(|k| {
                let mut g = k;
                g.resize(size, 0.0);
                let mut spec = fwd64.make_output_vec();
                let mut scratch = fwd64.make_scratch_vec();
                // Lengths match by construction, so this cannot fail.
                let _ = fwd64.process_with_scratch(&mut g, &mut spec, &mut scratch);
                spec.iter().map(|v| complex_of::<T>(v * scale)).collect()
            })
            .collect();
        let bands = kernels.par_iter().map(|k| band(k)).collect();
        RealGroupEngine {
            size,
            taps,
            valid: size - taps + 1,
            fwd,
            inv,
            kernels,
            bands,
        }
    }

    fn bins(&self) -> usize {
        self.size / 2 + 1
    }

    /// Half spectra of the segments of a real sequence (see GroupEngine).
    pub fn segment_spectra(&self, xe: &[T], start: usize, n: usize) -> Vec<Complex<T>> {
        self.segment_spectra_count(xe, start, n.div_ceil(self.valid))
    }

    /// Half spectra of `nb` consecutive segments, the first read from xe[start..].
    pub fn segment_spectra_count(&self, xe: &[T], start: usize, nb: usize) -> Vec<Complex<T>> {
        let p = self.size;
        let m = self.bins();
        let mut spectra = vec![Complex::default(); nb * m];
        spectra.par_chunks_mut(m).enumerate().for_each_init(
            || (vec![T::zero(); p], self.fwd.make_scratch_vec()),
            |(seg, scratch), (b, out)| {
                let a = start + b * self.valid;
                let end = (a + p).min(xe.len());
                let take = end.saturating_sub(a);
                seg.iter_mut().for_each(|v| *v = T::zero());
                if take > 0 {
                    seg[..take].copy_from_slice(&xe[a..end]);
                }
                let _ = self.fwd.process_with_scratch(seg, out, scratch);
            },
        );
        spectra
    }

    fn inverse_block(
        &self,
        seg: &[Complex<T>],
        slot: usize,
        spec: &mut [Complex<T>],
        out: &mut [T],
        fft: &mut [Complex<T>],
    ) {
        band_product(spec, seg, &self.kernels[slot], self.bands[slot]);
        // DC and Nyquist of a real product are real; clear round-off dust.
        spec[0].im = T::zero();
        let last = spec.len() - 1;
        spec[last].im = T::zero();
        let _ = self.inv.process_with_scratch(spec, out, fft);
    }

    /// Like GroupEngine::row, the runs split into real and imaginary parts
    /// (`store(c0, re, im)`); `spectra_im` holds the imaginary part's spectra
    /// for complex signals, and `im` is None for real ones.
    #[allow(clippy::too_many_arguments)]
    pub fn row(
        &self,
        spectra_re: &[Complex<T>],
        spectra_im: Option<&[Complex<T>]>,
        slot: usize,
        n: usize,
        hop: usize,
        scratch: &mut RealScratch<T>,
        store: impl FnMut(usize, &[T], Option<&[T]>),
    ) {
        self.row_from(spectra_re, spectra_im, 0, slot, n, hop, scratch, store)
    }

    /// Like `row` for spectra whose first segment is segment `first`.
    #[allow(clippy::too_many_arguments)]
    pub fn row_from(
        &self,
        spectra_re: &[Complex<T>],
        spectra_im: Option<&[Complex<T>]>,
        first: usize,
        slot: usize,
        n: usize,
        hop: usize,
        scratch: &mut RealScratch<T>,
        mut store: impl FnMut(usize, &[T], Option<&[T]>),
    ) {
        let p = self.size;
        let m = self.bins();
        scratch.spec.resize(m, Complex::default());
        scratch.re.resize(p, T::zero());
        scratch.im.resize(p, T::zero());
        let need = self.inv.get_scratch_len();
        scratch
            .fft
            .resize(need.max(scratch.fft.len()), Complex::default());
        let lead = self.taps - 1;
        for (b, seg) in spectra_re.chunks_exact(m).enumerate() {
            self.inverse_block(
                seg,
                slot,
                &mut scratch.spec,
                &mut scratch.re,
                &mut scratch.fft[..need],
            );
            if let Some(im) = spectra_im {
                self.inverse_block(
                    &im[b * m..(b + 1) * m],
                    slot,
                    &mut scratch.spec,
                    &mut scratch.im,
                    &mut scratch.fft[..need],
                );
            }
            let (c0, i, count) = kept_run(first + b, self.valid, n, hop);
            if count > 0 {
                let run = lead + i..lead + i + (count - 1) * hop + 1;
                let im = spectra_im.map(|_| &scratch.im[run.clone()]);
                store(c0, &scratch.re[run], im);
            }
        }
    }
}
