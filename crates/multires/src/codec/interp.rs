//! The interpolating wavelet in closed loop: the predict step of lifting
//! (cubic, Deslauriers-Dubuc 4-point) with the quantizer inside the loop,
//! coarse to fine, as SZ3's multilevel interpolation does. Each detail is
//! predicted from values the decoder already has, so every value's error
//! is at most half the step by construction: the step can be twice the
//! bound, where the open-loop transforms (whose errors add up through the
//! inverse) need about 1.2 times it. On the benchmark fields this codes
//! 20 to 35% smaller at the same bound (BENCHMARKS.md).
//!
//! Passes: level by level from the coarsest (stride 2^L) down; within a
//! level of stride s, along x, then y, then z, the points whose coordinate
//! on that axis is an odd multiple of s, whose coordinates on the axes
//! already done at this level are multiples of s, and on the others
//! multiples of 2s. The GPU runs one kernel per pass with the same
//! arithmetic (`kernels/codec_transform.cu`, INTERP).

use super::rice::{unzigzag, zigzag};
use super::{morton, quantize, Sample};
use std::sync::{Arc, OnceLock};

/// Levels from `COARSE_LEVEL` up (stride 4 and coarser) are quantized
/// with the step divided by `COARSE_DIVISOR`: their errors feed every
/// finer prediction (smooth fields code 20% smaller, turbulent ones 0.3%
/// larger).
pub const COARSE_LEVEL: usize = 3;
pub const COARSE_DIVISOR: f64 = 1.5;

/// Levels of a brick: the smallest L with 2^L >= its longest axis less
/// one, so the coarsest grid is the origin (and, on axes of 2^L + 1
/// points, the far corner: then nothing is extrapolated).
pub fn levels(dims: [usize; 3]) -> usize {
    let m = dims.into_iter().max().unwrap_or(1).saturating_sub(1);
    let mut l = 0;
    while (1usize << l) < m {
        l += 1;
    }
    l
}

/// What the step of level `lv` (1 the finest) is divided by.
pub fn divisor(lv: usize) -> f64 {
    if lv >= COARSE_LEVEL {
        COARSE_DIVISOR
    } else {
        1.0
    }
}

/// The step of level `lv` for the brick's step `q` (the GPU divides alike).
pub fn step_at(q: f64, lv: usize) -> f64 {
    q / divisor(lv)
}

/// The prediction of position `i` on a line of length `n` from the known
/// positions i -+ s, i -+ 3s (`get` reads them): cubic inside, quadratic
/// next to an edge, linear between two, and past the last known value
/// linear extrapolation or a copy. The GPU evaluates the same expressions
/// in the same order.
#[inline]
pub fn predict(get: impl Fn(usize) -> f64, i: usize, s: usize, n: usize) -> f64 {
    let left3 = i >= 3 * s;
    let right1 = i + s < n;
    let right3 = i + 3 * s < n;
    if right1 {
        let (b, c) = (get(i - s), get(i + s));
        match (left3, right3) {
            (true, true) => cubic4(get(i - 3 * s), b, c, get(i + 3 * s)),
            (false, true) => (3.0 * b + 6.0 * c - get(i + 3 * s)) / 8.0,
            (true, false) => (-get(i - 3 * s) + 6.0 * b + 3.0 * c) / 8.0,
            (false, false) => (b + c) / 2.0,
        }
    } else if s >= 4 && i >= 5 * s {
        (15.0 * get(i - s) - 10.0 * get(i - 3 * s) + 3.0 * get(i - 5 * s)) / 8.0
    } else if left3 {
        1.5 * get(i - s) - 0.5 * get(i - 3 * s)
    } else {
        get(i - s)
    }
}

/// One pass: points along `axis` at stride `s` of level `lv`.
#[derive(Debug, Clone, Copy)]
pub struct Pass {
    pub lv: usize,
    pub s: usize,
    pub axis: usize,
}

impl Pass {
    /// First index and step of the pass's points on axis `a`.
    pub fn lattice(&self, a: usize) -> (usize, usize) {
        if a == self.axis {
            (self.s, 2 * self.s)
        } else if a > self.axis {
            // Axes done earlier at this level (x before y before z).
            (0, self.s)
        } else {
            (0, 2 * self.s)
        }
    }
}

/// Points on each axis of the lattice (first index, step) per axis.
pub fn lattice_counts(dims: [usize; 3], lattice: [(usize, usize); 3]) -> [usize; 3] {
    [0, 1, 2].map(|a| {
        let (o, st) = lattice[a];
        if dims[a] > o {
            (dims[a] - 1 - o) / st + 1
        } else {
            0
        }
    })
}

/// The anchors' lattice: stride 2^L from the origin on every axis.
pub fn anchor_lattice(dims: [usize; 3]) -> [(usize, usize); 3] {
    [(0, 1usize << levels(dims)); 3]
}

/// The coarsest grid (stride 2^L on every axis; at most 8 points), coded
/// before the passes with prediction 0 at the coarsest level's step.
pub fn anchors(dims: [usize; 3]) -> Vec<usize> {
    let mut v = Vec::new();
    each_lattice_point(dims, anchor_lattice(dims), |[z, y, x]| {
        v.push((z * dims[1] + y) * dims[2] + x)
    });
    v
}

/// Visits the points (z, y, x) of a lattice (first index, step per axis)
/// in row order: the order INTERP's threads take them in.
fn each_lattice_point(dims: [usize; 3], l: [(usize, usize); 3], mut f: impl FnMut([usize; 3])) {
    let c = lattice_counts(dims, l);
    for iz in 0..c[0] {
        let z = l[0].0 + iz * l[0].1;
        for iy in 0..c[1] {
            let y = l[1].0 + iy * l[1].1;
            for ix in 0..c[2] {
                f([z, y, l[2].0 + ix * l[2].1]);
            }
        }
    }
}

/// The passes of a brick, coarsest first, after the anchors.
pub fn passes(dims: [usize; 3]) -> Vec<Pass> {
    let mut v = Vec::new();
    for lv in (1..=levels(dims)).rev() {
        let s = 1 << (lv - 1);
        for axis in [2, 1, 0] {
            if dims[axis] > s {
                v.push(Pass { lv, s, axis });
            }
        }
    }
    v
}

/// Visits every point of pass `p`: `f(flat index, stride of the axis,
/// position on the axis)`.
#[cfg(test)]
fn each_point(dims: [usize; 3], p: &Pass, mut f: impl FnMut(usize, usize, usize)) {
    let stride = [dims[1] * dims[2], dims[2], 1];
    each_lattice_point(dims, [0, 1, 2].map(|a| p.lattice(a)), |pos| {
        let [z, y, x] = pos;
        f((z * dims[1] + y) * dims[2] + x, stride[p.axis], pos[p.axis])
    });
}

/// A run of a pass's points along x at one (z, y): `m` points at flat
/// indices k0 + j kstep and positions i0 + j istep on the pass's axis,
/// all with the cubic's four neighbours (`cubic`) or not. A y or z pass's
/// row is one run; an x pass's row is its edge points and its inside.
/// The coders' loops take a run at a time, so the prediction's case is
/// settled once a run, not once a point.
#[derive(Debug, Clone, Copy)]
struct Run {
    k0: usize,
    kstep: usize,
    m: usize,
    i0: usize,
    istep: usize,
    cubic: bool,
}

/// The rows of pass `p` (its lattice's (z, y) pairs) in the order
/// `each_point` visits them.
fn rows(dims: [usize; 3], p: &Pass) -> impl Iterator<Item = [usize; 2]> {
    let l = [0, 1, 2].map(|a| p.lattice(a));
    let c = lattice_counts(dims, l);
    (0..c[0])
        .flat_map(move |iz| (0..c[1]).map(move |iy| [l[0].0 + iz * l[0].1, l[1].0 + iy * l[1].1]))
}

/// The runs of pass `p`'s row at (z, y), in order: up to three, the
/// unused ones empty.
#[inline(always)]
fn row_runs(dims: [usize; 3], p: &Pass, [z, y]: [usize; 2]) -> [Run; 3] {
    let (x0, kstep) = p.lattice(2);
    let m = lattice_counts(dims, [0, 1, 2].map(|a| p.lattice(a)))[2];
    let (s, len) = (p.s, dims[p.axis]);
    let inside = |i: usize| i >= 3 * s && i + 3 * s < len;
    let k0 = (z * dims[1] + y) * dims[2] + x0;
    let run = |a: usize, b: usize, i0: usize, istep: usize, cubic: bool| Run {
        k0: k0 + a * kstep,
        kstep,
        m: b - a,
        i0,
        istep,
        cubic,
    };
    if p.axis != 2 {
        let i = if p.axis == 0 { z } else { y };
        let none = run(0, 0, 0, 0, false);
        return [run(0, m, i, 0, inside(i)), none, none];
    }
    // Along x, positions s + j 2s: inside from j = 1 to the last point
    // with 3s to its right.
    let i_of = |j: usize| x0 + j * kstep;
    let lo = m.min(1);
    let mut hi = m;
    while hi > lo && !inside(i_of(hi - 1)) {
        hi -= 1;
    }
    [
        run(0, lo, i_of(0), kstep, false),
        run(lo, hi, i_of(lo), kstep, true),
        run(hi, m, i_of(hi), kstep, false),
    ]
}

/// The cubic (Deslauriers-Dubuc 4-point) prediction from the values 3s
/// and s before a point and s and 3s after it: the one expression every
/// path evaluates (the GPU's in the same order).
#[inline(always)]
fn cubic4(a: f64, b: f64, c: f64, e: f64) -> f64 {
    (-a + 9.0 * b + 9.0 * c - e) / 16.0
}

/// `predict`'s cubic case at flat index k, neighbours d apart.
#[inline(always)]
pub(crate) fn cubic(r: &[f64], k: usize, d: usize) -> f64 {
    cubic4(r[k - 3 * d], r[k - d], r[k + d], r[k + 3 * d])
}

/// What a walk makes of each point: its value in `r` at flat index k
/// from its prediction and its level's step. A trait, not a closure, so
/// that the step is inlined into the walk's loops (a closure was not, and
/// the bound check's sums then went through memory on every point).
pub(crate) trait Point {
    fn point(&mut self, r: &mut [f64], k: usize, pred: f64, qs: f64);

    /// The `m` points from k0 on, one apart, all predicted by the cubic
    /// from rows d >= m apart (a y or z pass's row at stride 1: three
    /// quarters of a brick's points), as one vectorized row.
    fn cubic_row(&mut self, r: &mut [f64], k0: usize, m: usize, d: usize, qs: f64);
}

/// Walks a brick's points in coding order (the anchors, then each pass's
/// runs) with the values known so far in `r` and the brick's step `q`.
#[inline(always)]
pub(crate) fn walk(dims: [usize; 3], q: f64, r: &mut [f64], f: &mut impl Point) {
    walk_to(dims, q, r, f, 1)
}

/// `walk` through the passes of level `last` and coarser only: after
/// them every point of the stride-2^(last-1) lattice is known.
#[inline(always)]
fn walk_to(dims: [usize; 3], q: f64, r: &mut [f64], f: &mut impl Point, last: usize) {
    let q0 = step_at(q, levels(dims));
    for k in anchors(dims) {
        f.point(r, k, 0.0, q0);
    }
    let stride = [dims[1] * dims[2], dims[2], 1];
    for p in passes(dims).into_iter().filter(|p| p.lv >= last) {
        let (st, len, qs) = (stride[p.axis], dims[p.axis], step_at(q, p.lv));
        let d = p.s * st;
        for row in rows(dims, &p) {
            for run in row_runs(dims, &p, row) {
                if run.cubic && run.kstep == 1 && d >= run.m {
                    f.cubic_row(r, run.k0, run.m, d, qs);
                } else if run.cubic {
                    for j in 0..run.m {
                        let k = run.k0 + j * run.kstep;
                        let pred = cubic(r, k, d);
                        f.point(r, k, pred, qs);
                    }
                } else {
                    for j in 0..run.m {
                        let (k, i) = (run.k0 + j * run.kstep, run.i0 + j * run.istep);
                        let base = k - i * st;
                        let pred = predict(|jj| r[base + jj * st], i, p.s, len);
                        f.point(r, k, pred, qs);
                    }
                }
            }
        }
    }
}

/// The bound's check of a brick as the interpolation makes it: the
/// largest error and the squared errors of the values within `e` of
/// their reconstruction rounded to the stored type, and the others (NaN
/// too: a reconstruction that overflowed) by index.
#[derive(Debug, Default)]
pub struct Check {
    pub maxe: f64,
    pub sse: f64,
    pub bad: Vec<u32>,
}

impl Check {
    /// Value k, `want`, reconstructed as `got` (rounded to the stored type).
    #[inline(always)]
    pub fn value(&mut self, k: usize, want: f64, got: f64, e: f64) {
        if !tally((want - got).abs(), e, (&mut self.maxe, &mut self.sse)) {
            self.bad.push(k as u32);
        }
    }
}

/// An error `d` counted into the largest error and the squared errors if
/// it is within the bound `e`; false if not (NaN included).
#[inline(always)]
fn tally(d: f64, e: f64, (maxe, sse): (&mut f64, &mut f64)) -> bool {
    let within = d <= e;
    if within {
        // d is not NaN here: a plain maximum.
        if d > *maxe {
            *maxe = d;
        }
        *sse += d * d;
    }
    within
}

/// `forward`'s step. The check's sums are fields here, and its outliers
/// a list held outside, so the sums stay in registers through the walk
/// (inside `Check`, whose list grows by a call, they went through memory
/// on every point, a chain of stores and loads).
struct Forward<'a, T> {
    x: &'a [f64],
    zz: &'a mut [u32],
    at: usize,
    bad: &'a mut Vec<u32>,
    /// A row's errors (`cubic_row`).
    err: Vec<f64>,
    e: f64,
    maxe: f64,
    sse: f64,
    _stored: std::marker::PhantomData<T>,
}

impl<T: Sample> Point for Forward<'_, T> {
    #[inline(always)]
    fn point(&mut self, r: &mut [f64], k: usize, pred: f64, qs: f64) {
        let xk = self.x[k];
        let v = quantize(xk - pred, qs);
        self.zz[self.at] = zigzag(v);
        self.at += 1;
        let rk = pred + v as f64 * qs;
        r[k] = rk;
        let d = (xk - T::of_f64(rk).to_f64()).abs();
        if !tally(d, self.e, (&mut self.maxe, &mut self.sse)) {
            self.bad.push(k as u32);
        }
    }

    fn cubic_row(&mut self, r: &mut [f64], k0: usize, m: usize, d: usize, qs: f64) {
        let (rows, out) = split_row(r, k0, m, d);
        let x = &self.x[k0..k0 + m];
        let zz = &mut self.zz[self.at..self.at + m];
        self.at += m;
        self.err.resize(m, 0.0);
        forward_row::<T>((rows, x), qs, out, zz, &mut self.err);
        let (maxe, sse, bad) = row_check(&self.err, self.e);
        self.maxe = self.maxe.max(maxe);
        self.sse += sse;
        if bad {
            for (j, &d) in self.err.iter().enumerate() {
                if d.is_nan() || d > self.e {
                    self.bad.push((k0 + j) as u32);
                }
            }
        }
    }
}

/// The row of `m` values from k0 on in `r` and, as slices beside it, the
/// four it is predicted from: 3d and d before it, d and 3d after it
/// (d >= m, so none overlaps it).
fn split_row(r: &mut [f64], k0: usize, m: usize, d: usize) -> ([&[f64]; 4], &mut [f64]) {
    let (before, rest) = r.split_at_mut(k0);
    let (out, after) = rest.split_at_mut(m);
    let rows = [
        &before[k0 - 3 * d..k0 - 3 * d + m],
        &before[k0 - d..k0 - d + m],
        &after[d - m..d],
        &after[3 * d - m..3 * d],
    ];
    (rows, out)
}

/// A row's inputs: the rows 3d and d before it and d and 3d after it,
/// and its values.
type Rows<'a> = ([&'a [f64]; 4], &'a [f64]);

/// `Forward::point` over a row with no branch and no sum, so the compiler
/// vectorizes it: the codes, the reconstruction and each value's error
/// (rounded to the stored type) into `err`.
#[inline(always)]
fn forward_row_map<T: Sample>(
    ([a, b, c, e3], x): Rows,
    qs: f64,
    out: &mut [f64],
    zz: &mut [u32],
    err: &mut [f64],
) {
    let m = out.len();
    let (a, b, c, e3, x) = (&a[..m], &b[..m], &c[..m], &e3[..m], &x[..m]);
    let (zz, err) = (&mut zz[..m], &mut err[..m]);
    for j in 0..m {
        let pred = cubic4(a[j], b[j], c[j], e3[j]);
        let v = quantize(x[j] - pred, qs);
        zz[j] = zigzag(v);
        let rk = pred + v as f64 * qs;
        out[j] = rk;
        err[j] = (x[j] - T::of_f64(rk).to_f64()).abs();
    }
}

/// `forward_row_map` with AVX-512 or AVX2 where the processor has them
/// (eight or four lanes a vector instead of two; the same IEEE
/// operations, so the same bits).
fn forward_row<T: Sample>(rows: Rows, qs: f64, out: &mut [f64], zz: &mut [u32], err: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the processor has AVX-512F.
        return unsafe { forward_row_avx512::<T>(rows, qs, out, zz, err) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        return unsafe { forward_row_avx2::<T>(rows, qs, out, zz, err) };
    }
    forward_row_map::<T>(rows, qs, out, zz, err)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn forward_row_avx512<T: Sample>(
    rows: Rows,
    qs: f64,
    out: &mut [f64],
    zz: &mut [u32],
    err: &mut [f64],
) {
    forward_row_map::<T>(rows, qs, out, zz, err)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn forward_row_avx2<T: Sample>(
    rows: Rows,
    qs: f64,
    out: &mut [f64],
    zz: &mut [u32],
    err: &mut [f64],
) {
    forward_row_map::<T>(rows, qs, out, zz, err)
}

/// The largest error and the squared errors of a row's values within the
/// bound `e` (in four lanes, summed at the end: only the statistics' last
/// digits depend on that order), and whether any value is not.
fn row_check(err: &[f64], e: f64) -> (f64, f64, bool) {
    const L: usize = 4;
    let (mut maxe, mut sse, mut bad) = ([0f64; L], [0f64; L], [false; L]);
    let mut lanes = err.chunks_exact(L);
    for w in &mut lanes {
        for l in 0..L {
            let good = w[l] <= e;
            let d = if good { w[l] } else { 0.0 };
            maxe[l] = if d > maxe[l] { d } else { maxe[l] };
            sse[l] += d * d;
            bad[l] |= !good;
        }
    }
    for &v in lanes.remainder() {
        let good = v <= e;
        let d = if good { v } else { 0.0 };
        maxe[0] = if d > maxe[0] { d } else { maxe[0] };
        sse[0] += d * d;
        bad[0] |= !good;
    }
    (
        maxe.into_iter().fold(0.0, f64::max),
        sse.into_iter().sum(),
        bad.contains(&true),
    )
}

/// Codes a brick (row-major `x` of extent `dims`) with step `q`: the
/// quantized details as zigzag codes in coding order (`Order::Passes`,
/// the order the passes visit them, so no reordering) into `zz`, and the
/// decoder's reconstruction (before rounding to the stored type `T`) into
/// `r`, grid order. Each value is checked against the bound `e` as it is
/// made, while it is at hand. Both buffers are reused from brick to
/// brick: `r`'s old values are never read, since a pass reads only
/// points of earlier passes.
pub fn forward<T: Sample>(
    x: &[f64],
    dims: [usize; 3],
    (q, e): (f64, f64),
    (zz, r): (&mut Vec<u32>, &mut Vec<f64>),
) -> Check {
    let n = x.len();
    zz.resize(n, 0);
    r.resize(n, 0.0);
    let mut bad = Vec::new();
    let mut f = Forward::<T> {
        x,
        zz,
        at: 0,
        bad: &mut bad,
        err: Vec::new(),
        e,
        maxe: 0.0,
        sse: 0.0,
        _stored: std::marker::PhantomData,
    };
    if n > 0 {
        walk(dims, q, r, &mut f);
    }
    let (maxe, sse) = (f.maxe, f.sse);
    Check { maxe, sse, bad }
}

struct Inverse<'a> {
    zz: &'a [u32],
    at: usize,
}

impl Point for Inverse<'_> {
    #[inline(always)]
    fn point(&mut self, c: &mut [f64], k: usize, pred: f64, qs: f64) {
        let v = self.zz.get(self.at).map_or(0, |&z| unzigzag(z));
        self.at += 1;
        c[k] = pred + v as f64 * qs;
    }

    fn cubic_row(&mut self, c: &mut [f64], k0: usize, m: usize, d: usize, qs: f64) {
        let (rows, out) = split_row(c, k0, m, d);
        let zz = &self.zz[self.at..self.at + m];
        self.at += m;
        inverse_row(rows, zz, qs, out);
    }
}

/// `Inverse::point` over a row (rows as `Rows`' four), vectorized.
#[inline(always)]
fn inverse_row_map([a, b, c, e3]: [&[f64]; 4], zz: &[u32], qs: f64, out: &mut [f64]) {
    let m = out.len();
    let (a, b, c, e3, zz) = (&a[..m], &b[..m], &c[..m], &e3[..m], &zz[..m]);
    for j in 0..m {
        let pred = cubic4(a[j], b[j], c[j], e3[j]);
        out[j] = pred + unzigzag(zz[j]) as f64 * qs;
    }
}

/// `inverse_row_map` with AVX-512 or AVX2 where the processor has them.
fn inverse_row(rows: [&[f64]; 4], zz: &[u32], qs: f64, out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the processor has AVX-512F.
        return unsafe { inverse_row_avx512(rows, zz, qs, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        return unsafe { inverse_row_avx2(rows, zz, qs, out) };
    }
    inverse_row_map(rows, zz, qs, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn inverse_row_avx512(rows: [&[f64]; 4], zz: &[u32], qs: f64, out: &mut [f64]) {
    inverse_row_map(rows, zz, qs, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn inverse_row_avx2(rows: [&[f64]; 4], zz: &[u32], qs: f64, out: &mut [f64]) {
    inverse_row_map(rows, zz, qs, out)
}

/// The inverse of `forward`: the reconstruction (before rounding) of the
/// zigzag codes `zz` (coding order) into `c`, grid order; `c`'s old
/// values are never read.
pub fn inverse(zz: &[u32], dims: [usize; 3], q: f64, c: &mut Vec<f64>) {
    let n: usize = dims.iter().product();
    c.resize(n, 0.0);
    if n > 0 && zz.len() == n {
        walk(dims, q, c, &mut Inverse { zz, at: 0 });
    }
}

/// The points per axis of a brick of `dims` at stride 2^level (its
/// coarse view: positions 0, 2^level, ... on each axis).
pub fn coarse_dims(dims: [usize; 3], level: usize) -> [usize; 3] {
    dims.map(|n| if n == 0 { 0 } else { ((n - 1) >> level) + 1 })
}

/// `inverse` of the coarse part only: the anchors and the passes down to
/// stride 2^level, from the first `coarse_dims` points of `zz` (coding
/// order), which are all it reads. Sets the stride-2^level lattice of `c`
/// to the values the whole inverse gives there; other points are left
/// as they were.
pub fn inverse_coarse(zz: &[u32], dims: [usize; 3], q: f64, level: usize, c: &mut Vec<f64>) {
    let n: usize = dims.iter().product();
    c.resize(n, 0.0);
    let m: usize = coarse_dims(dims, level).iter().product();
    if n > 0 && zz.len() >= m {
        walk_to(
            dims,
            q,
            c,
            &mut Inverse {
                zz: &zz[..m],
                at: 0,
            },
            level + 1,
        );
    }
}

/// Where position `p` of an axis of length `n` lands when the lazy
/// wavelet (evens first, recursively) reorders the axis: the layout of
/// the open-loop transforms' subbands.
fn lazy_index(p: usize, n: usize) -> usize {
    let (mut p, mut m) = (p, n);
    while m > 1 {
        let half = m.div_ceil(2);
        if p % 2 == 1 {
            return half + p / 2;
        }
        p /= 2;
        m = half;
    }
    p
}

/// The coding order of the details. Version 5 on: pass by pass (the
/// anchors, then each pass, coarsest first), each in its lattice's row
/// order, so the GPU's passes read and write their details in runs, and
/// a value's predecessor is its neighbour on the row at its own level
/// (files 1-28% smaller than Morton order on the benchmark fields).
/// Versions 3 and 4: Morton order over the lazy layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Order {
    LazyMorton,
    Passes,
}

impl Order {
    /// What this build writes.
    pub const CURRENT: Order = Order::Passes;

    /// The order of a file of container version `v`.
    pub fn of_version(v: u16) -> Order {
        if v >= 5 {
            Order::Passes
        } else {
            Order::LazyMorton
        }
    }
}

/// The grid index of each coded value, in coding order `o`. Cached per
/// shape.
pub fn order(dims: [usize; 3], o: Order) -> Arc<Vec<u32>> {
    static PASSES: OnceLock<morton::PerShape<Arc<Vec<u32>>>> = OnceLock::new();
    match o {
        Order::LazyMorton => lazy_morton(dims).0,
        Order::Passes => morton::cached(&PASSES, dims, || {
            Arc::new(pass_table(dims, |[z, y, x]| {
                ((z * dims[1] + y) * dims[2] + x) as u32
            }))
        }),
    }
}

/// The rANS contexts' level class of each coded value (0 to 7, a byte
/// each), cached per shape (`rans::level_classes` of `order`, without its
/// divisions). The coders need only these: the interpolation makes its
/// values in coding order.
pub fn classes(dims: [usize; 3], o: Order) -> Arc<Vec<u8>> {
    static PASSES: OnceLock<morton::PerShape<Arc<Vec<u8>>>> = OnceLock::new();
    match o {
        Order::LazyMorton => lazy_morton(dims).1,
        Order::Passes => morton::cached(&PASSES, dims, || Arc::new(pass_classes(dims))),
    }
}

type OrderAndClasses = (Arc<Vec<u32>>, Arc<Vec<u8>>);

fn lazy_morton(dims: [usize; 3]) -> OrderAndClasses {
    static LAZY: OnceLock<morton::PerShape<OrderAndClasses>> = OnceLock::new();
    morton::cached(&LAZY, dims, || lazy_morton_order(dims))
}

/// A grid point's level class: the least over its axes of `axis_class`
/// (`pass_classes` takes it a row at a time; this is its reference).
#[cfg(test)]
fn level_class(zyx: [usize; 3]) -> u32 {
    zyx.map(axis_class).into_iter().min().unwrap_or(0)
}

/// The trailing zero bits of a coordinate, capped at the coarsest level
/// class (0 counts as the cap).
fn axis_class(p: usize) -> u32 {
    let cap = super::rans::LEVELS as u32 - 1;
    if p == 0 {
        cap
    } else {
        p.trailing_zeros().min(cap)
    }
}

/// A table of `Order::Passes`: `f` of each point (z, y, x), the anchors'
/// first, then each pass's lattice in row order, as INTERP walks them.
fn pass_table<T>(dims: [usize; 3], mut f: impl FnMut([usize; 3]) -> T) -> Vec<T> {
    let n: usize = dims.iter().product();
    let mut v = Vec::with_capacity(n);
    for l in pass_lattices(dims) {
        each_lattice_point(dims, l, |zyx| v.push(f(zyx)));
    }
    v
}

/// The lattices of `Order::Passes`: the anchors', then each pass's.
fn pass_lattices(dims: [usize; 3]) -> Vec<[(usize, usize); 3]> {
    let mut lattices = vec![anchor_lattice(dims)];
    lattices.extend(passes(dims).iter().map(|p| [0, 1, 2].map(|a| p.lattice(a))));
    lattices
}

/// `pass_table` of the level classes, a row at a time: a row's z and y
/// settle its least class but for x's, and the row is a vectorizable min
/// with the x classes, where a call per point cost 8% of a 256^3
/// decompression (eight brick shapes, 2.1M points each).
fn pass_classes(dims: [usize; 3]) -> Vec<u8> {
    let n: usize = dims.iter().product();
    let mut v = Vec::with_capacity(n);
    for l in pass_lattices(dims) {
        let c = lattice_counts(dims, l);
        let at = |a: usize, i: usize| axis_class(l[a].0 + i * l[a].1) as u8;
        let xs: Vec<u8> = (0..c[2]).map(|ix| at(2, ix)).collect();
        for iz in 0..c[0] {
            let cz = at(0, iz);
            for iy in 0..c[1] {
                let zy = cz.min(at(1, iy));
                v.extend(xs.iter().map(|&cx| cx.min(zy)));
            }
        }
    }
    v
}

/// Both tables of `Order::LazyMorton` from one Morton walk: per axis, the
/// lazy layout's position of each index gives the grid offset and the
/// trailing zero bits, so a value costs three look-ups for each table.
fn lazy_morton_order(dims: [usize; 3]) -> OrderAndClasses {
    let back = lazy_inverse(dims);
    let stride = [dims[1] * dims[2], dims[2], 1];
    let offset: [Vec<u32>; 3] =
        [0, 1, 2].map(|a| back[a].iter().map(|&p| (p * stride[a]) as u32).collect());
    let zeros: [Vec<u8>; 3] =
        [0, 1, 2].map(|a| back[a].iter().map(|&p| axis_class(p) as u8).collect());
    let n: usize = dims.iter().product();
    let (mut order, mut classes) = (Vec::with_capacity(n), Vec::with_capacity(n));
    morton::visit(dims, |z, y, x| {
        order.push(offset[0][z] + offset[1][y] + offset[2][x]);
        classes.push(zeros[0][z].min(zeros[1][y]).min(zeros[2][x]));
    });
    (Arc::new(order), Arc::new(classes))
}

/// Per axis, the position of each lazy-layout index (the inverse of
/// `lazy_index`).
fn lazy_inverse(dims: [usize; 3]) -> [Vec<usize>; 3] {
    dims.map(|n| {
        let mut b = vec![0usize; n];
        (0..n).for_each(|p| b[lazy_index(p, n)] = p);
        b
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_classes_equal_the_classes_point_by_point() {
        for dims in [
            [129, 129, 129],
            [129, 127, 121],
            [1, 90, 90],
            [5, 1, 33],
            [2, 3, 4],
        ] {
            let each = pass_table(dims, |zyx| level_class(zyx) as u8);
            assert_eq!(pass_classes(dims), each, "{dims:?}");
        }
    }

    #[test]
    fn predictions_are_exact_on_cubics_inside_and_on_lines_at_edges() {
        let cubic = |t: f64| 0.5 * t * t * t - 2.0 * t * t + t - 3.0;
        let line = |t: f64| 2.0 * t - 1.0;
        let n = 19;
        for s in [1, 2, 4] {
            for i in (s..n).step_by(2 * s) {
                let p = predict(|j| cubic(j as f64), i, s, n);
                if i >= 3 * s && i + 3 * s < n {
                    assert!((p - cubic(i as f64)).abs() < 1e-9, "cubic at {i}, s {s}");
                }
                let p = predict(|j| line(j as f64), i, s, n);
                assert!((p - line(i as f64)).abs() < 1e-9, "line at {i}, s {s}");
            }
        }
    }

    #[test]
    fn classes_equal_the_level_classes_of_the_order() {
        for dims in [
            [1, 1, 1],
            [3, 5, 7],
            [1, 37, 129],
            [17, 9, 33],
            [129, 127, 121],
        ] {
            for o in [Order::LazyMorton, Order::Passes] {
                assert_eq!(
                    *classes(dims, o),
                    super::super::rans::level_classes(dims, &order(dims, o)),
                    "{dims:?} {o:?}"
                );
            }
        }
    }

    #[test]
    fn anchors_and_passes_visit_every_point_once() {
        for dims in [
            [1, 1, 7],
            [1, 6, 9],
            [5, 8, 3],
            [16, 16, 16],
            [3, 1, 1],
            [1, 1, 2],
            [17, 9, 5],
            [1, 1, 1],
        ] {
            let n: usize = dims.iter().product();
            let mut seen = vec![0u8; n];
            anchors(dims).into_iter().for_each(|k| seen[k] += 1);
            for p in passes(dims) {
                each_point(dims, &p, |k, _, _| seen[k] += 1);
            }
            assert!(seen.iter().all(|&c| c == 1), "{dims:?}: {seen:?}");
            for kind in [Order::LazyMorton, Order::Passes] {
                let mut o = order(dims, kind).to_vec();
                o.sort_unstable();
                assert_eq!(o, (0..n as u32).collect::<Vec<_>>(), "{dims:?}");
            }
            // Pass order is the anchors', then each pass's points as
            // each_point visits them.
            let mut walk = anchors(dims);
            for p in passes(dims) {
                each_point(dims, &p, |k, _, _| walk.push(k));
            }
            let walk: Vec<u32> = walk.into_iter().map(|k| k as u32).collect();
            assert_eq!(*order(dims, Order::Passes), walk, "{dims:?}");
        }
    }

    #[test]
    fn closed_loop_error_is_within_half_a_step_and_inverse_matches() {
        let dims = [9, 13, 17];
        let n: usize = dims.iter().product();
        let x: Vec<f64> = (0..n)
            .map(|i| ((i as f64) * 0.37).sin() * 10.0 + (i % 7) as f64)
            .collect();
        let q = 0.02;
        // Buffers full of NaN from an earlier brick: none of it is read.
        let (mut zz, mut r) = (vec![7u32; 3], vec![f64::NAN; 2 * n]);
        let ck = forward::<f64>(&x, dims, (q, q / 2.0 * (1.0 + 1e-9)), (&mut zz, &mut r));
        assert!(ck.bad.is_empty() && ck.maxe > 0.0 && ck.sse > 0.0);
        assert_eq!((zz.len(), r.len()), (n, n));
        for (a, b) in x.iter().zip(&r) {
            assert!((a - b).abs() <= q / 2.0 * (1.0 + 1e-9), "{a} vs {b}");
        }
        let mut c = vec![f64::NAN; n / 2];
        inverse(&zz, dims, q, &mut c);
        assert_eq!(c, r);
        // The codes are the details in coding order: each is what its
        // point's reconstruction less its prediction is in steps (a
        // point's inputs never change once made).
        let mut at = anchors(dims).len();
        for p in passes(dims) {
            let qs = step_at(q, p.lv);
            each_point(dims, &p, |k, st, i| {
                let pred = predict(|j| r[k - i * st + j * st], i, p.s, dims[p.axis]);
                let v = ((r[k] - pred) / qs).round() as i32;
                assert_eq!(unzigzag(zz[at]), v, "value {at}");
                at += 1;
            });
        }
        assert_eq!(at, n);
    }

    #[test]
    fn vector_rows_equal_the_scalar_rows() {
        // forward_row and inverse_row take AVX-512 or AVX2 where the
        // processor has them; the same IEEE operations must give the same
        // bits as the plain build of the map, outliers and clamped values
        // included. The AVX2 forms are also run on their own here, since a
        // processor with AVX-512 never takes them.
        let mut next = crate::codec::xorshift(11);
        let mut val = move || (next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        for m in [1usize, 3, 4, 7, 129, 257] {
            let rows: Vec<Vec<f64>> = (0..4)
                .map(|_| (0..m).map(|_| val() * 50.0).collect())
                .collect();
            let mut x: Vec<f64> = (0..m).map(|j| rows[1][j] + val()).collect();
            x[0] = 1e300;
            let rs = [&rows[0][..], &rows[1][..], &rows[2][..], &rows[3][..]];
            for qs in [1e-3, 0.37, 1e-12] {
                let (mut o1, mut z1, mut e1) = (vec![0.0; m], vec![0u32; m], vec![0.0; m]);
                let (mut o2, mut z2, mut e2) = (vec![1.0; m], vec![1u32; m], vec![1.0; m]);
                forward_row_map::<f32>((rs, &x), qs, &mut o1, &mut z1, &mut e1);
                forward_row::<f32>((rs, &x), qs, &mut o2, &mut z2, &mut e2);
                assert_eq!(z1, z2, "m {m} qs {qs}");
                assert_eq!(
                    o1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    o2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                );
                assert_eq!(
                    e1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    e2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                );
                let (mut c1, mut c2) = (vec![0.0; m], vec![1.0; m]);
                inverse_row_map(rs, &z1, qs, &mut c1);
                inverse_row(rs, &z1, qs, &mut c2);
                assert_eq!(
                    c1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    c2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                );
                // The inverse gives back the forward's reconstruction,
                // clamped values too.
                assert_eq!(c1, o1, "m {m} qs {qs}");
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let (mut o3, mut z3, mut e3) = (vec![2.0; m], vec![2u32; m], vec![2.0; m]);
                    let mut c3 = vec![2.0; m];
                    // SAFETY: the processor has AVX2.
                    unsafe {
                        forward_row_avx2::<f32>((rs, &x), qs, &mut o3, &mut z3, &mut e3);
                        inverse_row_avx2(rs, &z1, qs, &mut c3);
                    }
                    let bits = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                    assert_eq!(z3, z1, "m {m} qs {qs}");
                    assert_eq!(bits(&o3), bits(&o1));
                    assert_eq!(bits(&e3), bits(&e1));
                    assert_eq!(bits(&c3), bits(&c1));
                }
            }
        }
    }
}
