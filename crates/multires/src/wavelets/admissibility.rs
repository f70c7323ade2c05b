//! ψ̂ and the constants that invert a CWT: the single-integral (Morlet)
//! constants K± = ∫₀^∞ conj(ψ̂(±u)) du/u of the inverse CWT and of
//! synchrosqueezing (ssqueezepy's `adm_ssq` is K+), and Calderón's
//! C_ψ = ∫ |ψ̂(u)|² du/|u| of the double-integral inverse (`adm_cwt`).
//!
//! All from ψ itself by quadrature, so every family, user files included,
//! gets the constant of the function its masks sample (truncation at the
//! half support and all).
use super::{Family, Wavelet};
use num_complex::Complex64;
use rayon::prelude::*;
use std::f64::consts::PI;

/// The constants of one wavelet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Admissibility {
    /// K+ = ∫₀^∞ conj(ψ̂(u)) du/u: what a real part of Σ W da/a carries of
    /// the signal's positive frequencies.
    pub positive: Complex64,
    /// K- = ∫₀^∞ conj(ψ̂(-u)) du/u (zero for an analytic wavelet).
    pub negative: Complex64,
    /// C_ψ = ∫ |ψ̂(u)|² du/|u| over both half-lines.
    pub calderon: f64,
    /// |ψ̂(0)| / max |ψ̂|: zero for an admissible wavelet; a complex Morlet
    /// of small bandwidth x centre leaves a little DC (cmor1.5-1.0: 4e-7),
    /// which makes K± depend slightly on how far down the integral goes.
    pub dc_leak: f64,
}

impl Admissibility {
    /// Whether the wavelet sees (nearly) only positive frequencies.
    pub fn is_analytic(&self) -> bool {
        self.negative.norm() <= 1e-4 * self.positive.norm()
    }
}

/// Steps of ln u per unit: the integrand conj(ψ̂(e^v)) is smooth in v, so the
/// trapezoid rule converges geometrically; 250 per unit leaves < 1e-12.
const STEPS_PER_UNIT: f64 = 250.0;
/// How far below the centre frequency the integral starts (e^-30 ≈ 1e-13).
const DECADES_BELOW: f64 = 30.0;
/// How far above: ψ̂ of every family here is negligible past e^4 ≈ 55 times
/// its centre; the scan stops earlier once |ψ̂| stays below 1e-17 of its peak.
const UNITS_ABOVE: f64 = 4.0;

impl Wavelet {
    /// ψ̂(ω) = ∫ ψ(t) e^{-iωt} dt: the closed form where the family has one
    /// (morl, mexh, cmorB-C, morseB-G), else the trapezoid rule over the
    /// half support (spectrally exact for a smooth ψ that has decayed at ±B).
    pub fn fourier_transform(&self, omegas: &[f64]) -> Vec<Complex64> {
        if self.closed_spectrum(1.0).is_some() {
            return omegas
                .iter()
                .map(|&w| self.closed_spectrum(w).unwrap_or_default())
                .collect();
        }
        self.numeric_transform(omegas)
    }

    /// ψ̂ by the trapezoid rule over ψ's half support.
    fn numeric_transform(&self, omegas: &[f64]) -> Vec<Complex64> {
        let (t0, dt, psi) = self.fourier_samples.get_or_init(|| self.fourier_grid());
        let (t0, dt) = (*t0, *dt);
        omegas
            .par_iter()
            .map(|&w| {
                // e^{-iωt} by recurrence: n steps drift ~n ulp, below 1e-11.
                let step = Complex64::from_polar(1.0, -w * dt);
                let mut e = Complex64::from_polar(1.0, -w * t0);
                let mut acc = Complex64::new(0.0, 0.0);
                for (j, p) in psi.iter().enumerate() {
                    let wgt = if j == 0 || j + 1 == psi.len() {
                        0.5
                    } else {
                        1.0
                    };
                    acc += p * e * wgt;
                    e *= step;
                }
                acc * dt
            })
            .collect()
    }

    /// ψ̂(ω) of the families defined by a formula whose transform is known.
    fn closed_spectrum(&self, w: f64) -> Option<Complex64> {
        let sq2pi = (2.0 * PI).sqrt();
        let v = match *self.family() {
            Family::Morlet => {
                0.5 * sq2pi * ((-(w - 5.0).powi(2) / 2.0).exp() + (-(w + 5.0).powi(2) / 2.0).exp())
            }
            Family::MexicanHat => {
                2.0 * sq2pi / (3f64.sqrt() * PI.powf(0.25)) * w * w * (-w * w / 2.0).exp()
            }
            Family::ComplexMorlet { bandwidth, center } => {
                (-bandwidth * (w - 2.0 * PI * center).powi(2) / 4.0).exp()
            }
            Family::Morse { beta, gamma } if w > 0.0 => {
                let a = 2.0 * (std::f64::consts::E * gamma / beta).powf(beta / gamma);
                (a.ln() + beta * w.ln() - w.powf(gamma)).exp()
            }
            Family::Morse { .. } => 0.0,
            _ => return None,
        };
        Some(Complex64::new(v, 0.0))
    }

    /// ψ sampled for `fourier_transform`: at least 16384 intervals and no
    /// coarser than 1/128 of a unit of t.
    fn fourier_grid(&self) -> (f64, f64, Vec<Complex64>) {
        let b = self.half_support().max(1.0);
        let n = ((2.0 * b * 128.0).ceil() as usize).max(16384);
        let dt = 2.0 * b / n as f64;
        let psi: Vec<Complex64> = (0..=n)
            .into_par_iter()
            .map(|j| self.psi(-b + j as f64 * dt))
            .collect();
        (-b, dt, psi)
    }

    /// K+, K-, C_ψ and the DC leak; computed once per wavelet value (about
    /// 0.1 s for the widest built-in wavelets), so keep the wavelet around.
    pub fn admissibility(&self) -> Admissibility {
        *self
            .admissibility
            .get_or_init(|| self.measure_admissibility())
    }

    fn measure_admissibility(&self) -> Admissibility {
        let wc = (2.0 * PI * self.center_frequency()).max(1e-6);
        let (lo, hi) = (wc.ln() - DECADES_BELOW, wc.ln() + UNITS_ABOVE);
        let n = ((hi - lo) * STEPS_PER_UNIT).ceil() as usize;
        let dv = (hi - lo) / n as f64;
        let us: Vec<f64> = (0..=n).map(|j| (lo + j as f64 * dv).exp()).collect();
        let minus: Vec<f64> = us.iter().map(|u| -u).collect();
        let mut pos = self.fourier_transform(&us);
        let mut neg = self.fourier_transform(&minus);
        let dc = self.fourier_transform(&[0.0])[0].norm();
        // A ψ cut at its half support keeps a little mean, which 1/u would
        // integrate into a log of the cut-off: below the last point where
        // |ψ̂| >= 10 |ψ̂(0)| (scanning up from u → 0) the integrand is that
        // artefact, dropped (what a true admissible ψ has there is < 1e-6).
        // A half-line that never rises above that level holds only it.
        for v in [&mut pos, &mut neg] {
            let first = v
                .iter()
                .position(|c| c.norm() >= 10.0 * dc)
                .unwrap_or(v.len());
            v[..first]
                .iter_mut()
                .for_each(|c| *c = Complex64::new(0.0, 0.0));
        }
        let trapezoid = |v: &[Complex64]| -> Complex64 {
            let mut s: Complex64 = v.iter().map(|c| c.conj()).sum();
            s -= (v[0].conj() + v[v.len() - 1].conj()) * 0.5;
            s * dv
        };
        let energy = |v: &[Complex64]| -> f64 {
            let s: f64 = v.iter().map(|c| c.norm_sqr()).sum();
            (s - 0.5 * (v[0].norm_sqr() + v[v.len() - 1].norm_sqr())) * dv
        };
        let peak = pos
            .iter()
            .chain(&neg)
            .map(|c| c.norm())
            .fold(0.0f64, f64::max);
        Admissibility {
            positive: trapezoid(&pos),
            negative: trapezoid(&neg),
            calderon: energy(&pos) + energy(&neg),
            dc_leak: if peak > 0.0 { dc / peak } else { 0.0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quadrature_transform_equals_the_closed_forms() {
        for (name, tol) in [
            ("mexh", 1e-12),
            ("cmor1.5-1.0", 1e-12),
            ("morl", 1e-12),
            ("morse20-3", 1e-5),
        ] {
            let w = Wavelet::from_name(name).unwrap();
            let om: Vec<f64> = (0..60).map(|k| -3.0 + 0.25 * k as f64).collect();
            let a = w.numeric_transform(&om);
            let b = w.fourier_transform(&om);
            let peak = b.iter().map(|c| c.norm()).fold(0.0f64, f64::max);
            for (p, q) in a.iter().zip(&b) {
                assert!((p - q).norm() < tol * peak, "{name}: {p} vs {q}");
            }
        }
    }

    #[test]
    fn the_morse_constant_is_a_gamma_function() {
        // K+ = ∫ a u^(β-1) e^(-u^γ) du = a Γ(β/γ) / γ; Γ(20) = 19!.
        let a = Wavelet::from_name("morse60-3").unwrap().admissibility();
        let amp = 2.0 * (std::f64::consts::E * 3.0 / 60.0).powf(20.0);
        let g20: f64 = (1..20).map(|k| k as f64).product();
        let want = amp * g20 / 3.0;
        assert!(
            (a.positive.re - want).abs() < 1e-12 * want,
            "{a:?} vs {want}"
        );
        assert_eq!(a.negative.norm(), 0.0);
    }

    #[test]
    fn the_complex_morlet_constant_matches_its_closed_form() {
        // cmorB-C: ψ̂(ω) = exp(-B(ω - 2πC)²/4), real, so K+ = ∫ ψ̂(u) du/u.
        let w = Wavelet::from_name("cmor2.0-1.5").unwrap();
        let (b, c) = (2.0, 1.5);
        let n = 400_000;
        let (lo, hi) = (1e-9f64.ln(), 200f64.ln());
        let dv = (hi - lo) / n as f64;
        let exact: f64 = (0..=n)
            .map(|j| {
                let u = (lo + j as f64 * dv).exp();
                let f = (-b * (u - 2.0 * PI * c).powi(2) / 4.0).exp();
                if j == 0 || j == n {
                    0.5 * f
                } else {
                    f
                }
            })
            .sum::<f64>()
            * dv;
        let a = w.admissibility();
        assert!(
            (a.positive.re - exact).abs() < 1e-9 * exact,
            "{a:?} vs {exact}"
        );
        assert!(a.positive.im.abs() < 1e-9 * exact);
        assert!(a.is_analytic());
    }

    #[test]
    fn a_real_even_wavelet_has_equal_real_constants() {
        let a = Wavelet::from_name("mexh").unwrap().admissibility();
        assert!((a.positive - a.negative).norm() < 1e-9 * a.positive.norm());
        assert!(a.positive.im.abs() < 1e-9 * a.positive.re.abs());
        assert!(!a.is_analytic());
        // mexh = (2/(√3 π^¼))(1 - t²)e^{-t²/2}: ψ̂(u) = c u² e^{-u²/2},
        // (the closed form, checked against quadrature above)
        // c = 2√(2π)/(√3 π^¼), so K+ = c ∫ u e^{-u²/2} du = c.
        let c = 2.0 * (2.0 * PI).sqrt() / (3f64.sqrt() * PI.powf(0.25));
        assert!((a.positive.re - c).abs() < 1e-8 * c, "{a:?} vs {c}");
    }
}
