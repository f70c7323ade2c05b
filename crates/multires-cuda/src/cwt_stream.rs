//! The CWT of a stream on the GPU. The stream runs the column windows of
//! `cwt_chunked` (segments on the whole run's grid, so every window equals
//! the in-memory transform bit for bit) and keeps the window's input on the
//! device: each next window's first 2 halo samples are the last ones of the
//! previous window, copied on the device, so every sample crosses PCIe
//! once. Columns come a window (`chunk` columns) at a time; the boundary is
//! applied at the true ends, the right one at `finish` from the tail kept
//! on the host.

use crate::cwt::{CudaCwt, SignalOnGpu};
use crate::error::{Context, CudaError};
use crate::{Gpu, GpuReal};
use cudarc::driver::CudaSlice;
use multires::cwt::{CwtValues, OutputKind, Precision};
use multires::{CwtOptions, CwtPlan, Signal};
use ndarray::Array2;
use num_complex::Complex64;
use std::sync::Arc;

/// A CWT over chunks, on the GPU, in precision T.
pub struct CudaCwtStream<T: GpuReal> {
    gpu: Arc<Gpu>,
    options: CwtOptions,
    complex: bool,
    win: CudaCwt<T>,
    /// The buffer the next window's input is assembled in (ping-pong with
    /// the window's own).
    spare: Option<SignalOnGpu<T>>,
    chunk: usize,
    hop: usize,
    pad: usize,
    halo: usize,
    total: usize,
    /// Samples not yet on the device, from absolute index `staged_from`.
    staged: Vec<Complex64>,
    staged_from: usize,
    /// The last samples (the right boundary folds back into them).
    tail: Vec<Complex64>,
    started: bool,
    /// First column of the next window.
    next_col: usize,
    head: Vec<Complex64>,
    /// Host memory a window's columns come down into, reused.
    host: Vec<T>,
}

fn zeros<T: GpuReal>(gpu: &Gpu, n: usize) -> Result<CudaSlice<T>, CudaError> {
    gpu.stream
        .alloc_zeros::<T>(n)
        .during(|| format!("allocating a stream window of {n} samples"))
}

impl<T: GpuReal> CudaCwtStream<T> {
    /// A stream of real or complex samples whose windows hold `chunk` columns.
    pub fn new(
        gpu: Arc<Gpu>,
        options: CwtOptions,
        complex: bool,
        chunk: usize,
    ) -> Result<Self, CudaError> {
        let why = |what: &str, why: &str| {
            Err(CudaError::Cwt(multires::CwtError::StreamOption {
                what: what.into(),
                why: why.into(),
            }))
        };
        if options.oversampling != 1 {
            return why("oversampling", "the interpolation reads the whole signal");
        }
        if options.boundary == multires::Boundary::Periodic {
            return why(
                "the periodic boundary",
                "its first columns read the signal's last samples; use zero, symmetric or reflect",
            );
        }
        if let Some(h) = options.half {
            return why(
                &format!("a {} output on the GPU", h.numpy_name()),
                "GPU windows store float32 or float64; stream on the CPU for 16-bit outputs",
            );
        }
        let want = match options.precision {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        };
        if want != T::NAME {
            return Err(CudaError::Unsupported(format!(
                "a {want} stream cannot run in {}",
                T::NAME
            )));
        }
        let chunk = chunk.max(1);
        let hop = options.hop;
        // The window plan: its column count is the chunk; the masks are a
        // long signal's (a plan of the chunk's length would cut zero-boundary
        // masks to it) and the per-scale choices do not depend on the length.
        let plan = CwtPlan::for_stream(options.clone(), complex)?;
        let mut win = CudaCwt::<T>::window(gpu.clone(), &plan, Some(chunk))?;
        let halo = win.halo();
        let pad = win.pad();
        let len_in = chunk * hop + 2 * halo;
        let buffers = || -> Result<SignalOnGpu<T>, CudaError> {
            Ok(SignalOnGpu {
                re: zeros(&gpu, len_in)?,
                im: complex.then(|| zeros(&gpu, len_in)).transpose()?,
            })
        };
        win.swap_input(&mut Some(buffers()?));
        let spare = Some(buffers()?);
        gpu.synchronize()?;
        Ok(CudaCwtStream {
            gpu,
            options,
            complex,
            win,
            spare,
            chunk,
            hop,
            pad,
            halo,
            total: 0,
            staged: Vec::new(),
            staged_from: 0,
            tail: Vec::new(),
            started: false,
            next_col: 0,
            head: Vec::new(),
            host: Vec::new(),
        })
    }

    /// Samples held before the first window can run.
    pub fn latency(&self) -> usize {
        self.chunk * self.hop + self.halo + self.pad + 2
    }

    pub fn samples(&self) -> usize {
        self.total
    }

    /// Columns returned so far.
    pub fn columns_emitted(&self) -> usize {
        self.next_col
    }

    /// Bytes on the device besides the window plan: the two input buffers.
    pub fn input_bytes(&self) -> usize {
        let len_in = self.chunk * self.hop + 2 * self.halo;
        len_in * std::mem::size_of::<T>() * if self.complex { 4 } else { 2 }
    }

    fn check(&self, chunk: &Signal) -> Result<(), CudaError> {
        if chunk.is_complex() && !self.complex {
            return Err(CudaError::Cwt(multires::CwtError::StreamKind {
                began: "real",
                got: "complex",
            }));
        }
        if let Some((index, value)) = chunk.first_nonfinite() {
            let index = index + self.total;
            // As the whole transform's check: NaN/Inf only where allowed
            // and only through direct sums.
            if !self.options.allow_nonfinite {
                return Err(CudaError::Cwt(multires::CwtError::NonFinite {
                    index,
                    value,
                }));
            }
            if self.options.algorithm != multires::cwt::Algorithm::Direct {
                return Err(CudaError::Cwt(multires::CwtError::NonFiniteFft {
                    index,
                    value,
                }));
            }
        }
        Ok(())
    }

    /// Appends `chunk`; returns the columns of every window now complete.
    pub fn push(&mut self, chunk: &Signal) -> Result<CwtValues, CudaError> {
        self.check(chunk)?;
        let x = chunk.to_complex();
        self.total += x.len();
        let keep = self.pad + 2;
        self.tail.extend_from_slice(&x);
        if self.tail.len() > 4 * keep.max(1024) {
            self.tail.drain(..self.tail.len() - keep);
        }
        if !self.started {
            self.head.extend_from_slice(&x);
            if self.total < self.latency() {
                return Ok(self.values(Vec::new(), 0));
            }
            self.start()?;
        } else {
            self.staged.extend_from_slice(&x);
        }
        self.run_windows(None)
    }

    /// The remaining columns, the right boundary applied at the end. A
    /// stream shorter than `latency` is transformed whole here.
    pub fn finish(mut self) -> Result<CwtValues, CudaError> {
        if self.total == 0 {
            return Err(CudaError::Cwt(multires::CwtError::EmptySignal));
        }
        if !self.started {
            let signal = self.head_signal();
            let plan = CwtPlan::new(self.options.clone(), self.total, self.complex)?;
            let mut c = CudaCwt::<T>::new(self.gpu.clone(), &plan)?;
            c.upload(&plan, &signal)?;
            c.launch()?;
            let mut values = self.zeroed(plan.columns());
            let complex_out = self.options.output == OutputKind::Complex;
            c.download_raw(T::values_slice(&mut values, complex_out)?)?;
            return Ok(values);
        }
        let n = self.total;
        self.run_windows(Some(n))
    }

    fn head_signal(&self) -> Signal {
        if self.complex {
            Signal::complex(self.head.clone())
        } else {
            Signal::real(self.head.iter().map(|c| c.re).collect())
        }
    }

    /// The first window's input, built on the host: the left boundary's
    /// folds (the stream is longer than the pad, so they are the whole
    /// signal's), then the samples.
    fn start(&mut self) -> Result<(), CudaError> {
        self.started = true;
        let head = std::mem::take(&mut self.head);
        let n = head.len();
        let b = self.options.boundary;
        let len_in = self.chunk * self.hop + 2 * self.halo;
        let value = |k: i64| -> Complex64 {
            if k < -(self.pad as i64) {
                return Complex64::new(0.0, 0.0);
            }
            b.fold(k, n).map_or(Complex64::new(0.0, 0.0), |i| head[i])
        };
        let first: Vec<Complex64> = (0..len_in as i64)
            .map(|j| value(j - self.halo as i64))
            .collect();
        self.upload_part(&first, 0, true)?;
        // The samples past the first window's input wait on the host.
        let on_device = len_in - self.halo;
        self.staged = head[on_device.min(n)..].to_vec();
        self.staged_from = on_device;
        Ok(())
    }

    /// Copies `values` to `at` of the window's input (`into_window`) or of
    /// the spare buffer.
    fn upload_part(
        &mut self,
        values: &[Complex64],
        at: usize,
        into_window: bool,
    ) -> Result<(), CudaError> {
        let re: Vec<T> = values.iter().map(|c| T::of(c.re)).collect();
        let im: Vec<T> = values.iter().map(|c| T::of(c.im)).collect();
        let stream = self.win.stream().clone();
        let target = if into_window {
            self.win.input_mut()
        } else {
            self.spare.as_mut()
        };
        let Some(buf) = target else {
            return Err(CudaError::Unsupported(
                "the stream's window has no input buffer".into(),
            ));
        };
        let mut dst = buf.re.slice_mut(at..at + re.len());
        stream
            .memcpy_htod(&re, &mut dst)
            .during(|| "copying stream samples".into())?;
        if let Some(d) = buf.im.as_mut() {
            let mut dst = d.slice_mut(at..at + im.len());
            stream
                .memcpy_htod(&im, &mut dst)
                .during(|| "copying stream samples".into())?;
        }
        Ok(())
    }

    /// Runs every window whose input is complete (all of them up to the
    /// end when `end` is the signal's length) and returns their columns.
    fn run_windows(&mut self, end: Option<usize>) -> Result<CwtValues, CudaError> {
        let total_cols = end.map(|n| n.div_ceil(self.hop));
        let step = self.chunk * self.hop;
        let elem = if self.options.output == OutputKind::Complex {
            2
        } else {
            1
        };
        let rows = self.options.scales.len();
        // Columns of every window run now, rows x columns, each window's
        // rows copied into place as it comes down.
        let mut parts: Vec<Vec<T>> = Vec::new();
        let mut widths = Vec::new();
        loop {
            let c0 = self.next_col;
            if total_cols.is_some_and(|t| c0 >= t) {
                break;
            }
            // The window's input ends at sample c0 hop + step + halo.
            let need = c0 * self.hop + step + self.halo;
            if end.is_none() && self.total < need {
                break;
            }
            if c0 > 0 {
                self.shift_and_fill(c0, end)?;
            }
            self.win.set_window_start(c0 * self.hop);
            self.win.launch()?;
            self.host.resize(self.win.output_len(), T::of(0.0));
            self.win.download_raw(&mut self.host)?;
            let w = total_cols.map_or(self.chunk, |t| self.chunk.min(t - c0));
            let mut part = Vec::with_capacity(rows * w * elem);
            for r in 0..rows {
                part.extend_from_slice(
                    &self.host[r * self.chunk * elem..(r * self.chunk + w) * elem],
                );
            }
            parts.push(part);
            widths.push(w);
            self.next_col = c0 + w;
            if w < self.chunk {
                break;
            }
        }
        let cols: usize = widths.iter().sum();
        if parts.len() == 1 {
            return Ok(self.values(parts.swap_remove(0), cols));
        }
        let mut flat = vec![T::of(0.0); rows * cols * elem];
        let mut at = 0;
        for (part, &w) in parts.iter().zip(&widths) {
            for r in 0..rows {
                let d0 = (r * cols + at) * elem;
                flat[d0..d0 + w * elem].copy_from_slice(&part[r * w * elem..(r + 1) * w * elem]);
            }
            at += w;
        }
        Ok(self.values(flat, cols))
    }

    /// The next window's input: the previous window's last 2 halo samples
    /// (copied on the device) and the next `step` samples (uploaded).
    fn shift_and_fill(&mut self, c0: usize, end: Option<usize>) -> Result<(), CudaError> {
        let step = self.chunk * self.hop;
        let len_in = step + 2 * self.halo;
        let keep = 2 * self.halo;
        let stream = self.win.stream().clone();
        let (Some(from), Some(to)) = (self.win.input_mut(), self.spare.as_mut()) else {
            return Err(CudaError::Unsupported(
                "the stream's window has no input buffer".into(),
            ));
        };
        stream
            .memcpy_dtod(&from.re.slice(step..len_in), &mut to.re.slice_mut(0..keep))
            .during(|| "moving the stream's halo".into())?;
        if let (Some(fi), Some(ti)) = (from.im.as_ref(), to.im.as_mut()) {
            stream
                .memcpy_dtod(&fi.slice(step..len_in), &mut ti.slice_mut(0..keep))
                .during(|| "moving the stream's halo".into())?;
        }
        // Samples c0 hop + halo .. c0 hop + halo + step.
        let lo = c0 * self.hop + self.halo;
        let mut fresh = Vec::with_capacity(step);
        for k in lo..lo + step {
            fresh.push(self.sample(k, end));
        }
        let used = (lo + step)
            .saturating_sub(self.staged_from)
            .min(self.staged.len());
        self.upload_part(&fresh, keep, false)?;
        self.staged.drain(..used);
        self.staged_from += used;
        self.win.swap_input(&mut self.spare);
        Ok(())
    }

    /// Sample k of the signal as the whole transform reads it: staged, or
    /// past the end the boundary's fold of the tail, or zero.
    fn sample(&self, k: usize, end: Option<usize>) -> Complex64 {
        let zero = Complex64::new(0.0, 0.0);
        if let Some(n) = end {
            if k >= n {
                if k >= n + self.pad {
                    return zero;
                }
                return match self.options.boundary.fold(k as i64, n) {
                    Some(i) => {
                        let first = n - self.tail.len();
                        if i >= first {
                            self.tail[i - first]
                        } else {
                            zero
                        }
                    }
                    None => zero,
                };
            }
        }
        k.checked_sub(self.staged_from)
            .and_then(|i| self.staged.get(i))
            .copied()
            .unwrap_or(zero)
    }

    fn zeroed(&self, cols: usize) -> CwtValues {
        let rows = self.options.scales.len();
        let complex = self.options.output == OutputKind::Complex;
        match (self.options.precision, complex) {
            (Precision::F32, true) => CwtValues::Complex32(Array2::zeros((rows, cols))),
            (Precision::F32, false) => CwtValues::Real32(Array2::zeros((rows, cols))),
            (Precision::F64, true) => CwtValues::Complex64(Array2::zeros((rows, cols))),
            (Precision::F64, false) => CwtValues::Real64(Array2::zeros((rows, cols))),
        }
    }

    fn values(&self, flat: Vec<T>, cols: usize) -> CwtValues {
        let mut v = self.zeroed(cols);
        let complex = self.options.output == OutputKind::Complex;
        if let Ok(dst) = T::values_slice(&mut v, complex) {
            dst.copy_from_slice(&flat);
        }
        v
    }
}
