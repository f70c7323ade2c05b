//! One level of PyWavelets' stationary (undecimated, à trous) transform:
//! the periodized convolution of each row with the decomposition filters
//! upsampled by `fstep` = 2^(j-1) at level j, every output kept,
//! y[o] = Σ_m f[m] x[(o + F/2 - m fstep) mod N] with F = taps x fstep,
//! the taps summed in ascending order as pywt's `swt_` does.

use super::matrix::avx2_dispatch;
use super::{DiscreteWavelet, DwtError, Mode, Transform};
use crate::real::Real;
use rayon::prelude::*;

/// pywt's `swt_max_level`: how many times `n` halves evenly (0 for 0).
pub fn swt_max_level(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        n.trailing_zeros() as usize
    }
}

/// The level of every row of `x` (rows of `n` samples): approximation
/// into `ca`, detail into `cd`, both rows of `n`.
pub fn swt_level<T: Real>(
    x: &[T],
    n: usize,
    (lo, hi): (&[f64], &[f64]),
    fstep: usize,
    ca: &mut [T],
    cd: &mut [T],
) {
    let offset = lo.len() * fstep / 2;
    atrous_level(x, n, (lo, hi), fstep, offset, ca, cd);
}

/// Both filters of a bank upsampled by `fstep`, circularly over every row:
/// y[o] = Σ_m f[m] x[(o + offset - m fstep) mod n], the taps summed in
/// ascending order. `swt_level` is the case offset = taps x fstep / 2,
/// the MODWT the causal case offset = 0.
pub fn atrous_level<T: Real>(
    x: &[T],
    n: usize,
    (lo, hi): (&[f64], &[f64]),
    fstep: usize,
    offset: usize,
    ca: &mut [T],
    cd: &mut [T],
) {
    if n == 0 || lo.is_empty() {
        return;
    }
    let lo: Vec<T> = lo.iter().map(|&v| T::of(v)).collect();
    let hi: Vec<T> = hi.iter().map(|&v| T::of(v)).collect();
    let taps = lo.len();
    // Output o, tap m reads x[(o + offset - m fstep) mod n]: a block of
    // outputs reads the window [o0 + offset - left, o0 + len + offset).
    // Blocks whose window lies inside the row read the row itself; the
    // few at the ends read a wrapped copy of their window. Each output
    // is accumulated tap by tap (an axpy the compiler vectorises) and
    // still sums its taps in ascending order.
    let left = (taps - 1) * fstep;
    const BLOCK: usize = 2048;
    ca.par_chunks_mut(n)
        .zip(cd.par_chunks_mut(n))
        .zip(x.par_chunks(n))
        .for_each(|((a, d), row)| {
            let blocks = a.par_chunks_mut(BLOCK).zip(d.par_chunks_mut(BLOCK));
            blocks.enumerate().for_each(|(b, (ab, db))| {
                let o0 = b * BLOCK;
                let lo_idx = (o0 + offset) as i64 - left as i64;
                let hi_idx = o0 + ab.len() + offset;
                if lo_idx >= 0 && hi_idx <= n {
                    atrous_block(row, o0 + offset, &lo, &hi, fstep, ab, db)
                } else {
                    let w: Vec<T> = (0..ab.len() + left)
                        .map(|k| row[(lo_idx + k as i64).rem_euclid(n as i64) as usize])
                        .collect();
                    atrous_block(&w, left, &lo, &hi, fstep, ab, db)
                }
            });
        });
}

avx2_dispatch!(
    /// One block of outputs, accumulated tap by tap (an axpy the compiler
    /// vectorises, 4 doubles wide with AVX2; no FMA contraction, so every
    /// output is the ascending sum of its products, as on the GPU): tap m
    /// reads `xe[start - m fstep ..]`.
    fn atrous_block / atrous_block_avx2 => atrous_block_body
    (xe: &[T], start: usize, lo: &[T], hi: &[T], fstep: usize, ab: &mut [T], db: &mut [T])
);

#[inline(always)]
fn atrous_block_body<T: Real>(
    xe: &[T],
    start: usize,
    lo: &[T],
    hi: &[T],
    fstep: usize,
    ab: &mut [T],
    db: &mut [T],
) {
    ab.iter_mut().for_each(|v| *v = T::zero());
    db.iter_mut().for_each(|v| *v = T::zero());
    for (m, (&fl, &fh)) in lo.iter().zip(hi).enumerate() {
        let s = start - m * fstep;
        let src = &xe[s..s + ab.len()];
        for ((va, vd), &xv) in ab.iter_mut().zip(db.iter_mut()).zip(src) {
            *va = *va + fl * xv;
            *vd = *vd + fh * xv;
        }
    }
}

/// `v` (m x cols, row-major) transposed: cols x m.
fn transposed<T: Real>(v: &[T], m: usize, cols: usize) -> Vec<T> {
    let mut out = vec![T::zero(); v.len()];
    transpose_into(v, m, cols, &mut out);
    out
}

/// `src` (rows x cols, row-major) transposed into `dst` (cols x rows), in
/// tiles so that both sides are read and written a cache line at a time.
fn transpose_into<T: Real>(src: &[T], rows: usize, cols: usize, dst: &mut [T]) {
    if cols == 1 || rows == 1 {
        dst.copy_from_slice(src);
        return;
    }
    const TILE: usize = 32;
    for i0 in (0..rows).step_by(TILE) {
        for j0 in (0..cols).step_by(TILE) {
            for i in i0..(i0 + TILE).min(rows) {
                for j in j0..(j0 + TILE).min(cols) {
                    dst[j * rows + i] = src[i * cols + j];
                }
            }
        }
    }
}

/// One level of pywt's `iswt` over rows of `n`: for each of the `fstep`
/// interleaved sequences of a level, the average of the periodization
/// inverses of its even and odd halves (the odd one rolled by one).
/// `t` must be a periodization transform; `n` a multiple of 2 `fstep`.
pub fn iswt_level<T: Real>(
    a: &[T],
    d: &[T],
    n: usize,
    t: &Transform<T>,
    fstep: usize,
    out: &mut [T],
) -> Result<(), DwtError> {
    if t.mode != Mode::Periodization {
        return Err(DwtError::NotAvailable(
            "iswt's levels invert by periodization".into(),
        ));
    }
    if n == 0 {
        return Ok(());
    }
    if fstep == 0 || !n.is_multiple_of(2 * fstep) {
        return Err(DwtError::BadLevel {
            level: fstep.trailing_zeros() as usize + 1,
            why: format!("{n} samples do not split into 2 x {fstep} interleaved sequences"),
        });
    }
    let m = n / fstep;
    let two = T::of(2.0);
    // Each residue class r of a row (samples r, r + fstep, ...) is one
    // independent inverse. The rows are transposed to classes first so that
    // every class is contiguous (gathering a class in place with stride
    // fstep read all of both rows once per class: 2 GB a level at fstep 32).
    out.par_chunks_mut(n)
        .zip(a.par_chunks(n).zip(d.par_chunks(n)))
        .for_each(|(row, (ar, dr))| {
            let (ca, cd) = (transposed(ar, m, fstep), transposed(dr, m, fstep));
            let mut classes = vec![T::zero(); n];
            classes.par_chunks_mut(m).enumerate().for_each(|(r, y)| {
                let (a_r, d_r) = (&ca[r * m..(r + 1) * m], &cd[r * m..(r + 1) * m]);
                let pick = |v: &[T], first: usize| -> Vec<T> {
                    v[first..].iter().step_by(2).copied().collect()
                };
                let (mut x1, mut x2) = (vec![T::zero(); m], vec![T::zero(); m]);
                let one = fstep == 1;
                t.inverse(&pick(a_r, 0), &pick(d_r, 0), &mut x1, one);
                t.inverse(&pick(a_r, 1), &pick(d_r, 1), &mut x2, one);
                y[0] = (x1[0] + x2[m - 1]) / two;
                for i in 1..m {
                    y[i] = (x1[i] + x2[i - 1]) / two;
                }
            });
            transpose_into(&classes, fstep, m, row);
        });
    Ok(())
}

/// pywt's length rule: `level` levels from `start_level` need the length
/// to halve evenly `start_level + level` times.
pub fn check_swt_levels(n: usize, level: usize, start_level: usize) -> Result<(), DwtError> {
    let max = swt_max_level(n);
    if max == 0 {
        return Err(DwtError::BadLevel {
            level,
            why: format!("{n} samples do not halve evenly even once; the stationary transform needs a length divisible by 2^level (pad the signal)"),
        });
    }
    if level == 0 || start_level + level > max {
        return Err(DwtError::BadLevel {
            level,
            why: format!(
                "the stationary transform of {n} samples from level {start_level} has at most {} levels \
                 (the length must be divisible by 2^(start_level + level))",
                max.saturating_sub(start_level)
            ),
        });
    }
    Ok(())
}

/// The bank scaled by `s` (pywt's norm=True: 1/sqrt 2 forward, sqrt 2 inverse).
pub fn scaled_bank(w: &DiscreteWavelet, s: f64) -> DiscreteWavelet {
    let mut out = w.clone();
    for f in [
        &mut out.dec_lo,
        &mut out.dec_hi,
        &mut out.rec_lo,
        &mut out.rec_hi,
    ] {
        f.iter_mut().for_each(|v| *v *= s);
    }
    out
}

/// One level of `swt`: (cA, cD), each of the input's size.
pub type SwtLevel<T> = (Vec<T>, Vec<T>);

/// `pywt.swt` of every row of `x` (rows of `n`): (cA_j, cD_j) for
/// j = start_level + level down to start_level + 1, coarsest first.
pub fn swt<T: Real>(
    x: &[T],
    n: usize,
    w: &DiscreteWavelet,
    level: usize,
    start_level: usize,
    norm: bool,
) -> Result<Vec<SwtLevel<T>>, DwtError> {
    check_swt_levels(n, level, start_level)?;
    // pywt's norm: the filters times 1/np.sqrt(2) = 0.7071067811865475,
    // one ulp below FRAC_1_SQRT_2 (so that the results are pywt's bits).
    let w = if norm {
        scaled_bank(w, 1.0 / std::f64::consts::SQRT_2)
    } else {
        w.clone()
    };
    let mut out = Vec::with_capacity(level);
    let mut a = x.to_vec();
    for j in start_level..start_level + level {
        let (mut ca, mut cd) = (
            crate::memory::zeroed_vec::<T>(x.len()),
            crate::memory::zeroed_vec::<T>(x.len()),
        );
        swt_level(&a, n, (&w.dec_lo, &w.dec_hi), 1 << j, &mut ca, &mut cd);
        out.push((ca.clone(), cd));
        a = ca;
    }
    out.reverse();
    Ok(out)
}

/// `pywt.iswt`: the rows from the coarsest approximation and the details
/// coarsest first (as `swt` returns them, from start level 0).
pub fn iswt<T: Real>(
    approx: &[T],
    details: &[Vec<T>],
    n: usize,
    w: &DiscreteWavelet,
    norm: bool,
) -> Result<Vec<T>, DwtError> {
    let w = if norm {
        scaled_bank(w, std::f64::consts::SQRT_2)
    } else {
        w.clone()
    };
    let t = Transform::<T>::new(
        &w,
        Mode::Periodization,
        Default::default(),
        Default::default(),
    )?;
    let mut out = approx.to_vec();
    let levels = details.len();
    for (j, d) in details.iter().enumerate() {
        if d.len() != out.len() {
            return Err(DwtError::CoefficientMismatch(format!(
                "the details of level {} hold {} values, the approximation {}",
                levels - j,
                d.len(),
                out.len()
            )));
        }
        let mut next = vec![T::zero(); out.len()];
        iswt_level(&out, d, n, &t, 1 << (levels - j - 1), &mut next)?;
        out = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_level_counts_halvings() {
        assert_eq!(swt_max_level(0), 0);
        assert_eq!(swt_max_level(7), 0);
        assert_eq!(swt_max_level(96), 5);
        assert_eq!(swt_max_level(1 << 20), 20);
    }

    #[test]
    fn haar_level_one_is_pairwise_sums() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let x = [1.0, 2.0, 4.0, 8.0];
        let (mut a, mut d) = ([0.0; 4], [0.0; 4]);
        swt_level(&x, 4, (&[h, h], &[-h, h]), 1, &mut a, &mut d);
        // pywt.swt([1, 2, 4, 8], 'haar', 1): cA (x[o] + x[o+1]) h, cD (x[o] - x[o+1]) h.
        for o in 0..4 {
            let (p, q) = (x[o], x[(o + 1) % 4]);
            assert!((a[o] - (p + q) * h).abs() < 1e-15 && (d[o] - (p - q) * h).abs() < 1e-15);
        }
    }

    #[test]
    fn iswt_level_inverts_swt_level() {
        let w = crate::dwt::DiscreteWavelet::from_name("db3").unwrap();
        let t = Transform::<f64>::new(
            &w,
            Mode::Periodization,
            Default::default(),
            Default::default(),
        )
        .unwrap();
        let n = 32;
        let x: Vec<f64> = (0..2 * n).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
        for fstep in [1, 2, 4] {
            let (mut a, mut d) = (vec![0.0; 2 * n], vec![0.0; 2 * n]);
            swt_level(&x, n, (&w.dec_lo, &w.dec_hi), fstep, &mut a, &mut d);
            let mut back = vec![0.0; 2 * n];
            iswt_level(&a, &d, n, &t, fstep, &mut back).unwrap();
            for (u, v) in back.iter().zip(&x) {
                assert!((u - v).abs() < 1e-12, "fstep {fstep}: {u} vs {v}");
            }
        }
    }
}
