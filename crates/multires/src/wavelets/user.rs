//! A mother function given by the user as uniform samples on [-B, B], read
//! from a file and evaluated between samples by cubic (Catmull-Rom)
//! interpolation; zero outside [-B, B].
use super::WaveletError;
use num_complex::Complex64;
use std::path::Path;

#[derive(Debug, Clone)]
pub struct UserWavelet {
    samples: Vec<Complex64>,
    half_support: f64,
    complex: bool,
}

impl UserWavelet {
    pub fn from_file(path: &Path, half_support: f64) -> Result<Self, WaveletError> {
        let err = |why: String| WaveletError::UserFile {
            path: path.display().to_string(),
            why,
        };
        let signal = crate::io::read_signal(path, &crate::io::ReadOptions::default())
            .map_err(|e| err(e.to_string()))?;
        Self::new(
            signal.to_complex(),
            half_support,
            &path.display().to_string(),
        )
    }

    pub fn new(
        samples: Vec<Complex64>,
        half_support: f64,
        origin: &str,
    ) -> Result<Self, WaveletError> {
        let err = |why: String| WaveletError::UserFile {
            path: origin.to_string(),
            why,
        };
        if samples.len() < 4 {
            return Err(err(format!(
                "a sampled wavelet needs at least 4 samples, got {}",
                samples.len()
            )));
        }
        if let Some(i) = samples
            .iter()
            .position(|v| !(v.re.is_finite() && v.im.is_finite()))
        {
            return Err(err(format!("sample {i} is not finite")));
        }
        if !(half_support.is_finite() && half_support > 0.0) {
            return Err(err(format!("half-support {half_support} must be > 0")));
        }
        let complex = samples.iter().any(|v| v.im != 0.0);
        Ok(UserWavelet {
            samples,
            half_support,
            complex,
        })
    }

    pub fn half_support(&self) -> f64 {
        self.half_support
    }
    pub fn is_complex(&self) -> bool {
        self.complex
    }

    pub fn formula(&self) -> super::Formula<'_> {
        super::Formula::Sampled {
            samples: &self.samples,
            half_support: self.half_support,
        }
    }

    pub fn eval(&self, t: f64) -> Complex64 {
        let b = self.half_support;
        if !(t >= -b && t <= b) {
            return Complex64::new(0.0, 0.0);
        }
        let n = self.samples.len();
        let pos = (t + b) / (2.0 * b) * (n - 1) as f64;
        let i = (pos.floor() as usize).min(n - 2);
        let u = pos - i as f64;
        let at = |k: isize| -> Complex64 {
            let k = k.clamp(0, n as isize - 1) as usize;
            self.samples[k]
        };
        let (p0, p1, p2, p3) = (
            at(i as isize - 1),
            at(i as isize),
            at(i as isize + 1),
            at(i as isize + 2),
        );
        // Catmull-Rom: exact at the samples, C1 between them.
        let u2 = u * u;
        let u3 = u2 * u;
        (p1 * 2.0
            + (p2 - p0) * u
            + (p0 * 2.0 - p1 * 5.0 + p2 * 4.0 - p3) * u2
            + (p1 * 3.0 - p0 - p2 * 3.0 + p3) * u3)
            * 0.5
    }
}
