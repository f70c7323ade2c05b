//! Seed 000 section V: per-scale functions for amplitude and timing
//! compensation, given as a constant, a polynomial in the scale, or one value
//! per scale (e.g. read from a calibration file).
use super::CwtError;

#[derive(Debug, Clone, PartialEq)]
pub enum ScaleFunction {
    Constant(f64),
    /// c0 + c1 s + c2 s² + ...
    Polynomial(Vec<f64>),
    /// One value per scale, in the order of the scales.
    PerScale(Vec<f64>),
}

impl ScaleFunction {
    /// `0.9`, `poly:1,0.01` or `file:gains.npy` (the last read by the caller).
    pub fn parse(spec: &str) -> Result<Self, CwtError> {
        let spec = spec.trim();
        let num = |t: &str| -> Result<f64, CwtError> {
            let v: f64 = t.trim().parse().map_err(|_| {
                CwtError::ScaleFunction(format!(
                    "'{t}' in '{spec}' is not a number; expected CONST or poly:C0,C1,..."
                ))
            })?;
            if !v.is_finite() {
                return Err(CwtError::ScaleFunction(format!("'{t}' is not finite")));
            }
            Ok(v)
        };
        if let Some(rest) = spec.strip_prefix("poly:") {
            let c = rest.split(',').map(num).collect::<Result<Vec<_>, _>>()?;
            return Ok(ScaleFunction::Polynomial(c));
        }
        Ok(ScaleFunction::Constant(num(spec)?))
    }

    pub fn check(&self, scales: usize) -> Result<(), CwtError> {
        if let ScaleFunction::PerScale(v) = self {
            if v.len() != scales {
                return Err(CwtError::ScaleFunction(format!(
                    "{} values given for {} scales; give exactly one per scale",
                    v.len(),
                    scales
                )));
            }
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                return Err(CwtError::ScaleFunction(format!("value {i} is not finite")));
            }
        }
        Ok(())
    }

    pub fn eval(&self, index: usize, scale: f64) -> f64 {
        match self {
            ScaleFunction::Constant(c) => *c,
            ScaleFunction::Polynomial(c) => c.iter().rev().fold(0.0, |acc, &v| acc * scale + v),
            ScaleFunction::PerScale(v) => v[index],
        }
    }
}
