//! The Python extension `multires._multires`: the engine's CWT, FIR bank,
//! DWT and codec over numpy arrays. The Python package (python/multires)
//! gives them PyWavelets' and ssqueezepy's names and argument conventions;
//! this layer only moves arrays and maps errors.

mod codec;
mod cwt;
mod dlpack;
mod dwt;

use multires::backend::{Backend, BackendError, CpuBackend, Device};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// An engine error as the Python exception a user expects: bad input is a
/// ValueError, a size beyond memory a MemoryError, a GPU failure a
/// RuntimeError; the message is the engine's own.
pub(crate) fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

pub(crate) fn cwt_err(e: multires::CwtError) -> PyErr {
    match e {
        multires::CwtError::TooLarge { .. } => PyMemoryError::new_err(e.to_string()),
        e => value_err(e),
    }
}

pub(crate) fn fir_err(e: multires::fir::FirError) -> PyErr {
    match e {
        multires::fir::FirError::TooLarge { .. } => PyMemoryError::new_err(e.to_string()),
        e => value_err(e),
    }
}

pub(crate) fn backend_err(e: BackendError) -> PyErr {
    match e {
        BackendError::Cwt(e) => cwt_err(e),
        BackendError::Fir(e) => fir_err(e),
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

pub(crate) fn cuda_err(e: multires_cuda::CudaError) -> PyErr {
    PyRuntimeError::new_err(format!("GPU: {e}"))
}

pub(crate) fn codec_err(e: multires::codec::CodecError) -> PyErr {
    use multires::codec::CodecError;
    match e {
        CodecError::Io { .. } => PyOSError::new_err(e.to_string()),
        e => value_err(e),
    }
}

pub(crate) fn type_err(e: impl std::fmt::Display) -> PyErr {
    PyTypeError::new_err(e.to_string())
}

/// Parses a user-facing enum name, as a ValueError naming the choices.
pub(crate) fn parse<T: std::str::FromStr<Err = String>>(s: &str) -> PyResult<T> {
    s.parse::<T>().map_err(value_err)
}

/// The backend for `device` ('auto', 'cpu', 'cuda'), as the CLI picks it:
/// 'auto' is the GPU when one can be used, else the CPU.
pub(crate) fn backend(device: &str) -> PyResult<(Box<dyn Backend>, bool)> {
    let d: Device = parse(device)?;
    if d == Device::Cpu {
        return Ok((Box::new(CpuBackend), false));
    }
    let (b, _) = multires_cuda::select(d).map_err(backend_err)?;
    let gpu = b.name() == "cuda";
    Ok((b, gpu))
}

/// The thread pool the engine's CPU work runs in, when the user chose a
/// size (`set_num_threads`); else rayon's global pool (RAYON_NUM_THREADS
/// or every core).
static POOL: std::sync::RwLock<Option<std::sync::Arc<rayon::ThreadPool>>> =
    std::sync::RwLock::new(None);

/// Runs engine work with the GIL released, in the chosen pool.
pub(crate) fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    let pool = POOL.read().unwrap_or_else(|p| p.into_inner()).clone();
    py.detach(|| match pool {
        Some(p) => p.install(f),
        None => f(),
    })
}

/// Sets the number of CPU threads the engine uses (0: back to the
/// default, every core or RAYON_NUM_THREADS). At most 4 a core.
#[pyfunction]
fn set_num_threads(n: usize) -> PyResult<()> {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if n > 4 * cores {
        return Err(value_err(format!(
            "{n} threads on {cores} cores: at most {} (4 a core) are accepted",
            4 * cores
        )));
    }
    let pool = if n == 0 {
        None
    } else {
        Some(std::sync::Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| PyRuntimeError::new_err(format!("cannot start {n} threads: {e}")))?,
        ))
    };
    *POOL.write().unwrap_or_else(|p| p.into_inner()) = pool;
    Ok(())
}

/// The number of CPU threads the engine uses.
#[pyfunction]
fn get_num_threads() -> usize {
    POOL.read()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map_or_else(rayon::current_num_threads, |p| p.current_num_threads())
}

/// Whether a CUDA device can be used (driver, NVRTC and a GPU found).
#[pyfunction]
fn cuda_available() -> bool {
    multires_cuda::gpu().is_ok()
}

/// Why the CUDA backend cannot be used, or None when it can.
#[pyfunction]
fn cuda_unavailable_reason() -> Option<String> {
    multires_cuda::gpu().err().map(|e| e.to_string())
}

/// The GPU's name, or None without one.
#[pyfunction]
fn cuda_device_name() -> Option<String> {
    multires_cuda::gpu().ok().map(|g| g.info.name.clone())
}

#[pymodule]
fn _multires(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(cuda_available, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_unavailable_reason, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_device_name, m)?)?;
    cwt::register(m)?;
    dwt::register(m)?;
    codec::register(m)?;
    dlpack::register(m)?;
    Ok(())
}
