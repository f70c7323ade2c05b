//! One level of PyWavelets' stationary (undecimated, à trous) transform:
//! the periodized convolution of each row with the decomposition filters
//! upsampled by `fstep` = 2^(j-1) at level j, every output kept,
//! y[o] = Σ_m f[m] x[(o + F/2 - m fstep) mod N] with F = taps x fstep,
//! the taps summed in ascending order as pywt's `swt_` does.

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
    if n == 0 || lo.is_empty() {
        return;
    }
    let lo: Vec<T> = lo.iter().map(|&v| T::of(v)).collect();
    let hi: Vec<T> = hi.iter().map(|&v| T::of(v)).collect();
    let taps = lo.len();
    let half = taps * fstep / 2;
    // The row extended periodically so no index wraps: xe[j] is
    // x[(j - left) mod n], and output o, tap m reads xe[o + half - m fstep + left].
    let left = (taps - 1) * fstep;
    // Blocks of outputs, each accumulated tap by tap (an axpy the compiler
    // vectorises); every output still sums its taps in ascending order.
    const BLOCK: usize = 2048;
    ca.par_chunks_mut(n)
        .zip(cd.par_chunks_mut(n))
        .zip(x.par_chunks(n))
        .for_each(|((a, d), row)| {
            let len = n + left + half;
            let xe: Vec<T> = if left <= n && half <= n {
                // The row's end, the row, its start: copies, no division.
                let mut v = Vec::with_capacity(len);
                v.extend_from_slice(&row[n - left..]);
                v.extend_from_slice(row);
                v.extend_from_slice(&row[..half]);
                v
            } else {
                (0..len)
                    .map(|j| row[(j as i64 - left as i64).rem_euclid(n as i64) as usize])
                    .collect()
            };
            let blocks = a.par_chunks_mut(BLOCK).zip(d.par_chunks_mut(BLOCK));
            blocks.enumerate().for_each(|(b, (ab, db))| {
                let o0 = b * BLOCK;
                ab.iter_mut().for_each(|v| *v = T::zero());
                db.iter_mut().for_each(|v| *v = T::zero());
                for m in 0..taps {
                    let start = o0 + half + left - m * fstep;
                    let src = &xe[start..start + ab.len()];
                    let (fl, fh) = (lo[m], hi[m]);
                    for ((va, vd), &xv) in ab.iter_mut().zip(db.iter_mut()).zip(src) {
                        *va = *va + fl * xv;
                        *vd = *vd + fh * xv;
                    }
                }
            });
        });
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
}
