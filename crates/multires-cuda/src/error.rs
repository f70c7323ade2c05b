use cudarc::driver::DriverError;

/// Why the CUDA backend cannot run (or failed); every case names what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CudaError {
    #[error("no CUDA driver: libcuda could not be loaded (install the NVIDIA driver, or use --device cpu)")]
    NoDriver,
    #[error("no CUDA device: {0} (use --device cpu)")]
    NoDevice(String),
    #[error("NVRTC (libnvrtc.so) could not be loaded: add the CUDA toolkit's lib64 folder (e.g. /usr/local/cuda/lib64) to LD_LIBRARY_PATH, or use --device cpu")]
    NoNvrtc,
    #[error("cuFFT (libcufft.so) could not be loaded: add the CUDA toolkit's lib64 folder to LD_LIBRARY_PATH, or use --device cpu")]
    NoCufft,
    #[error("CUDA call failed while {what}: {source}")]
    Driver {
        what: String,
        #[source]
        source: DriverError,
    },
    #[error("NVRTC could not compile kernel {kernel} (options {options}):\n{log}")]
    Compile {
        kernel: String,
        options: String,
        log: String,
    },
    #[error("cuFFT failed while {what}: {detail}")]
    Cufft { what: String, detail: String },
    #[error("{0}")]
    Unsupported(String),
    /// The probe's failure, remembered for the process (its message says why).
    #[error("{0}")]
    Unavailable(String),
    #[error("the GPU has {} free but this job needs {} on the device (outputs larger than the GPU go through in windows; this part must fit): use --device cpu, fewer scales or a larger --hop", multires::memory::human_bytes(*free as u64), multires::memory::human_bytes(*need as u64))]
    OutOfMemory { need: u128, free: u128 },
    #[error("a device memory limit of {} (--gpu-mem-limit) is below the {} that two batches (of rows, or of bricks) need on the device: raise it", multires::memory::human_bytes(*limit as u64), multires::memory::human_bytes(*need as u64))]
    MemoryLimit { need: u128, limit: u128 },
    #[error(transparent)]
    Cwt(#[from] multires::CwtError),
    #[error(transparent)]
    Fir(#[from] multires::fir::FirError),
    #[error(transparent)]
    Dwt(#[from] multires::dwt::DwtError),
    #[error(transparent)]
    Codec(#[from] multires::codec::CodecError),
}

/// Adds what was being done to a driver error.
pub(crate) trait Context<T> {
    fn during(self, what: impl FnOnce() -> String) -> Result<T, CudaError>;
}

impl<T> Context<T> for Result<T, DriverError> {
    fn during(self, what: impl FnOnce() -> String) -> Result<T, CudaError> {
        self.map_err(|source| CudaError::Driver {
            what: what(),
            source,
        })
    }
}
