//! The FIR bank on the GPU: seed 001's SM-OLS, the same fused kernel as the
//! CWT's long masks. One segment FFT per block serves several filters; the
//! product, inverse FFT, dropping of aliased samples and post-processing
//! (power, magnitude, or the non-local derivative) stay in shared memory.
//! Filters too long for shared-memory segments use the cuFFT overlap-save.

use crate::cufft_ols::CufftGroup;
use crate::cwt::{
    check_free, filters_per_block, launch_ols, max_segment, segment_for, upload, OlsGroup,
};
use crate::device::Gpu;
use crate::error::{Context, CudaError};
use crate::spectra::{correlation_band, twiddles, PackedBands};
use crate::GpuReal;
use cudarc::driver::CudaSlice;
use multires::fir::{output_range, FilterBank, FirAlgorithm, FirOptions, FirPost, FirRecipe};
use multires::Signal;
use num_complex::Complex64;
use rayon::prelude::*;
use rustfft::FftPlanner;
use std::sync::Arc;

enum Engine<T: GpuReal> {
    Sm(OlsGroup<T>),
    Cufft(CufftGroup<T>),
}

pub struct CudaFir<T: GpuReal> {
    gpu: Arc<Gpu>,
    n: usize,
    nf: usize,
    len: usize,
    engine: Engine<T>,
    tw: CudaSlice<T>,
    twl: usize,
    oc: i32,
    deriv: bool,
    /// Real signal and real filters: outputs are real, two filters per inverse FFT.
    real: bool,
    complex_out: bool,
    x: Option<(CudaSlice<T>, Option<CudaSlice<T>>)>,
    out: CudaSlice<T>,
    recipe: FirRecipe,
}

/// How the bank cuts the signal: segments of `l` points (in shared memory
/// when `sm`), each giving `count` outputs from IFFT sample `u0` on.
struct Segmentation {
    sm: Option<usize>,
    l: usize,
    u0: usize,
    count: usize,
}

fn segmentation<T: GpuReal>(gpu: &Gpu, m: usize, deriv: bool) -> Result<Segmentation, CudaError> {
    let lmax = max_segment::<T>(gpu);
    let span = m - 1 + if deriv { 2 } else { 0 };
    // Filters longer than half the largest shared-memory segment go
    // through the cuFFT overlap-save (no fused derivative there).
    let sm = segment_for(span.max(1), lmax);
    if sm.is_none() && deriv {
        return Err(CudaError::Unsupported(format!(
            "--post derivative with filters of {m} taps (over {} in this precision) is not fused on the GPU; use --device cpu",
            lmax / 2 - 1
        )));
    }
    let l = sm.unwrap_or_else(|| (4 * (m - 1)).next_power_of_two());
    let v = l - (m - 1);
    let (u0, count) = if deriv { (1, v - 2) } else { (0, v) };
    Ok(Segmentation { sm, l, u0, count })
}

impl<T: GpuReal> CudaFir<T> {
    /// Plans the bank for signals of `n` samples. `complex_signal` decides
    /// whether the output can be real.
    pub fn new(
        gpu: Arc<Gpu>,
        n: usize,
        complex_signal: bool,
        filters: &FilterBank,
        options: &FirOptions,
    ) -> Result<Self, CudaError> {
        let (_, m) = filters.dim();
        let (start, len) = output_range(n, m.max(1), options.mode);
        Self::with_range(gpu, n, complex_signal, filters, options, (start, len))
    }

    /// Like `new`, for the outputs y[start..start + len] of the full
    /// convolution (indices 0..n + m - 1), whatever the mode says: a window
    /// of a longer run. The derivative treats both ends as the output's ends.
    pub fn with_range(
        gpu: Arc<Gpu>,
        n: usize,
        complex_signal: bool,
        filters: &FilterBank,
        options: &FirOptions,
        (start, len): (usize, usize),
    ) -> Result<Self, CudaError> {
        let (nf, m) = filters.dim();
        if n == 0 {
            return Err(multires::fir::FirError::EmptySignal.into());
        }
        if nf == 0 || m == 0 {
            return Err(multires::fir::FirError::EmptyFilters(nf, m).into());
        }
        if options.algorithm == FirAlgorithm::Direct {
            return Err(CudaError::Unsupported(
                "the GPU FIR bank runs overlap-save only; use --algorithm auto or --device cpu for the direct sum".into(),
            ));
        }
        let deriv = options.post == FirPost::Derivative;
        let Segmentation { sm, l, u0, count } = segmentation::<T>(&gpu, m, deriv)?;
        if len == 0 || start + len > n + m - 1 {
            return Err(CudaError::Unsupported(format!(
                "output range {start}..{} outside the full convolution's 0..{}",
                start + len,
                n + m - 1
            )));
        }
        let v = l - (m - 1);
        let stride = count;
        let segments = len.div_ceil(stride);
        let floor = if std::mem::size_of::<T>() == 4 {
            f32::EPSILON as f64 * 1e-3
        } else {
            f64::EPSILON * 1e-3
        };
        let mut planner = FftPlanner::<f64>::new();
        let bands: Vec<_> = (0..nf)
            .map(|f| {
                // Correlation form: g[i] = h[M - 1 - i], so conj g[i] = conj(h[M - 1 - i]).
                let conj_g: Vec<Complex64> =
                    filters.row(f).iter().rev().map(|c| c.conj()).collect();
                correlation_band(&conj_g, l, floor, &mut planner)
            })
            .collect();
        let frow: Vec<i32> = (0..nf as i32).collect();
        let origin = start as i64 - (m as i64 - 1);
        let fg = filters_per_block::<T>(&gpu, l, segments, nf);
        let real = !complex_signal && !filters.is_complex();
        let (oc, complex_out) = match options.post {
            FirPost::Power => (2, false),
            FirPost::Magnitude => (1, false),
            FirPost::None | FirPost::Derivative if real => (4, false),
            FirPost::None | FirPost::Derivative => (0, true),
        };
        let out_len = nf * len * if complex_out { 2 } else { 1 };
        check_free(
            &gpu,
            (out_len + 2 * n) as u128 * std::mem::size_of::<T>() as u128,
        )?;
        let out = gpu
            .stream
            .alloc_zeros::<T>(out_len.max(1))
            .during(|| format!("allocating the {nf} x {len} output"))?;
        let tw: Vec<T> = twiddles(if sm.is_some() { l } else { 2 })
            .into_iter()
            .map(T::of)
            .collect();
        let engine = if sm.is_some() {
            let mut packed = PackedBands::default();
            for b in &bands {
                packed.push(b, l, T::of, T::of(0.0));
            }
            Engine::Sm(OlsGroup {
                l,
                stride,
                u0,
                count,
                segments,
                origin,
                h: upload(&gpu, &packed.values)?,
                hoff: upload(&gpu, &packed.offsets)?,
                blo: upload(&gpu, &packed.lo)?,
                blen: upload(&gpu, &packed.len)?,
                frow: upload(&gpu, &frow)?,
                nf,
                fg,
            })
        } else {
            Engine::Cufft(CufftGroup::new(
                &gpu,
                gpu.stream.clone(),
                l,
                v,
                len,
                origin,
                crate::masks::DeviceBands::upload_banded(&gpu, &bands)?,
                &frow,
            )?)
        };
        Ok(CudaFir {
            tw: upload(&gpu, &tw)?,
            twl: l,
            gpu,
            n,
            nf,
            len,
            engine,
            oc,
            deriv,
            real,
            complex_out,
            x: None,
            out,
            recipe: FirRecipe {
                algorithm: FirAlgorithm::OverlapSave,
                fft_size: Some(l),
                filters: nf,
                taps: m,
                signal_len: n,
            },
        })
    }

    pub fn recipe(&self) -> &FirRecipe {
        &self.recipe
    }

    pub fn upload(&mut self, signal: &Signal) -> Result<(), CudaError> {
        if signal.len() != self.n {
            return Err(CudaError::Unsupported(format!(
                "the bank was planned for {} samples, the signal has {}",
                self.n,
                signal.len()
            )));
        }
        if let multires::signal::Samples::Real(x) = &signal.samples {
            let x: Vec<T> = x.par_iter().map(|&v| T::of(v)).collect();
            return self.upload_real(&x);
        }
        let x = signal.to_complex();
        let re: Vec<T> = x.par_iter().map(|c| T::of(c.re)).collect();
        let im = if signal.is_complex() {
            let v: Vec<T> = x.par_iter().map(|c| T::of(c.im)).collect();
            Some(upload(&self.gpu, &v)?)
        } else {
            None
        };
        self.x = Some((upload(&self.gpu, &re)?, im));
        Ok(())
    }

    /// A real signal in the bank's precision, copied up through the
    /// page-locked ring as it is (a float32 array stays float32).
    pub fn upload_real(&mut self, x: &[T]) -> Result<(), CudaError> {
        if x.len() != self.n {
            return Err(CudaError::Unsupported(format!(
                "the bank was planned for {} samples, the signal has {}",
                self.n,
                x.len()
            )));
        }
        self.x = Some((upload(&self.gpu, x)?, None));
        Ok(())
    }

    /// The filtered rows as plain elements in the bank's precision (complex
    /// interleaved), straight into `host` through the page-locked ring.
    pub fn download_raw(&self, host: &mut [T]) -> Result<(), CudaError> {
        if host.len() != self.out.len() {
            return Err(CudaError::Unsupported(format!(
                "{} values given for an output of {}",
                host.len(),
                self.out.len()
            )));
        }
        crate::transfer::download_into(&self.gpu, &self.gpu.stream, &self.out, 0, host)
    }

    /// C real signals (rows of `x`, the planned length) filtered by the
    /// bank into C outputs (rows of `out`, the bank's rows each), through
    /// the ring, reusing the bank's buffers.
    pub fn filter_rows(&mut self, x: &[T], out: &mut [T]) -> Result<(), CudaError> {
        let (n, per) = (self.n, self.out.len());
        crate::check_rows(n, per, x.len(), out.len())?;
        for (row, dst) in x.chunks(n).zip(out.chunks_mut(per)) {
            self.upload_real(row)?;
            self.launch()?;
            self.download_raw(dst)?;
        }
        Ok(())
    }

    pub fn poison(&mut self) -> Result<(), CudaError> {
        let v = vec![T::of(f64::NAN); self.out.len()];
        self.gpu
            .stream
            .memcpy_htod(&v, &mut self.out)
            .during(|| "poisoning the output".into())
    }

    pub fn launch(&mut self) -> Result<(), CudaError> {
        let Some((re, im)) = &self.x else {
            return Err(CudaError::Unsupported(
                "no signal on the GPU: call upload first".into(),
            ));
        };
        let x = (re, im.as_ref().unwrap_or(re), im.is_some());
        match &mut self.engine {
            Engine::Sm(g) => launch_ols(
                &self.gpu,
                &self.gpu.stream,
                g,
                x,
                self.oc,
                (self.deriv, self.real),
                (g.origin, 0, self.len as i64),
                1,
                self.len,
                (&self.tw, self.twl),
                &self.out,
            ),
            Engine::Cufft(g) => g.launch(
                &self.gpu,
                x,
                self.oc,
                (0, self.len as i64),
                1,
                self.len,
                &self.out,
            ),
        }
    }

    /// The output as float64 rows (complex where the bank is complex).
    pub fn download(&self) -> Result<multires::fir::FirValues, CudaError> {
        let mut host = multires::memory::zeroed_vec::<T>(self.out.len());
        self.download_raw(&mut host)?;
        let shape = (self.nf, self.len);
        let bad = |e: ndarray::ShapeError| CudaError::Unsupported(format!("output shape: {e}"));
        Ok(if self.complex_out {
            let v: Vec<Complex64> = host
                .par_chunks_exact(2)
                .map(|p| Complex64::new(p[0].f64(), p[1].f64()))
                .collect();
            multires::fir::FirValues::Complex(
                ndarray::Array2::from_shape_vec(shape, v).map_err(bad)?,
            )
        } else {
            let v: Vec<f64> = host[..self.nf * self.len]
                .par_iter()
                .map(|x| x.f64())
                .collect();
            multires::fir::FirValues::Real(ndarray::Array2::from_shape_vec(shape, v).map_err(bad)?)
        })
    }

    pub fn output_bytes(&self) -> usize {
        self.out.len() * std::mem::size_of::<T>()
    }
}

/// The FIR bank in windows of about `window` output columns (rounded up to
/// whole segments), for outputs larger than the GPU. Each window's segments
/// are the in-memory run's segments, fed the same samples, so the result is
/// bit-identical to the in-memory run; with the derivative a window also
/// computes one output beyond each inner edge (its one-sided difference is
/// dropped).
pub fn fir_windowed(
    gpu: Arc<Gpu>,
    signal: &Signal,
    filters: &FilterBank,
    options: &FirOptions,
    window: usize,
) -> Result<(multires::fir::FirValues, FirRecipe), CudaError> {
    use multires::fir::FirValues;
    multires::fir::validate(signal, filters, options)?;
    let (nf, m) = filters.dim();
    let n = signal.len();
    let (start, len) = output_range(n, m, options.mode);
    let deriv = options.post == FirPost::Derivative;
    let seg = segmentation::<f64>(&gpu, m, deriv)?;
    let window = window.max(1).div_ceil(seg.count) * seg.count;
    let x = signal.to_complex();
    let mut out: Option<FirValues> = None;
    let mut recipe = None;
    let mut c0 = 0usize;
    while c0 < len {
        // With the derivative, inner windows start one column after the
        // grid, so the extra column before them lies on it.
        let e0 = usize::from(deriv && c0 > 0);
        let c1 = (c0 - e0 + window + usize::from(deriv)).min(len);
        let e1 = usize::from(deriv && c1 < len);
        let (g0, g1) = (start + c0 - e0, start + c1 + e1);
        // Every sample the window's segments read, as in the whole run.
        let first = g0 as i64 - (m as i64 - 1) - seg.u0 as i64;
        let segs = (g1 - g0).div_ceil(seg.count);
        let a = first.max(0) as usize;
        let b = ((first + (segs * seg.count + seg.l) as i64).max(0) as usize).min(n);
        let part = &x[a..b];
        let slice = if signal.is_complex() {
            Signal::complex(part.to_vec())
        } else {
            Signal::real(part.iter().map(|c| c.re).collect())
        };
        let mut f = CudaFir::<f64>::with_range(
            gpu.clone(),
            b - a,
            signal.is_complex(),
            filters,
            options,
            (g0 - a, g1 - g0),
        )?;
        f.upload(&slice)?;
        f.launch()?;
        let got = f.download()?;
        recipe.get_or_insert_with(|| FirRecipe {
            signal_len: n,
            ..f.recipe().clone()
        });
        let cols = ndarray::s![.., e0..e0 + (c1 - c0)];
        match (&mut out, got) {
            (None, FirValues::Real(w)) => {
                let mut all = ndarray::Array2::<f64>::zeros((nf, len));
                all.slice_mut(ndarray::s![.., c0..c1])
                    .assign(&w.slice(cols));
                out = Some(FirValues::Real(all));
            }
            (None, FirValues::Complex(w)) => {
                let mut all = ndarray::Array2::<Complex64>::zeros((nf, len));
                all.slice_mut(ndarray::s![.., c0..c1])
                    .assign(&w.slice(cols));
                out = Some(FirValues::Complex(all));
            }
            (Some(FirValues::Real(all)), FirValues::Real(w)) => {
                all.slice_mut(ndarray::s![.., c0..c1])
                    .assign(&w.slice(cols));
            }
            (Some(FirValues::Complex(all)), FirValues::Complex(w)) => {
                all.slice_mut(ndarray::s![.., c0..c1])
                    .assign(&w.slice(cols));
            }
            _ => {
                return Err(CudaError::Unsupported(
                    "windows of one FIR run disagree on real or complex output".into(),
                ))
            }
        }
        c0 = c1;
    }
    let out = out.ok_or_else(|| CudaError::Unsupported("an FIR run with no output".into()))?;
    let recipe =
        recipe.ok_or_else(|| CudaError::Unsupported("an FIR run with no output".into()))?;
    Ok((out, recipe))
}
