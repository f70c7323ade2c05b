//! Overlap-save through cuFFT: the in-project baseline, and the path for
//! masks too long for the shared-memory engine (segments beyond what shared
//! memory holds). Segments are transformed once; the scales go through in
//! batches: band-limited product, batched inverse cuFFTs, the store.
//!
//! Every cuFFT call transforms `FFT_BATCH` segments: cuFFT picks its
//! kernels by batch size, and 108 segments of 32768 points came out
//! 4e-7 apart from 9 (an H200, float32), so a window or a stream of a long
//! signal would not equal the in-memory run. With one batch size the bits
//! depend on the data only; the segment count is padded to a multiple.

/// Segments per cuFFT call (whatever the signal's length).
const FFT_BATCH: usize = 8;

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
    /// Segments rounded up to a multiple of FFT_BATCH: the stride of `seg`
    /// and `work` per scale.
    padded: usize,
    seg: CudaSlice<T>,
    work: CudaSlice<T>,
    /// FFT_BATCH transforms of `l` points.
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

/// In-place transforms of segments `first .. first + count` of `buf`
/// (segments of `l` complex values), FFT_BATCH a call; `count` is a
/// multiple of FFT_BATCH.
fn exec<T: GpuReal>(
    stream: &Arc<CudaStream>,
    fft: &CudaFft,
    buf: &mut CudaSlice<T>,
    (l, first, count): (usize, usize, usize),
    inverse: bool,
) -> Result<(), CudaError> {
    let (base, _sync) = buf.device_ptr_mut(stream);
    let dir = if inverse { 1 } else { -1 };
    let bytes = 2 * std::mem::size_of::<T>() * l;
    for g in (first..first + count).step_by(FFT_BATCH) {
        let ptr = base + (g * bytes) as u64;
        // SAFETY: FFT_BATCH segments from g fit `buf` (sized in `new` to a
        // multiple of FFT_BATCH segments); in place on the plan's stream.
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
        let padded = segments.div_ceil(FFT_BATCH) * FFT_BATCH;
        let nf = rows.len();
        let per_scale = padded * l * 2 * std::mem::size_of::<T>();
        let free = gpu.free_mem()?;
        let budget = (free / 4).min(1 << 30);
        let batch = (budget / per_scale).clamp(1, nf);
        crate::cwt::check_free(gpu, ((batch + 1) * per_scale) as u128)?;
        let alloc = |n: usize| {
            gpu.stream
                .alloc_zeros::<T>(n)
                .during(|| format!("allocating {n} values for cuFFT overlap-save"))
        };
        let seg = alloc(padded * l * 2)?;
        let work = alloc(batch * padded * l * 2)?;
        let fft = plan::<T>(&stream, l, FFT_BATCH)?;
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
            padded,
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
        // S: the per-scale stride of `work`, in segments.
        let (l, v, s) = (self.l as i32, self.v as i32, self.padded as i32);
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
            (self.l, 0, self.padded),
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
                (self.l, 0, nb * self.padded),
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
