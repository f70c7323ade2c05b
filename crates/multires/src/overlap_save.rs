//! Overlap-save FFT convolution of one signal with a bank of filters of one
//! FFT size, shared by the CWT (a bank of complex filters of different
//! lengths, seed 000) and the FIR bank (seed 001). The spectra of the input
//! segments are computed once and reused by every filter of the group.

use crate::real::{complex_of, Real};
use num_complex::{Complex, Complex64};
use rayon::prelude::*;
use rustfft::{Fft, FftPlanner};
use std::sync::Arc;

pub struct GroupEngine<T: Real> {
    pub size: usize,
    /// Kernel length K: each segment yields size - K + 1 outputs.
    pub taps: usize,
    pub valid: usize,
    fwd: Arc<dyn Fft<T>>,
    inv: Arc<dyn Fft<T>>,
    /// Kernel spectra with 1/size folded in.
    kernels: Vec<Vec<Complex<T>>>,
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
        let kernels = kernels
            .into_par_iter()
            .map(|k| {
                let mut g = k;
                g.resize(size, Complex64::new(0.0, 0.0));
                fwd64.process(&mut g);
                g.iter().map(|v| complex_of::<T>(v * scale)).collect()
            })
            .collect();
        GroupEngine {
            size,
            taps,
            valid: size - taps + 1,
            fwd,
            inv,
            kernels,
        }
    }

    /// Spectra of the segments producing outputs 0..n; output j of the
    /// convolution reads xe[start + j - (taps - 1) ..= start + j].
    pub fn segment_spectra(&self, xe: &[Complex<T>], start: usize, n: usize) -> Vec<Complex<T>> {
        let p = self.size;
        let nb = n.div_ceil(self.valid);
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
    /// `store(column, value)`.
    pub fn row(
        &self,
        spectra: &[Complex<T>],
        slot: usize,
        n: usize,
        hop: usize,
        scratch: &mut Scratch<T>,
        mut store: impl FnMut(usize, Complex<T>),
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
        for (b, seg) in spectra.chunks_exact(p).enumerate() {
            for ((o, s), k) in buf.iter_mut().zip(seg).zip(kernel) {
                *o = s * k;
            }
            self.inv.process_with_scratch(buf, &mut scratch.fft[..need]);
            let first = b * self.valid;
            let last = (first + self.valid).min(n);
            let mut c = first.div_ceil(hop);
            while c * hop < last {
                store(c, buf[lead + c * hop - first]);
                c += 1;
            }
        }
    }
}
