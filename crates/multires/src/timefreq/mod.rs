//! What follows a scalogram: the inverse CWT, synchrosqueezing and its
//! inverse, and ridge extraction, with ssqueezepy's definitions (see
//! docs/DESIGN.md, "Inverse CWT, synchrosqueezing and ridges").

mod coherence;
mod icwt;
mod monte_carlo;
mod ridges;
mod significance;
mod ssq;

pub use coherence::{
    morlet_coherence, morlet_flambda, morlet_transforms, smooth, wavelet_coherence, Coherence,
    MorletCoherenceOptions, SeriesCoherence, PYCWT_F0,
};
pub use icwt::{icwt, IcwtOptions};
pub use monte_carlo::{wct_significance, MonteCarlo};
pub use ridges::{extract_ridges, Ridges};
pub use significance::{ar1, red_noise_significance, SigmaTest};
pub use ssq::{
    issq_cwt, phase_transform, ssq_cwt, ssq_cwt_in, ssq_cwt_on, ssq_frequencies, ssqueeze,
    FreqSpacing, MapRange, Squeezing, SsqOptions, Synchrosqueezed,
};

use crate::cwt::CwtError;

/// Errors of the inverse transforms, synchrosqueezing and ridges.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TimeFreqError {
    #[error(transparent)]
    Cwt(#[from] CwtError),
    #[error(transparent)]
    Backend(#[from] crate::backend::BackendError),
    #[error("{what} has shape {got}; expected {want}")]
    Shape {
        what: &'static str,
        got: String,
        want: String,
    },
    #[error(
        "{0} needs at least 2 scales (the integral over scales is a sum with weights d(ln a))"
    )]
    TooFewScales(&'static str),
    #[error("scale {value} at index {index} is not finite and positive")]
    BadScale { index: usize, value: f64 },
    #[error("the band {lo}..{hi} holds none of the scales {first}..{last}")]
    EmptyBand {
        lo: f64,
        hi: f64,
        first: f64,
        last: f64,
    },
    #[error("wavelet '{name}' has K+ = {k} (the integral of conj(ψ̂(u))/u over u > 0): it cannot reconstruct by the single-integral formula")]
    NotAdmissible { name: String, k: String },
    #[error("synchrosqueezing needs an analytic (complex) wavelet such as morse60-3 or cmor1.5-1.0; '{0}' sees negative frequencies too")]
    NotAnalytic(String),
    #[error("a complex signal's negative frequencies are not in a CWT by the analytic wavelet '{0}': invert with real=True, or transform with a real wavelet")]
    ComplexWithAnalytic(String),
    #[error("{0}")]
    Options(String),
}

/// The weights w_i of ∫ · da/a as a sum over the scales given: ln(s₁/s₀)
/// for every row when the scales are geometric (ssqueezepy's ln 2 / nv),
/// else the central difference (s_{i+1} - s_{i-1}) / (2 s_i), one-sided at
/// the ends (Δs / s for linear scales, as ssqueezepy's `const`).
pub fn scale_weights(scales: &[f64]) -> Result<Vec<f64>, TimeFreqError> {
    check_scales(scales)?;
    let n = scales.len();
    if n < 2 {
        return Err(TimeFreqError::TooFewScales("the integral over scales"));
    }
    let r0 = (scales[1] / scales[0]).ln();
    let geometric = r0 != 0.0
        && scales
            .windows(2)
            .all(|p| ((p[1] / p[0]).ln() - r0).abs() <= 1e-9 * r0.abs());
    if geometric {
        return Ok(vec![r0.abs(); n]);
    }
    Ok((0..n)
        .map(|i| {
            let (a, b) = (i.saturating_sub(1), (i + 1).min(n - 1));
            ((scales[b] - scales[a]) / ((b - a) as f64 * scales[i])).abs()
        })
        .collect())
}

pub(crate) fn check_scales(scales: &[f64]) -> Result<(), TimeFreqError> {
    for (index, &value) in scales.iter().enumerate() {
        if !(value.is_finite() && value > 0.0) {
            return Err(TimeFreqError::BadScale { index, value });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_dln_a_for_geometric_and_ds_over_s_for_linear_scales() {
        let g: Vec<f64> = (0..40).map(|k| 2f64.powf(k as f64 / 8.0)).collect();
        let w = scale_weights(&g).unwrap();
        assert!(w.iter().all(|&v| (v - 2f64.ln() / 8.0).abs() < 1e-15));
        let l: Vec<f64> = (1..=10).map(|k| k as f64).collect();
        let w = scale_weights(&l).unwrap();
        for (i, v) in w.iter().enumerate() {
            assert!((v - 1.0 / l[i]).abs() < 1e-15);
        }
        assert!(scale_weights(&[3.0]).is_err());
        assert!(scale_weights(&[1.0, f64::NAN]).is_err());
    }
}
