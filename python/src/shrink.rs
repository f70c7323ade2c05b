//! The denoiser's kernels over flat numpy arrays: pywt's thresholding in
//! place, and the subband statistics (mean square, median of |d|).

use crate::dwt::{float_dispatch, transform, DiscreteFilters};
use crate::{cuda_err, value_err};
use multires::dwt::denoise::{self, DenoiseOptions, ThresholdMode};
use multires::dwt::Mode;
use numpy::IntoPyArray;
use numpy::{PyReadonlyArray1, PyReadonlyArrayDyn, PyReadwriteArray1};
use pyo3::prelude::*;

macro_rules! flat_dispatch {
    ($x:expr, $arr:ident => $body:expr) => {{
        if let Ok($arr) = $x.extract::<PyReadonlyArray1<f64>>() {
            $body
        } else if let Ok($arr) = $x.extract::<PyReadonlyArray1<f32>>() {
            $body
        } else {
            Err(crate::type_err("expected a 1-D float32 or float64 array"))
        }
    }};
}

/// `pywt.threshold(x, value, mode)` into x (1-D, C-contiguous, writeable).
#[pyfunction]
#[pyo3(signature = (x, value, mode, substitute=0.0))]
fn threshold_inplace(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    value: f64,
    mode: &str,
    substitute: f64,
) -> PyResult<()> {
    let m: ThresholdMode = mode.parse().map_err(value_err)?;
    if let Ok(mut a) = x.extract::<PyReadwriteArray1<f64>>() {
        let s = a
            .as_slice_mut()
            .map_err(|_| value_err("threshold_inplace needs a contiguous array"))?;
        crate::run(py, || denoise::threshold_in_place(s, value, m, substitute));
        Ok(())
    } else if let Ok(mut a) = x.extract::<PyReadwriteArray1<f32>>() {
        let s = a
            .as_slice_mut()
            .map_err(|_| value_err("threshold_inplace needs a contiguous array"))?;
        crate::run(py, || denoise::threshold_in_place(s, value, m, substitute));
        Ok(())
    } else {
        Err(crate::type_err(
            "expected a writeable 1-D float32 or float64 array",
        ))
    }
}

/// The mean of x² (float64 accumulation).
#[pyfunction]
fn mean_square(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
    flat_dispatch!(x, a => {
        let s = a.as_slice().map_err(|_| value_err("mean_square needs a contiguous array"))?;
        Ok(crate::run(py, || denoise::mean_square(s)))
    })
}

/// numpy's median of |x| over the nonzero entries.
#[pyfunction]
fn median_abs_nonzero(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
    flat_dispatch!(x, a => {
        let s = a.as_slice().map_err(|_| value_err("median_abs_nonzero needs a contiguous array"))?;
        Ok(crate::run(py, || denoise::median_abs_nonzero(s)))
    })
}

/// SureShrink's threshold of one subband (flat) at noise level sigma.
#[pyfunction]
fn sure_threshold(py: Python<'_>, x: &Bound<'_, PyAny>, sigma: f64) -> PyResult<f64> {
    flat_dispatch!(x, a => {
        let s = a.as_slice().map_err(|_| value_err("sure_threshold needs a contiguous array"))?;
        Ok(crate::run(py, || denoise::sure_threshold(s, sigma)))
    })
}

/// skimage's denoise_wavelet of a float array (mode symmetric): the
/// denoised array and the noise level used; the transforms on the GPU
/// with `cuda`.
#[pyfunction]
#[pyo3(signature = (x, wavelet, method, mode, sigma=None, levels=None, cuda=false))]
#[allow(clippy::too_many_arguments)]
fn denoise_nd<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    method: &str,
    mode: &str,
    sigma: Option<f64>,
    levels: Option<usize>,
    cuda: bool,
) -> PyResult<(Bound<'py, PyAny>, f64)> {
    let o = DenoiseOptions {
        method: method.parse().map_err(value_err)?,
        mode: mode.parse().map_err(value_err)?,
        sigma,
        levels,
    };
    let w = &wavelet.wavelet;
    float_dispatch!(x, T, a => {
        let arr = a.as_array();
        let (y, s) = if cuda {
            let g = multires_cuda::gpu().map_err(cuda_err)?;
            let plan = multires_cuda::dwt::GpuDwt::<T>::new(g, w, Mode::Symmetric, multires_cuda::dwt::GpuDwtVariant::Auto)
                .map_err(cuda_err)?;
            crate::run(py, || multires_cuda::undecimated::denoise(&plan, &arr.to_owned(), &o)).map_err(cuda_err)?
        } else {
            let t = transform::<T>(w, "symmetric")?;
            crate::run(py, || denoise::denoise(arr, &t, &o)).map_err(value_err)?
        };
        Ok((y.into_pyarray(py).into_any(), s))
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(denoise_nd, m)?)?;
    m.add_function(wrap_pyfunction!(threshold_inplace, m)?)?;
    m.add_function(wrap_pyfunction!(mean_square, m)?)?;
    m.add_function(wrap_pyfunction!(median_abs_nonzero, m)?)?;
    m.add_function(wrap_pyfunction!(sure_threshold, m)?)?;
    Ok(())
}
