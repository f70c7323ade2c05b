//! The CWT plan and the FIR bank over numpy arrays: a batch (rows of one
//! length) runs in one call with the GIL released, each row's coefficients
//! written by the engine straight into the output array's memory.

use crate::dlpack::{DType, DeviceArray, DeviceInput};
use crate::{backend, backend_err, cuda_err, cwt_err, fir_err, parse, value_err};
use multires::cwt::{CwtSlice, OutputKind, Precision};
use multires::fir::{FilterBank, FirOptions, FirValues};
use multires::{CwtOptions, Scale, Signal, Wavelet};
use multires_cuda::CudaCwt;
use ndarray::{ArrayView2, Axis};
use num_complex::{Complex32, Complex64};
use numpy::{
    IntoPyArray, PyArray3, PyArrayMethods, PyReadonlyArray2, PyReadwriteArray3,
    PyUntypedArrayMethods,
};

use pyo3::prelude::*;
use std::sync::{Arc, Mutex};

/// Rows of a batch, whatever their numpy dtype; each becomes the engine's
/// signal (real or complex float64) as it is read.
pub(crate) enum Rows<'py> {
    F32(PyReadonlyArray2<'py, f32>),
    F64(PyReadonlyArray2<'py, f64>),
    C64(PyReadonlyArray2<'py, Complex32>),
    C128(PyReadonlyArray2<'py, Complex64>),
}

/// The rows' memory, which the engine reads with the GIL released.
pub(crate) enum RowsView<'a> {
    F32(ArrayView2<'a, f32>),
    F64(ArrayView2<'a, f64>),
    C64(ArrayView2<'a, Complex32>),
    C128(ArrayView2<'a, Complex64>),
}

impl<'py> Rows<'py> {
    pub(crate) fn extract(x: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = x.extract() {
            return Ok(Rows::F64(a));
        }
        if let Ok(a) = x.extract() {
            return Ok(Rows::F32(a));
        }
        if let Ok(a) = x.extract() {
            return Ok(Rows::C128(a));
        }
        if let Ok(a) = x.extract() {
            return Ok(Rows::C64(a));
        }
        Err(crate::type_err(
            "expected a 2-D float32, float64, complex64 or complex128 array of rows",
        ))
    }

    pub(crate) fn view(&self) -> RowsView<'_> {
        match self {
            Rows::F32(a) => RowsView::F32(a.as_array()),
            Rows::F64(a) => RowsView::F64(a.as_array()),
            Rows::C64(a) => RowsView::C64(a.as_array()),
            Rows::C128(a) => RowsView::C128(a.as_array()),
        }
    }
}

impl RowsView<'_> {
    pub(crate) fn shape(&self) -> (usize, usize) {
        match self {
            RowsView::F32(a) => a.dim(),
            RowsView::F64(a) => a.dim(),
            RowsView::C64(a) => a.dim(),
            RowsView::C128(a) => a.dim(),
        }
    }

    /// Row `r` as the engine's signal.
    pub(crate) fn signal(&self, r: usize) -> Signal {
        match self {
            RowsView::F64(a) => Signal::real(a.row(r).to_vec()),
            RowsView::F32(a) => Signal::real(a.row(r).iter().map(|&v| v as f64).collect()),
            RowsView::C128(a) => Signal::complex(a.row(r).to_vec()),
            RowsView::C64(a) => Signal::complex(
                a.row(r)
                    .iter()
                    .map(|c| Complex64::new(c.re as f64, c.im as f64))
                    .collect(),
            ),
        }
    }
}

/// The transform's options from the Python layer's names: `names` are the
/// output, precision, boundary, normalization and algorithm (plans and
/// streams take the same ones).
pub(crate) fn cwt_options(
    scales: &[f64],
    wavelet: &str,
    [output, precision, boundary, normalization, algorithm]: [&str; 5],
    hop: usize,
    fs: Option<f64>,
    allow_nonfinite: bool,
    half: Option<&str>,
) -> PyResult<CwtOptions> {
    let w = Wavelet::from_name(wavelet).map_err(value_err)?;
    check_scales(scales)?;
    let mut o = CwtOptions::new(w, scales.iter().map(|&s| Scale::new(s)).collect());
    o.output = parse(output)?;
    o.precision = parse(precision)?;
    o.boundary = parse(boundary)?;
    o.normalization = parse(normalization)?;
    o.algorithm = parse(algorithm)?;
    o.hop = hop;
    o.sample_rate = fs;
    o.allow_nonfinite = allow_nonfinite;
    o.half = half.map(parse).transpose()?;
    Ok(o)
}

/// Scales (in samples) must be finite and positive: the first bad one, named.
pub(crate) fn check_scales(scales: &[f64]) -> PyResult<()> {
    if let Some((i, s)) = scales
        .iter()
        .enumerate()
        .find(|(_, s)| !(s.is_finite() && **s > 0.0))
    {
        return Err(value_err(format!(
            "scale {i} is {s}: scales must be finite and positive (in samples)"
        )));
    }
    Ok(())
}

fn check_signals() -> PyResult<()> {
    Python::attach(|py| py.check_signals())
}

enum GpuPlan {
    F32(CudaCwt<f32>),
    F64(CudaCwt<f64>),
}

/// A CWT planned once for signals of one length: masks, FFT plans and, on
/// the GPU, device buffers are reused by every call.
#[pyclass(module = "multires._multires", name = "CwtPlanCore", frozen)]
pub(crate) struct CwtPlanCore {
    plan: multires::CwtPlan,
    gpu: Option<Mutex<GpuPlan>>,
    device: String,
}

#[pymethods]
impl CwtPlanCore {
    #[new]
    #[pyo3(signature = (n, complex_signal, scales, wavelet, output, precision, boundary, normalization, hop, algorithm, device, fs=None, allow_nonfinite=false, half=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        n: usize,
        complex_signal: bool,
        scales: Vec<f64>,
        wavelet: &str,
        output: &str,
        precision: &str,
        boundary: &str,
        normalization: &str,
        hop: usize,
        algorithm: &str,
        device: &str,
        fs: Option<f64>,
        allow_nonfinite: bool,
        half: Option<&str>,
    ) -> PyResult<Self> {
        let o = cwt_options(
            &scales,
            wavelet,
            [output, precision, boundary, normalization, algorithm],
            hop,
            fs,
            allow_nonfinite,
            half,
        )?;
        let (_, on_gpu) = backend(device)?;
        let plan =
            crate::run(py, || multires::CwtPlan::new(o, n, complex_signal)).map_err(cwt_err)?;
        let gpu = match on_gpu.then(|| crate::run(py, || gpu_plan(&plan))) {
            Some(Ok(g)) => Some(Mutex::new(g)),
            // 'auto' falls back to the CPU when one signal's transform does
            // not fit on the GPU; 'cuda' says why it cannot run there.
            Some(Err(_)) if device.eq_ignore_ascii_case("auto") => None,
            Some(Err(e)) => return Err(e),
            None => None,
        };
        let on_gpu = gpu.is_some();
        Ok(CwtPlanCore {
            plan,
            gpu,
            device: if on_gpu { "cuda" } else { "cpu" }.into(),
        })
    }

    /// Where the plan runs: 'cpu' or 'cuda'.
    #[getter]
    fn device(&self) -> &str {
        &self.device
    }

    #[getter]
    fn n(&self) -> usize {
        self.plan.signal_len()
    }

    #[getter]
    fn columns(&self) -> usize {
        self.plan.columns()
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        self.plan.output_dtype()
    }

    #[getter]
    fn scales(&self) -> Vec<f64> {
        self.plan
            .options()
            .scales
            .iter()
            .map(|s| s.value())
            .collect()
    }

    /// How the plan computes each scale (direct sums or overlap-save FFTs).
    fn explain(&self) -> String {
        match &self.gpu {
            Some(g) => match &*g.lock().unwrap_or_else(|p| p.into_inner()) {
                GpuPlan::F32(c) => c.recipe().to_string(),
                GpuPlan::F64(c) => c.recipe().to_string(),
            },
            None => self.plan.recipe().to_string(),
        }
    }

    /// Rows `x` (batch x n) into `out` (batch x scales x columns), which
    /// the caller allocated with this plan's dtype.
    fn execute<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let rows = Rows::extract(x)?;
        let rows = rows.view();
        let (b, n) = rows.shape();
        if n != self.plan.signal_len() {
            return Err(value_err(format!(
                "the plan was made for signals of {} samples, got {n}",
                self.plan.signal_len()
            )));
        }
        let per_row = self.plan.options().scales.len() * self.plan.columns();
        macro_rules! run {
            ($t:ty, $slice:ident) => {{
                let mut o: PyReadwriteArray3<$t> = out.extract().map_err(|_| {
                    crate::type_err(format!(
                        "out must be a writeable C-contiguous {} array of shape ({b}, {}, {})",
                        self.plan.output_dtype(),
                        self.plan.options().scales.len(),
                        self.plan.columns()
                    ))
                })?;
                let shape = o.shape().to_vec();
                let buf = o.as_slice_mut().map_err(|_| {
                    crate::type_err("out must be C-contiguous (the engine writes rows in place)")
                })?;
                if buf.len() != b * per_row {
                    return Err(value_err(format!(
                        "out has shape {shape:?}; this call needs ({b}, {}, {})",
                        self.plan.options().scales.len(),
                        self.plan.columns()
                    )));
                }
                crate::run(py, || {
                    for (r, chunk) in buf.chunks_mut(per_row.max(1)).enumerate() {
                        self.run_row(&rows, r, CwtSlice::$slice(chunk))?;
                        if b > 1 {
                            check_signals()?;
                        }
                    }
                    Ok::<(), PyErr>(())
                })
            }};
        }
        match (self.plan.output_dtype(), self.plan.options().half) {
            (_, Some(h)) => {
                // 16-bit floats: the caller passes their bits' (uint16) view.
                let mut o: PyReadwriteArray3<u16> = out.extract().map_err(|_| {
                    crate::type_err(
                        "out must be a writeable C-contiguous uint16 view of the 16-bit output",
                    )
                })?;
                let buf = o.as_slice_mut().map_err(|_| {
                    crate::type_err("out must be C-contiguous (the engine writes rows in place)")
                })?;
                if buf.len() != b * per_row {
                    return Err(value_err(format!(
                        "out holds {} values; this call needs {}",
                        buf.len(),
                        b * per_row
                    )));
                }
                crate::run(py, || {
                    for (r, chunk) in buf.chunks_mut(per_row.max(1)).enumerate() {
                        self.run_row(&rows, r, CwtSlice::Half(chunk, h))?;
                        if b > 1 {
                            check_signals()?;
                        }
                    }
                    Ok::<(), PyErr>(())
                })
            }
            ("complex64", _) => run!(Complex32, Complex32),
            ("complex128", _) => run!(Complex64, Complex64),
            ("float32", _) => run!(f32, Real32),
            _ => run!(f64, Real64),
        }
    }

    /// Rows of a device array (DLPack, C-contiguous (..., n), the plan's
    /// precision) transformed on the GPU into a new device array of shape
    /// (..., scales, columns): the signal is copied on the device, never to the host.
    fn execute_device<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<DeviceArray> {
        let input = DeviceInput::read(x)?;
        let Some(g) = &self.gpu else {
            return Err(value_err(
                "this plan runs on the CPU; a device array needs device='cuda'",
            ));
        };
        let n = self.plan.signal_len();
        if input.shape.last() != Some(&n) {
            return Err(value_err(format!(
                "the device array has shape {:?}; this plan transforms signals of {n} samples along the last axis",
                input.shape
            )));
        }
        let rows: usize = input.shape[..input.shape.len() - 1].iter().product();
        let mut shape = input.shape[..input.shape.len() - 1].to_vec();
        shape.extend([self.plan.options().scales.len(), self.plan.columns()]);
        let complex = self.plan.options().output == OutputKind::Complex;
        let (ptr, in_dtype) = (input.ptr, input.dtype);
        let plan = &self.plan;
        crate::run(py, || {
            let mut g = g.lock().unwrap_or_else(|p| p.into_inner());
            match (&mut *g, in_dtype) {
                (GpuPlan::F32(c), DType::F32) => {
                    rows_on_device(c, plan, ptr, rows, shape, if complex { DType::C64 } else { DType::F32 })
                }
                (GpuPlan::F64(c), DType::F64) => {
                    rows_on_device(c, plan, ptr, rows, shape, if complex { DType::C128 } else { DType::F64 })
                }
                (_, d) => Err(crate::type_err(format!(
                    "the plan computes in {} but the device array is {d:?}: make the plan with the array's precision",
                    plan.output_dtype()
                ))),
            }
        })
    }
}

impl CwtPlanCore {
    /// Row `r` of `rows` into `out`. On the GPU a float32 row of a float32
    /// plan goes up as it is (no float64 copy); outputs come down through
    /// the page-locked ring straight into `out`.
    fn run_row(&self, rows: &RowsView<'_>, r: usize, out: CwtSlice<'_>) -> PyResult<()> {
        let Some(g) = &self.gpu else {
            return self
                .plan
                .execute_into_slice(&rows.signal(r), out, None)
                .map_err(cwt_err);
        };
        let mut g = g.lock().unwrap_or_else(|p| p.into_inner());
        let plan = &self.plan;
        let up32 = |c: &mut CudaCwt<f32>| -> PyResult<()> {
            match rows {
                RowsView::F32(a) if plan.options().oversampling == 1 => {
                    let row = a.row(r);
                    match row.as_slice() {
                        Some(x) => c.upload_real(plan, x),
                        None => c.upload_real(plan, &row.to_vec()),
                    }
                }
                _ => c.upload(plan, &rows.signal(r)),
            }
            .map_err(cuda_err)?;
            c.launch().map_err(cuda_err)
        };
        let up64 = |c: &mut CudaCwt<f64>| -> PyResult<()> {
            c.upload(plan, &rows.signal(r)).map_err(cuda_err)?;
            c.launch().map_err(cuda_err)
        };
        match (&mut *g, out) {
            (GpuPlan::F32(c), CwtSlice::Complex32(o)) => {
                up32(c)?;
                c.download_raw(bytemuck::cast_slice_mut::<Complex32, f32>(o))
            }
            (GpuPlan::F32(c), CwtSlice::Real32(o)) => {
                up32(c)?;
                c.download_raw(o)
            }
            (GpuPlan::F32(c), CwtSlice::Half(o, _)) => {
                up32(c)?;
                c.download_half(o)
            }
            (GpuPlan::F64(c), CwtSlice::Complex64(o)) => {
                up64(c)?;
                c.download_raw(bytemuck::cast_slice_mut::<Complex64, f64>(o))
            }
            (GpuPlan::F64(c), CwtSlice::Real64(o)) => {
                up64(c)?;
                c.download_raw(o)
            }
            (GpuPlan::F64(c), CwtSlice::Half(o, _)) => {
                up64(c)?;
                c.download_half(o)
            }
            _ => return Err(value_err("output dtype does not match the plan")),
        }
        .map_err(cuda_err)
    }
}

/// Every row through one device plan: signal copied on the device, the
/// kernels, the row's coefficients copied into one output buffer.
fn rows_on_device<T: multires_cuda::GpuReal>(
    c: &mut CudaCwt<T>,
    plan: &multires::CwtPlan,
    ptr: u64,
    rows: usize,
    shape: Vec<usize>,
    dtype: DType,
) -> PyResult<DeviceArray> {
    use cudarc::driver::DevicePtr;
    let size = std::mem::size_of::<T>() as u64;
    let n = plan.signal_len() as u64;
    if rows == 1 {
        // One signal: its output buffer is handed out as it is.
        // SAFETY: the input holds n values of T (checked by the caller).
        unsafe { c.upload_from_device(plan, ptr).map_err(cuda_err)? };
        c.launch().map_err(cuda_err)?;
        let out = c.take_output().map_err(cuda_err)?;
        return DeviceArray::new(out, 0, shape, dtype);
    }
    let per = c.output_bytes();
    let gpu = multires_cuda::gpu().map_err(cuda_err)?;
    // Every row's copy writes its part, so the buffer need not be zeroed.
    let buf = unsafe { gpu.stream.alloc::<u8>((rows * per).max(1)) }.map_err(|e| {
        cuda_err(multires_cuda::CudaError::Driver {
            what: "allocating the device output".into(),
            source: e,
        })
    })?;
    gpu.synchronize().map_err(cuda_err)?;
    let base = buf.device_ptr(&gpu.stream).0;
    for r in 0..rows as u64 {
        // SAFETY: the input holds rows x n values of T (checked by the
        // caller) and the output buffer rows x `per` bytes.
        unsafe {
            c.upload_from_device(plan, ptr + r * n * size)
                .map_err(cuda_err)?;
            c.launch().map_err(cuda_err)?;
            c.copy_output_to(base + r * per as u64).map_err(cuda_err)?;
        }
    }
    c.synchronize().map_err(cuda_err)?;
    DeviceArray::new(buf, 0, shape, dtype)
}

/// The device-side plan: masks, spectra and one signal's output on the GPU
/// (a batch's rows run through it one after another).
fn gpu_plan(plan: &multires::CwtPlan) -> PyResult<GpuPlan> {
    let g = multires_cuda::gpu().map_err(cuda_err)?;
    Ok(match plan.options().precision {
        Precision::F32 => GpuPlan::F32(CudaCwt::new(Arc::clone(&g), plan).map_err(cuda_err)?),
        Precision::F64 => GpuPlan::F64(CudaCwt::new(g, plan).map_err(cuda_err)?),
    })
}

/// The FIR bank y_f = h_f * x of every row: (batch, filters, outputs).
/// A (F, M) array of any float or complex dtype as the engine's bank.
pub(crate) fn filter_bank(filters: &Bound<'_, PyAny>) -> PyResult<FilterBank> {
    Ok(match Rows::extract(filters)? {
        Rows::F64(h) => FilterBank::Real(h.as_array().to_owned()),
        Rows::F32(h) => FilterBank::Real(h.as_array().mapv(|v| v as f64)),
        Rows::C128(h) => FilterBank::Complex(h.as_array().to_owned()),
        Rows::C64(h) => FilterBank::Complex(
            h.as_array()
                .mapv(|c| Complex64::new(c.re as f64, c.im as f64)),
        ),
    })
}

#[pyfunction]
#[pyo3(signature = (x, filters, mode, post, algorithm, device, allow_nonfinite=false))]
#[allow(clippy::too_many_arguments)]
fn fir<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    filters: &Bound<'py, PyAny>,
    mode: &str,
    post: &str,
    algorithm: &str,
    device: &str,
    allow_nonfinite: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let rows = Rows::extract(x)?;
    let rows = rows.view();
    let bank = filter_bank(filters)?;
    let options = FirOptions {
        mode: parse(mode)?,
        post: parse(post)?,
        algorithm: parse(algorithm)?,
        allow_nonfinite,
        memory_limit: None,
    };
    let (be, _) = backend(device)?;
    let (b, _) = rows.shape();
    let results: Vec<FirValues> = crate::run(py, || {
        (0..b)
            .map(|r| {
                let v = be
                    .fir(&rows.signal(r), &bank, &options)
                    .map_err(|e| match e {
                        multires::backend::BackendError::Fir(e) => fir_err(e),
                        e => backend_err(e),
                    })?
                    .0;
                if b > 1 {
                    check_signals()?;
                }
                Ok(v)
            })
            .collect::<PyResult<_>>()
    })?;
    // One row keeps the engine's array (no copy); a batch is stacked.
    macro_rules! stack {
        ($vals:expr, $t:ty, $variant:ident) => {{
            let arrays: Vec<ndarray::Array2<$t>> = $vals
                .into_iter()
                .map(|v| match v {
                    FirValues::$variant(a) => a,
                    _ => unreachable!("one bank gives one value type"),
                })
                .collect();
            if arrays.len() == 1 {
                let a = arrays.into_iter().next().expect("one row");
                Ok(a.insert_axis(Axis(0)).into_pyarray(py).into_any())
            } else {
                let (f, l) = arrays[0].dim();
                let out = PyArray3::<$t>::zeros(py, [b, f, l], false);
                {
                    let mut w = out.readwrite();
                    let mut v = w.as_array_mut();
                    for (r, a) in arrays.iter().enumerate() {
                        v.index_axis_mut(Axis(0), r).assign(a);
                    }
                }
                Ok(out.into_any())
            }
        }};
    }
    match results.first() {
        Some(FirValues::Complex(_)) => stack!(results, Complex64, Complex),
        Some(FirValues::Real(_)) => stack!(results, f64, Real),
        None => Err(value_err(
            "x holds no rows: expected shape (..., N) with N >= 1",
        )),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CwtPlanCore>()?;
    m.add_function(wrap_pyfunction!(fir, m)?)?;
    Ok(())
}
