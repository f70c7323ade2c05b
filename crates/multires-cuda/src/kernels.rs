//! The `.cu` sources, embedded, and their compilation by NVRTC. NVRTC has no
//! in-memory headers, so common.cuh is prepended; each program instantiates
//! only the one template the caller needs, so compiles stay short.

use crate::error::{Context, CudaError};
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
use std::sync::Arc;

const COMMON: &str = include_str!("../kernels/common.cuh");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Seed 000: small masks together, long masks in pieces (cwt_direct.cu).
    CwtDirect,
    /// Seed 001: the fused shared-memory overlap-save (ols_fft.cu).
    OlsFft,
    /// The cuFFT-based overlap-save: gather, product, store (ols_cufft.cu).
    OlsCufft,
}

impl Kernel {
    pub fn file(self) -> &'static str {
        match self {
            Kernel::CwtDirect => "cwt_direct.cu",
            Kernel::OlsFft => "ols_fft.cu",
            Kernel::OlsCufft => "ols_cufft.cu",
        }
    }
    fn source(self) -> &'static str {
        match self {
            Kernel::CwtDirect => include_str!("../kernels/cwt_direct.cu"),
            Kernel::OlsFft => include_str!("../kernels/ols_fft.cu"),
            Kernel::OlsCufft => include_str!("../kernels/ols_cufft.cu"),
        }
    }
}

/// The name every instantiation gives its kernel.
pub const ENTRY: &str = "kernel";

pub fn compile(
    ctx: &Arc<CudaContext>,
    kernel: Kernel,
    instance: &str,
    (major, minor): (i32, i32),
) -> Result<CudaFunction, CudaError> {
    let src = format!("{COMMON}\n{}\n{instance}\n", kernel.source());
    let options = vec![
        format!("--gpu-architecture=compute_{major}{minor}"),
        "-std=c++17".to_string(),
    ];
    let opts = CompileOptions {
        options: options.clone(),
        name: Some(kernel.file().to_string()),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(src, opts).map_err(|e| match e {
        CompileError::CompileError { log, .. } => CudaError::Compile {
            kernel: format!("{} [{instance}]", kernel.file()),
            options: options.join(" "),
            log: log.to_string_lossy().into_owned(),
        },
        other => CudaError::Compile {
            kernel: format!("{} [{instance}]", kernel.file()),
            options: options.join(" "),
            log: other.to_string(),
        },
    })?;
    let module = ctx
        .load_module(ptx)
        .during(|| format!("loading the PTX of {} [{instance}]", kernel.file()))?;
    module
        .load_function(ENTRY)
        .during(|| format!("finding the entry of {} [{instance}]", kernel.file()))
}
