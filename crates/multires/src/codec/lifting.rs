//! Lifting wavelet transforms of a brick (seed: split, predict, update),
//! on any length with whole-sample symmetric extension, multilevel in
//! Mallat order (approximation first on every axis), in 2-D and 3-D.
//!
//! `haar` is the seed's pair, c = (even + odd) / 2 and d = odd - even;
//! `cdf53` and `cdf97` are the JPEG 2000 filters. In the error-bounded codec
//! every transform is scaled to unit gain at DC (low band) and Nyquist (high
//! band), so one quantization step fits every subband; the seed's
//! experiment keeps Haar unscaled (its thresholds are on the grey scale).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lifting {
    Haar,
    Cdf53,
    Cdf97,
}

impl Lifting {
    pub const ALL: [Lifting; 3] = [Lifting::Haar, Lifting::Cdf53, Lifting::Cdf97];
    pub fn name(self) -> &'static str {
        match self {
            Lifting::Haar => "haar",
            Lifting::Cdf53 => "cdf53",
            Lifting::Cdf97 => "cdf97",
        }
    }
    pub(crate) fn code(self) -> u8 {
        match self {
            Lifting::Haar => 0,
            Lifting::Cdf53 => 1,
            Lifting::Cdf97 => 2,
        }
    }
    pub(crate) fn from_code(c: u8) -> Option<Self> {
        Lifting::ALL.into_iter().find(|l| l.code() == c)
    }
}

impl fmt::Display for Lifting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Lifting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Lifting::ALL
            .into_iter()
            .find(|l| l.name() == s.to_ascii_lowercase())
            .ok_or_else(|| format!("unknown transform '{s}': use haar, cdf53 or cdf97"))
    }
}

// CDF 9/7 lifting constants (Daubechies and Sweldens 1998; JPEG 2000).
const A97: f64 = -1.586_134_342_059_924;
const B97: f64 = -0.052_980_118_572_961;
const G97: f64 = 0.882_911_075_530_934;
const D97: f64 = 0.443_506_852_043_971;

/// Predict step d[i] += w (e[i] + e[i+1]), e mirrored past its end.
fn predict(e: &[f64], d: &mut [f64], w: f64) {
    let ne = e.len();
    for (i, di) in d.iter_mut().enumerate() {
        let r = e[(i + 1).min(ne - 1)];
        *di += w * (e[i] + r);
    }
}

/// Update step e[i] += w (d[i-1] + d[i]), d mirrored at both ends.
fn update(e: &mut [f64], d: &[f64], w: f64) {
    let nd = d.len();
    if nd == 0 {
        return;
    }
    for (i, ei) in e.iter_mut().enumerate() {
        let l = d[i.saturating_sub(1).min(nd - 1)];
        let r = d[i.min(nd - 1)];
        *ei += w * (l + r);
    }
}

/// Gains that bring the low band to sqrt 2 at DC and the high band to
/// sqrt 2 at Nyquist (unit gain per sample pair), from the lifting itself.
fn gains(t: Lifting) -> (f64, f64) {
    static G: std::sync::OnceLock<[(f64, f64); 3]> = std::sync::OnceLock::new();
    let all = G.get_or_init(|| {
        Lifting::ALL.map(|t| {
            let n = 64;
            let mut s = vec![0.0; n];
            let mut dc: Vec<f64> = vec![1.0; n];
            forward_line(t, false, &mut dc, &mut s);
            let mut ny: Vec<f64> = (0..n)
                .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
                .collect();
            forward_line(t, false, &mut ny, &mut s);
            let (lo, hi) = (dc[n / 4], ny[n / 2 + n / 4].abs());
            (std::f64::consts::SQRT_2 / lo, std::f64::consts::SQRT_2 / hi)
        })
    });
    all[t.code() as usize]
}

/// One level along a line: `x` (length n) becomes [approx (ceil n/2) | detail
/// (floor n/2)]; `scratch` holds at least n values.
pub fn forward_line(t: Lifting, scaled: bool, x: &mut [f64], scratch: &mut [f64]) {
    let n = x.len();
    if n < 2 {
        return;
    }
    let ne = n.div_ceil(2);
    let s = &mut scratch[..n];
    for i in 0..ne {
        s[i] = x[2 * i];
    }
    for i in 0..n / 2 {
        s[ne + i] = x[2 * i + 1];
    }
    let (e, d) = s.split_at_mut(ne);
    match t {
        Lifting::Haar => {
            // d = odd - even; c = even + d / 2 = (even + odd) / 2.
            for (di, ei) in d.iter_mut().zip(e.iter()) {
                *di -= *ei;
            }
            for (ei, di) in e.iter_mut().zip(d.iter()) {
                *ei += 0.5 * *di;
            }
        }
        Lifting::Cdf53 => {
            predict(e, d, -0.5);
            update(e, d, 0.25);
        }
        Lifting::Cdf97 => {
            predict(e, d, A97);
            update(e, d, B97);
            predict(e, d, G97);
            update(e, d, D97);
        }
    }
    if scaled {
        let (gl, gh) = gains(t);
        e.iter_mut().for_each(|v| *v *= gl);
        d.iter_mut().for_each(|v| *v *= gh);
    }
    x.copy_from_slice(s);
}

/// The exact inverse of `forward_line` (each step undone in reverse order).
pub fn inverse_line(t: Lifting, scaled: bool, x: &mut [f64], scratch: &mut [f64]) {
    let n = x.len();
    if n < 2 {
        return;
    }
    let ne = n.div_ceil(2);
    let (e, d) = x.split_at_mut(ne);
    if scaled {
        let (gl, gh) = gains(t);
        e.iter_mut().for_each(|v| *v /= gl);
        d.iter_mut().for_each(|v| *v /= gh);
    }
    match t {
        Lifting::Haar => {
            for (ei, di) in e.iter_mut().zip(d.iter()) {
                *ei -= 0.5 * *di;
            }
            for (di, ei) in d.iter_mut().zip(e.iter()) {
                *di += *ei;
            }
        }
        Lifting::Cdf53 => {
            update(e, d, -0.25);
            predict(e, d, 0.5);
        }
        Lifting::Cdf97 => {
            update(e, d, -D97);
            predict(e, d, -G97);
            update(e, d, -B97);
            predict(e, d, -A97);
        }
    }
    let s = &mut scratch[..n];
    for i in 0..ne {
        s[2 * i] = x[i];
    }
    for i in 0..n / 2 {
        s[2 * i + 1] = x[ne + i];
    }
    x.copy_from_slice(s);
}

/// Levels a brick of these dimensions gets: halve until the longest axis
/// is at most 4 (an axis of length 1 is never split), at most `cap`.
pub fn levels_for(dims: [usize; 3], cap: usize) -> usize {
    let mut m = dims.into_iter().max().unwrap_or(1);
    let mut l = 0;
    while m > 4 && l < cap {
        m = m.div_ceil(2);
        l += 1;
    }
    l
}

/// The approximation's extent after `level` levels of an axis of length n.
fn approx_len(n: usize, level: usize) -> usize {
    let mut n = n;
    for _ in 0..level {
        n = n.div_ceil(2);
    }
    n
}

/// Applies `f` to every line along `axis` of the [z, y, x] sub-box `ext`
/// of a brick of dimensions `dims` (row-major), through a gathered line.
fn along_axis(
    data: &mut [f64],
    dims: [usize; 3],
    ext: [usize; 3],
    axis: usize,
    line: &mut Vec<f64>,
    scratch: &mut Vec<f64>,
    f: &mut dyn FnMut(&mut [f64], &mut [f64]),
) {
    let n = ext[axis];
    if n < 2 {
        return;
    }
    let strides = [dims[1] * dims[2], dims[2], 1];
    let stride = strides[axis];
    line.resize(n, 0.0);
    scratch.resize(n, 0.0);
    let others: Vec<usize> = (0..3).filter(|&a| a != axis).collect();
    for i in 0..ext[others[0]] {
        for j in 0..ext[others[1]] {
            let base = i * strides[others[0]] + j * strides[others[1]];
            if stride == 1 {
                f(&mut data[base..base + n], scratch);
            } else {
                for (k, v) in line.iter_mut().enumerate() {
                    *v = data[base + k * stride];
                }
                f(line, scratch);
                for (k, v) in line.iter().enumerate() {
                    data[base + k * stride] = *v;
                }
            }
        }
    }
}

/// Multilevel forward transform of a [z, y, x] brick in place: per level,
/// along x, then y, then z (the seed's order), on the approximation box.
pub fn forward(t: Lifting, scaled: bool, data: &mut [f64], dims: [usize; 3], levels: usize) {
    let (mut line, mut scratch) = (Vec::new(), Vec::new());
    for lv in 0..levels {
        let ext = dims.map(|n| approx_len(n, lv));
        for axis in [2, 1, 0] {
            along_axis(
                data,
                dims,
                ext,
                axis,
                &mut line,
                &mut scratch,
                &mut |x, s| forward_line(t, scaled, x, s),
            );
        }
    }
}

/// The inverse of `forward`: coarsest level first, axes z, y, x.
pub fn inverse(t: Lifting, scaled: bool, data: &mut [f64], dims: [usize; 3], levels: usize) {
    let (mut line, mut scratch) = (Vec::new(), Vec::new());
    for lv in (0..levels).rev() {
        let ext = dims.map(|n| approx_len(n, lv));
        for axis in [0, 1, 2] {
            along_axis(
                data,
                dims,
                ext,
                axis,
                &mut line,
                &mut scratch,
                &mut |x, s| inverse_line(t, scaled, x, s),
            );
        }
    }
}

/// Level of the subband a coefficient at (z, y, x) belongs to: 0 for the
/// finest details, `levels` for the final approximation. For the seed's
/// per-level thresholds.
pub fn detail_level(pos: [usize; 3], dims: [usize; 3], levels: usize) -> usize {
    for lv in 0..levels {
        let ext = dims.map(|n| approx_len(n, lv + 1));
        if (0..3).any(|a| dims[a] > 1 && pos[a] >= ext[a]) {
            return lv;
        }
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, seed: u64) -> Vec<f64> {
        crate::signal::noise(n, seed)
    }

    #[test]
    fn every_transform_inverts_on_awkward_lengths() {
        for t in Lifting::ALL {
            for scaled in [false, true] {
                for n in [1, 2, 3, 4, 5, 7, 8, 17, 64, 101] {
                    let x = noise(n, n as u64);
                    let mut y = x.clone();
                    let mut s = vec![0.0; n];
                    forward_line(t, scaled, &mut y, &mut s);
                    inverse_line(t, scaled, &mut y, &mut s);
                    let err = x
                        .iter()
                        .zip(&y)
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0, f64::max);
                    assert!(err < 1e-13, "{t} scaled {scaled} n {n}: {err}");
                }
            }
        }
    }

    #[test]
    fn haar_is_the_seeds_average_and_difference() {
        let mut x = vec![1.0, 3.0, 10.0, 4.0, 7.0];
        let mut s = vec![0.0; 5];
        forward_line(Lifting::Haar, false, &mut x, &mut s);
        assert_eq!(x, vec![2.0, 7.0, 7.0, 2.0, -6.0]);
    }

    #[test]
    fn cdf_filters_kill_polynomials_in_the_details() {
        // 5/3 has two vanishing moments, 9/7 four: a ramp leaves no detail
        // away from the ends, a cubic none for 9/7.
        let n = 64;
        let ramp: Vec<f64> = (0..n).map(|i| 3.0 + 0.5 * i as f64).collect();
        let cubic: Vec<f64> = (0..n).map(|i| (i as f64 / 10.0).powi(3)).collect();
        let mut s = vec![0.0; n];
        for (t, x) in [
            (Lifting::Cdf53, &ramp),
            (Lifting::Cdf97, &ramp),
            (Lifting::Cdf97, &cubic),
        ] {
            let mut y = x.clone();
            forward_line(t, true, &mut y, &mut s);
            let inner = &y[n / 2 + 3..n - 3];
            let m = inner.iter().map(|v| v.abs()).fold(0.0, f64::max);
            assert!(m < 1e-9, "{t}: detail {m}");
        }
    }

    #[test]
    fn scaled_transforms_keep_energy_close() {
        // Near-orthonormal: the energy of the coefficients of noise stays
        // within 25% of the signal's (Haar scaled is exactly orthonormal).
        let x = noise(4096, 9);
        let e0: f64 = x.iter().map(|v| v * v).sum();
        for t in Lifting::ALL {
            let mut y = x.clone();
            let mut s = vec![0.0; y.len()];
            forward_line(t, true, &mut y, &mut s);
            let e1: f64 = y.iter().map(|v| v * v).sum();
            assert!((e1 / e0 - 1.0).abs() < 0.25, "{t}: {}", e1 / e0);
            if t == Lifting::Haar {
                assert!((e1 / e0 - 1.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn bricks_invert_in_2d_and_3d() {
        for dims in [
            [1, 33, 20],
            [1, 64, 64],
            [9, 10, 11],
            [16, 16, 16],
            [1, 1, 7],
        ] {
            let n = dims.iter().product();
            let x = noise(n, 3);
            for t in Lifting::ALL {
                let levels = levels_for(dims, 8);
                let mut y = x.clone();
                forward(t, true, &mut y, dims, levels);
                inverse(t, true, &mut y, dims, levels);
                let err = x
                    .iter()
                    .zip(&y)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(err < 1e-12, "{t} {dims:?}: {err}");
            }
        }
    }

    #[test]
    fn detail_levels_follow_the_mallat_layout() {
        let dims = [1, 8, 8];
        assert_eq!(detail_level([0, 0, 0], dims, 2), 2);
        assert_eq!(detail_level([0, 0, 5], dims, 2), 0);
        assert_eq!(detail_level([0, 2, 1], dims, 2), 1);
        assert_eq!(detail_level([0, 1, 1], dims, 2), 2);
    }
}
