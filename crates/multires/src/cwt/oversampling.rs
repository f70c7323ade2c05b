//! Seed 000 V-B: digital oversampling of the input by 2 or 4 before the
//! transform, with a selectable interpolator. y[R i] = x[i] for every one.
use num_complex::Complex64;
use rustfft::FftPlanner;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interpolator {
    /// Zero-order hold.
    Hold,
    Linear,
    /// Catmull-Rom cubic.
    #[default]
    Cubic,
    /// Band-limited (periodic) interpolation by zero-padding the spectrum.
    Fft,
}

impl FromStr for Interpolator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "hold" => Ok(Interpolator::Hold),
            "linear" => Ok(Interpolator::Linear),
            "cubic" => Ok(Interpolator::Cubic),
            "fft" | "sinc" => Ok(Interpolator::Fft),
            _ => Err(format!(
                "unknown interpolator '{s}': expected hold, linear, cubic or fft"
            )),
        }
    }
}

impl fmt::Display for Interpolator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Interpolator::Hold => "hold",
            Interpolator::Linear => "linear",
            Interpolator::Cubic => "cubic",
            Interpolator::Fft => "fft",
        })
    }
}

pub fn oversample(x: &[Complex64], factor: usize, interp: Interpolator) -> Vec<Complex64> {
    let n = x.len();
    if factor <= 1 || n == 0 {
        return x.to_vec();
    }
    let at = |i: i64| x[i.clamp(0, n as i64 - 1) as usize];
    let r = factor as f64;
    match interp {
        Interpolator::Hold => x
            .iter()
            .flat_map(|&v| std::iter::repeat_n(v, factor))
            .collect(),
        Interpolator::Linear => (0..n * factor)
            .map(|m| {
                let i = (m / factor) as i64;
                let u = (m % factor) as f64 / r;
                at(i) * (1.0 - u) + at(i + 1) * u
            })
            .collect(),
        Interpolator::Cubic => (0..n * factor)
            .map(|m| {
                let i = (m / factor) as i64;
                let u = (m % factor) as f64 / r;
                let (p0, p1, p2, p3) = (at(i - 1), at(i), at(i + 1), at(i + 2));
                let u2 = u * u;
                let u3 = u2 * u;
                (p1 * 2.0
                    + (p2 - p0) * u
                    + (p0 * 2.0 - p1 * 5.0 + p2 * 4.0 - p3) * u2
                    + (p1 * 3.0 - p0 - p2 * 3.0 + p3) * u3)
                    * 0.5
            })
            .collect(),
        Interpolator::Fft => {
            let mut planner = FftPlanner::<f64>::new();
            let mut spec = x.to_vec();
            planner.plan_fft_forward(n).process(&mut spec);
            let m = n * factor;
            let mut y = vec![Complex64::new(0.0, 0.0); m];
            let pos = n.div_ceil(2); // bins 0..pos are non-negative frequencies
            y[..pos].copy_from_slice(&spec[..pos]);
            for k in 1..=(n - 1) / 2 {
                y[m - k] = spec[n - k];
            }
            if n.is_multiple_of(2) {
                // Split the Nyquist bin so a real signal stays real.
                y[n / 2] = spec[n / 2] * 0.5;
                y[m - n / 2] = spec[n / 2] * 0.5;
            }
            planner.plan_fft_inverse(m).process(&mut y);
            let s = 1.0 / n as f64;
            y.iter().map(|v| v * s).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn every_interpolator_keeps_the_samples() {
        let x: Vec<Complex64> = crate::signal::noise(17, 3)
            .into_iter()
            .map(|v| Complex64::new(v, 0.5 * v))
            .collect();
        for interp in [
            Interpolator::Hold,
            Interpolator::Linear,
            Interpolator::Cubic,
            Interpolator::Fft,
        ] {
            for r in [2, 4] {
                let y = oversample(&x, r, interp);
                assert_eq!(y.len(), 17 * r);
                for i in 0..17 {
                    assert!((y[r * i] - x[i]).norm() < 1e-12, "{interp} x{r} at {i}");
                }
            }
        }
    }
    #[test]
    fn fft_interpolation_is_exact_for_a_bandlimited_tone() {
        let n = 32;
        let x: Vec<Complex64> = (0..n)
            .map(|i| {
                Complex64::new(
                    (2.0 * std::f64::consts::PI * 3.0 * i as f64 / n as f64).cos(),
                    0.0,
                )
            })
            .collect();
        let y = oversample(&x, 4, Interpolator::Fft);
        for (m, v) in y.iter().enumerate() {
            let want = (2.0 * std::f64::consts::PI * 3.0 * m as f64 / (4 * n) as f64).cos();
            assert!((v.re - want).abs() < 1e-12 && v.im.abs() < 1e-12);
        }
    }
}
