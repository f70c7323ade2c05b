//! The DWT along any axis of an n-D array, and the separable n-D transforms
//! built on it: dwtn/idwtn, wavedecn/waverecn (PyWavelets' key names and
//! order: one letter per axis, 'a' or 'd', the first letter for the first
//! axis), and dwt2/wavedec2 ((cH, cV, cD) = ('da', 'ad', 'dd')).
//!
//! Along the last axis each lane is contiguous and runs the 1-D kernels.
//! Along any other axis the matrix form runs on whole rows (each output row
//! is a sum of filter-weighted input rows), so every access is contiguous.

use super::single::check_pair;
use super::{max_level, rec_len, Algorithm, DwtError, Mode, Transform};
use crate::real::Real;
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// A normalized axis in 0..ndim.
pub fn axis_index(axis: isize, ndim: usize) -> Result<usize, DwtError> {
    let a = if axis < 0 { axis + ndim as isize } else { axis };
    if a < 0 || a >= ndim as isize {
        return Err(DwtError::BadAxis { axis, ndim });
    }
    Ok(a as usize)
}

/// (outer, n, inner) of a standard-layout array split at `axis`.
fn split_dims(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product();
    (outer, shape[axis], inner)
}

fn with_len(shape: &[usize], axis: usize, len: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s[axis] = len;
    s
}

/// One level along `axis`: (cA, cD), as `pywt.dwt(x, w, mode, axis=axis)`.
pub fn dwt_axis<T: Real>(
    x: ArrayViewD<T>,
    t: &Transform<T>,
    axis: usize,
) -> Result<(ArrayD<T>, ArrayD<T>), DwtError> {
    let shape = x.shape().to_vec();
    if x.is_empty() {
        return Err(DwtError::EmptySignal);
    }
    t.check_len(shape[axis])?;
    let x = x.as_standard_layout();
    let src = x.as_slice().expect("standard layout");
    let (outer, n, inner) = split_dims(&shape, axis);
    let no = t.coeff_len(n);
    let mut ca = crate::memory::zeroed_vec::<T>(outer * no * inner);
    let mut cd = crate::memory::zeroed_vec::<T>(outer * no * inner);
    if inner == 1 {
        if outer == 1 {
            t.forward(src, &mut ca, &mut cd, true);
        } else {
            ca.par_chunks_mut(no)
                .zip(cd.par_chunks_mut(no))
                .zip(src.par_chunks(n))
                .for_each(|((a, d), x)| t.forward(x, a, d, false));
        }
    } else if matches!(
        t.algorithm,
        Algorithm::Auto | Algorithm::Matrix | Algorithm::MatrixNoWrap
    ) {
        rows_forward(src, t, n, inner, &mut ca, &mut cd);
    } else {
        lanes(src, n, inner, no, &mut ca, &mut cd, |lane, a, d| {
            t.forward(lane, a, d, false)
        });
    }
    let s = with_len(&shape, axis, no);
    Ok((
        ArrayD::from_shape_vec(IxDyn(&s), ca).expect("shape"),
        ArrayD::from_shape_vec(IxDyn(&s), cd).expect("shape"),
    ))
}

/// Gathers each strided lane into a buffer, transforms it, scatters back.
#[allow(clippy::too_many_arguments)]
fn lanes<T: Real>(
    src: &[T],
    n: usize,
    inner: usize,
    no: usize,
    out_a: &mut [T],
    out_b: &mut [T],
    f: impl Fn(&[T], &mut [T], &mut [T]) + Sync,
) {
    out_a
        .par_chunks_mut(no * inner)
        .zip(out_b.par_chunks_mut(no * inner))
        .enumerate()
        .for_each(|(o, (oa, ob))| {
            let block = &src[o * n * inner..(o + 1) * n * inner];
            let mut lane = vec![T::zero(); n];
            let (mut a, mut b) = (vec![T::zero(); no], vec![T::zero(); no]);
            for c in 0..inner {
                for (i, v) in lane.iter_mut().enumerate() {
                    *v = block[i * inner + c];
                }
                f(&lane, &mut a, &mut b);
                for i in 0..no {
                    oa[i * inner + c] = a[i];
                    ob[i * inner + c] = b[i];
                }
            }
        });
}

/// The matrix form on whole rows: output row o = sum_j f[j] x_row(s0 + 2o - j).
fn rows_forward<T: Real>(
    src: &[T],
    t: &Transform<T>,
    n: usize,
    inner: usize,
    ca: &mut [T],
    cd: &mut [T],
) {
    let w = &t.wavelet;
    let lo: Vec<T> = w.dec_lo.iter().map(|&v| T::of(v)).collect();
    let hi: Vec<T> = w.dec_hi.iter().map(|&v| T::of(v)).collect();
    let f = lo.len();
    let s0 = if t.mode == Mode::Periodization {
        f / 2
    } else {
        1
    } as isize;
    let no = t.coeff_len(n);
    ca.par_chunks_mut(inner)
        .zip(cd.par_chunks_mut(inner))
        .enumerate()
        .for_each(|(row, (ra, rd))| {
            let (o_blk, o) = (row / no, row % no);
            let block = &src[o_blk * n * inner..(o_blk + 1) * n * inner];
            ra.fill(T::zero());
            rd.fill(T::zero());
            // An extended row made of several samples (smooth, antireflect),
            // in float64 and rounded once, as `Mode::at` does in 1-D.
            let mut ext: Vec<T> = Vec::new();
            for j in 0..f {
                let tpos = s0 + 2 * o as isize - j as isize;
                let (k, terms) = t.mode.weights(n, tpos);
                let row = |i: usize| &block[i * inner..(i + 1) * inner];
                let xr: &[T] = match &terms[..k] {
                    [] => continue,
                    &[(i, 1.0)] => row(i),
                    many => {
                        ext.clear();
                        ext.extend((0..inner).map(|e| {
                            T::of(
                                many.iter()
                                    .fold(0.0f64, |acc, &(i, w)| acc + w * row(i)[e].f64()),
                            )
                        }));
                        &ext
                    }
                };
                let (cl, ch) = (lo[j], hi[j]);
                for ((a, d), v) in ra.iter_mut().zip(rd.iter_mut()).zip(xr) {
                    *a = cl * *v + *a;
                    *d = ch * *v + *d;
                }
            }
        });
}

/// One inverse level along `axis`, as `pywt.idwt(a, d, w, mode, axis=axis)`.
pub fn idwt_axis<T: Real>(
    a: ArrayViewD<T>,
    d: ArrayViewD<T>,
    t: &Transform<T>,
    axis: usize,
) -> Result<ArrayD<T>, DwtError> {
    if a.shape() != d.shape() {
        return Err(DwtError::CoefficientMismatch(format!(
            "approximation shape {:?} and detail shape {:?} differ",
            a.shape(),
            d.shape()
        )));
    }
    let shape = a.shape().to_vec();
    let nc = shape[axis];
    check_pair(nc, nc, t)?;
    let a = a.as_standard_layout();
    let d = d.as_standard_layout();
    let (sa, sd) = (
        a.as_slice().expect("standard"),
        d.as_slice().expect("standard"),
    );
    let (outer, _, inner) = split_dims(&shape, axis);
    let nr = rec_len(nc, t.filter_len(), t.mode);
    let mut out = crate::memory::zeroed_vec::<T>(outer * nr * inner);
    if inner == 1 {
        if outer == 1 {
            t.inverse(sa, sd, &mut out, true);
        } else {
            out.par_chunks_mut(nr)
                .zip(sa.par_chunks(nc).zip(sd.par_chunks(nc)))
                .for_each(|(o, (a, d))| t.inverse(a, d, o, false));
        }
    } else if matches!(
        t.algorithm,
        Algorithm::Auto | Algorithm::Matrix | Algorithm::MatrixNoWrap
    ) {
        rows_inverse(sa, sd, t, nc, inner, &mut out);
    } else {
        out.par_chunks_mut(nr * inner)
            .enumerate()
            .for_each(|(o, ob)| {
                let (ba, bd) = (
                    &sa[o * nc * inner..(o + 1) * nc * inner],
                    &sd[o * nc * inner..(o + 1) * nc * inner],
                );
                let (mut la, mut ld, mut r) = (
                    vec![T::zero(); nc],
                    vec![T::zero(); nc],
                    vec![T::zero(); nr],
                );
                for c in 0..inner {
                    for i in 0..nc {
                        la[i] = ba[i * inner + c];
                        ld[i] = bd[i * inner + c];
                    }
                    t.inverse(&la, &ld, &mut r, false);
                    for (i, v) in r.iter().enumerate() {
                        ob[i * inner + c] = *v;
                    }
                }
            });
    }
    let s = with_len(&shape, axis, nr);
    Ok(ArrayD::from_shape_vec(IxDyn(&s), out).expect("shape"))
}

fn rows_inverse<T: Real>(
    sa: &[T],
    sd: &[T],
    t: &Transform<T>,
    nc: usize,
    inner: usize,
    out: &mut [T],
) {
    let w = &t.wavelet;
    let rlo: Vec<T> = w.rec_lo.iter().map(|&v| T::of(v)).collect();
    let rhi: Vec<T> = w.rec_hi.iter().map(|&v| T::of(v)).collect();
    let f = rlo.len() as isize;
    let periodic = t.mode == Mode::Periodization;
    let shift = super::synthesis_shift(f as usize, t.mode);
    let nr = rec_len(nc, f as usize, t.mode);
    let nci = nc as isize;
    out.par_chunks_mut(inner).enumerate().for_each(|(row, ro)| {
        let (blk, n) = (row / nr, (row % nr) as isize);
        let (ba, bd) = (
            &sa[blk * nc * inner..(blk + 1) * nc * inner],
            &sd[blk * nc * inner..(blk + 1) * nc * inner],
        );
        ro.fill(T::zero());
        let mut m = n + shift;
        if periodic {
            m = m.rem_euclid(2 * nci);
        }
        let (i, p) = (m.div_euclid(2), m.rem_euclid(2) as usize);
        for k in 0..(f / 2) {
            let Some(q) = super::coefficient_at(i - k, nc, periodic) else {
                continue;
            };
            let (cl, ch) = (rlo[(2 * k) as usize + p], rhi[(2 * k) as usize + p]);
            let (ra, rd) = (
                &ba[q * inner..(q + 1) * inner],
                &bd[q * inner..(q + 1) * inner],
            );
            for ((o, av), dv) in ro.iter_mut().zip(ra).zip(rd) {
                *o = cl * *av + ch * *dv + *o;
            }
        }
    });
}

/// A detail key: one letter per transformed axis ('a' or 'd').
pub type DetailKey = String;

/// wavedecn's result: the approximation and, coarsest first, one detail
/// dict per level (every key but the all-'a' one).
#[derive(Debug, Clone, PartialEq)]
pub struct NdCoefficients<T> {
    pub approx: ArrayD<T>,
    pub details: Vec<BTreeMap<DetailKey, ArrayD<T>>>,
}

/// The axes as indices, each once (negative ones count from the end).
pub fn check_axes(axes: &[isize], ndim: usize) -> Result<Vec<usize>, DwtError> {
    let mut out: Vec<usize> = Vec::new();
    for &a in axes {
        let i = axis_index(a, ndim)?;
        if out.contains(&i) {
            return Err(DwtError::RepeatedAxis(i));
        }
        out.push(i);
    }
    Ok(out)
}

/// `pywt.dwtn`: every combination of 'a'/'d' over `axes`.
pub fn dwtn<T: Real>(
    x: ArrayViewD<T>,
    t: &Transform<T>,
    axes: &[isize],
) -> Result<BTreeMap<DetailKey, ArrayD<T>>, DwtError> {
    let axes = check_axes(axes, x.ndim())?;
    let mut coeffs: Vec<(String, ArrayD<T>)> = vec![(String::new(), x.to_owned())];
    for &axis in &axes {
        let mut next = Vec::with_capacity(coeffs.len() * 2);
        for (key, c) in coeffs {
            let (a, d) = dwt_axis(c.view(), t, axis)?;
            next.push((format!("{key}a"), a));
            next.push((format!("{key}d"), d));
        }
        coeffs = next;
    }
    Ok(coeffs.into_iter().collect())
}

/// `pywt.idwtn`; every key must be present with one shape.
pub fn idwtn<T: Real>(
    coeffs: &BTreeMap<DetailKey, ArrayD<T>>,
    t: &Transform<T>,
    axes: &[isize],
) -> Result<ArrayD<T>, DwtError> {
    let ndim = coeffs
        .values()
        .next()
        .map(|a| a.ndim())
        .ok_or_else(|| DwtError::CoefficientMismatch("no coefficients".into()))?;
    let axes = check_axes(axes, ndim)?;
    let mut level: BTreeMap<String, ArrayD<T>> = coeffs.clone();
    for (k, &axis) in axes.iter().enumerate().rev() {
        let mut next = BTreeMap::new();
        for key in keys(k) {
            let (ka, kd) = (format!("{key}a"), format!("{key}d"));
            let (a, d) = match (level.get(&ka), level.get(&kd)) {
                (Some(a), Some(d)) => (a, d),
                _ => {
                    return Err(DwtError::CoefficientMismatch(format!(
                        "coefficient '{}' is missing",
                        if level.contains_key(&ka) { kd } else { ka }
                    )))
                }
            };
            next.insert(key, idwt_axis(a.view(), d.view(), t, axis)?);
        }
        level = next;
    }
    level
        .remove("")
        .ok_or_else(|| DwtError::CoefficientMismatch("no coefficients".into()))
}

/// All 'a'/'d' strings of length k in PyWavelets' (itertools.product) order.
pub fn keys(k: usize) -> Vec<String> {
    (0..1usize << k)
        .map(|bits| {
            (0..k)
                .map(|i| {
                    if bits >> (k - 1 - i) & 1 == 0 {
                        'a'
                    } else {
                        'd'
                    }
                })
                .collect()
        })
        .collect()
}

/// `pywt.wavedecn`; `level` None is the largest level every axis allows.
pub fn wavedecn<T: Real>(
    x: ArrayViewD<T>,
    t: &Transform<T>,
    level: Option<usize>,
    axes: &[isize],
) -> Result<NdCoefficients<T>, DwtError> {
    let ax = check_axes(axes, x.ndim())?;
    if x.is_empty() {
        return Err(DwtError::EmptySignal);
    }
    let level = level.unwrap_or_else(|| {
        ax.iter()
            .map(|&a| max_level(x.shape()[a], t.filter_len()))
            .min()
            .unwrap_or(0)
    });
    super::multilevel::check_level(level)?;
    let mut a: Option<ArrayD<T>> = None;
    let mut details = Vec::with_capacity(level);
    let all_a = "a".repeat(ax.len());
    for _ in 0..level {
        // The first level reads the input itself (no copy of it).
        let mut c = dwtn(a.as_ref().map_or(x.view(), |v| v.view()), t, axes)?;
        a = c.remove(&all_a);
        details.push(c);
    }
    let a = a.unwrap_or_else(|| x.to_owned());
    details.reverse();
    Ok(NdCoefficients { approx: a, details })
}

/// `pywt.waverecn`: the approximation of each level is cut to its details'
/// shape (it may be one longer along an axis, from odd lengths).
pub fn waverecn<T: Real>(
    c: &NdCoefficients<T>,
    t: &Transform<T>,
    axes: &[isize],
) -> Result<ArrayD<T>, DwtError> {
    waverecn_into(c.clone(), t, axes)
}

/// `waverecn` of coefficients it may consume (no copy of them).
pub fn waverecn_into<T: Real>(
    c: NdCoefficients<T>,
    t: &Transform<T>,
    axes: &[isize],
) -> Result<ArrayD<T>, DwtError> {
    let ax = check_axes(axes, c.approx.ndim())?;
    let all_a = "a".repeat(ax.len());
    let mut a = c.approx;
    for (lvl, mut d) in c.details.into_iter().enumerate() {
        let Some(first) = d.values().next() else {
            return Err(DwtError::CoefficientMismatch(format!(
                "detail level {} is empty",
                lvl + 1
            )));
        };
        let want = first.shape().to_vec();
        check_approx_fits(lvl + 1, a.shape(), &want)?;
        if a.shape() != want.as_slice() {
            let mut v = a.view();
            for (k, &w) in want.iter().enumerate() {
                v.slice_axis_inplace(Axis(k), ndarray::Slice::from(0..w));
            }
            a = v.to_owned();
        }
        d.insert(all_a.clone(), a);
        a = idwtn(&d, t, axes)?;
    }
    Ok(a)
}

/// waverecn's rule for level `level`: the approximation has the details'
/// dimensions and, along each, their length or one more (odd lengths).
pub fn check_approx_fits(level: usize, approx: &[usize], want: &[usize]) -> Result<(), DwtError> {
    if approx.len() != want.len() {
        return Err(DwtError::CoefficientMismatch(format!(
            "level {level}: approximation has {} dimensions, details {}",
            approx.len(),
            want.len()
        )));
    }
    if !approx.iter().zip(want).all(|(&s, &w)| s == w || s == w + 1) {
        return Err(DwtError::CoefficientMismatch(format!(
            "level {level}: approximation shape {approx:?} does not fit detail shape {want:?}"
        )));
    }
    Ok(())
}

/// `pywt.dwt2`: (cA, (cH, cV, cD)) over the last two axes (or `axes`).
#[allow(clippy::type_complexity)]
pub fn dwt2<T: Real>(
    x: ArrayViewD<T>,
    t: &Transform<T>,
    axes: [isize; 2],
) -> Result<(ArrayD<T>, [ArrayD<T>; 3]), DwtError> {
    let mut c = dwtn(x, t, &axes)?;
    let mut take = |k: &str| c.remove(k).expect("dwtn returns every key");
    Ok((take("aa"), [take("da"), take("ad"), take("dd")]))
}

/// PyWavelets' 2-D detail triple (cH, cV, cD) = ('da', 'ad', 'dd').
pub const DETAILS_2D: [&str; 3] = ["da", "ad", "dd"];

/// `pywt.idwt2` of (cA, (cH, cV, cD)).
pub fn idwt2<T: Real>(
    ca: &ArrayD<T>,
    details: &[ArrayD<T>; 3],
    t: &Transform<T>,
    axes: [isize; 2],
) -> Result<ArrayD<T>, DwtError> {
    let mut c: BTreeMap<String, ArrayD<T>> = BTreeMap::new();
    c.insert("aa".into(), ca.clone());
    for (k, d) in DETAILS_2D.iter().zip(details) {
        c.insert((*k).into(), d.clone());
    }
    idwtn(&c, t, &axes)
}

/// 2-D coefficients as `pywt.wavedec2` returns them: cA_n, then
/// (cH, cV, cD) per level, coarsest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Coefficients2d<T> {
    pub approx: ArrayD<T>,
    pub details: Vec<[ArrayD<T>; 3]>,
}

/// `pywt.wavedec2` (over `axes`, the last two by default in PyWavelets).
pub fn wavedec2<T: Real>(
    x: ArrayViewD<T>,
    t: &Transform<T>,
    level: Option<usize>,
    axes: [isize; 2],
) -> Result<Coefficients2d<T>, DwtError> {
    let c = wavedecn(x, t, level, &axes)?;
    let details = c
        .details
        .into_iter()
        .map(|mut d| DETAILS_2D.map(|k| d.remove(k).expect("wavedecn returns every key")))
        .collect();
    Ok(Coefficients2d {
        approx: c.approx,
        details,
    })
}

/// `pywt.waverec2`.
pub fn waverec2<T: Real>(
    c: &Coefficients2d<T>,
    t: &Transform<T>,
    axes: [isize; 2],
) -> Result<ArrayD<T>, DwtError> {
    let nd = NdCoefficients {
        approx: c.approx.clone(),
        details: c
            .details
            .iter()
            .map(|d| {
                DETAILS_2D
                    .iter()
                    .zip(d)
                    .map(|(k, v)| ((*k).to_string(), v.clone()))
                    .collect()
            })
            .collect(),
    };
    waverecn(&nd, t, &axes)
}
