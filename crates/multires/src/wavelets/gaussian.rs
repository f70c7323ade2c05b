//! Derivatives of Gaussians: PyWavelets' mexh, gausP and cgauP, and the DOG(m)
//! of Torrence & Compo. ψ = q(t) exp(-a t² - i c t) with q a polynomial built by
//! the recurrence d/dt(q f) = (q' + q (-2a t - i c)) f, normalised to unit energy.
use num_complex::Complex64;
use std::f64::consts::PI;

pub fn mexh(t: f64) -> f64 {
    let c = 2.0 / (3f64.sqrt() * PI.powf(0.25));
    c * (1.0 - t * t) * (-0.5 * t * t).exp()
}

#[derive(Debug, Clone)]
pub struct GaussianDerivative {
    /// Coefficients of q, lowest power first.
    poly: Vec<Complex64>,
    a: f64,
    c: f64,
    real: bool,
}

impl GaussianDerivative {
    /// gausP (complex = false) or cgauP (complex = true) of PyWavelets.
    pub fn new(order: u32, complex: bool) -> Self {
        let c = if complex { 1.0 } else { 0.0 };
        let mut g = Self::derivative(order, 1.0, c, !complex);
        // PyWavelets flips the sign of gaus2, 3, 6, 7 (checked against wavefun).
        if !complex && matches!(order % 4, 2 | 3) {
            g.poly.iter_mut().for_each(|v| *v = -*v);
        }
        g
    }

    /// DOG(m) = (-1)^(m+1) / sqrt(Γ(m + 1/2)) d^m/dt^m exp(-t²/2).
    pub fn dog(order: u32) -> Self {
        let mut g = Self::derivative(order, 0.5, 0.0, true);
        // Undo the unit-energy scaling to apply Torrence & Compo's constant.
        let unit = g.raw_energy().sqrt();
        let sign = if order % 2 == 1 { 1.0 } else { -1.0 };
        let k = sign * unit / gamma_half(order);
        g.poly.iter_mut().for_each(|v| *v *= k);
        g
    }

    fn derivative(order: u32, a: f64, c: f64, real: bool) -> Self {
        let mut q = vec![Complex64::new(1.0, 0.0)];
        for _ in 0..order {
            let mut next = vec![Complex64::new(0.0, 0.0); q.len() + 1];
            for (k, &v) in q.iter().enumerate() {
                if k > 0 {
                    next[k - 1] += v * k as f64;
                }
                next[k + 1] += v * (-2.0 * a);
                next[k] += v * Complex64::new(0.0, -c);
            }
            q = next;
        }
        let mut g = GaussianDerivative {
            poly: q,
            a,
            c,
            real,
        };
        let e = g.raw_energy();
        let s = 1.0 / e.sqrt();
        g.poly.iter_mut().for_each(|v| *v *= s);
        g
    }

    /// ∫|ψ|² by the trapezoid rule, spectrally accurate for Gaussians.
    fn raw_energy(&self) -> f64 {
        let (lo, hi, n) = (-14.0, 14.0, 28000);
        let h = (hi - lo) / n as f64;
        let mut acc = 0.0;
        for i in 0..=n {
            let t = lo + i as f64 * h;
            let v = self.eval_complex(t).norm_sqr();
            acc += if i == 0 || i == n { 0.5 * v } else { v };
        }
        acc * h
    }

    fn eval_complex(&self, t: f64) -> Complex64 {
        let mut q = Complex64::new(0.0, 0.0);
        for &v in self.poly.iter().rev() {
            q = q * t + v;
        }
        q * Complex64::from_polar((-self.a * t * t).exp(), -self.c * t)
    }

    pub fn formula(&self) -> super::Formula<'_> {
        super::Formula::GaussianPolynomial {
            poly: &self.poly,
            a: self.a,
            c: self.c,
            real: self.real,
        }
    }

    pub fn eval(&self, t: f64) -> Complex64 {
        let v = self.eval_complex(t);
        if self.real {
            Complex64::new(v.re, 0.0)
        } else {
            v
        }
    }
}

/// sqrt(Γ(m + 1/2)) for integer m, by Γ(1/2) = √π and Γ(x+1) = x Γ(x).
fn gamma_half(m: u32) -> f64 {
    let mut g = PI.sqrt();
    for k in 0..m {
        g *= k as f64 + 0.5;
    }
    g.sqrt()
}
