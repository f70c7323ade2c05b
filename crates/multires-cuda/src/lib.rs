//! The CUDA backend of multires (DESIGN.md, "GPU rules"): kernels are `.cu`
//! files under `kernels/`, embedded, compiled by NVRTC for the device on
//! first use and cached. cudarc loads the CUDA libraries at run time, so this
//! crate builds and its host-side tests run on machines without CUDA; there
//! every entry point answers a typed error instead.

pub mod codec;
mod cufft_ols;
pub mod cwt;
mod cwt_stream;
pub mod device;
pub mod dwt;
pub mod dwtn;
mod error;
pub mod fir;
pub mod kernels;
mod masks;
pub mod packets;
pub mod spectra;
pub mod stage;
pub mod transfer;
pub mod undecimated;
mod workers;

pub use cwt::{cwt_chunked, CudaCwt, GpuRecipe, GpuScale};
pub use cwt_stream::CudaCwtStream;
pub use device::{available, device_count, gpu, gpu_at, Gpu, GpuInfo};
pub use error::CudaError;
pub use fir::{fir_windowed, CudaFir};

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use multires::backend::{Backend, BackendError, CpuBackend, Device};
use multires::cwt::plan::Progress;
use multires::cwt::{CwtSlice, CwtValues, Precision};
use multires::fir::{FilterBank, FirOptions, FirRecipe, FirValues};
use multires::{CwtOutput, CwtPlan, Signal};
use std::sync::{Arc, Mutex};

/// The element types kernels are instantiated for.
pub trait GpuReal:
    multires::real::Real + DeviceRepr + ValidAsZeroBits + bytemuck::Zeroable + Unpin
{
    /// The CUDA type name.
    const CUDA: &'static str;
    /// The host array behind `values` as plain elements (complex: interleaved).
    fn values_slice(values: &mut CwtValues, complex: bool) -> Result<&mut [Self], CudaError>;
}

/// Seed 000 III-A: every mask of `plan` sampled on the GPU into the packed
/// array (shortest first, as `plan.masks()` on the CPU), brought back.
pub fn gpu_masks(gpu: &Gpu, plan: &CwtPlan) -> Result<Vec<num_complex::Complex64>, CudaError> {
    masks::DeviceMasks::generate(gpu, plan)?.download(gpu)
}

pub(crate) fn strided() -> CudaError {
    CudaError::Unsupported("the output array is not contiguous".into())
}

impl GpuReal for f32 {
    const CUDA: &'static str = "float";
    fn values_slice(values: &mut CwtValues, complex: bool) -> Result<&mut [f32], CudaError> {
        match (values, complex) {
            (CwtValues::Complex32(a), true) => Ok(bytemuck::cast_slice_mut(
                a.as_slice_mut().ok_or_else(strided)?,
            )),
            (CwtValues::Real32(a), false) => a.as_slice_mut().ok_or_else(strided),
            (v, _) => Err(CudaError::Unsupported(format!(
                "a float32 transform cannot write into a {} array",
                v.dtype()
            ))),
        }
    }
}

impl GpuReal for f64 {
    const CUDA: &'static str = "double";
    fn values_slice(values: &mut CwtValues, complex: bool) -> Result<&mut [f64], CudaError> {
        match (values, complex) {
            (CwtValues::Complex64(a), true) => Ok(bytemuck::cast_slice_mut(
                a.as_slice_mut().ok_or_else(strided)?,
            )),
            (CwtValues::Real64(a), false) => a.as_slice_mut().ok_or_else(strided),
            (v, _) => Err(CudaError::Unsupported(format!(
                "a float64 transform cannot write into a {} array",
                v.dtype()
            ))),
        }
    }
}

fn gpu_err(e: CudaError) -> BackendError {
    match e {
        CudaError::Cwt(e) => BackendError::Cwt(e),
        CudaError::Fir(e) => BackendError::Fir(e),
        e => BackendError::Gpu(Box::new(e)),
    }
}

/// That `samples` values are whole rows of `n` and `outputs` holds `per`
/// output values for each (the batched CWT's and FIR's check).
pub(crate) fn check_rows(
    n: usize,
    per: usize,
    samples: usize,
    outputs: usize,
) -> Result<(), CudaError> {
    if n == 0 || !samples.is_multiple_of(n) || outputs != samples / n * per {
        return Err(CudaError::Unsupported(format!(
            "{samples} samples and {outputs} output values do not make rows of {n} samples and {per} values"
        )));
    }
    Ok(())
}

/// Where a GPU transform's coefficients go on the host: values of the
/// plan's precision, or 16-bit floats' bits.
enum HostOut<'a, T> {
    Plain(&'a mut [T]),
    Half(&'a mut [u16]),
}

/// Runs plans on the GPU. A CWT plan is moved to the device per call (masks
/// and spectra); callers that stream many signals hold a [`CudaCwt`] instead.
#[derive(Debug)]
pub struct CudaBackend {
    gpu: Arc<Gpu>,
    explain: Mutex<Option<String>>,
}

impl CudaBackend {
    pub fn new() -> Result<Self, CudaError> {
        Ok(CudaBackend {
            gpu: gpu()?,
            explain: Mutex::new(None),
        })
    }

    fn run_cwt<T: GpuReal>(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        values: &mut CwtValues,
    ) -> Result<(), CudaError> {
        let complex = plan.options().output == multires::cwt::OutputKind::Complex;
        let out = match values {
            CwtValues::Half(a, _) => HostOut::Half(a.as_slice_mut().ok_or_else(strided)?),
            v => HostOut::Plain(T::values_slice(v, complex)?),
        };
        self.run_cwt_into(plan, signal, out)
    }

    /// The transform into host memory the caller owns, through the
    /// page-locked ring (column windows when it does not fit the GPU).
    fn run_cwt_into<T: GpuReal>(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        out: HostOut<'_, T>,
    ) -> Result<(), CudaError> {
        // Outputs larger than half the free device memory go through in
        // column windows; two windows are in flight, and masks, spectra and
        // scratch need the rest.
        let opts = plan.options();
        let elem = if opts.output == multires::cwt::OutputKind::Complex {
            2
        } else {
            1
        };
        let row_bytes = opts.scales.len() * elem * std::mem::size_of::<T>();
        let free = self.gpu.free_mem()?;
        let cols = plan.columns();
        if row_bytes * cols > free / 2 {
            let chunk = (free / 6 / row_bytes.max(1)).max(1024) / 1024 * 1024;
            let HostOut::Plain(dst) = out else {
                return Err(CudaError::Unsupported(format!(
                    "a {} output larger than the GPU's memory (in column windows) is not supported; ask for float32 or a shorter signal",
                    plan.output_dtype()
                )));
            };
            cwt::cwt_chunked_into::<T>(self.gpu.clone(), plan, signal, dst, chunk)?;
            *self.explain.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!(
                "GPU plan on {}: the output does not fit the GPU; {} windows of {chunk} columns",
                self.gpu.info.name,
                cols.div_ceil(chunk)
            ));
            return Ok(());
        }
        let mut c = CudaCwt::<T>::new(self.gpu.clone(), plan)?;
        c.upload(plan, signal)?;
        c.launch()?;
        match out {
            HostOut::Plain(dst) => c.download_raw(dst)?,
            HostOut::Half(dst) => c.download_half(dst)?,
        }
        *self.explain.lock().unwrap_or_else(|p| p.into_inner()) = Some(c.recipe().to_string());
        Ok(())
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn cwt(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        progress: Option<Progress>,
    ) -> Result<CwtOutput, BackendError> {
        let mut values = CwtValues::zeroed_for(plan);
        self.cwt_into(plan, signal, &mut values)?;
        if let Some(p) = progress {
            let rows = plan.options().scales.len();
            p(rows, rows);
        }
        Ok(plan.describe(values))
    }

    fn cwt_into(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        values: &mut CwtValues,
    ) -> Result<(), BackendError> {
        match plan.options().precision {
            Precision::F32 => self.run_cwt::<f32>(plan, signal, values),
            Precision::F64 => self.run_cwt::<f64>(plan, signal, values),
        }
        .map_err(gpu_err)
    }

    fn cwt_into_slice(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        out: CwtSlice<'_>,
        progress: Option<Progress>,
    ) -> Result<(), BackendError> {
        plan.check_output(&out)?;
        let r = match out {
            CwtSlice::Complex32(o) => {
                self.run_cwt_into::<f32>(plan, signal, HostOut::Plain(bytemuck::cast_slice_mut(o)))
            }
            CwtSlice::Real32(o) => self.run_cwt_into::<f32>(plan, signal, HostOut::Plain(o)),
            CwtSlice::Complex64(o) => {
                self.run_cwt_into::<f64>(plan, signal, HostOut::Plain(bytemuck::cast_slice_mut(o)))
            }
            CwtSlice::Real64(o) => self.run_cwt_into::<f64>(plan, signal, HostOut::Plain(o)),
            CwtSlice::Half(o, _) => match plan.options().precision {
                Precision::F32 => self.run_cwt_into::<f32>(plan, signal, HostOut::Half(o)),
                Precision::F64 => self.run_cwt_into::<f64>(plan, signal, HostOut::Half(o)),
            },
        };
        r.map_err(gpu_err)?;
        if let Some(p) = progress {
            let rows = plan.options().scales.len();
            p(rows, rows);
        }
        Ok(())
    }

    fn fir(
        &self,
        signal: &Signal,
        filters: &FilterBank,
        options: &FirOptions,
    ) -> Result<(FirValues, FirRecipe), BackendError> {
        multires::fir::validate(signal, filters, options)?;
        let run = || -> Result<(FirValues, FirRecipe), CudaError> {
            // Outputs over a third of the free memory go through in windows.
            let (nf, m) = filters.dim();
            let (_, len) = multires::fir::output_range(signal.len(), m, options.mode);
            let elem = if signal.is_complex() || filters.is_complex() {
                16
            } else {
                8
            };
            let free = self.gpu.free_mem()?;
            if (nf * len * elem) as u128 + signal.len() as u128 * 16 > (free / 3) as u128 {
                let window = (free / 8 / (nf * elem).max(1)).max(4096);
                let r = fir::fir_windowed(self.gpu.clone(), signal, filters, options, window)?;
                *self.explain.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!(
                    "GPU FIR on {}: the output does not fit the GPU; {} windows of {window} columns",
                    self.gpu.info.name,
                    len.div_ceil(window)
                ));
                return Ok(r);
            }
            let mut f = CudaFir::<f64>::new(
                self.gpu.clone(),
                signal.len(),
                signal.is_complex(),
                filters,
                options,
            )?;
            f.upload(signal)?;
            f.launch()?;
            Ok((f.download()?, f.recipe().clone()))
        };
        run().map_err(gpu_err)
    }

    fn last_explain(&self) -> Option<String> {
        self.explain
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The backend for `device`: the GPU for `cuda` (an error naming why when
/// there is none), the GPU or else the CPU for `auto`, with a note saying which.
/// What `--device auto` says when it falls back to the CPU: nothing on a
/// machine without a GPU (the common case needs no line on every run),
/// and why when a GPU is there but cannot be used.
pub fn auto_fallback_note(why: &dyn std::fmt::Display) -> Option<String> {
    (device_count() > 0)
        .then(|| format!("device auto: the GPU cannot be used ({why}); running on the CPU"))
}

pub fn select(device: Device) -> Result<(Box<dyn Backend>, Option<String>), BackendError> {
    match device {
        Device::Cpu => Ok((Box::new(CpuBackend), None)),
        Device::Cuda => {
            let b = CudaBackend::new().map_err(gpu_err)?;
            Ok((Box::new(b), None))
        }
        Device::Auto => match CudaBackend::new() {
            Ok(b) => {
                let note = format!("device auto: running on the GPU ({})", b.gpu.info.name);
                Ok((Box::new(b), Some(note)))
            }
            Err(e) => Ok((Box::new(CpuBackend), auto_fallback_note(&e))),
        },
    }
}
