//! Wavelet packet levels in one call: every node of a level stacked as a
//! row, split into (a, d) rows interleaved so that the result is the next
//! level's stack in pywt's natural order (node i's children are rows 2i
//! and 2i + 1), and the inverse. No copies between levels.

use crate::dwt::{float_dispatch, gpu_plan, transform, DiscreteFilters};
use crate::{cuda_err, value_err};
use multires::dwt::{coeff_len, rec_len};
use multires::real::Real;
use numpy::{IntoPyArray, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;

fn rows_of<'a, T: numpy::Element>(
    a: &'a PyReadonlyArrayDyn<'_, T>,
) -> PyResult<(&'a [T], usize, usize)> {
    let shape = a.shape();
    if shape.len() != 2 {
        return Err(value_err(format!(
            "packet levels are 2-D stacks of rows, got shape {shape:?}"
        )));
    }
    let flat = a
        .as_slice()
        .map_err(|_| value_err("packet levels must be C-contiguous"))?;
    Ok((flat, shape[0], shape[1]))
}

/// (k, n) rows to (2k, m): row 2i the approximation of row i, 2i + 1 its detail.
#[pyfunction]
fn packet_split<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mode: &str,
) -> PyResult<Bound<'py, PyAny>> {
    float_dispatch!(x, T, a => {
        let (flat, k, n) = rows_of(&a)?;
        let t = transform::<T>(&wavelet.wavelet, mode)?;
        t.check_len(n).map_err(value_err)?;
        let m = coeff_len(n, t.filter_len(), t.mode);
        let out = crate::run(py, || {
            let mut out = vec![T::of(0.0); 2 * k * m];
            let one_row = k == 1;
            out.par_chunks_mut(2 * m).zip(flat.par_chunks(n)).for_each(|(o, row)| {
                let (ca, cd) = o.split_at_mut(m);
                t.forward(row, ca, cd, one_row);
            });
            out
        });
        let arr = ndarray::Array2::from_shape_vec((2 * k, m), out).map_err(value_err)?;
        Ok(arr.into_pyarray(py).into_any())
    })
}

/// (2k, m) interleaved (a, d) rows to (k, keep): each pair's idwt, its
/// first `keep` samples (pywt trims a node to its original length).
#[pyfunction]
fn packet_merge<'py>(
    py: Python<'py>,
    c: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mode: &str,
    keep: usize,
) -> PyResult<Bound<'py, PyAny>> {
    float_dispatch!(c, T, a => {
        let (flat, k2, m) = rows_of(&a)?;
        if k2 % 2 != 0 {
            return Err(value_err(format!("packet_merge needs (a, d) row pairs, got {k2} rows")));
        }
        let t = transform::<T>(&wavelet.wavelet, mode)?;
        let n = rec_len(m, t.filter_len(), t.mode);
        if keep > n {
            return Err(value_err(format!("cannot keep {keep} samples of a {n}-sample reconstruction")));
        }
        let k = k2 / 2;
        let out = crate::run(py, || {
            let mut out = vec![T::of(0.0); k * keep];
            let one_row = k == 1;
            out.par_chunks_mut(keep.max(1)).zip(flat.par_chunks(2 * m)).for_each(|(o, pair)| {
                if keep == n {
                    t.inverse(&pair[..m], &pair[m..], o, one_row);
                } else {
                    let mut full = vec![T::of(0.0); n];
                    t.inverse(&pair[..m], &pair[m..], &mut full, one_row);
                    o.copy_from_slice(&full[..keep]);
                }
            });
            out
        });
        let arr = ndarray::Array2::from_shape_vec((k, keep), out).map_err(value_err)?;
        Ok(arr.into_pyarray(py).into_any())
    })
}

/// Levels 1 ..= maxlevel of the packet tree of a 1-D signal on the GPU,
/// each a (2^l, m) array in block order (row b: child 'd' for b < 2^(l-1),
/// else 'a', of row b mod 2^(l-1) of the level before).
#[pyfunction]
fn packet_levels_cuda<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    wavelet: &DiscreteFilters,
    mode: &str,
    maxlevel: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    float_dispatch!(x, T, a => {
        let flat = a.as_slice().map_err(|_| value_err("the signal must be contiguous"))?;
        let t = transform::<T>(&wavelet.wavelet, mode)?;
        t.check_len(flat.len()).map_err(value_err)?;
        let plan = gpu_plan::<T>(&wavelet.wavelet, mode)?;
        let levels = crate::run(py, || multires_cuda::packets::packet_levels(&plan, flat, maxlevel)).map_err(cuda_err)?;
        levels
            .into_iter()
            .map(|l| {
                let arr = ndarray::Array2::from_shape_vec((l.rows, l.len), l.values).map_err(value_err)?;
                Ok(arr.into_pyarray(py).into_any())
            })
            .collect()
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(packet_levels_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(packet_split, m)?)?;
    m.add_function(wrap_pyfunction!(packet_merge, m)?)?;
    Ok(())
}
