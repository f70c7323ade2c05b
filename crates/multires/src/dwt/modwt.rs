//! The maximal overlap DWT (Percival & Walden; MATLAB's `modwt`): at level
//! j the smooth V_j and the details W_j of V_{j-1} by the synthesis
//! filters scaled by 1/sqrt(2), upsampled by 2^(j-1) and applied as a
//! causal circular convolution, W_j[t] = Σ_l h[l] V_{j-1}[(t - 2^(j-1) l) mod N].
//! Any length N works (no halving); filters longer than N wrap, as
//! MATLAB periodizes them. The inverse is the adjoint (a correlation),
//! which inverts exactly for orthogonal wavelets.

use super::swt::atrous_level;
use super::{DiscreteWavelet, DwtError};
use crate::real::Real;
use std::f64::consts::FRAC_1_SQRT_2;

/// MATLAB's deepest (and default) MODWT level: floor(log2 N).
pub fn modwt_max_level(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        n.ilog2() as usize
    }
}

fn check(n: usize, level: usize, w: &DiscreteWavelet) -> Result<(), DwtError> {
    if n == 0 {
        return Err(DwtError::EmptySignal);
    }
    if !w.orthogonal {
        return Err(DwtError::NotAvailable(format!(
            "the MODWT needs an orthogonal wavelet (its inverse is the adjoint); {} is biorthogonal",
            w.name
        )));
    }
    let max = modwt_max_level(n);
    if level == 0 || level > max {
        return Err(DwtError::BadLevel {
            level,
            why: format!("the MODWT of {n} samples has levels 1..={max} (floor(log2 N))"),
        });
    }
    Ok(())
}

fn scaled(f: &[f64]) -> Vec<f64> {
    f.iter().map(|v| v * FRAC_1_SQRT_2).collect()
}

/// `modwt(x, w, level)` of every row of `x` (rows of `n`): `level + 1`
/// planes of `x`'s size, W_1 ... W_level then V_level (MATLAB's order).
pub fn modwt<T: Real>(
    x: &[T],
    n: usize,
    w: &DiscreteWavelet,
    level: usize,
) -> Result<Vec<Vec<T>>, DwtError> {
    check(n, level, w)?;
    let (g, h) = (scaled(&w.rec_lo), scaled(&w.rec_hi));
    let mut planes = Vec::with_capacity(level + 1);
    let mut v = x.to_vec();
    for j in 1..=level {
        let (mut vn, mut wj) = (
            crate::memory::zeroed_vec::<T>(x.len()),
            crate::memory::zeroed_vec::<T>(x.len()),
        );
        atrous_level(&v, n, (&g, &h), 1 << (j - 1), 0, &mut vn, &mut wj);
        planes.push(wj);
        v = vn;
    }
    planes.push(v);
    Ok(planes)
}

/// One inverse level: V_{j-1}[t] = Σ_l g[l] V_j[(t + s l) mod n] + Σ_l h[l] W_j[(t + s l) mod n],
/// the reversed filters at offset (taps - 1) s through `atrous_level`.
fn imodwt_level<T: Real>(
    v: &[T],
    wj: &[T],
    n: usize,
    (g, h): (&[f64], &[f64]),
    s: usize,
) -> Vec<T> {
    let gr: Vec<f64> = g.iter().rev().copied().collect();
    let hr: Vec<f64> = h.iter().rev().copied().collect();
    let off = (g.len() - 1) * s;
    let (mut a, mut scratch) = (vec![T::zero(); v.len()], vec![T::zero(); v.len()]);
    let mut b = vec![T::zero(); v.len()];
    atrous_level(v, n, (&gr, &hr), s, off, &mut a, &mut scratch);
    atrous_level(wj, n, (&hr, &gr), s, off, &mut b, &mut scratch);
    a.iter_mut().zip(&b).for_each(|(x, &y)| *x = *x + y);
    a
}

fn check_planes<T>(planes: &[Vec<T>], n: usize) -> Result<usize, DwtError> {
    let level = planes.len().saturating_sub(1);
    if level == 0 {
        return Err(DwtError::CoefficientMismatch(format!(
            "a MODWT has at least two planes (W_1 and V_J), got {}",
            planes.len()
        )));
    }
    let len = planes[0].len();
    if n == 0 || !len.is_multiple_of(n) || planes.iter().any(|p| p.len() != len) {
        return Err(DwtError::CoefficientMismatch(format!(
            "every plane must hold whole rows of {n} samples and all planes one size"
        )));
    }
    Ok(level)
}

/// `imodwt`: the signal of `modwt`'s planes.
pub fn imodwt<T: Real>(
    planes: &[Vec<T>],
    n: usize,
    w: &DiscreteWavelet,
) -> Result<Vec<T>, DwtError> {
    let level = check_planes(planes, n)?;
    check(n, level, w)?;
    let (g, h) = (scaled(&w.rec_lo), scaled(&w.rec_hi));
    let mut v = planes[level].clone();
    for j in (1..=level).rev() {
        v = imodwt_level(&v, &planes[j - 1], n, (&g, &h), 1 << (j - 1));
    }
    Ok(v)
}

/// `modwtmra`: the details D_1 ... D_J and the smooth S_J (same planes as
/// `modwt`), each the inverse of one plane alone; they sum to the signal.
pub fn modwtmra<T: Real>(
    planes: &[Vec<T>],
    n: usize,
    w: &DiscreteWavelet,
) -> Result<Vec<Vec<T>>, DwtError> {
    let level = check_planes(planes, n)?;
    check(n, level, w)?;
    let (g, h) = (scaled(&w.rec_lo), scaled(&w.rec_hi));
    let zeros = vec![T::zero(); planes[0].len()];
    let from = |start: usize, v0: &[T], w0: &[T]| {
        let mut v = imodwt_level(v0, w0, n, (&g, &h), 1 << (start - 1));
        for j in (1..start).rev() {
            v = imodwt_level(&v, &zeros, n, (&g, &h), 1 << (j - 1));
        }
        v
    };
    let mut out: Vec<Vec<T>> = (1..=level)
        .map(|j| from(j, &zeros, &planes[j - 1]))
        .collect();
    out.push(from(level, &planes[level], &zeros));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| (i as f64 * 0.37).sin() + ((i * 7) % 5) as f64 * 0.1)
            .collect()
    }

    #[test]
    fn haar_level_one_is_half_differences() {
        // Percival & Walden: W_1[t] = (X[t] - X[t-1]) / 2, V_1[t] = (X[t] + X[t-1]) / 2.
        let w = DiscreteWavelet::from_name("haar").unwrap();
        let x: [f64; 5] = [1.0, 2.0, 4.0, 8.0, 3.0];
        let p = modwt(&x, 5, &w, 1).unwrap();
        for t in 0..5 {
            let prev = x[(t + 4) % 5];
            assert!((p[0][t] - (x[t] - prev) / 2.0).abs() < 1e-14);
            assert!((p[1][t] - (x[t] + prev) / 2.0).abs() < 1e-14);
        }
    }

    #[test]
    fn energy_inverse_and_mra_at_odd_lengths() {
        for (name, n) in [("db4", 37), ("sym5", 100), ("coif2", 7)] {
            let w = DiscreteWavelet::from_name(name).unwrap();
            let x = signal(n);
            let level = modwt_max_level(n);
            let p = modwt(&x, n, &w, level).unwrap();
            let e: f64 = x.iter().map(|v| v * v).sum();
            let ep: f64 = p.iter().flatten().map(|v| v * v).sum();
            assert!((e - ep).abs() < 1e-10 * e, "{name}: energy {e} vs {ep}");
            let back = imodwt(&p, n, &w).unwrap();
            let mra = modwtmra(&p, n, &w).unwrap();
            for t in 0..n {
                let sum: f64 = mra.iter().map(|d| d[t]).sum();
                assert!(
                    (back[t] - x[t]).abs() < 1e-12 && (sum - x[t]).abs() < 1e-12,
                    "{name} t={t}"
                );
            }
        }
    }

    #[test]
    fn refuses_bad_levels_and_biorthogonal() {
        let w = DiscreteWavelet::from_name("db2").unwrap();
        assert!(modwt(&[1.0f64; 8], 8, &w, 4).is_err());
        assert!(modwt(&[1.0f64; 8], 8, &w, 0).is_err());
        let b = DiscreteWavelet::from_name("bior2.2").unwrap();
        assert!(modwt(&[1.0f64; 8], 8, &b, 1).is_err());
    }
}
