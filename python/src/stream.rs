//! CWT and FIR streams over numpy chunks: each push returns the columns
//! that are final so far (bit for bit the whole transform's), with the GIL
//! released while the engine works.

use crate::cwt::{cwt_options, filter_bank};
use crate::{cuda_err, cwt_err, fir_err, parse, value_err};
use multires::backend::Device;
use multires::cwt::{CwtValues, Precision};
use multires::fir::{FirOptions, FirStream, FirValues};
use multires::{CwtStream, Signal};
use multires_cuda::CudaCwtStream;
use num_complex::Complex64;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;

/// A 1-D chunk of any float or complex dtype, as the engine's signal.
fn chunk_signal(x: &Bound<'_, PyAny>) -> PyResult<Signal> {
    if let Ok(a) = x.extract::<PyReadonlyArray1<f64>>() {
        return Ok(Signal::real(a.as_array().to_vec()));
    }
    if let Ok(a) = x.extract::<PyReadonlyArray1<f32>>() {
        return Ok(Signal::real(
            a.as_array().iter().map(|&v| v as f64).collect(),
        ));
    }
    if let Ok(a) = x.extract::<PyReadonlyArray1<Complex64>>() {
        return Ok(Signal::complex(a.as_array().to_vec()));
    }
    if let Ok(a) = x.extract::<PyReadonlyArray1<num_complex::Complex32>>() {
        return Ok(Signal::complex(
            a.as_array()
                .iter()
                .map(|c| Complex64::new(c.re as f64, c.im as f64))
                .collect(),
        ));
    }
    Err(crate::type_err(
        "a chunk must be a 1-D float32, float64, complex64 or complex128 array",
    ))
}

fn cwt_values<'py>(py: Python<'py>, v: CwtValues) -> Bound<'py, PyAny> {
    match v {
        CwtValues::Complex32(a) => a.into_pyarray(py).into_any(),
        CwtValues::Complex64(a) => a.into_pyarray(py).into_any(),
        CwtValues::Real32(a) => a.into_pyarray(py).into_any(),
        CwtValues::Real64(a) => a.into_pyarray(py).into_any(),
        // 16-bit floats' bits; the Python class views them.
        CwtValues::Half(a, _) => a.into_pyarray(py).into_any(),
    }
}

fn fir_values<'py>(py: Python<'py>, v: FirValues) -> Bound<'py, PyAny> {
    match v {
        FirValues::Real(a) => a.into_pyarray(py).into_any(),
        FirValues::Complex(a) => a.into_pyarray(py).into_any(),
    }
}

/// A CWT stream on the CPU or the GPU (device state in float32 or float64).
enum AnyStream {
    Cpu(CwtStream),
    Gpu32(CudaCwtStream<f32>),
    Gpu64(CudaCwtStream<f64>),
}

impl AnyStream {
    fn push(&mut self, chunk: &Signal) -> PyResult<CwtValues> {
        match self {
            AnyStream::Cpu(s) => s.push(chunk).map_err(cwt_err),
            AnyStream::Gpu32(s) => s.push(chunk).map_err(cuda_err),
            AnyStream::Gpu64(s) => s.push(chunk).map_err(cuda_err),
        }
    }
    fn finish(self) -> PyResult<CwtValues> {
        match self {
            AnyStream::Cpu(s) => s.finish().map_err(cwt_err),
            AnyStream::Gpu32(s) => s.finish().map_err(cuda_err),
            AnyStream::Gpu64(s) => s.finish().map_err(cuda_err),
        }
    }
    fn latency(&self) -> usize {
        match self {
            AnyStream::Cpu(s) => s.latency(),
            AnyStream::Gpu32(s) => s.latency(),
            AnyStream::Gpu64(s) => s.latency(),
        }
    }
}

/// The engine's CWT stream; `multires.CwtStream` wraps it.
#[pyclass(module = "multires._multires", name = "CwtStreamCore")]
pub(crate) struct CwtStreamCore {
    /// None once finished.
    stream: Option<AnyStream>,
    /// The CPU stream's recipe and memory bound (a GPU stream has its own plan).
    explain: String,
    memory_bound: u64,
    device: &'static str,
    /// The columns' numpy dtype (bfloat16's bits come as uint16).
    dtype: &'static str,
}

#[pymethods]
impl CwtStreamCore {
    #[new]
    #[pyo3(signature = (complex_signal, scales, wavelet, output, precision, boundary, normalization, hop, algorithm, fs=None, allow_nonfinite=false, half=None, device="cpu", chunk=65536))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        complex_signal: bool,
        scales: Vec<f64>,
        wavelet: &str,
        output: &str,
        precision: &str,
        boundary: &str,
        normalization: &str,
        hop: usize,
        algorithm: &str,
        fs: Option<f64>,
        allow_nonfinite: bool,
        half: Option<&str>,
        device: &str,
        chunk: usize,
    ) -> PyResult<Self> {
        let device: Device = parse(device)?;
        let o = cwt_options(
            &scales,
            wavelet,
            [output, precision, boundary, normalization, algorithm],
            hop,
            fs,
            allow_nonfinite,
            half,
        )?;
        let cpu = CwtStream::new(o.clone(), complex_signal).map_err(cwt_err)?;
        let explain = cpu.recipe().to_string();
        let memory_bound = cpu.memory_bound();
        let dtype = cpu.output_dtype();
        // 'auto' takes the GPU where one is usable and the output is not
        // 16-bit (GPU windows store float32 or float64).
        let gpu = match device {
            Device::Cpu => None,
            Device::Auto if o.half.is_some() => None,
            Device::Auto => multires_cuda::gpu().ok(),
            Device::Cuda => Some(multires_cuda::gpu().map_err(cuda_err)?),
        };
        let stream = match gpu {
            None => AnyStream::Cpu(cpu),
            Some(g) => {
                let p = o.precision;
                crate::run(py, move || match p {
                    Precision::F32 => {
                        CudaCwtStream::new(g, o, complex_signal, chunk).map(AnyStream::Gpu32)
                    }
                    Precision::F64 => {
                        CudaCwtStream::new(g, o, complex_signal, chunk).map(AnyStream::Gpu64)
                    }
                })
                .map_err(cuda_err)?
            }
        };
        let device = if matches!(stream, AnyStream::Cpu(_)) {
            "cpu"
        } else {
            "cuda"
        };
        Ok(CwtStreamCore {
            stream: Some(stream),
            explain,
            memory_bound,
            device,
            dtype,
        })
    }

    fn push<'py>(&mut self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let chunk = chunk_signal(x)?;
        let s = self.stream.as_mut().ok_or_else(finished)?;
        let v = crate::run(py, || s.push(&chunk))?;
        Ok(cwt_values(py, v))
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.stream.take().ok_or_else(finished)?;
        let v = crate::run(py, || s.finish())?;
        Ok(cwt_values(py, v))
    }

    #[getter]
    fn latency(&self) -> usize {
        self.stream.as_ref().map_or(0, |s| s.latency())
    }

    #[getter]
    fn memory_bound(&self) -> u64 {
        self.memory_bound
    }

    /// Where the stream runs: 'cpu' or 'cuda'.
    #[getter]
    fn device(&self) -> &'static str {
        self.device
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype
    }

    fn explain(&self) -> String {
        self.explain.clone()
    }
}

fn finished() -> PyErr {
    value_err("the stream is finished: finish() returned its last columns; start a new stream")
}

/// The engine's FIR stream; `multires.FirStream` wraps it.
#[pyclass(module = "multires._multires", name = "FirStreamCore")]
pub(crate) struct FirStreamCore {
    stream: Option<FirStream>,
}

#[pymethods]
impl FirStreamCore {
    #[new]
    #[pyo3(signature = (complex_signal, filters, mode, post, algorithm, allow_nonfinite=false))]
    fn new(
        complex_signal: bool,
        filters: &Bound<'_, PyAny>,
        mode: &str,
        post: &str,
        algorithm: &str,
        allow_nonfinite: bool,
    ) -> PyResult<Self> {
        let bank = filter_bank(filters)?;
        let options = FirOptions {
            mode: parse(mode)?,
            post: parse(post)?,
            algorithm: parse(algorithm)?,
            allow_nonfinite,
            memory_limit: None,
        };
        let stream = FirStream::new(bank, options, complex_signal).map_err(fir_err)?;
        Ok(FirStreamCore {
            stream: Some(stream),
        })
    }

    fn push<'py>(&mut self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let chunk = chunk_signal(x)?;
        let s = self.stream.as_mut().ok_or_else(finished)?;
        let v = crate::run(py, || s.push(&chunk)).map_err(fir_err)?;
        Ok(fir_values(py, v))
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.stream.take().ok_or_else(finished)?;
        let v = crate::run(py, || s.finish()).map_err(fir_err)?;
        Ok(fir_values(py, v))
    }

    #[getter]
    fn samples(&self) -> usize {
        self.stream.as_ref().map_or(0, |s| s.samples())
    }

    #[getter]
    fn latency(&self) -> usize {
        self.stream.as_ref().map_or(0, |s| s.latency())
    }

    fn explain(&self) -> String {
        self.stream
            .as_ref()
            .map_or_else(String::new, |s| s.recipe().to_string())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CwtStreamCore>()?;
    m.add_class::<FirStreamCore>()?;
    Ok(())
}
