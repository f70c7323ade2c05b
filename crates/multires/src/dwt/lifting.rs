//! Lifting: the polyphase matrix factorized by the Euclidean algorithm on
//! Laurent polynomials (Daubechies & Sweldens) into predict and update steps
//! and a final scaling, E(z) = D(z) S_r(z) ... S_1(z). For CDF 5/3 (bior2.2)
//! and 9/7 (bior4.4) it yields their two and four classic lifting steps; for
//! haar, one. Used for analysis (E) and synthesis (R) alike.

use super::polyphase::{self, Laurent, Matrix};
use super::DwtError;
use crate::real::Real;

/// channel `target` += poly * (the other channel).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub target: usize,
    pub poly: Laurent,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lifting {
    pub steps: Vec<Step>,
    /// What the steps leave: a polyphase matrix whose first row has one
    /// zero (up to PyWavelets' own perfect-reconstruction error, which it
    /// keeps, so the factorization is exact), applied as it is.
    pub last: Matrix,
}

/// Solves the small dense system m q = b by Gaussian elimination with
/// partial pivoting; None when singular.
fn solve(mut m: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[piv][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..n {
            let f = m[row][col] / m[col][col];
            let (upper, lower) = m.split_at_mut(row);
            for (x, y) in lower[0][col..].iter_mut().zip(&upper[col][col..]) {
                *x -= f * y;
            }
            b[row] -= f * b[col];
        }
    }
    let mut q = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| m[row][k] * q[k]).sum();
        q[row] = (b[row] - s) / m[row][row];
    }
    Some(q)
}

/// A = q B + r with r shorter than B. Of the la - lb + 1 coefficients of A
/// that q cancels, any number may come from the top and the rest from the
/// bottom; the split with the smallest quotient is the best conditioned
/// (for symmetric filters it is the balanced one, giving the classic
/// symmetric lifting steps).
fn divide(a: &Laurent, b: &Laurent) -> (Laurent, Laurent) {
    let (la, lb) = (a.len(), b.len());
    let nq = la - lb + 1;
    let mut best: Option<(f64, Vec<f64>, usize)> = None;
    for top in 0..=nq {
        let bottom = nq - top;
        let rows: Vec<usize> = (0..bottom).chain(la - top..la).collect();
        // (q * B)[p] = sum_i q_i B[p - i].
        let m: Vec<Vec<f64>> = rows
            .iter()
            .map(|&p| {
                (0..nq)
                    .map(|i| {
                        if p >= i && p - i < lb {
                            b.c[p - i]
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        let rhs: Vec<f64> = rows.iter().map(|&p| a.c[p]).collect();
        if let Some(q) = solve(m, rhs) {
            let size = q.iter().fold(0.0f64, |s, v| s.max(v.abs()));
            if best
                .as_ref()
                .is_none_or(|(bs, _, _)| size < *bs * (1.0 - 1e-9))
            {
                best = Some((size, q, bottom));
            }
        }
    }
    let (_, q, bottom) = best.unwrap_or((0.0, vec![0.0; nq], 0));
    let mut r = a.c.clone();
    for (i, qv) in q.iter().enumerate() {
        for (j, bv) in b.c.iter().enumerate() {
            r[i + j] -= qv * bv;
        }
    }
    let rem: Vec<f64> = r[bottom..bottom + lb - 1].to_vec();
    (
        Laurent {
            c: q,
            low: a.low - b.low,
        },
        Laurent {
            c: rem,
            low: a.low + bottom as isize,
        },
    )
}

impl Lifting {
    pub fn factorize(e: &Matrix, what: &str) -> Result<Lifting, DwtError> {
        let scale = polyphase::norm(e).max(f64::MIN_POSITIVE);
        // PyWavelets' CDF 9/7 is perfect-reconstruction only to ~2e-13 (its
        // determinant has such terms), so remainders that small count as zero.
        let tol = 1e-11 * scale;
        let exact = 1e-15 * scale;
        let mut m: Matrix = e.clone().map(|row| row.map(|p| p.trimmed(exact)));
        let mut steps = Vec::new();
        let fail = |why: &str| DwtError::NotAvailable(format!("lifting for {what}: {why}"));
        for _ in 0..64 {
            // Stop when the first row has a zero, or an entry at the level
            // of PyWavelets' own perfect-reconstruction error (kept in `last`).
            let small = |p: &Laurent| p.max_abs() <= tol;
            if small(&m[0][0]) || small(&m[0][1]) {
                break;
            }
            // Column operations: E = E' S, S = [[1, 0], [q, 1]] or [[1, q], [0, 1]].
            let (keep, reduce) = if m[0][0].len() >= m[0][1].len() {
                (1, 0)
            } else {
                (0, 1)
            };
            let (q, _) = divide(&m[0][reduce], &m[0][keep]);
            for row in m.iter_mut() {
                row[reduce] = row[reduce]
                    .add(&q.mul(&row[keep]).scale(-1.0))
                    .trimmed(exact);
            }
            // S adds q * (channel keep) to channel reduce... in the input
            // space: [[1,0],[q,1]] [e; o] = [e; o + q e].
            steps.push(Step {
                target: keep,
                poly: q,
            });
        }
        let lifting = Lifting { steps, last: m };
        let d = polyphase::distance(&lifting.matrix(), e);
        if d > 1e-13 * scale {
            return Err(fail(&format!("the factorization is off by {d:.1e}")));
        }
        Ok(lifting)
    }

    pub fn matrix(&self) -> Matrix {
        let k = |v: f64, low: isize| Laurent { c: vec![v], low };
        let identity =
            || -> Matrix { [[k(1.0, 0), Laurent::zero()], [Laurent::zero(), k(1.0, 0)]] };
        let mut acc = identity();
        for s in &self.steps {
            let mut step = identity();
            step[s.target][1 - s.target] = s.poly.clone();
            acc = polyphase::mat_mul(&step, &acc);
        }
        polyphase::mat_mul(&self.last, &acc)
    }

    /// How far the steps and delays reach back (positive) and ahead.
    pub fn reach(&self) -> (usize, usize) {
        let mut back = 0isize;
        let mut ahead = 0isize;
        for s in &self.steps {
            back += (s.poly.low + s.poly.len() as isize - 1).max(0);
            ahead += (-s.poly.low).max(0);
        }
        let p = self.last.iter().flatten().filter(|p| !p.is_zero());
        let dmax = p
            .clone()
            .map(|p| p.low + p.len() as isize - 1)
            .max()
            .unwrap_or(0)
            .max(0);
        let dmin = p.map(|p| p.low).min().unwrap_or(0).min(0);
        ((back + dmax) as usize + 1, (ahead - dmin) as usize + 1)
    }

    /// Runs the steps in place over two channel buffers; reads outside the
    /// buffers count as zero, so callers give `reach` samples of margin.
    /// Writes the two output channels from buffer index `from` on.
    pub fn apply<T: Real>(
        &self,
        ch: &mut [Vec<T>; 2],
        from: usize,
        out0: &mut [T],
        out1: &mut [T],
    ) {
        let n = ch[0].len() as isize;
        for s in &self.steps {
            let t = s.target;
            let taps: Vec<(isize, T)> = s
                .poly
                .c
                .iter()
                .enumerate()
                .map(|(i, v)| (s.poly.low + i as isize, T::of(*v)))
                .collect();
            let (dst, src) = if t == 0 {
                let (a, b) = ch.split_at_mut(1);
                (&mut a[0], &b[0])
            } else {
                let (a, b) = ch.split_at_mut(1);
                (&mut b[0], &a[0])
            };
            // Interior indices read only inside the buffer.
            let dmax = taps.iter().map(|t| t.0).max().unwrap_or(0);
            let dmin = taps.iter().map(|t| t.0).min().unwrap_or(0);
            let lo = dmax.max(0).min(n);
            let hi = (n + dmin.min(0)).max(lo);
            for m in (0..lo).chain(hi..n) {
                let mut acc = T::zero();
                for &(d, c) in &taps {
                    let j = m - d;
                    if (0..n).contains(&j) {
                        acc = acc + c * src[j as usize];
                    }
                }
                dst[m as usize] = dst[m as usize] + acc;
            }
            for m in lo..hi {
                let mut acc = T::zero();
                for &(d, c) in &taps {
                    acc = acc + c * src[(m - d) as usize];
                }
                dst[m as usize] = dst[m as usize] + acc;
            }
        }
        for (r, out) in [out0, out1].into_iter().enumerate() {
            out.fill(T::zero());
            for (p, src) in self.last[r].iter().zip(ch.iter()) {
                for (i, v) in p.c.iter().enumerate() {
                    let (d, w) = (p.low + i as isize, T::of(*v));
                    for (k, o) in out.iter_mut().enumerate() {
                        let j = (from + k) as isize - d;
                        if (0..n).contains(&j) {
                            *o = w * src[j as usize] + *o;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dwt::DiscreteWavelet;

    /// CDF 5/3 starts with its classic symmetric predict (-1/2, -1/2), CDF
    /// 9/7 with alpha = -1.586..., each step two taps; what remains is a
    /// short final matrix.
    #[test]
    fn euclid_gives_the_classic_lifting_steps() {
        let steps = |name: &str| {
            let w = DiscreteWavelet::from_name(name).unwrap();
            let e = polyphase::analysis(&w.dec_lo, &w.dec_hi);
            Lifting::factorize(&e, name).unwrap()
        };
        let l = steps("bior2.2");
        assert_eq!(l.steps[0].poly.c, vec![-0.5, -0.5], "{l:?}");
        let l = steps("bior4.4");
        assert!(
            l.steps.len() >= 3 && l.steps.iter().all(|s| s.poly.len() == 2),
            "{l:?}"
        );
        let a = l.steps[0].poly.c[0];
        assert!((a.abs() - 1.586134342059924).abs() < 1e-9, "{a}");
    }
}
