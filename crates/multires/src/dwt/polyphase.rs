//! Polyphase matrices of a two-channel filter bank as Laurent polynomials,
//! the common ground of the lattice and lifting factorizations.
//!
//! Analysis: with pairs P_n = (x[2n + s0], x[2n + s0 - 1]),
//! (cA_n, cD_n) = sum_k E[k] P_{n-k}, E[k] = [[lo_2k, lo_2k+1], [hi_2k, hi_2k+1]].
//! Synthesis: with Q_i = (cA_i, cD_i), (y_2i, y_2i+1) = sum_k R[k] Q_{i-k},
//! R[k] = [[rlo_2k, rhi_2k], [rlo_2k+1, rhi_2k+1]].

/// sum_i c[i] z^-(low + i): applied to a sequence u, (p u)_n = sum_i c[i] u_{n - low - i}.
#[derive(Debug, Clone, PartialEq)]
pub struct Laurent {
    pub c: Vec<f64>,
    pub low: isize,
}

impl Laurent {
    pub fn zero() -> Self {
        Laurent {
            c: Vec::new(),
            low: 0,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.c.is_empty()
    }

    pub fn is_empty(&self) -> bool {
        self.c.is_empty()
    }

    pub fn len(&self) -> usize {
        self.c.len()
    }

    /// Drops leading and trailing coefficients at or below `tol` in size.
    pub fn trimmed(mut self, tol: f64) -> Self {
        while self.c.last().is_some_and(|v| v.abs() <= tol) {
            self.c.pop();
        }
        let lead = self.c.iter().take_while(|v| v.abs() <= tol).count();
        self.c.drain(..lead);
        self.low += lead as isize;
        if self.c.is_empty() {
            self.low = 0;
        }
        self
    }

    pub fn add(&self, o: &Laurent) -> Laurent {
        if self.is_zero() {
            return o.clone();
        }
        if o.is_zero() {
            return self.clone();
        }
        let low = self.low.min(o.low);
        let high = (self.low + self.len() as isize).max(o.low + o.len() as isize);
        let mut c = vec![0.0; (high - low) as usize];
        for (i, v) in self.c.iter().enumerate() {
            c[(self.low - low) as usize + i] += v;
        }
        for (i, v) in o.c.iter().enumerate() {
            c[(o.low - low) as usize + i] += v;
        }
        Laurent { c, low }
    }

    pub fn scale(&self, s: f64) -> Laurent {
        Laurent {
            c: self.c.iter().map(|v| v * s).collect(),
            low: self.low,
        }
    }

    pub fn mul(&self, o: &Laurent) -> Laurent {
        if self.is_zero() || o.is_zero() {
            return Laurent::zero();
        }
        let mut c = vec![0.0; self.len() + o.len() - 1];
        for (i, a) in self.c.iter().enumerate() {
            for (j, b) in o.c.iter().enumerate() {
                c[i + j] += a * b;
            }
        }
        Laurent {
            c,
            low: self.low + o.low,
        }
    }

    pub fn max_abs(&self) -> f64 {
        self.c.iter().fold(0.0, |m, v| m.max(v.abs()))
    }
}

pub type Matrix = [[Laurent; 2]; 2];

fn phase(f: &[f64], parity: usize) -> Laurent {
    Laurent {
        c: f.iter().skip(parity).step_by(2).copied().collect(),
        low: 0,
    }
}

/// E(z) of the analysis filters (dec_lo, dec_hi).
pub fn analysis(lo: &[f64], hi: &[f64]) -> Matrix {
    [[phase(lo, 0), phase(lo, 1)], [phase(hi, 0), phase(hi, 1)]]
}

/// R(z) of the synthesis filters (rec_lo, rec_hi).
pub fn synthesis(lo: &[f64], hi: &[f64]) -> Matrix {
    [[phase(lo, 0), phase(hi, 0)], [phase(lo, 1), phase(hi, 1)]]
}

pub fn mat_mul(a: &Matrix, b: &Matrix) -> Matrix {
    let e = |i: usize, j: usize| a[i][0].mul(&b[0][j]).add(&a[i][1].mul(&b[1][j]));
    [[e(0, 0), e(0, 1)], [e(1, 0), e(1, 1)]]
}

/// Largest coefficient difference between two matrices.
pub fn distance(a: &Matrix, b: &Matrix) -> f64 {
    let mut d: f64 = 0.0;
    for i in 0..2 {
        for j in 0..2 {
            d = d.max(a[i][j].add(&b[i][j].scale(-1.0)).max_abs());
        }
    }
    d
}

pub fn norm(a: &Matrix) -> f64 {
    a.iter().flatten().fold(0.0, |m, p| m.max(p.max_abs()))
}
