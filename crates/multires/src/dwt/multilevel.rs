//! Multilevel 1-D transforms along one axis: `pywt.wavedec` and `pywt.waverec`.

use super::nd::{axis_index, dwt_axis, idwt_axis};
use super::{max_level, DwtError, Transform};
use crate::real::Real;
use ndarray::{ArrayD, ArrayViewD, Axis, Slice};

/// [cA_n, cD_n, ..., cD_1] along `axis`. `level` None is dwt_max_level; a
/// level above it is computed like PyWavelets does (every coefficient then
/// feels the boundary), and callers may warn.
pub fn wavedec<T: Real>(
    x: ArrayViewD<T>,
    t: &Transform<T>,
    level: Option<usize>,
    axis: isize,
) -> Result<Vec<ArrayD<T>>, DwtError> {
    let ax = axis_index(axis, x.ndim())?;
    if x.is_empty() {
        return Err(DwtError::EmptySignal);
    }
    let level = level.unwrap_or_else(|| max_level(x.shape()[ax], t.filter_len()));
    let mut a = x.to_owned();
    let mut out = Vec::with_capacity(level + 1);
    for _ in 0..level {
        let (ca, cd) = dwt_axis(a.view(), t, ax)?;
        out.push(cd);
        a = ca;
    }
    out.push(a);
    out.reverse();
    Ok(out)
}

/// Inverse of wavedec; an approximation one longer than the next detail is
/// cut, as PyWavelets does for odd lengths.
pub fn waverec<T: Real>(
    coeffs: &[ArrayD<T>],
    t: &Transform<T>,
    axis: isize,
) -> Result<ArrayD<T>, DwtError> {
    let Some(first) = coeffs.first() else {
        return Err(DwtError::CoefficientMismatch(
            "no coefficient arrays".into(),
        ));
    };
    let ax = axis_index(axis, first.ndim())?;
    let mut a = first.clone();
    for (lvl, d) in coeffs[1..].iter().enumerate() {
        if d.ndim() != a.ndim() {
            return Err(DwtError::CoefficientMismatch(format!(
                "array {} has {} dimensions, the approximation {}",
                lvl + 1,
                d.ndim(),
                a.ndim()
            )));
        }
        let (na, nd) = (a.shape()[ax], d.shape()[ax]);
        if na == nd + 1 {
            a = a.slice_axis(Axis(ax), Slice::from(0..nd)).to_owned();
        } else if na != nd {
            return Err(DwtError::CoefficientMismatch(format!(
                "array {} has {nd} coefficients along the axis but the approximation before it has {na}; waverec needs equal lengths (or one more approximation)",
                lvl + 1
            )));
        }
        a = idwt_axis(a.view(), d.view(), t, ax)?;
    }
    Ok(a)
}
