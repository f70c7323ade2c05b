//! Significance of wavelet power against red noise (Torrence & Compo 1998,
//! sections 4 and 5), with pycwt 0.5's definitions: the AR(1) coefficient
//! by Allen & Smith's (1996) bias-corrected estimate, the theoretical
//! spectrum P_k = σ² (1 - α²) / (1 + α² - 2α cos(2π dt/period)), and the
//! chi-square level χ²_ν(p)/ν for ν = 2 (one coefficient, eq. 18) or the
//! time-averaged ν of eq. 23, or the scale-averaged power of eqs. 25-28.
use super::TimeFreqError;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use std::f64::consts::PI;

/// Allen & Smith's AR(1) estimate of a series: (lag-1 coefficient g, noise
/// amplitude a, the bias term μ²) as pycwt's `ar1`.
pub fn ar1(x: &[f64]) -> Result<(f64, f64, f64), TimeFreqError> {
    let n = x.len();
    if n < 3 {
        return Err(TimeFreqError::Options(format!(
            "an AR(1) estimate needs at least 3 samples, got {n}"
        )));
    }
    let nf = n as f64;
    let mean = x.iter().sum::<f64>() / nf;
    let d: Vec<f64> = x.iter().map(|v| v - mean).collect();
    let c0 = d.iter().map(|v| v * v).sum::<f64>() / nf;
    let c1 = d.windows(2).map(|p| p[0] * p[1]).sum::<f64>() / (nf - 1.0);
    // Grinsted's substitutions of Allen & Smith's equation for g.
    let b = -c1 * nf - c0 * nf * nf - 2.0 * c0 + 2.0 * c1 - c1 * nf * nf + c0 * nf;
    let a = c0 * nf * nf;
    let c = nf * (c0 + c1 * nf - c1);
    let disc = b * b - 4.0 * a * c;
    if disc.is_nan() || disc <= 0.0 || a == 0.0 {
        return Err(TimeFreqError::Options(
            "cannot place an upper bound on the unbiased AR(1): the series is too short, constant, or its trend too large".into(),
        ));
    }
    let g = (-b - disc.sqrt()) / (2.0 * a);
    let mu2 = -1.0 / nf
        + (2.0 / (nf * nf))
            * ((nf - g.powf(nf)) / (1.0 - g) - g * (1.0 - g.powf(nf - 1.0)) / (1.0 - g).powi(2));
    let c0t = c0 / (1.0 - mu2);
    Ok((g, ((1.0 - g * g) * c0t).sqrt(), mu2))
}

/// Which test: one coefficient's power, or the power averaged over
/// `dof` coefficients in time at each scale (one count per scale, or one
/// for all).
#[derive(Debug, Clone, PartialEq)]
pub enum SigmaTest {
    Power,
    TimeAveraged(Vec<f64>),
    /// Power averaged over the scales in [s1, s2] (units of dt) of a grid
    /// spaced dj octaves: one level for the band.
    ScaleAveraged {
        s1: f64,
        s2: f64,
        dj: f64,
    },
}

/// The Morlet (f0 = 6) constants of Torrence & Compo's table 2.
const DOF_MIN: f64 = 2.0;
const GAMMA: f64 = 2.32;
/// Reconstruction factor C_δ and scale-decorrelation factor δj0 (table 2).
const C_DELTA: f64 = 0.776;
const DJ0: f64 = 0.60;

/// The level that power must exceed at each of `periods` (in the units of
/// `dt`) to be significant at `level` against AR(1) noise `alpha` of the
/// given variance; and the noise spectrum itself. Returns (signif, theory).
pub fn red_noise_significance(
    variance: f64,
    alpha: f64,
    periods: &[f64],
    scales: &[f64],
    dt: f64,
    level: f64,
    test: &SigmaTest,
) -> Result<(Vec<f64>, Vec<f64>), TimeFreqError> {
    if !(level > 0.0 && level < 1.0) {
        return Err(TimeFreqError::Options(format!(
            "significance level must lie in (0, 1), got {level}"
        )));
    }
    if periods.len() != scales.len() {
        return Err(TimeFreqError::Options(
            "one period per scale is needed".into(),
        ));
    }
    let theory: Vec<f64> = periods
        .iter()
        .map(|p| {
            let f = dt / p;
            variance * (1.0 - alpha * alpha)
                / (1.0 + alpha * alpha - 2.0 * alpha * (2.0 * PI * f).cos())
        })
        .collect();
    let quantile = |dof: f64| -> Result<f64, TimeFreqError> {
        let c = ChiSquared::new(dof).map_err(|e| TimeFreqError::Options(e.to_string()))?;
        Ok(c.inverse_cdf(level) / dof)
    };
    let signif = match test {
        SigmaTest::Power => {
            let q = quantile(DOF_MIN)?;
            theory.iter().map(|t| t * q).collect()
        }
        SigmaTest::TimeAveraged(dof) => {
            let per: Vec<f64> = match dof.len() {
                1 => vec![dof[0]; scales.len()],
                k if k == scales.len() => dof.clone(),
                k => {
                    return Err(TimeFreqError::Options(format!(
                        "{k} degrees of freedom for {} scales: give one, or one per scale",
                        scales.len()
                    )))
                }
            };
            theory
                .iter()
                .zip(per.iter().zip(scales))
                .map(|(t, (&d, &s))| {
                    let d = d.max(1.0);
                    // Torrence & Compo's equation 23.
                    let nu = (DOF_MIN * (1.0 + (d * dt / GAMMA / s).powi(2)).sqrt()).max(DOF_MIN);
                    Ok(t * quantile(nu)?)
                })
                .collect::<Result<_, TimeFreqError>>()?
        }
        SigmaTest::ScaleAveraged { s1, s2, dj } => {
            let (s1, s2, dj) = (*s1, *s2, *dj);
            if !(s1 > 0.0 && s2 >= s1 && dj > 0.0 && s2.is_finite()) {
                return Err(TimeFreqError::Options(format!(
                    "a scale band needs 0 < s1 <= s2 and dj > 0, got s1 = {s1}, s2 = {s2}, dj = {dj}"
                )));
            }
            let sel: Vec<usize> = (0..scales.len())
                .filter(|&i| scales[i] >= s1 && scales[i] <= s2)
                .collect();
            if sel.is_empty() {
                return Err(TimeFreqError::Options(format!(
                    "no scale lies between {s1} and {s2}"
                )));
            }
            let navg = sel.len() as f64;
            // Torrence & Compo's equations 25 to 28.
            let savg = 1.0 / sel.iter().map(|&i| 1.0 / scales[i]).sum::<f64>();
            let smid = ((s1.ln() + s2.ln()) / 2.0).exp();
            let nu = (DOF_MIN * navg * savg / smid) * (1.0 + (navg * dj / DJ0).powi(2)).sqrt();
            let band: f64 = savg * sel.iter().map(|&i| theory[i] / scales[i]).sum::<f64>();
            let level = (dj * dt / C_DELTA / savg) * band * quantile(nu)?;
            return Ok((vec![level], vec![band]));
        }
    };
    Ok((signif, theory))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_of_one_scale_averages_to_that_scales_spectrum() {
        let scales = [2.0, 4.0, 8.0];
        let periods: Vec<f64> = scales.iter().map(|s| s * 1.033).collect();
        let (_, theory) =
            red_noise_significance(1.5, 0.4, &periods, &scales, 1.0, 0.95, &SigmaTest::Power)
                .unwrap();
        let band = SigmaTest::ScaleAveraged {
            s1: 3.0,
            s2: 5.0,
            dj: 1.0,
        };
        let (level, spectrum) =
            red_noise_significance(1.5, 0.4, &periods, &scales, 1.0, 0.95, &band).unwrap();
        assert_eq!(spectrum.len(), 1);
        assert!((spectrum[0] - theory[1]).abs() < 1e-12 * theory[1]);
        // Eq. 26 with eq. 28's dof: 2 * 1 * 4 / sqrt(15) * sqrt(1 + (1/0.6)^2).
        let nu = 2.0 * 4.0 / 15f64.sqrt() * (1.0 + (1.0f64 / 0.6).powi(2)).sqrt();
        let q = ChiSquared::new(nu).unwrap().inverse_cdf(0.95) / nu;
        let want = 1.0 / 0.776 / 4.0 * theory[1] * q;
        assert!((level[0] - want).abs() < 1e-12 * want);
    }

    #[test]
    fn an_empty_or_inverted_band_is_refused() {
        let scales = [2.0, 4.0];
        let periods = [2.0, 4.0];
        for (s1, s2) in [(10.0, 20.0), (4.0, 2.0)] {
            let band = SigmaTest::ScaleAveraged { s1, s2, dj: 1.0 };
            assert!(red_noise_significance(1.0, 0.3, &periods, &scales, 1.0, 0.95, &band).is_err());
        }
    }
}
