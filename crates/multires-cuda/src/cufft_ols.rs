//! Overlap-save through cuFFT: the in-project baseline, and the path for
//! masks too long for the shared-memory engine (segments beyond what shared
//! memory holds). Segments are transformed once; the scales go through in
//! batches: band-limited product, batched inverse cuFFTs, the store.
//!
//! Every cuFFT call transforms `fft_batch(l)` segments: cuFFT picks its
//! kernels by batch size, and 108 segments of 32768 points came out
//! 4e-7 apart from 9 (an H200, float32), so a window or a stream of a long
//! signal would not equal the in-memory run. With one batch size per
//! segment size the bits depend on the data only. The calls run over the
//! scales' segments back to back, the buffers padded to a whole call; 8
//! segments a call made cwt-seed in float64 3.5x slower (launch-bound),
//! so a call holds up to 4 M points.

/// Segments per cuFFT call for segments of `l` points (whatever the
/// signal's length): about 4 M points, 1 to 64 segments.
fn fft_batch(l: usize) -> usize {
    ((1usize << 22) / l.max(1)).clamp(1, 64)
}

use crate::cwt::upload;
use crate::device::Gpu;
use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use crate::masks::DeviceBands;
use crate::GpuReal;
use cudarc::cufft::sys::cufftType;
use cudarc::cufft::CudaFft;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg};
use std::sync::Arc;

pub(crate) struct CufftGroup<T: GpuReal> {
    pub l: usize,
    v: usize,
    segments: usize,
    origin: i64,
    h: CudaSlice<T>,
    hoff: CudaSlice<i64>,
    blo: CudaSlice<i32>,
    blen: CudaSlice<i32>,
    frow: CudaSlice<i32>,
    pub nf: usize,
    batch: usize,
    /// Segments per cuFFT call.
    calls_of: usize,
    seg: CudaSlice<T>,
    work: CudaSlice<T>,
    /// `calls_of` transforms of `l` points.
    fft: CudaFft,
    stream: Arc<CudaStream>,
}

fn cufft_err(what: &str) -> impl Fn(cudarc::cufft::result::CufftError) -> CudaError + '_ {
    move |e| CudaError::Cufft {
        what: what.to_string(),
        detail: format!("{e:?}"),
    }
}

fn plan<T: GpuReal>(
    stream: &Arc<CudaStream>,
    l: usize,
    batch: usize,
) -> Result<CudaFft, CudaError> {
    let kind = if std::mem::size_of::<T>() == 4 {
        cufftType::CUFFT_C2C
    } else {
        cufftType::CUFFT_Z2Z
    };
    CudaFft::plan_1d(l as i32, kind, batch as i32, stream.clone()).map_err(cufft_err(&format!(
        "planning {batch} transforms of {l} points"
    )))
}

/// In-place transforms of the first `count` segments of `buf` (segments
/// of `l` complex values), `per_call` a call, the last call running into
/// the padding `buf` has for it.
fn exec<T: GpuReal>(
    stream: &Arc<CudaStream>,
    fft: &CudaFft,
    buf: &mut CudaSlice<T>,
    (l, count, per_call): (usize, usize, usize),
    inverse: bool,
) -> Result<(), CudaError> {
    let (base, _sync) = buf.device_ptr_mut(stream);
    let dir = if inverse { 1 } else { -1 };
    let bytes = 2 * std::mem::size_of::<T>() * l;
    for g in (0..count).step_by(per_call) {
        let ptr = base + (g * bytes) as u64;
        // SAFETY: `per_call` segments from g fit `buf` (sized in `new` to
        // whole calls); in place on the plan's stream.
        let r = unsafe {
            if std::mem::size_of::<T>() == 4 {
                cudarc::cufft::result::exec_c2c(fft.handle(), ptr as *mut _, ptr as *mut _, dir)
            } else {
                cudarc::cufft::result::exec_z2z(fft.handle(), ptr as *mut _, ptr as *mut _, dir)
            }
        };
        r.map_err(cufft_err("running a batched FFT"))?;
    }
    Ok(())
}

impl<T: GpuReal> CufftGroup<T> {
    /// `bands` and `rows[q]`: the filters' correlation bands (size `l`, never
    /// stored dense) and each one's output row.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        stream: Arc<CudaStream>,
        l: usize,
        v: usize,
        out_len: usize,
        origin: i64,
        bands: DeviceBands<T>,
        rows: &[i32],
    ) -> Result<Self, CudaError> {
        // SAFETY: only tries to dlopen the library.
        if !unsafe { cudarc::cufft::sys::is_culib_present() } {
            return Err(CudaError::NoCufft);
        }
        let segments = out_len.div_ceil(v);
        let calls_of = fft_batch(l);
        let whole = |n: usize| n.div_ceil(calls_of) * calls_of;
        let nf = rows.len();
        let per_scale = segments * l * 2 * std::mem::size_of::<T>();
        let free = gpu.free_mem()?;
        let budget = (free / 4).min(1 << 30);
        let batch = (budget / per_scale).clamp(1, nf);
        crate::cwt::check_free(gpu, ((batch + 1) * per_scale) as u128)?;
        let alloc = |n: usize| {
            gpu.stream
                .alloc_zeros::<T>(n)
                .during(|| format!("allocating {n} values for cuFFT overlap-save"))
        };
        let seg = alloc(whole(segments) * l * 2)?;
        let work = alloc(whole(batch * segments) * l * 2)?;
        let fft = plan::<T>(&stream, l, calls_of)?;
        Ok(CufftGroup {
            l,
            v,
            segments,
            origin,
            h: bands.h,
            hoff: bands.hoff,
            blo: bands.blo,
            blen: bands.blen,
            frow: upload(gpu, rows)?,
            nf,
            batch,
            calls_of,
            seg,
            work,
            fft,
            stream,
        })
    }

    pub fn segments(&self) -> usize {
        self.segments
    }

    /// Outputs per segment.
    pub fn stride(&self) -> usize {
        self.v
    }

    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &mut self,
        gpu: &Gpu,
        (xr, xi, cx): (&CudaSlice<T>, &CudaSlice<T>, bool),
        oc: i32,
        (col_lo, col_hi): (i64, i64),
        hop: usize,
        ncols_out: usize,
        out: &CudaSlice<T>,
    ) -> Result<(), CudaError> {
        let (l, v, s) = (self.l as i32, self.v as i32, self.segments as i32);
        let inst = format!("GATHER(kernel, {}, {})", T::CUDA, cx as i32);
        let f = gpu.function(Kernel::OlsCufft, &inst, 0)?;
        let xlen = xr.len() as i64;
        // Segments start col_lo columns before the first output.
        let origin = self.origin - col_lo;
        let cfg = LaunchConfig {
            grid_dim: (self.l.div_ceil(256) as u32, self.segments as u32, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = self.stream.launch_builder(&f);
        b.arg(xr)
            .arg(xi)
            .arg(&xlen)
            .arg(&origin)
            .arg(&l)
            .arg(&v)
            .arg(&self.seg);
        // SAFETY: matches GATHER; seg holds segments x L complex values.
        unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        exec::<T>(
            &self.stream,
            &self.fft,
            &mut self.seg,
            (self.l, self.segments, self.calls_of),
            false,
        )?;
        let prod = gpu.function(
            Kernel::OlsCufft,
            &format!("PRODUCT(kernel, {})", T::CUDA),
            0,
        )?;
        let store_inst = format!("STORE(kernel, {}, {oc})", T::CUDA);
        let store = gpu.function(Kernel::OlsCufft, &store_inst, 0)?;
        let (hop_i, ncols) = (hop as i32, ncols_out as i64);
        let mut q0 = 0usize;
        while q0 < self.nf {
            let nb = self.batch.min(self.nf - q0);
            let q0i = q0 as i32;
            let cfg = LaunchConfig {
                grid_dim: (self.l.div_ceil(256) as u32, self.segments as u32, nb as u32),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = self.stream.launch_builder(&prod);
            b.arg(&self.seg)
                .arg(&l)
                .arg(&s)
                .arg(&self.h)
                .arg(&self.hoff)
                .arg(&self.blo)
                .arg(&self.blen)
                .arg(&q0i)
                .arg(&self.work);
            // SAFETY: matches PRODUCT; nb <= batch scales fit `work`.
            unsafe { b.launch(cfg) }.during(|| "launching the cuFFT product".to_string())?;
            exec::<T>(
                &self.stream,
                &self.fft,
                &mut self.work,
                (self.l, nb * self.segments, self.calls_of),
                true,
            )?;
            let cfg = LaunchConfig {
                grid_dim: (self.v.div_ceil(256) as u32, self.segments as u32, nb as u32),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = self.stream.launch_builder(&store);
            b.arg(&self.work)
                .arg(&l)
                .arg(&s)
                .arg(&v)
                .arg(&self.frow)
                .arg(&q0i)
                .arg(&col_lo)
                .arg(&col_hi)
                .arg(&hop_i)
                .arg(&ncols)
                .arg(out);
            // SAFETY: matches STORE; rows and columns are within the output.
            unsafe { b.launch(cfg) }.during(|| format!("launching {store_inst}"))?;
            q0 += nb;
        }
        Ok(())
    }
}
