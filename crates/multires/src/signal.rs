//! A 1-D signal as read from a file: real or complex samples in f64.
use num_complex::Complex64;

#[derive(Debug, Clone, PartialEq)]
pub enum Samples {
    Real(Vec<f64>),
    Complex(Vec<Complex64>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Signal {
    pub samples: Samples,
    /// Known from the file (wav) or given by the user; None when unknown.
    pub sample_rate: Option<f64>,
    /// What the reader assumed (a skipped header line), for the caller
    /// to tell the user: the library prints nothing.
    pub notes: Vec<String>,
}

impl Signal {
    pub fn real(v: Vec<f64>) -> Self {
        Signal {
            samples: Samples::Real(v),
            sample_rate: None,
            notes: Vec::new(),
        }
    }
    pub fn complex(v: Vec<Complex64>) -> Self {
        Signal {
            samples: Samples::Complex(v),
            sample_rate: None,
            notes: Vec::new(),
        }
    }
    pub fn len(&self) -> usize {
        match &self.samples {
            Samples::Real(v) => v.len(),
            Samples::Complex(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn is_complex(&self) -> bool {
        matches!(self.samples, Samples::Complex(_))
    }
    pub fn to_complex(&self) -> Vec<Complex64> {
        match &self.samples {
            Samples::Real(v) => v.iter().map(|&x| Complex64::new(x, 0.0)).collect(),
            Samples::Complex(v) => v.clone(),
        }
    }
    /// The first NaN or infinity, with its index, as text.
    pub fn first_nonfinite(&self) -> Option<(usize, String)> {
        match &self.samples {
            Samples::Real(v) => v
                .iter()
                .position(|x| !x.is_finite())
                .map(|i| (i, v[i].to_string())),
            Samples::Complex(v) => v
                .iter()
                .position(|x| !(x.re.is_finite() && x.im.is_finite()))
                .map(|i| (i, v[i].to_string())),
        }
    }
}

/// The Doppler test signal of Donoho & Johnstone, as in the seed's figures:
/// sqrt(t(1-t)) sin(2π 1.05 / (t + 0.05)) on t = i / n.
pub fn doppler(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let t = i as f64 / n as f64;
            (t * (1.0 - t)).sqrt() * (2.0 * std::f64::consts::PI * 1.05 / (t + 0.05)).sin()
        })
        .collect()
}

/// Deterministic pseudo-random samples in [-1, 1) (SplitMix64), for tests and
/// benchmarks that must not depend on a random-number crate's stream.
pub fn noise(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}
