//! Ridges of a time-frequency plane: the path f(t) that minimizes
//! Σ_t [-ln(E(f(t), t) / max_f E(f, t) + ε)] + penalty Σ_t (v(f(t)) - v(f(t-1)))²,
//! v the log of the scales (a CWT) or the frequencies themselves (a linear
//! axis), found exactly by dynamic programming (Viterbi). This is the cost of
//! ssqueezepy's `extract_ridges` (after Carmona, Hwang & Torrésani); its
//! backward pass recovers the path by matching sums within ε and falls back
//! to each column's own best where none matches, where this one keeps a
//! pointer per cell, so both agree wherever that match succeeds. Further
//! ridges come from the plane with ±bw rows around each found ridge zeroed
//! (clipped at the plane's edge, where ssqueezepy's slice wraps around).
use super::TimeFreqError;
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

/// Ridges found, one column per ridge.
#[derive(Debug, Clone, PartialEq)]
pub struct Ridges {
    /// Row of the plane at each time, shape (T, ridges).
    pub indices: Array2<usize>,
    /// The axis value (scale or frequency) of that row.
    pub values: Array2<f64>,
    /// The energy |Tf|² there, before any ridge was removed.
    pub energy: Array2<f64>,
}

/// Ridges of `energy` (|Tf|², rows x time) whose rows sit at `axis`;
/// `log_axis` measures jumps in ln(axis) (CWT scales), else linearly.
/// `eps` is ssqueezepy's: the precision's ε.
pub fn extract_ridges(
    energy: ArrayView2<'_, f64>,
    axis: &[f64],
    log_axis: bool,
    penalty: f64,
    n_ridges: usize,
    bw: usize,
    eps: f64,
) -> Result<Ridges, TimeFreqError> {
    let (nf, nt) = energy.dim();
    if axis.len() != nf {
        return Err(TimeFreqError::Shape {
            what: "the plane",
            got: format!("({nf}, {nt})"),
            want: format!("({}, T): one row per axis value", axis.len()),
        });
    }
    if nf == 0 || nt == 0 {
        return Err(TimeFreqError::Options(format!(
            "the plane ({nf}, {nt}) is empty"
        )));
    }
    if !(penalty.is_finite() && penalty >= 0.0) {
        return Err(TimeFreqError::Options(format!(
            "penalty must be finite and >= 0, got {penalty}"
        )));
    }
    if n_ridges == 0 {
        return Err(TimeFreqError::Options("n_ridges must be >= 1".into()));
    }
    if energy.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(TimeFreqError::Options(
            "the energy plane must be finite and >= 0 (pass |Tf|², not Tf)".into(),
        ));
    }
    if log_axis && axis.iter().any(|&a| a.is_nan() || a <= 0.0) {
        return Err(TimeFreqError::Options(
            "a log axis (scales) must be positive".into(),
        ));
    }
    let v: Vec<f64> = axis
        .iter()
        .map(|&a| if log_axis { a.ln() } else { a })
        .collect();
    let mut e = energy.to_owned();
    let mut indices = Array2::zeros((nt, n_ridges));
    let mut values = Array2::zeros((nt, n_ridges));
    let mut found = Array2::zeros((nt, n_ridges));
    for r in 0..n_ridges {
        let path = track(&e, &v, penalty, eps);
        for (t, &f) in path.iter().enumerate() {
            indices[[t, r]] = f;
            values[[t, r]] = axis[f];
            found[[t, r]] = energy[[f, t]];
            let (lo, hi) = (f.saturating_sub(bw), (f + bw).min(nf));
            for g in lo..hi {
                e[[g, t]] = 0.0;
            }
        }
    }
    Ok(Ridges {
        indices,
        values,
        energy: found,
    })
}

/// The cheapest path through -ln(e / column max + eps).
fn track(e: &Array2<f64>, v: &[f64], penalty: f64, eps: f64) -> Vec<usize> {
    let (nf, nt) = e.dim();
    let cost = |t: usize| -> Vec<f64> {
        let m = e.column(t).iter().fold(0.0f64, |a, &b| a.max(b));
        e.column(t)
            .iter()
            .map(|&x| {
                let r = if m > 0.0 { x / m } else { 0.0 };
                -(r + eps).ln()
            })
            .collect()
    };
    let mut acc = cost(0);
    let mut back = vec![0u32; nf * nt];
    for t in 1..nt {
        let c = cost(t);
        let prev = &acc;
        let step: Vec<(f64, u32)> = (0..nf)
            .into_par_iter()
            .map(|f| {
                let mut best = (f64::INFINITY, 0u32);
                for g in 0..nf {
                    let d = v[f] - v[g];
                    let s = prev[g] + penalty * (d * d);
                    if s < best.0 {
                        best = (s, g as u32);
                    }
                }
                best
            })
            .collect();
        for (f, (s, g)) in step.into_iter().enumerate() {
            back[t * nf + f] = g;
            acc[f] = c[f] + s;
        }
    }
    let mut f = (0..nf)
        .min_by(|&a, &b| acc[a].total_cmp(&acc[b]))
        .unwrap_or(0);
    let mut path = vec![0usize; nt];
    for t in (0..nt).rev() {
        path[t] = f;
        if t > 0 {
            f = back[t * nf + f] as usize;
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every path of a tiny plane, for the optimum.
    fn brute(e: &Array2<f64>, v: &[f64], penalty: f64, eps: f64) -> f64 {
        let (nf, nt) = e.dim();
        let cost = |f: usize, t: usize| {
            let m = e.column(t).iter().fold(0.0f64, |a, &b| a.max(b));
            -(e[[f, t]] / m + eps).ln()
        };
        let mut best = f64::INFINITY;
        let total = nf.pow(nt as u32);
        for code in 0..total {
            let mut c = code;
            let path: Vec<usize> = (0..nt)
                .map(|_| {
                    let f = c % nf;
                    c /= nf;
                    f
                })
                .collect();
            let mut s = cost(path[0], 0);
            for t in 1..nt {
                let d = v[path[t]] - v[path[t - 1]];
                s += cost(path[t], t) + penalty * d * d;
            }
            best = best.min(s);
        }
        best
    }

    #[test]
    fn the_path_is_the_cheapest_of_all_paths() {
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64) / (1u64 << 53) as f64
        };
        for _ in 0..20 {
            let (nf, nt) = (4, 5);
            let e = Array2::from_shape_fn((nf, nt), |_| rnd() + 1e-3);
            let v: Vec<f64> = (0..nf).map(|k| (k as f64 * 0.3).exp()).collect();
            let lv: Vec<f64> = v.iter().map(|a| a.ln()).collect();
            let p = track(&e, &lv, 2.0, 1e-16);
            let mut s = 0.0;
            for (t, &f) in p.iter().enumerate() {
                let m = e.column(t).iter().fold(0.0f64, |a, &b| a.max(b));
                s += -(e[[f, t]] / m + 1e-16).ln();
                if t > 0 {
                    let d = lv[f] - lv[p[t - 1]];
                    s += 2.0 * d * d;
                }
            }
            let b = brute(&e, &lv, 2.0, 1e-16);
            assert!((s - b).abs() < 1e-12, "{s} vs {b}");
        }
    }

    #[test]
    fn two_ridges_follow_two_tones() {
        let (nf, nt) = (64, 50);
        let e = Array2::from_shape_fn((nf, nt), |(f, t)| {
            let a = (-((f as f64 - 10.0 - t as f64 * 0.2).powi(2)) / 2.0).exp();
            let b = 0.5 * (-((f as f64 - 45.0).powi(2)) / 2.0).exp();
            a + b + 1e-9
        });
        let axis: Vec<f64> = (0..nf).map(|k| 1.0 + k as f64).collect();
        let r = extract_ridges(e.view(), &axis, false, 0.5, 2, 4, 1e-16).unwrap();
        for t in 0..nt {
            let want = (10.0 + t as f64 * 0.2).round() as usize;
            assert!(r.indices[[t, 0]].abs_diff(want) <= 1);
            assert_eq!(r.indices[[t, 1]], 45);
        }
        assert!(extract_ridges(e.view(), &axis[..3], false, 0.5, 1, 4, 1e-16).is_err());
    }
}
