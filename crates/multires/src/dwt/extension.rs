//! PyWavelets' nine signal extension modes as index arithmetic: the value
//! x[t] for any integer t, read on demand by the convolution loops instead of
//! building a padded copy of the signal.

use crate::real::Real;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    Zero,
    Constant,
    #[default]
    Symmetric,
    Reflect,
    Periodic,
    Smooth,
    Antisymmetric,
    Antireflect,
    /// Periodic with the minimal output length ceil(N/2); an odd-length
    /// signal first repeats its last sample (PyWavelets' convention).
    Periodization,
}

named_enum!(Mode, "mode", [
    "zero" => Mode::Zero,
    "constant" => Mode::Constant,
    "symmetric" => Mode::Symmetric,
    "reflect" => Mode::Reflect,
    "periodic" => Mode::Periodic,
    "smooth" => Mode::Smooth,
    "antisymmetric" => Mode::Antisymmetric,
    "antireflect" => Mode::Antireflect,
    "periodization" => Mode::Periodization,
    "zeropad" => Mode::Zero,
    "zpd" => Mode::Zero,
    "sym" => Mode::Symmetric,
    "per" => Mode::Periodization,
]);

impl Mode {
    pub const ALL: [Mode; 9] = [
        Mode::Zero,
        Mode::Constant,
        Mode::Symmetric,
        Mode::Reflect,
        Mode::Periodic,
        Mode::Smooth,
        Mode::Antisymmetric,
        Mode::Antireflect,
        Mode::Periodization,
    ];

    /// The value at integer position t of x extended by this mode (for
    /// periodization, of x with its last sample repeated when N is odd).
    #[inline]
    pub fn at<T: Real>(self, x: &[T], t: isize) -> T {
        let n = x.len() as isize;
        if (0..n).contains(&t) {
            return x[t as usize];
        }
        // In float64, rounded once: smooth's x0 + m (x0 - x1) as two float32
        // products cancelled, and put boundary coefficients of long filters
        // up to 1e-4 off (pywt's float32 is 2-11x closer). Single-sample
        // modes are exact either way.
        let (k, terms) = self.weights(x.len(), t);
        T::of(
            terms[..k]
                .iter()
                .fold(0.0f64, |acc, &(i, w)| acc + w * x[i].f64()),
        )
    }

    /// x[t] for any t as a combination of at most three samples: every mode
    /// is linear, so whole rows of an array extend the same way. Reflect,
    /// antireflect and smooth on one sample behave like constant.
    pub fn weights(self, n: usize, t: isize) -> (usize, [(usize, f64); 3]) {
        let n_i = n as isize;
        let mut out = [(0usize, 0.0f64); 3];
        if (0..n_i).contains(&t) {
            out[0] = (t as usize, 1.0);
            return (1, out);
        }
        match self {
            Mode::Periodic => {
                out[0] = (t.rem_euclid(n_i) as usize, 1.0);
                return (1, out);
            }
            Mode::Periodization => {
                let np = n_i + n_i % 2;
                out[0] = (t.rem_euclid(np).min(n_i - 1) as usize, 1.0);
                return (1, out);
            }
            _ => {}
        }
        // Every other mode is mirror-symmetric: the right edge is the left
        // edge of the reversed signal.
        let rev = t >= n_i;
        let m = if rev { t - (n_i - 1) } else { -t }; // >= 1
        let idx = |i: isize| -> usize {
            if rev {
                (n_i - 1 - i) as usize
            } else {
                i as usize
            }
        };
        let one = |i: isize, w: f64| {
            let mut o = [(0usize, 0.0f64); 3];
            o[0] = (idx(i), w);
            (1, o)
        };
        match self {
            Mode::Zero => (0, out),
            Mode::Constant => one(0, 1.0),
            Mode::Symmetric => {
                let r = (m - 1).rem_euclid(2 * n_i);
                one(if r < n_i { r } else { 2 * n_i - 1 - r }, 1.0)
            }
            Mode::Antisymmetric => {
                let r = (m - 1).rem_euclid(2 * n_i);
                if r < n_i {
                    one(r, -1.0)
                } else {
                    one(2 * n_i - 1 - r, 1.0)
                }
            }
            Mode::Reflect => {
                if n_i == 1 {
                    return one(0, 1.0);
                }
                let r = m.rem_euclid(2 * n_i - 2);
                one(if r < n_i { r } else { 2 * n_i - 2 - r }, 1.0)
            }
            Mode::Smooth => {
                if n_i < 2 {
                    return one(0, 1.0);
                }
                // x0 + m (x0 - x1)
                out[0] = (idx(0), 1.0 + m as f64);
                out[1] = (idx(1), -(m as f64));
                (2, out)
            }
            Mode::Antireflect => {
                if n_i == 1 {
                    return one(0, 1.0);
                }
                // Block q of N-1 samples mirrors the signal about the edge
                // value le_q = x0 + q (x0 - x_{N-1}).
                let q = (m - 1) / (n_i - 1);
                let r = (m - 1) % (n_i - 1) + 1; // 1..=N-1
                let qf = q as f64;
                if q % 2 == 0 {
                    // le - (x_r - x0)
                    out[0] = (idx(0), 2.0 + qf);
                    out[1] = (idx(n_i - 1), -qf);
                    out[2] = (idx(r), -1.0);
                } else {
                    // le + (x_{N-1-r} - x_{N-1})
                    out[0] = (idx(0), 1.0 + qf);
                    out[1] = (idx(n_i - 1), -qf - 1.0);
                    out[2] = (idx(n_i - 1 - r), 1.0);
                }
                (3, out)
            }
            Mode::Periodic | Mode::Periodization => unreachable!("handled above"),
        }
    }
}
