//! Where plans execute. The CPU backend is always present; the CUDA backend
//! (crates/multires-cuda) plugs in behind the same trait.

use crate::cwt::plan::Progress;
use crate::cwt::{CwtError, CwtPlan};
use crate::cwt::{CwtSlice, CwtValues};
use crate::fir::{FilterBank, FirError, FirOptions, FirRecipe, FirValues};
use crate::signal::Signal;
use crate::CwtOutput;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    /// CUDA when a usable device exists, else the CPU.
    #[default]
    Auto,
    Cpu,
    Cuda,
}

impl FromStr for Device {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Device::Auto),
            "cpu" => Ok(Device::Cpu),
            "cuda" | "gpu" => Ok(Device::Cuda),
            _ => Err(format!("unknown device '{s}': expected auto, cpu or cuda")),
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Device::Auto => "auto",
            Device::Cpu => "cpu",
            Device::Cuda => "cuda",
        })
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    #[error(
        "this job has no CUDA backend yet (the DWT runs on the CPU); use --device cpu (or auto)"
    )]
    CudaUnavailable,
    /// A GPU backend's own failure (no device, a compile or launch error), with its message.
    #[error("{0}")]
    Gpu(Box<dyn std::error::Error + Send + Sync>),
    #[error(transparent)]
    Cwt(#[from] CwtError),
    #[error(transparent)]
    Fir(#[from] FirError),
}

/// What every backend can run.
pub trait Backend: Send + Sync {
    fn name(&self) -> &'static str;
    fn cwt(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        progress: Option<Progress>,
    ) -> Result<CwtOutput, BackendError>;
    /// The CWT into an output the caller holds (a stream reuses one buffer).
    fn cwt_into(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        values: &mut CwtValues,
    ) -> Result<(), BackendError>;
    /// The CWT into memory the caller owns (an output file's mapped
    /// pages), row-major scales x columns of the plan's `output_dtype`.
    fn cwt_into_slice(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        out: CwtSlice<'_>,
        progress: Option<Progress>,
    ) -> Result<(), BackendError>;
    fn fir(
        &self,
        signal: &Signal,
        filters: &FilterBank,
        options: &FirOptions,
    ) -> Result<(FirValues, FirRecipe), BackendError>;
    /// How the last CWT was computed, where the backend plans on its own
    /// (the GPU's per-scale choice); None where the CPU plan's recipe says it.
    fn last_explain(&self) -> Option<String> {
        None
    }
}

/// Multi-threaded CPU execution (rayon's global pool).
#[derive(Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn cwt(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        progress: Option<Progress>,
    ) -> Result<CwtOutput, BackendError> {
        Ok(plan.execute(signal, progress)?)
    }
    fn cwt_into(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        values: &mut CwtValues,
    ) -> Result<(), BackendError> {
        Ok(plan.execute_into(signal, values, None)?)
    }
    fn cwt_into_slice(
        &self,
        plan: &CwtPlan,
        signal: &Signal,
        out: CwtSlice<'_>,
        progress: Option<Progress>,
    ) -> Result<(), BackendError> {
        Ok(plan.execute_into_slice(signal, out, progress)?)
    }
    fn fir(
        &self,
        signal: &Signal,
        filters: &FilterBank,
        options: &FirOptions,
    ) -> Result<(FirValues, FirRecipe), BackendError> {
        Ok(crate::fir::fir(signal, filters, options)?)
    }
}

/// The CPU-only selection, for jobs without a GPU backend (the DWT); the
/// CUDA-aware selection is `multires_cuda::select`.
pub fn select(device: Device) -> Result<(Box<dyn Backend>, Option<String>), BackendError> {
    match device {
        Device::Cpu => Ok((Box::new(CpuBackend), None)),
        Device::Cuda => Err(BackendError::CudaUnavailable),
        Device::Auto => Ok((
            Box::new(CpuBackend),
            Some("device auto: this job runs on the CPU".into()),
        )),
    }
}
