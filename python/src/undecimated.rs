//! The undecimated transforms over rows (C-contiguous, shape (rows, N)):
//! pywt's stationary transform a level at a time (python/multires/pywt
//! builds swt, swt2, swtn and their inverses from these, as pywt does)
//! and MATLAB's MODWT whole. float32 stays float32.

use crate::dlpack::{DType, DeviceArray, DeviceInput};
use crate::dwt::{float_dispatch, transform, DiscreteFilters};
use crate::{cuda_err, value_err};
use multires::dwt;
use multires::real::Real;
use numpy::{IntoPyArray, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// The rows of an array: (flat C-order samples, shape, row length).
fn rows<'a, T: numpy::Element>(
    a: &'a PyReadonlyArrayDyn<'_, T>,
    what: &str,
) -> PyResult<(&'a [T], Vec<usize>, usize)> {
    let shape = a.shape().to_vec();
    let n = *shape.last().unwrap_or(&0);
    let flat = a
        .as_slice()
        .map_err(|_| value_err(format!("{what} must be C-contiguous rows")))?;
    Ok((flat, shape, n))
}

fn shaped<'py, T: numpy::Element>(
    py: Python<'py>,
    shape: &[usize],
    v: Vec<T>,
) -> PyResult<Bound<'py, PyAny>> {
    let a = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), v).map_err(value_err)?;
    Ok(a.into_pyarray(py).into_any())
}

/// One level of `pywt.swt` over rows: the filters upsampled by `fstep`
/// and scaled by `scale` (1/sqrt 2 for `norm=True`); (cA, cD).
#[pyfunction]
fn swt_level<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    fstep: usize,
    scale: f64,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    if fstep == 0 {
        return Err(value_err("fstep must be >= 1"));
    }
    let w = dwt::swt::scaled_bank(&wavelet.wavelet, scale);
    float_dispatch!(x, T, a => {
        let (flat, shape, n) = rows(&a, "swt's input")?;
        let (ca, cd) = crate::run(py, || {
            let mut ca = multires::memory::zeroed_vec::<T>(flat.len());
            let mut cd = multires::memory::zeroed_vec::<T>(flat.len());
            dwt::swt::swt_level(flat, n, (&w.dec_lo, &w.dec_hi), fstep, &mut ca, &mut cd);
            (ca, cd)
        });
        Ok((shaped(py, &shape, ca)?, shaped(py, &shape, cd)?))
    })
}

/// One level of `pywt.iswt` over rows: (cA, cD) of one shape and dtype
/// back to the previous level's approximation.
#[pyfunction]
fn iswt_level<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    d: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    fstep: usize,
    scale: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let w = dwt::swt::scaled_bank(&wavelet.wavelet, scale);
    float_dispatch!(a, T, ca => {
        let cd: PyReadonlyArrayDyn<T> = d
            .extract()
            .map_err(|_| crate::type_err("cA and cD must have one dtype"))?;
        let (fa, shape, n) = rows(&ca, "cA")?;
        let (fd, dshape, _) = rows(&cd, "cD")?;
        if shape != dshape {
            return Err(value_err(format!("cA has shape {shape:?} and cD {dshape:?}; they must match")));
        }
        let t = transform::<T>(&w, "periodization")?;
        let out = crate::run(py, || {
            let mut out = multires::memory::zeroed_vec::<T>(fa.len());
            dwt::swt::iswt_level(fa, fd, n, &t, fstep, &mut out).map(|_| out)
        })
        .map_err(value_err)?;
        shaped(py, &shape, out)
    })
}

/// MATLAB's `modwt` of every row: an array (level + 1, *rows' shape),
/// W_1 ... W_level then V_level.
#[pyfunction]
#[pyo3(signature = (x, wavelet, level, cuda=false))]
fn modwt<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    level: usize,
    cuda: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let w = &wavelet.wavelet;
    float_dispatch!(x, _T, a => {
        let (flat, shape, n) = rows(&a, "the signal")?;
        let planes = if cuda {
            let g = multires_cuda::gpu().map_err(cuda_err)?;
            crate::run(py, || multires_cuda::undecimated::modwt(&g, flat, n, w, level, None)).map_err(cuda_err)?
        } else {
            crate::run(py, || dwt::modwt::modwt(flat, n, w, level)).map_err(value_err)?
        };
        stacked(py, &shape, planes)
    })
}

fn stacked<'py, T: Real + numpy::Element>(
    py: Python<'py>,
    shape: &[usize],
    planes: Vec<Vec<T>>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut full = vec![planes.len()];
    full.extend_from_slice(shape);
    shaped(py, &full, planes.concat())
}

/// Splits an array (planes, *rows) into its planes.
fn planes_of<T: Copy>(flat: &[T], shape: &[usize]) -> PyResult<(Vec<Vec<T>>, Vec<usize>, usize)> {
    if shape.len() < 2 || shape[0] < 2 {
        return Err(value_err(format!(
            "MODWT coefficients are an array (level + 1, ..., N) with level >= 1; got shape {shape:?}"
        )));
    }
    let size: usize = shape[1..].iter().product();
    let planes = flat.chunks(size.max(1)).map(|c| c.to_vec()).collect();
    Ok((planes, shape[1..].to_vec(), *shape.last().unwrap_or(&0)))
}

/// MATLAB's `imodwt` (the signal of `modwt`'s array) or, with `mra`,
/// `modwtmra` (its details and smooth, the array's shape).
#[pyfunction]
#[pyo3(signature = (w, wavelet, mra, cuda=false))]
fn modwt_inverse<'py>(
    py: Python<'py>,
    w: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mra: bool,
    cuda: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use multires_cuda::undecimated as gpu;
    let wv = &wavelet.wavelet;
    float_dispatch!(w, _T, a => {
        let (flat, shape, _) = rows(&a, "the coefficients")?;
        let (planes, inner, n) = planes_of(flat, &shape)?;
        let g = if cuda { Some(multires_cuda::gpu().map_err(cuda_err)?) } else { None };
        match (mra, g) {
            (false, Some(g)) => shaped(py, &inner, crate::run(py, || gpu::imodwt(&g, &planes, n, wv, None)).map_err(cuda_err)?),
            (false, None) => shaped(py, &inner, crate::run(py, || dwt::modwt::imodwt(&planes, n, wv)).map_err(value_err)?),
            (true, Some(g)) => stacked(py, &inner, crate::run(py, || gpu::modwtmra(&g, &planes, n, wv, None)).map_err(cuda_err)?),
            (true, None) => stacked(py, &inner, crate::run(py, || dwt::modwt::modwtmra(&planes, n, wv)).map_err(value_err)?),
        }
    })
}

/// `pywt.swt` of every row on the GPU, all levels on the device:
/// [(cA, cD), ...] coarsest first, each of the rows' shape.
#[pyfunction]
fn swt_cuda<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    level: usize,
    start_level: usize,
    norm: bool,
) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let w = &wavelet.wavelet;
    float_dispatch!(x, _T, a => {
        let (flat, shape, n) = rows(&a, "swt's input")?;
        let g = multires_cuda::gpu().map_err(cuda_err)?;
        let levels = crate::run(py, || multires_cuda::undecimated::swt(&g, flat, n, w, level, start_level, norm, None))
            .map_err(cuda_err)?;
        levels.into_iter().map(|(ca, cd)| Ok((shaped(py, &shape, ca)?, shaped(py, &shape, cd)?))).collect()
    })
}

/// `pywt.swt` of the rows of a CUDA array (DLPack, C-contiguous (rows, n),
/// float32/float64): [(cA, cD), ...] coarsest first as device arrays.
#[pyfunction]
fn swt_device(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    wavelet: &DiscreteFilters,
    level: usize,
    start_level: usize,
    norm: bool,
) -> PyResult<Vec<(DeviceArray, DeviceArray)>> {
    let input = DeviceInput::read(x)?;
    if input.shape.len() != 2 {
        return Err(value_err(format!(
            "expected a device array of shape (rows, n), got {:?}",
            input.shape
        )));
    }
    let (rows, n, ptr, dtype) = (input.shape[0], input.shape[1], input.ptr, input.dtype);
    let g = multires_cuda::gpu().map_err(cuda_err)?;
    let w = &wavelet.wavelet;
    macro_rules! go {
        ($t:ty) => {{
            // SAFETY: DeviceInput checked a C-contiguous (rows, n) array of $t.
            let levels = crate::run(py, || unsafe {
                multires_cuda::undecimated::swt_from_device::<$t>(
                    &g,
                    ptr,
                    rows,
                    n,
                    w,
                    level,
                    start_level,
                    norm,
                )
            })
            .map_err(cuda_err)?;
            levels
                .into_iter()
                .map(|(a, d)| {
                    Ok((
                        DeviceArray::new(a, 0, vec![rows, n], dtype)?,
                        DeviceArray::new(d, 0, vec![rows, n], dtype)?,
                    ))
                })
                .collect()
        }};
    }
    match dtype {
        DType::F32 => go!(f32),
        DType::F64 => go!(f64),
        d => Err(crate::type_err(format!(
            "a device array of {d:?}: swt takes float32 or float64"
        ))),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(swt_device, m)?)?;
    m.add_function(wrap_pyfunction!(swt_level, m)?)?;
    m.add_function(wrap_pyfunction!(iswt_level, m)?)?;
    m.add_function(wrap_pyfunction!(modwt, m)?)?;
    m.add_function(wrap_pyfunction!(modwt_inverse, m)?)?;
    m.add_function(wrap_pyfunction!(swt_cuda, m)?)?;
    Ok(())
}
