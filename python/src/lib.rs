//! The Python extension `multires._multires`: the engine's CWT, FIR bank,
//! DWT and codec over numpy arrays. The Python package (python/multires)
//! gives them PyWavelets' and ssqueezepy's names and argument conventions;
//! this layer only moves arrays and maps errors.

/// mimalloc keeps the pages of freed outputs for the next call: with the
/// system allocator every call's outputs were fresh pages the kernel had
/// to zero, half of a wavedec's time on 2^24 samples (2 cores, VM).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod codec;
mod cwt;
mod dlpack;
mod dwt;
mod packets;
mod shrink;
mod stream;
mod timefreq;
mod undecimated;

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
        BackendError::Gpu(e) => match e.downcast::<multires_cuda::CudaError>() {
            Ok(e) => cuda_err(*e),
            Err(e) => PyRuntimeError::new_err(format!("GPU: {e}")),
        },
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// A GPU backend's error: the engine's own checks (bad input) keep their
/// Python types; device memory is a MemoryError; the rest RuntimeError.
pub(crate) fn cuda_err(e: multires_cuda::CudaError) -> PyErr {
    use multires_cuda::CudaError as E;
    match e {
        E::Cwt(e) => cwt_err(e),
        E::Fir(e) => fir_err(e),
        E::Dwt(e) => value_err(e),
        E::Codec(e) => codec_err(e),
        E::OutOfMemory { .. } | E::MemoryLimit { .. } => {
            PyMemoryError::new_err(format!("GPU: {e}"))
        }
        e => PyRuntimeError::new_err(format!("GPU: {e}")),
    }
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

/// A zero-filled array for the engine to write into: its memory comes
/// from the engine's allocator, which asks the kernel for huge pages, so
/// first touch faults 2 MB at a time. numpy's own `np.empty` of a 164 MB
/// CWT output faulted 4 KB pages from two writing threads: 377 ms against
/// 44 ms into a reused buffer (cwt-seed, 2 cores).
#[pyfunction]
fn empty<'py>(py: Python<'py>, shape: Vec<usize>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    use numpy::IntoPyArray;
    let n = shape
        .iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or_else(|| {
            PyMemoryError::new_err(format!("an array of shape {shape:?} is too large"))
        })?;
    macro_rules! make {
        ($t:ty) => {{
            let bytes = (n as u128) * std::mem::size_of::<$t>() as u128;
            let limit = multires::memory::default_limit() as u128;
            if bytes > limit {
                return Err(PyMemoryError::new_err(format!(
                    "an output of shape {shape:?} needs {}, more than the {} of memory available",
                    multires::memory::human_bytes(u64::try_from(bytes).unwrap_or(u64::MAX)),
                    multires::memory::human_bytes(limit as u64)
                )));
            }
            let v = multires::memory::zeroed_vec::<$t>(n);
            let a =
                ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), v).map_err(value_err)?;
            Ok(a.into_pyarray(py).into_any())
        }};
    }
    match dtype {
        "float32" => make!(f32),
        "float64" => make!(f64),
        "complex64" => make!(num_complex::Complex32),
        "complex128" => make!(num_complex::Complex64),
        // 16-bit floats' bits (float16 and bfloat16 outputs, viewed in Python).
        "uint16" => make!(u16),
        d => Err(type_err(format!("no engine arrays of dtype {d}"))),
    }
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

#[pymodule]
fn _multires(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // A first GPU run ever says why it takes a second (on stderr, as the CLI).
    multires_cuda::kernels::set_compile_notice(|m| eprintln!("multires: {m}"));
    m.add_function(wrap_pyfunction!(cuda_available, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_unavailable_reason, m)?)?;
    cwt::register(m)?;
    dwt::register(m)?;
    undecimated::register(m)?;
    packets::register(m)?;
    shrink::register(m)?;
    codec::register(m)?;
    dlpack::register(m)?;
    timefreq::register(m)?;
    stream::register(m)?;
    Ok(())
}
