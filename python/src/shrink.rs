//! The denoiser (skimage's denoise_wavelet, one engine call), its noise
//! estimate and SureShrink's threshold of a subband.

use crate::dwt::{float_dispatch, gpu_plan, transform, DiscreteFilters};
use crate::{cuda_err, value_err};
use multires::dwt::denoise::{self, DenoiseOptions};
use numpy::IntoPyArray;
use numpy::{PyReadonlyArray1, PyReadonlyArrayDyn};
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

/// skimage's `estimate_sigma` of one channel: the MAD estimate of the
/// finest db2 diagonal details (mode symmetric).
#[pyfunction]
fn estimate_sigma(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
    let db2 = multires::dwt::DiscreteWavelet::from_name("db2").map_err(value_err)?;
    float_dispatch!(x, T, a => {
        let t = transform::<T>(&db2, "symmetric")?;
        let arr = a.as_array();
        crate::run(py, || denoise::estimate_sigma(arr, &t)).map_err(value_err)
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
            let plan = gpu_plan::<T>(w, "symmetric")?;
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
    m.add_function(wrap_pyfunction!(estimate_sigma, m)?)?;
    m.add_function(wrap_pyfunction!(sure_threshold, m)?)?;
    Ok(())
}
