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
    /// The interpolating wavelet (cubic predict, no update). The codec
    /// runs it in closed loop (`codec::interp`); open loop it is here for
    /// completeness of the enum and its tests.
    Interp,
    /// Not a lifting transform: the fast profile's block predictor
    /// (`codec::lorenzo`), which codes bricks without the entropy coder.
    /// Outside `ALL`, whose members the lifting code runs; open loop here
    /// it is the identity.
    Lorenzo,
}

impl Lifting {
    pub const ALL: [Lifting; 4] = [
        Lifting::Haar,
        Lifting::Cdf53,
        Lifting::Cdf97,
        Lifting::Interp,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Lifting::Haar => "haar",
            Lifting::Cdf53 => "cdf53",
            Lifting::Cdf97 => "cdf97",
            Lifting::Interp => "interp",
            Lifting::Lorenzo => "lorenzo",
        }
    }
    /// The transform's code in the .mrz header (and the GPU kernel's).
    pub fn code(self) -> u8 {
        match self {
            Lifting::Haar => 0,
            Lifting::Cdf53 => 1,
            Lifting::Cdf97 => 2,
            Lifting::Interp => 3,
            Lifting::Lorenzo => 4,
        }
    }
    /// Every transform a file may name.
    pub const CODED: [Lifting; 5] = [
        Lifting::Haar,
        Lifting::Cdf53,
        Lifting::Cdf97,
        Lifting::Interp,
        Lifting::Lorenzo,
    ];
    pub(crate) fn from_code(c: u8) -> Option<Self> {
        Lifting::CODED.into_iter().find(|l| l.code() == c)
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
        Lifting::CODED
            .into_iter()
            .find(|l| l.name() == s.to_ascii_lowercase())
            .ok_or_else(|| {
                format!("unknown transform '{s}': use interp, cdf97, cdf53, haar or lorenzo")
            })
    }
}

// CDF 9/7 lifting constants (Daubechies and Sweldens 1998; JPEG 2000).
const A97: f64 = -1.586_134_342_059_924;
const B97: f64 = -0.052_980_118_572_961;
const G97: f64 = 0.882_911_075_530_934;
const D97: f64 = 0.443_506_852_043_971;

/// The lifting weights in forward order (predict, update, predict,
/// update): CDF 5/3 uses the first two, Haar none (it is d -= e, e += d/2).
pub fn weights(t: Lifting) -> [f64; 4] {
    match t {
        Lifting::Haar => [0.0; 4],
        Lifting::Cdf53 => [-0.5, 0.25, 0.0, 0.0],
        Lifting::Cdf97 => [A97, B97, G97, D97],
        Lifting::Interp | Lifting::Lorenzo => [0.0; 4],
    }
}

/// Predict step d[i] += w (e[i] + e[i+1]) on rows of m values (a line is
/// rows of one), e mirrored past its end.
fn predict(e: &[f64], d: &mut [f64], m: usize, w: f64) {
    let ne = e.len() / m;
    for (i, di) in d.chunks_exact_mut(m).enumerate() {
        let j = (i + 1).min(ne - 1);
        let (l, r) = (&e[i * m..(i + 1) * m], &e[j * m..(j + 1) * m]);
        for ((dv, a), b) in di.iter_mut().zip(l).zip(r) {
            *dv += w * (a + b);
        }
    }
}

/// The interpolating wavelet's predict step on rows of m values: each
/// odd sample (detail row i, position 2i + 1) gets `sign` times the cubic
/// prediction from the evens.
fn interp_rows(e: &[f64], d: &mut [f64], m: usize, n: usize, sign: f64) {
    for (i, di) in d.chunks_exact_mut(m).enumerate() {
        for (col, dv) in di.iter_mut().enumerate() {
            let p = super::interp::predict(|j| e[(j / 2) * m + col], 2 * i + 1, 1, n);
            *dv += sign * p;
        }
    }
}

/// Update step e[i] += w (d[i-1] + d[i]) on rows of m values, d mirrored
/// at both ends.
fn update(e: &mut [f64], d: &[f64], m: usize, w: f64) {
    let nd = d.len() / m;
    if nd == 0 {
        return;
    }
    for (i, ei) in e.chunks_exact_mut(m).enumerate() {
        let (a, b) = (i.saturating_sub(1).min(nd - 1), i.min(nd - 1));
        let (l, r) = (&d[a * m..(a + 1) * m], &d[b * m..(b + 1) * m]);
        for ((ev, p), q) in ei.iter_mut().zip(l).zip(r) {
            *ev += w * (p + q);
        }
    }
}

/// Gains that bring the low band to sqrt 2 at DC and the high band to
/// sqrt 2 at Nyquist (unit gain per sample pair), from the lifting itself.
pub fn gains(t: Lifting) -> (f64, f64) {
    static G: std::sync::OnceLock<[(f64, f64); 4]> = std::sync::OnceLock::new();
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
    // Lorenzo, outside ALL, scales nothing.
    all.get(t.code() as usize).copied().unwrap_or((1.0, 1.0))
}

/// One level along a line: `x` (length n) becomes [approx (ceil n/2) | detail
/// (floor n/2)]; `scratch` holds at least n values.
pub fn forward_line(t: Lifting, scaled: bool, x: &mut [f64], scratch: &mut [f64]) {
    forward_rows(t, scaled, x, 1, scratch);
}

/// The exact inverse of `forward_line` (each step undone in reverse order).
pub fn inverse_line(t: Lifting, scaled: bool, x: &mut [f64], scratch: &mut [f64]) {
    inverse_rows(t, scaled, x, 1, scratch);
}

/// `forward_line` on n rows of m values at once (x is n x m, row-major):
/// the lines run down the columns, and every step sweeps whole rows, so
/// the strided axes of a brick lift with contiguous, vectorizable loops.
/// Each value sees the same operations as on its own line.
fn forward_rows(t: Lifting, scaled: bool, x: &mut [f64], m: usize, scratch: &mut [f64]) {
    let n = x.len() / m;
    if n < 2 {
        return;
    }
    let ne = n.div_ceil(2);
    let s = &mut scratch[..n * m];
    for i in 0..ne {
        s[i * m..(i + 1) * m].copy_from_slice(&x[2 * i * m..(2 * i + 1) * m]);
    }
    for i in 0..n / 2 {
        s[(ne + i) * m..(ne + i + 1) * m].copy_from_slice(&x[(2 * i + 1) * m..(2 * i + 2) * m]);
    }
    let (e, d) = s.split_at_mut(ne * m);
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
            predict(e, d, m, -0.5);
            update(e, d, m, 0.25);
        }
        Lifting::Cdf97 => {
            predict(e, d, m, A97);
            update(e, d, m, B97);
            predict(e, d, m, G97);
            update(e, d, m, D97);
        }
        Lifting::Interp => interp_rows(e, d, m, n, -1.0),
        Lifting::Lorenzo => {}
    }
    if scaled {
        let (gl, gh) = gains(t);
        e.iter_mut().for_each(|v| *v *= gl);
        d.iter_mut().for_each(|v| *v *= gh);
    }
    x.copy_from_slice(s);
}

/// The exact inverse of `forward_rows`.
fn inverse_rows(t: Lifting, scaled: bool, x: &mut [f64], m: usize, scratch: &mut [f64]) {
    let n = x.len() / m;
    if n < 2 {
        return;
    }
    let ne = n.div_ceil(2);
    let (e, d) = x.split_at_mut(ne * m);
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
            update(e, d, m, -0.25);
            predict(e, d, m, 0.5);
        }
        Lifting::Cdf97 => {
            update(e, d, m, -D97);
            predict(e, d, m, -G97);
            update(e, d, m, -B97);
            predict(e, d, m, -A97);
        }
        Lifting::Interp => interp_rows(e, d, m, n, 1.0),
        Lifting::Lorenzo => {}
    }
    let s = &mut scratch[..n * m];
    for i in 0..ne {
        s[2 * i * m..(2 * i + 1) * m].copy_from_slice(&x[i * m..(i + 1) * m]);
    }
    for i in 0..n / 2 {
        s[(2 * i + 1) * m..(2 * i + 2) * m].copy_from_slice(&x[(ne + i) * m..(ne + i + 1) * m]);
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
pub fn approx_len(n: usize, level: usize) -> usize {
    let mut n = n;
    for _ in 0..level {
        n = n.div_ceil(2);
    }
    n
}

/// Applies `f` (rows, row length, scratch) to every line along `axis` of
/// the [z, y, x] sub-box `ext` of a brick of dimensions `dims` (row-major):
/// x lines one at a time in place; y and z lines as rows of the box's x
/// extent, gathered into `rows`.
fn along_axis<F: FnMut(&mut [f64], usize, &mut [f64])>(
    data: &mut [f64],
    dims: [usize; 3],
    ext: [usize; 3],
    axis: usize,
    rows: &mut Vec<f64>,
    scratch: &mut Vec<f64>,
    f: &mut F,
) {
    let n = ext[axis];
    if n < 2 {
        return;
    }
    let m = if axis == 2 { 1 } else { ext[2] };
    scratch.resize(n * m, 0.0);
    if axis == 2 {
        for z in 0..ext[0] {
            for y in 0..ext[1] {
                let base = (z * dims[1] + y) * dims[2];
                f(&mut data[base..base + n], 1, scratch);
            }
        }
        return;
    }
    rows.resize(n * m, 0.0);
    // Row k of line j starts at j * outer + k * stride.
    let (lines, outer, stride) = if axis == 1 {
        (ext[0], dims[1] * dims[2], dims[2])
    } else {
        (ext[1], dims[2], dims[1] * dims[2])
    };
    for j in 0..lines {
        for k in 0..n {
            let o = j * outer + k * stride;
            rows[k * m..(k + 1) * m].copy_from_slice(&data[o..o + m]);
        }
        f(rows, m, scratch);
        for k in 0..n {
            let o = j * outer + k * stride;
            data[o..o + m].copy_from_slice(&rows[k * m..(k + 1) * m]);
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
                &mut |x, m, s| forward_rows(t, scaled, x, m, s),
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
                &mut |x, m, s| inverse_rows(t, scaled, x, m, s),
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
            (Lifting::Interp, &cubic),
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
        // The interpolating wavelet has no update step and is not (the
        // codec runs it in closed loop, where this does not matter).
        let x = noise(4096, 9);
        let e0: f64 = x.iter().map(|v| v * v).sum();
        for t in [Lifting::Haar, Lifting::Cdf53, Lifting::Cdf97] {
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
