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
    check_level(level)?;
    if level == 0 {
        return Ok(vec![x.to_owned()]);
    }
    if x.ndim() == 1
        && t.algorithm == super::Algorithm::Auto
        && super::fused::applies(x.len(), level, t.mode)
    {
        if let Some(xs) = x.as_slice() {
            let n = xs.len();
            let mut outs: Vec<Vec<T>> = (0..=level)
                .map(|i| {
                    let k = if i == 0 { level } else { level + 1 - i };
                    crate::memory::zeroed_vec::<T>(n >> k)
                })
                .collect();
            super::fused::wavedec_periodization(xs, t.bank(), level, &mut outs);
            return Ok(outs
                .into_iter()
                .map(|v| {
                    let len = v.len();
                    ArrayD::from_shape_vec(ndarray::IxDyn(&[len]), v).expect("1-D")
                })
                .collect());
        }
    }
    // The first level reads the input where it lies (no copy).
    let (mut a, cd) = dwt_axis(x, t, ax)?;
    let mut out = Vec::with_capacity(level + 1);
    out.push(cd);
    for _ in 1..level {
        let (ca, cd) = dwt_axis(a.view(), t, ax)?;
        out.push(cd);
        a = ca;
    }
    out.push(a);
    out.reverse();
    Ok(out)
}

/// Levels beyond any use: after about log2(N) levels the lengths stop
/// shrinking, so a bigger number is a mistake (and would run for ever).
pub const MAX_LEVELS: usize = 255;

pub fn check_level(level: usize) -> Result<(), DwtError> {
    if level > MAX_LEVELS {
        return Err(DwtError::BadLevel {
            level,
            why: format!("at most {MAX_LEVELS} levels are accepted (a signal that fits in memory has fewer than 64 useful ones)"),
        });
    }
    Ok(())
}

/// Inverse of wavedec; an approximation one longer than the next detail is
/// cut, as PyWavelets does for odd lengths.
pub fn waverec<T: Real, S: ndarray::Data<Elem = T>>(
    coeffs: &[ndarray::ArrayBase<S, ndarray::IxDyn>],
    t: &Transform<T>,
    axis: isize,
) -> Result<ArrayD<T>, DwtError> {
    let Some(first) = coeffs.first() else {
        return Err(DwtError::CoefficientMismatch(
            "no coefficient arrays".into(),
        ));
    };
    let ax = axis_index(axis, first.ndim())?;
    if first.ndim() == 1 && t.algorithm == super::Algorithm::Auto {
        let lens: Vec<usize> = coeffs.iter().map(|c| c.len()).collect();
        if coeffs.iter().all(|c| c.ndim() == 1) && super::fused::applies_inverse(&lens, t.mode) {
            let slices: Option<Vec<&[T]>> = coeffs.iter().map(|c| c.as_slice()).collect();
            if let Some(slices) = slices {
                let n = 2 * lens[lens.len() - 1];
                let mut out = crate::memory::zeroed_vec::<T>(n);
                super::fused::waverec_periodization(&slices, t.bank(), &mut out);
                return Ok(ArrayD::from_shape_vec(ndarray::IxDyn(&[n]), out).expect("1-D"));
            }
        }
    }
    // Views are read where they lie (a numpy array's buffer); only the
    // running approximation is owned.
    let mut a = first.to_owned();
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

/// wavedec of contiguous 1-D signals into buffers kept between calls: a
/// stream of signals of one length then allocates (and page-faults) nothing
/// after the first. `coeffs` has wavedec's layout, [cA_n, cD_n, ..., cD_1].
#[derive(Debug, Default)]
pub struct Wavedec1d<T> {
    pub coeffs: Vec<Vec<T>>,
    scratch: [Vec<T>; 2],
}

impl<T: Real> Wavedec1d<T> {
    pub fn new() -> Self {
        Wavedec1d {
            coeffs: Vec::new(),
            scratch: [Vec::new(), Vec::new()],
        }
    }

    pub fn run(&mut self, x: &[T], t: &Transform<T>, level: usize) -> Result<(), DwtError> {
        t.check_len(x.len())?;
        check_level(level)?;
        self.coeffs.resize_with(level + 1, Vec::new);
        if level == 0 {
            self.coeffs[0].clear();
            self.coeffs[0].extend_from_slice(x);
            return Ok(());
        }
        let mut n = x.len();
        for k in 0..level {
            if k > 0 {
                t.check_len(n)?;
            }
            let no = t.coeff_len(n);
            let [s0, s1] = &mut self.scratch;
            let (src, dst): (&[T], &mut Vec<T>) = match k {
                0 => (x, s0),
                _ if k % 2 == 1 => (&s0[..n], s1),
                _ => (&s1[..n], s0),
            };
            let last = k + 1 == level;
            // coeffs[0] (last approximation) and coeffs[level - k] (this detail)
            // are distinct entries since level - k >= 1.
            let (head, tail) = self.coeffs.split_at_mut(1);
            let cd = &mut tail[level - k - 1];
            let ca: &mut Vec<T> = if last { &mut head[0] } else { dst };
            ca.resize(no, T::zero());
            cd.resize(no, T::zero());
            t.forward(src, ca, cd, true);
            n = no;
        }
        Ok(())
    }
}

/// waverec of 1-D coefficient lists into a buffer kept between calls.
#[derive(Debug, Default)]
pub struct Waverec1d<T> {
    pub out: Vec<T>,
    scratch: Vec<T>,
}

impl<T: Real> Waverec1d<T> {
    pub fn new() -> Self {
        Waverec1d {
            out: Vec::new(),
            scratch: Vec::new(),
        }
    }

    pub fn run(&mut self, coeffs: &[Vec<T>], t: &Transform<T>) -> Result<(), DwtError> {
        let Some(first) = coeffs.first() else {
            return Err(DwtError::CoefficientMismatch(
                "no coefficient arrays".into(),
            ));
        };
        // Levels alternate between `out` and `scratch` so the last lands in `out`.
        let levels = coeffs.len() - 1;
        let mut a_len = first.len();
        let (mut cur, mut other) = if levels.is_multiple_of(2) {
            (&mut self.out, &mut self.scratch)
        } else {
            (&mut self.scratch, &mut self.out)
        };
        cur.clear();
        cur.extend_from_slice(first);
        for (lvl, d) in coeffs[1..].iter().enumerate() {
            let nd = d.len();
            if a_len == nd + 1 {
                a_len = nd;
            } else if a_len != nd {
                return Err(DwtError::CoefficientMismatch(format!(
                    "array {} has {nd} coefficients but the approximation before it has {a_len}",
                    lvl + 1
                )));
            }
            super::single::check_pair(a_len, nd, t)?;
            let nr = super::rec_len(nd, t.filter_len(), t.mode);
            other.resize(nr, T::zero());
            t.inverse(&cur[..a_len], d, other, true);
            std::mem::swap(&mut cur, &mut other);
            a_len = nr;
        }
        cur.truncate(a_len);
        Ok(())
    }
}
