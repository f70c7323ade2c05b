//! PyWavelets' discrete transforms over numpy arrays: one level along an
//! axis (from which python/multires/pywt builds dwtn, wavedecn and the 2-D
//! forms, as PyWavelets does) and the multilevel 1-D transforms, which take
//! the engine's fused periodization path. float32 stays float32.

use crate::dlpack::{DType, DeviceArray, DeviceInput};
use crate::{cuda_err, parse, value_err};
use multires::dwt::{self, Algorithm, DiscreteWavelet, Granularity, Mode, Symmetry, Transform};
use multires::real::Real;
use multires::Wavelet;
use num_complex::Complex64;
use numpy::{
    IntoPyArray, PyArray2, PyArrayDyn, PyReadonlyArray2, PyReadonlyArrayDyn, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// A discrete wavelet's filters, by name or from a user's filter bank.
#[pyclass(module = "multires._multires", name = "DiscreteFilters", frozen)]
pub(crate) struct DiscreteFilters {
    pub(crate) wavelet: DiscreteWavelet,
}

#[pymethods]
impl DiscreteFilters {
    /// `DiscreteFilters(name)` or `DiscreteFilters(None, dec_lo, dec_hi, rec_lo, rec_hi)`.
    #[new]
    #[pyo3(signature = (name, dec_lo=None, dec_hi=None, rec_lo=None, rec_hi=None, orthogonal=false))]
    fn new(
        name: Option<&str>,
        dec_lo: Option<Vec<f64>>,
        dec_hi: Option<Vec<f64>>,
        rec_lo: Option<Vec<f64>>,
        rec_hi: Option<Vec<f64>>,
        orthogonal: bool,
    ) -> PyResult<Self> {
        match (name, dec_lo, dec_hi, rec_lo, rec_hi) {
            (Some(n), None, None, None, None) => Ok(DiscreteFilters {
                wavelet: DiscreteWavelet::from_name(n).map_err(value_err)?,
            }),
            (_, Some(dl), Some(dh), Some(rl), Some(rh)) => {
                let len = dl.len();
                if len < 2 || [dh.len(), rl.len(), rh.len()].iter().any(|&l| l != len) {
                    return Err(value_err(format!(
                        "a filter bank needs four filters of one even length >= 2; got lengths {}, {}, {}, {}",
                        dl.len(), dh.len(), rl.len(), rh.len()
                    )));
                }
                if len % 2 != 0 {
                    return Err(value_err(format!(
                        "filters of odd length {len}: pad them with a zero to an even length"
                    )));
                }
                if let Some(bad) = [&dl, &dh, &rl, &rh]
                    .iter()
                    .flat_map(|f| f.iter())
                    .find(|v| !v.is_finite())
                {
                    return Err(value_err(format!(
                        "a filter tap is {bad}: taps must be finite"
                    )));
                }
                Ok(DiscreteFilters {
                    wavelet: DiscreteWavelet {
                        name: "custom",
                        family: "custom",
                        short_family: "custom",
                        orthogonal,
                        symmetry: Symmetry::Asymmetric,
                        vanishing_psi: None,
                        vanishing_phi: None,
                        dec_lo: dl,
                        dec_hi: dh,
                        rec_lo: rl,
                        rec_hi: rh,
                    },
                })
            }
            _ => Err(value_err(
                "give a wavelet name, or all four filters dec_lo, dec_hi, rec_lo, rec_hi",
            )),
        }
    }

    #[getter]
    fn dec_len(&self) -> usize {
        self.wavelet.filter_len()
    }
}

/// Everything `pywt.Wavelet(name)` reports, as a dict.
#[pyfunction]
fn wavelet_info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let w = DiscreteWavelet::from_name(name).map_err(value_err)?;
    let d = PyDict::new(py);
    d.set_item("name", w.name)?;
    d.set_item("family_name", w.family)?;
    d.set_item("short_family_name", w.short_family)?;
    d.set_item("orthogonal", w.orthogonal)?;
    d.set_item("symmetry", w.symmetry.name())?;
    d.set_item("vanishing_moments_psi", w.vanishing_psi)?;
    d.set_item("vanishing_moments_phi", w.vanishing_phi)?;
    d.set_item("dec_lo", w.dec_lo)?;
    d.set_item("dec_hi", w.dec_hi)?;
    d.set_item("rec_lo", w.rec_lo)?;
    d.set_item("rec_hi", w.rec_hi)?;
    Ok(d)
}

/// Every discrete wavelet's name, in PyWavelets' wavelist order.
#[pyfunction]
fn discrete_names() -> Vec<&'static str> {
    DiscreteWavelet::names().collect()
}

/// A continuous wavelet's properties: name, family, complex, half support
/// (in units of t) and centre frequency (cycles per unit of t).
#[pyfunction]
fn continuous_info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let w = Wavelet::from_name(name).map_err(value_err)?;
    let d = PyDict::new(py);
    d.set_item("name", w.name())?;
    d.set_item("family", format!("{:?}", w.family()))?;
    d.set_item("complex", w.is_complex())?;
    d.set_item("half_support", w.half_support())?;
    d.set_item("center_frequency", w.center_frequency())?;
    d.set_item("coi_factor", w.coi_factor())?;
    Ok(d)
}

/// psi(t) of a continuous wavelet at the given points.
#[pyfunction]
fn continuous_psi<'py>(py: Python<'py>, name: &str, t: Vec<f64>) -> PyResult<Bound<'py, PyAny>> {
    let w = Wavelet::from_name(name).map_err(value_err)?;
    let v: Vec<Complex64> = t.iter().map(|&t| w.psi(t)).collect();
    Ok(v.into_pyarray(py).into_any())
}

pub(crate) fn transform<T: Real>(w: &DiscreteWavelet, mode: &str) -> PyResult<Transform<T>> {
    let mode: Mode = parse(mode)?;
    Transform::new(w, mode, Algorithm::Auto, Granularity::default()).map_err(value_err)
}

/// Dispatches on the array's dtype (float64 or float32, anything else is
/// the Python layer's job to convert).
macro_rules! float_dispatch {
    ($x:expr, $t:ident, $arr:ident => $body:expr) => {{
        if let Ok($arr) = $x.extract::<PyReadonlyArrayDyn<f64>>() {
            type $t = f64;
            $body
        } else if let Ok($arr) = $x.extract::<PyReadonlyArrayDyn<f32>>() {
            type $t = f32;
            $body
        } else {
            Err(crate::type_err(
                "expected a float32 or float64 numpy array (the Python layer converts others)",
            ))
        }
    }};
}
pub(crate) use float_dispatch;

/// `pywt.dwt(x, w, mode, axis)`: (cA, cD).
#[pyfunction]
fn dwt_axis<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mode: &str,
    axis: isize,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    float_dispatch!(x, T, a => {
        let t = transform::<T>(&wavelet.wavelet, mode)?;
        let v = a.as_array();
        let ax = dwt::nd::axis_index(axis, v.ndim()).map_err(value_err)?;
        let (ca, cd) = crate::run(py, || dwt::dwt_axis(v, &t, ax)).map_err(value_err)?;
        Ok((ca.into_pyarray(py).into_any(), cd.into_pyarray(py).into_any()))
    })
}

/// `pywt.idwt(cA, cD, w, mode, axis)` of two arrays of one shape and dtype.
#[pyfunction]
fn idwt_axis<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    d: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mode: &str,
    axis: isize,
) -> PyResult<Bound<'py, PyAny>> {
    float_dispatch!(a, T, ca => {
        let cd: PyReadonlyArrayDyn<T> = d.extract().map_err(|_| {
            crate::type_err("cA and cD must have one dtype")
        })?;
        let t = transform::<T>(&wavelet.wavelet, mode)?;
        let (va, vd) = (ca.as_array(), cd.as_array());
        let ax = dwt::nd::axis_index(axis, va.ndim()).map_err(value_err)?;
        let y = crate::run(py, || dwt::idwt_axis(va, vd, &t, ax)).map_err(value_err)?;
        Ok(y.into_pyarray(py).into_any())
    })
}

/// `pywt.wavedec`: [cA_n, cD_n, ..., cD_1].
#[pyfunction]
#[pyo3(signature = (x, wavelet, mode, level, axis))]
fn wavedec<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mode: &str,
    level: Option<usize>,
    axis: isize,
) -> PyResult<Bound<'py, PyList>> {
    float_dispatch!(x, T, a => {
        let t = transform::<T>(&wavelet.wavelet, mode)?;
        let v = a.as_array();
        let c = crate::run(py, || dwt::wavedec(v, &t, level, axis)).map_err(value_err)?;
        PyList::new(py, c.into_iter().map(|c| c.into_pyarray(py)))
    })
}

/// `pywt.waverec` of [cA_n, cD_n, ..., cD_1] (one dtype, checked by the caller).
#[pyfunction]
fn waverec<'py>(
    py: Python<'py>,
    coeffs: &Bound<'py, PyList>,
    wavelet: &DiscreteFilters,
    mode: &str,
    axis: isize,
) -> PyResult<Bound<'py, PyAny>> {
    let first = coeffs
        .get_item(0)
        .map_err(|_| value_err("coeffs is empty: expected [cA_n, cD_n, ..., cD_1]"))?;
    float_dispatch!(first, T, _a => {
        let arrays: Vec<PyReadonlyArrayDyn<T>> = coeffs
            .iter()
            .map(|c| c.extract().map_err(|_| crate::type_err("every coefficient array must have one dtype")))
            .collect::<PyResult<_>>()?;
        let views: Vec<ndarray::ArrayViewD<T>> = arrays.iter().map(|a| a.as_array()).collect();
        let t = transform::<T>(&wavelet.wavelet, mode)?;
        let y = crate::run(py, || dwt::waverec(&views, &t, axis)).map_err(value_err)?;
        Ok(y.into_pyarray(py).into_any())
    })
}

pub(crate) fn gpu_plan<T: multires_cuda::GpuReal>(
    w: &DiscreteWavelet,
    mode: &str,
) -> PyResult<multires_cuda::dwt::GpuDwt<T>> {
    let g = multires_cuda::gpu().map_err(cuda_err)?;
    let mode: Mode = parse(mode)?;
    multires_cuda::dwt::GpuDwt::<T>::new(g, w, mode, multires_cuda::dwt::GpuDwtVariant::Auto)
        .map_err(cuda_err)
}

macro_rules! float2_dispatch {
    ($x:expr, $t:ident, $arr:ident => $body:expr) => {{
        if let Ok($arr) = $x.extract::<PyReadonlyArray2<f64>>() {
            type $t = f64;
            $body
        } else if let Ok($arr) = $x.extract::<PyReadonlyArray2<f32>>() {
            type $t = f32;
            $body
        } else {
            Err(crate::type_err(
                "expected a 2-D float32 or float64 array of rows",
            ))
        }
    }};
}

/// wavedec of every row of a C-contiguous (rows, n) array on the GPU, in
/// one batched launch sequence: [cA_n, ..., cD_1], each (rows, length).
#[pyfunction]
fn wavedec_cuda<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mode: &str,
    level: Option<usize>,
) -> PyResult<Bound<'py, PyList>> {
    float2_dispatch!(x, T, a => {
        let (rows, n) = (a.shape()[0], a.shape()[1]);
        let t = transform::<T>(&wavelet.wavelet, mode)?;
        t.check_len(n).map_err(value_err)?;
        let level = level.unwrap_or_else(|| dwt::max_level(n, t.filter_len()));
        dwt::multilevel::check_level(level).map_err(value_err)?;
        let plan = gpu_plan::<T>(&wavelet.wavelet, mode)?;
        let xs = a.as_slice().map_err(|_| crate::type_err("rows must be C-contiguous"))?;
        let blocks = crate::run(py, || multires_cuda::dwt::wavedec(&plan, xs, rows, level)).map_err(cuda_err)?;
        PyList::new(py, blocks.into_iter().map(|b| {
            let len = b.len() / rows.max(1);
            ndarray::Array2::from_shape_vec((rows, len), b).map(|a| a.into_pyarray(py))
                .map_err(value_err)
        }).collect::<PyResult<Vec<Bound<'py, PyArray2<T>>>>>()?)
    })
}

/// waverec on the GPU of [cA_n, ..., cD_1], each (rows, length): (rows, n).
#[pyfunction]
fn waverec_cuda<'py>(
    py: Python<'py>,
    coeffs: &Bound<'py, PyList>,
    wavelet: &DiscreteFilters,
    mode: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let first = coeffs
        .get_item(0)
        .map_err(|_| value_err("coeffs is empty: expected [cA_n, cD_n, ..., cD_1]"))?;
    float2_dispatch!(first, T, a0 => {
        let rows = a0.shape()[0];
        let blocks: Vec<Vec<T>> = coeffs
            .iter()
            .map(|c| {
                let a: PyReadonlyArray2<T> = c.extract().map_err(|_| {
                    crate::type_err("every coefficient array must be 2-D (rows, length) of one dtype")
                })?;
                if a.shape()[0] != rows {
                    return Err(value_err("every coefficient array must have the same rows"));
                }
                Ok(a.as_array().iter().copied().collect())
            })
            .collect::<PyResult<_>>()?;
        let plan = gpu_plan::<T>(&wavelet.wavelet, mode)?;
        let (y, len) = crate::run(py, || multires_cuda::dwt::waverec(&plan, &blocks, rows)).map_err(cuda_err)?;
        let a = ndarray::Array2::from_shape_vec((rows, len), y).map_err(value_err)?;
        Ok(PyArrayDyn::from_owned_array(py, a.into_dyn()).into_any())
    })
}

/// wavedec of every row of a device array (DLPack, C-contiguous
/// (rows, n), float32/float64) on the GPU: [cA_n, ..., cD_1] as device
/// arrays of shape (rows, length), views of one buffer on the device.
#[pyfunction]
fn wavedec_device<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mode: &str,
    level: Option<usize>,
) -> PyResult<Vec<DeviceArray>> {
    let input = DeviceInput::read(x)?;
    if input.shape.len() != 2 {
        return Err(value_err(format!(
            "expected a device array of shape (rows, n), got {:?}",
            input.shape
        )));
    }
    let (rows, n) = (input.shape[0], input.shape[1]);
    let (ptr, dtype) = (input.ptr, input.dtype);
    macro_rules! go {
        ($t:ty) => {{
            let t = transform::<$t>(&wavelet.wavelet, mode)?;
            t.check_len(n).map_err(value_err)?;
            let level = level.unwrap_or_else(|| dwt::max_level(n, t.filter_len()));
            dwt::multilevel::check_level(level).map_err(value_err)?;
            let plan = gpu_plan::<$t>(&wavelet.wavelet, mode)?;
            // SAFETY: DeviceInput checked a C-contiguous (rows, n) array of $t.
            let (buf, layout) = crate::run(py, || unsafe {
                multires_cuda::dwt::wavedec_from_device(&plan, ptr, rows, n, level)
            })
            .map_err(cuda_err)?;
            let size = std::mem::size_of::<$t>();
            let whole = DeviceArray::new(buf, 0, vec![layout.total()], dtype)?;
            Ok(layout
                .blocks()
                .into_iter()
                .map(|(o, l)| whole.view(o * size, vec![rows, l]))
                .collect())
        }};
    }
    match dtype {
        DType::F32 => go!(f32),
        DType::F64 => go!(f64),
        d => Err(crate::type_err(format!(
            "a device array of {d:?}: the DWT takes float32 or float64"
        ))),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DiscreteFilters>()?;
    m.add_function(wrap_pyfunction!(wavelet_info, m)?)?;
    m.add_function(wrap_pyfunction!(discrete_names, m)?)?;
    m.add_function(wrap_pyfunction!(continuous_info, m)?)?;
    m.add_function(wrap_pyfunction!(continuous_psi, m)?)?;
    m.add_function(wrap_pyfunction!(dwt_axis, m)?)?;
    m.add_function(wrap_pyfunction!(idwt_axis, m)?)?;
    m.add_function(wrap_pyfunction!(wavedec, m)?)?;
    m.add_function(wrap_pyfunction!(waverec, m)?)?;
    m.add_function(wrap_pyfunction!(wavedec_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(waverec_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(wavedec_device, m)?)?;
    Ok(())
}
