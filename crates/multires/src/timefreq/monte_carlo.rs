//! The Monte Carlo significance of wavelet coherence (Grinsted et al. 2004,
//! pycwt's `wct_significance`): the coherence of pairs of independent AR(1)
//! series with the data's lag-1 coefficients, binned in 1000 bins per
//! scale over the points outside the cone of influence; the level of a
//! scale is the quantile its pairs stay below. The series come from a
//! seeded generator, so a run repeats; its draws are not numpy's, so the
//! levels agree with `multires.wct_significance` and pycwt to the Monte
//! Carlo spread, not digit for digit.

use super::{morlet_coherence, MorletCoherenceOptions, TimeFreqError};
use crate::backend::Backend;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_pcg::Pcg64;

/// How many pairs, which quantile, which seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MonteCarlo {
    pub count: usize,
    /// The quantile (0.95: the level 95% of the noise pairs stay below).
    pub level: f64,
    pub seed: u64,
}

impl Default for MonteCarlo {
    fn default() -> Self {
        MonteCarlo {
            count: 300,
            level: 0.95,
            seed: 0,
        }
    }
}

/// `count` samples of an AR(1) series of lag-1 coefficient `g` and unit
/// innovations, started 2 / -ln|g| samples early (twice the decorrelation
/// time) as pycwt's `rednoise` is.
fn red_noise(rng: &mut Pcg64, n: usize, g: f64) -> Vec<f64> {
    let lead = if g == 0.0 {
        0
    } else {
        (-2.0 / g.abs().ln()).ceil() as usize
    };
    let mut y = Vec::with_capacity(n + lead);
    let mut prev = 0.0;
    for t in 0..n + lead {
        let e: f64 = StandardNormal.sample(rng);
        prev = if t == 0 { e } else { g * prev + e };
        y.push(prev);
    }
    y.split_off(lead)
}

/// numpy's `interp(x, xp, fp)` for ascending `xp`.
fn interp(x: f64, xp: &[f64], fp: &[f64]) -> f64 {
    match xp.iter().position(|&v| v >= x) {
        None => fp[fp.len() - 1],
        Some(0) => fp[0],
        Some(i) => {
            let (x0, x1) = (xp[i - 1], xp[i]);
            if x1 == x0 {
                fp[i]
            } else {
                fp[i - 1] + (fp[i] - fp[i - 1]) * (x - x0) / (x1 - x0)
            }
        }
    }
}

/// The coherence level per scale (s0 2^(j dj), j = 0..=J, in the units of
/// `o.dt`) that pairs of AR(1) noise with lag-1 coefficients `al1`, `al2`
/// stay below `mc.level` of the time; NaN for scales with no point outside
/// the cone. `o.s0` and `o.j` must be the transform's (the data's scales).
pub fn wct_significance(
    backend: &dyn Backend,
    al1: f64,
    al2: f64,
    o: &MorletCoherenceOptions,
    mc: &MonteCarlo,
    progress: Option<&dyn Fn(usize, usize)>,
) -> Result<Vec<f64>, TimeFreqError> {
    let (Some(s0), Some(j)) = (o.s0, o.j) else {
        return Err(TimeFreqError::Options(
            "the Monte Carlo significance needs the transform's s0 and J".into(),
        ));
    };
    if mc.count == 0 {
        return Err(TimeFreqError::Options(
            "the Monte Carlo significance needs at least one pair".into(),
        ));
    }
    if !(mc.level > 0.0 && mc.level < 1.0) {
        return Err(TimeFreqError::Options(format!(
            "the significance level must lie in (0, 1), got {}",
            mc.level
        )));
    }
    for g in [al1, al2] {
        if g.is_nan() || g.abs() >= 1.0 {
            return Err(TimeFreqError::Options(format!(
                "the lag-1 coefficient {g} is not below 1 in magnitude: the series is not stationary"
            )));
        }
    }
    // Long enough (6 largest scales) that the largest scale leaves the cone.
    let n = (s0 * 2f64.powf(j as f64 * o.dj) / o.dt * 6.0).ceil() as usize;
    const BINS: usize = 1000;
    let mut counts = vec![0u64; (j + 1) * BINS];
    let mut valid: Option<Vec<bool>> = None;
    let mut rng = Pcg64::seed_from_u64(mc.seed);
    let pair = MorletCoherenceOptions {
        normalize: false,
        ..o.clone()
    };
    for done in 0..mc.count {
        let a = red_noise(&mut rng, n, al1);
        let b = red_noise(&mut rng, n, al2);
        let c = morlet_coherence(backend, &a, &b, &pair)?;
        let (rows, cols) = c.coherence.wct.dim();
        let inside = valid.get_or_insert_with(|| {
            (0..rows * cols)
                .map(|k| 1.0 / c.freqs[k / cols] <= c.coi[k % cols])
                .collect()
        });
        for (k, &r2) in c.coherence.wct.iter().enumerate() {
            if inside[k] {
                let bin = ((r2 * BINS as f64).floor().max(0.0) as usize).min(BINS - 1);
                counts[(k / cols) * BINS + bin] += 1;
            }
        }
        if let Some(p) = progress {
            p(done + 1, mc.count);
        }
    }
    let centres: Vec<f64> = (0..BINS).map(|b| (b as f64 + 0.5) / BINS as f64).collect();
    Ok((0..=j)
        .map(|s| {
            let row = &counts[s * BINS..(s + 1) * BINS];
            let (mut p, mut f) = (Vec::new(), Vec::new());
            let mut acc = 0u64;
            for (b, &c) in row.iter().enumerate() {
                if c > 0 {
                    acc += c;
                    p.push(acc as f64);
                    f.push(centres[b]);
                }
            }
            let Some(&total) = p.last() else {
                return f64::NAN;
            };
            let p: Vec<f64> = p.iter().map(|v| (v - 0.5) / total).collect();
            interp(mc.level, &p, &f)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interp_is_numpys() {
        let (xp, fp) = ([0.1, 0.5, 0.9], [1.0, 2.0, 4.0]);
        assert_eq!(interp(0.0, &xp, &fp), 1.0);
        assert_eq!(interp(1.0, &xp, &fp), 4.0);
        assert!((interp(0.3, &xp, &fp) - 1.5).abs() < 1e-15);
        assert!((interp(0.7, &xp, &fp) - 3.0).abs() < 1e-15);
    }

    #[test]
    fn red_noise_has_its_lag_one_coefficient() {
        let mut rng = Pcg64::seed_from_u64(3);
        let y = red_noise(&mut rng, 200_000, 0.7);
        let m = y.iter().sum::<f64>() / y.len() as f64;
        let c0: f64 = y.iter().map(|v| (v - m) * (v - m)).sum();
        let c1: f64 = y.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
        assert!((c1 / c0 - 0.7).abs() < 0.01, "{}", c1 / c0);
    }
}
