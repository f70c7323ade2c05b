//! Boundary modes of the CWT: what x[n] is outside [0, N).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Boundary {
    /// x = 0 outside the signal (the definition's default).
    #[default]
    Zero,
    /// Half-sample symmetric: ... x1 x0 | x0 x1 ... (PyWavelets' `symmetric`).
    Symmetric,
    /// Whole-sample symmetric: ... x2 x1 | x0 x1 x2 ... (PyWavelets' `reflect`).
    Reflect,
    /// x[n + N] = x[n].
    Periodic,
}

impl Boundary {
    /// The index inside [0, n) that position `j` reads, or None for zero.
    /// Works for any j, so masks longer than the signal fold repeatedly.
    pub fn fold(self, j: i64, n: usize) -> Option<usize> {
        let n = n as i64;
        if (0..n).contains(&j) {
            return Some(j as usize);
        }
        match self {
            Boundary::Zero => None,
            Boundary::Periodic => Some(j.rem_euclid(n) as usize),
            Boundary::Symmetric => {
                let m = j.rem_euclid(2 * n);
                Some(if m < n { m } else { 2 * n - 1 - m } as usize)
            }
            Boundary::Reflect => {
                if n == 1 {
                    return Some(0);
                }
                let m = j.rem_euclid(2 * n - 2);
                Some(if m < n { m } else { 2 * n - 2 - m } as usize)
            }
        }
    }

    pub const NAMES: &'static [&'static str] = &["zero", "symmetric", "reflect", "periodic"];
}

impl FromStr for Boundary {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "zero" | "zeros" => Ok(Boundary::Zero),
            "symmetric" => Ok(Boundary::Symmetric),
            "reflect" => Ok(Boundary::Reflect),
            "periodic" | "periodization" => Ok(Boundary::Periodic),
            _ => Err(format!(
                "unknown boundary mode '{s}': expected one of {}",
                Boundary::NAMES.join(", ")
            )),
        }
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Boundary::Zero => "zero",
            Boundary::Symmetric => "symmetric",
            Boundary::Reflect => "reflect",
            Boundary::Periodic => "periodic",
        };
        f.write_str(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn folds_like_pywavelets() {
        // x = [0,1,2], positions -4..7
        let sym: Vec<_> = (-4..7)
            .map(|j| Boundary::Symmetric.fold(j, 3).unwrap())
            .collect();
        assert_eq!(sym, vec![2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0]);
        let refl: Vec<_> = (-4..7)
            .map(|j| Boundary::Reflect.fold(j, 3).unwrap())
            .collect();
        assert_eq!(refl, vec![0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2]);
        let per: Vec<_> = (-4..7)
            .map(|j| Boundary::Periodic.fold(j, 3).unwrap())
            .collect();
        assert_eq!(per, vec![2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(Boundary::Zero.fold(-1, 3), None);
        assert_eq!(Boundary::Reflect.fold(5, 1), Some(0));
    }
}
