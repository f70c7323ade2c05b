//! The seed's lattice structure for orthogonal filter banks: the paraunitary
//! polyphase matrix factorized as E(z) = G_{L-1} Λ(z) ... Λ(z) G_1 Λ(z) M_0,
//! Λ(z) = diag(1, z^-1), each G a two-point butterfly with one tangent
//! multiplier (the seed's Γ = [[1, s], [t, 1]], two multiplications and two
//! additions) and all cosines gathered into M_0. Half the multiplications of
//! the matrix form. Used for analysis (E) and synthesis (R) alike.

use super::polyphase::{self, Laurent, Matrix};
use super::DwtError;
use crate::real::Real;

/// A rotation by θ as a butterfly of two multiplications.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Butterfly {
    /// cos θ (a - t b, t a + b), t = tan θ, |t| <= 1.
    Tangent(f64),
    /// sin θ (k a - b, a + k b), k = cot θ, |k| < 1.
    Cotangent(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lattice {
    /// First stage, a general 2x2 matrix with every stage's cosine folded in.
    pub m0: [[f64; 2]; 2],
    /// Later stages, each after a one-sample delay of the second channel.
    pub stages: Vec<Butterfly>,
}

impl Lattice {
    /// Factorizes a causal paraunitary polyphase matrix by the step-down
    /// recursion; fails if the filters are not paraunitary to 1e-12.
    pub fn factorize(e: &Matrix, what: &str) -> Result<Lattice, DwtError> {
        let len = e
            .iter()
            .flatten()
            .map(|p| p.low as usize + p.len())
            .max()
            .unwrap_or(1);
        let mut coef: Vec<[[f64; 2]; 2]> = (0..len)
            .map(|k| {
                let at = |p: &Laurent| {
                    let i = k as isize - p.low;
                    if i >= 0 && (i as usize) < p.len() {
                        p.c[i as usize]
                    } else {
                        0.0
                    }
                };
                [[at(&e[0][0]), at(&e[0][1])], [at(&e[1][0]), at(&e[1][1])]]
            })
            .collect();
        let scale_ref = polyphase::norm(e).max(f64::MIN_POSITIVE);
        let mut rotations = Vec::new();
        let mut residual: f64 = 0.0;
        for m in (1..len).rev() {
            // θ zeroes the second row's constant term (from E[0]) and, by
            // paraunitarity, the first row's top term (from E[m]); take it
            // from whichever end is larger, the better-conditioned one.
            let best_col = |e: &[[f64; 2]; 2]| {
                if e[0][0].hypot(e[1][0]) >= e[0][1].hypot(e[1][1]) {
                    0
                } else {
                    1
                }
            };
            let (e0, em) = (coef[0], coef[m]);
            let (c0, cm) = (best_col(&e0), best_col(&em));
            let r0 = e0[0][c0].hypot(e0[1][c0]);
            let rm = em[0][cm].hypot(em[1][cm]);
            let (c, s) = if r0 >= rm {
                (e0[0][c0] / r0, e0[1][c0] / r0)
            } else if rm > 0.0 {
                // c row0 + s row1 = 0 at the top.
                (em[1][cm] / rm, -em[0][cm] / rm)
            } else {
                (1.0, 0.0)
            };
            let mut next = vec![[[0.0; 2]; 2]; m];
            for k in 0..=m {
                let row0 = [
                    c * coef[k][0][0] + s * coef[k][1][0],
                    c * coef[k][0][1] + s * coef[k][1][1],
                ];
                let row1 = [
                    -s * coef[k][0][0] + c * coef[k][1][0],
                    -s * coef[k][0][1] + c * coef[k][1][1],
                ];
                if k < m {
                    next[k][0] = row0;
                } else {
                    residual = residual.max(row0[0].abs()).max(row0[1].abs());
                }
                if k > 0 {
                    next[k - 1][1] = row1;
                } else {
                    residual = residual.max(row1[0].abs()).max(row1[1].abs());
                }
            }
            rotations.push((c, s));
            coef = next;
        }
        if residual > 3e-14 * scale_ref {
            return Err(DwtError::NotAvailable(format!(
                "no lattice for {what}: the step-down factorization loses {residual:.1e} (its filters are not paraunitary to double precision, or too long for the recursion); use --algorithm matrix"
            )));
        }
        rotations.reverse();
        let mut gain = 1.0;
        let stages = rotations
            .into_iter()
            .map(|(c, s)| {
                if c.abs() >= s.abs() {
                    gain *= c;
                    Butterfly::Tangent(s / c)
                } else {
                    gain *= s;
                    Butterfly::Cotangent(c / s)
                }
            })
            .collect();
        let m = coef[0];
        let lattice = Lattice {
            m0: [
                [gain * m[0][0], gain * m[0][1]],
                [gain * m[1][0], gain * m[1][1]],
            ],
            stages,
        };
        let back = lattice.matrix();
        let d = polyphase::distance(&back, e);
        if d > 3e-14 * scale_ref {
            return Err(DwtError::NotAvailable(format!(
                "no lattice for {what}: its factorization reproduces the filters only to {d:.1e}; use --algorithm matrix"
            )));
        }
        Ok(lattice)
    }

    /// The polyphase matrix the lattice computes (for verification).
    pub fn matrix(&self) -> Matrix {
        let k = |v: f64| Laurent { c: vec![v], low: 0 };
        let z = Laurent::zero;
        let mut acc: Matrix = [
            [k(self.m0[0][0]), k(self.m0[0][1])],
            [k(self.m0[1][0]), k(self.m0[1][1])],
        ];
        for b in &self.stages {
            let delay: Matrix = [
                [k(1.0), z()],
                [
                    z(),
                    Laurent {
                        c: vec![1.0],
                        low: 1,
                    },
                ],
            ];
            let g: Matrix = match *b {
                Butterfly::Tangent(t) => [[k(1.0), k(-t)], [k(t), k(1.0)]],
                Butterfly::Cotangent(c) => [[k(c), k(-1.0)], [k(1.0), k(c)]],
            };
            acc = polyphase::mat_mul(&g, &polyphase::mat_mul(&delay, &acc));
        }
        acc
    }

    /// Runs the lattice over pair sequences in place. Non-circular: the
    /// first `stages.len()` entries lose validity (they lack a predecessor),
    /// so callers start that many pairs early. Circular: index -1 is the last.
    pub fn apply<T: Real>(&self, p0: &mut [T], p1: &mut [T], circular: bool) {
        let n = p0.len();
        if n == 0 {
            return;
        }
        let m = [
            [T::of(self.m0[0][0]), T::of(self.m0[0][1])],
            [T::of(self.m0[1][0]), T::of(self.m0[1][1])],
        ];
        for (a, b) in p0.iter_mut().zip(p1.iter_mut()) {
            let (x, y) = (*a, *b);
            *a = m[0][0] * x + m[0][1] * y;
            *b = m[1][0] * x + m[1][1] * y;
        }
        for st in &self.stages {
            // Descending, so p1[i - 1] is still the previous stage's value.
            let wrap = p1[n - 1];
            let step = |a: T, b: T| -> (T, T) {
                match *st {
                    Butterfly::Tangent(t) => {
                        let t = T::of(t);
                        (a - t * b, t * a + b)
                    }
                    Butterfly::Cotangent(k) => {
                        let k = T::of(k);
                        (k * a - b, a + k * b)
                    }
                }
            };
            for i in (1..n).rev() {
                let (a, b) = step(p0[i], p1[i - 1]);
                p0[i] = a;
                p1[i] = b;
            }
            if circular {
                let (a, b) = step(p0[0], wrap);
                p0[0] = a;
                p1[0] = b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dwt::DiscreteWavelet;

    /// The lattice exists, to 1e-13, for the short and medium orthogonal
    /// wavelets; the list of those refused is in BENCHMARKS.md.
    #[test]
    fn factorization_reproduces_the_filters() {
        for name in [
            "haar", "db1", "db2", "db4", "db8", "db13", "coif1", "coif5", "coif8",
        ] {
            let w = DiscreteWavelet::from_name(name).unwrap();
            for e in [
                polyphase::analysis(&w.dec_lo, &w.dec_hi),
                polyphase::synthesis(&w.rec_lo, &w.rec_hi),
            ] {
                let l = Lattice::factorize(&e, name).unwrap();
                assert_eq!(l.stages.len(), w.filter_len() / 2 - 1);
                assert!(polyphase::distance(&l.matrix(), &e) < 3e-14, "{name}");
            }
        }
        let dmey = DiscreteWavelet::from_name("dmey").unwrap();
        let e = polyphase::analysis(&dmey.dec_lo, &dmey.dec_hi);
        assert!(Lattice::factorize(&e, "dmey").is_err());
    }
}
