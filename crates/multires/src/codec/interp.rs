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
//! arithmetic (`kernels/codec.cu`, INTERP).

use super::{morton, quantize};
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
            (true, true) => (-get(i - 3 * s) + 9.0 * b + 9.0 * c - get(i + 3 * s)) / 16.0,
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
fn each_point(dims: [usize; 3], p: &Pass, mut f: impl FnMut(usize, usize, usize)) {
    let stride = [dims[1] * dims[2], dims[2], 1];
    each_lattice_point(dims, [0, 1, 2].map(|a| p.lattice(a)), |pos| {
        let [z, y, x] = pos;
        f((z * dims[1] + y) * dims[2] + x, stride[p.axis], pos[p.axis])
    });
}

/// Codes a brick (row-major `x` of extent `dims`) with step `q`: the
/// quantized details at their grid positions, and the decoder's
/// reconstruction (before rounding to the stored type).
pub fn forward(x: &[f64], dims: [usize; 3], q: f64) -> (Vec<i32>, Vec<f64>) {
    let n = x.len();
    let (mut ints, mut r) = (vec![0i32; n], vec![0f64; n]);
    if n == 0 {
        return (ints, r);
    }
    let q0 = step_at(q, levels(dims));
    for k in anchors(dims) {
        ints[k] = quantize(x[k], q0);
        r[k] = ints[k] as f64 * q0;
    }
    for p in passes(dims) {
        let qs = step_at(q, p.lv);
        let len = dims[p.axis];
        each_point(dims, &p, |k, st, i| {
            let base = k - i * st;
            let pred = predict(|j| r[base + j * st], i, p.s, len);
            let v = quantize(x[k] - pred, qs);
            ints[k] = v;
            r[k] = pred + v as f64 * qs;
        });
    }
    (ints, r)
}

/// The inverse of `forward`: `c` holds the quantized details (as values)
/// at their grid positions and becomes the reconstruction.
pub fn inverse(c: &mut [f64], dims: [usize; 3], q: f64) {
    if c.is_empty() {
        return;
    }
    let q0 = step_at(q, levels(dims));
    for k in anchors(dims) {
        c[k] *= q0;
    }
    for p in passes(dims) {
        let qs = step_at(q, p.lv);
        let len = dims[p.axis];
        each_point(dims, &p, |k, st, i| {
            let base = k - i * st;
            let pred = predict(|j| c[base + j * st], i, p.s, len);
            c[k] = pred + c[k] * qs;
        });
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
    order_and_classes(dims, o).0
}

/// The rANS contexts' level class of each coded value, cached per shape
/// (`rans::level_classes` of `order`, without its divisions).
pub fn classes(dims: [usize; 3], o: Order) -> Arc<Vec<u32>> {
    order_and_classes(dims, o).1
}

type OrderAndClasses = (Arc<Vec<u32>>, Arc<Vec<u32>>);

fn order_and_classes(dims: [usize; 3], o: Order) -> OrderAndClasses {
    static LAZY: OnceLock<morton::PerShape<OrderAndClasses>> = OnceLock::new();
    static PASSES: OnceLock<morton::PerShape<OrderAndClasses>> = OnceLock::new();
    match o {
        Order::LazyMorton => morton::cached(&LAZY, dims, || lazy_morton_order(dims)),
        Order::Passes => morton::cached(&PASSES, dims, || pass_order(dims)),
    }
}

/// A grid point's level class: the least over its axes of `axis_class`.
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

/// Both tables of `Order::Passes`: the anchors', then each pass's lattice
/// in row order, as INTERP walks them.
fn pass_order(dims: [usize; 3]) -> OrderAndClasses {
    let n: usize = dims.iter().product();
    let (mut order, mut classes) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut lattices = vec![anchor_lattice(dims)];
    lattices.extend(passes(dims).iter().map(|p| [0, 1, 2].map(|a| p.lattice(a))));
    for l in lattices {
        each_lattice_point(dims, l, |zyx| {
            let [z, y, x] = zyx;
            order.push(((z * dims[1] + y) * dims[2] + x) as u32);
            classes.push(level_class(zyx));
        });
    }
    (Arc::new(order), Arc::new(classes))
}

/// Both tables of `Order::LazyMorton` from one Morton walk: per axis, the
/// lazy layout's position of each index gives the grid offset and the
/// trailing zero bits, so a value costs three look-ups for each table.
fn lazy_morton_order(dims: [usize; 3]) -> OrderAndClasses {
    let back = lazy_inverse(dims);
    let stride = [dims[1] * dims[2], dims[2], 1];
    let offset: [Vec<u32>; 3] =
        [0, 1, 2].map(|a| back[a].iter().map(|&p| (p * stride[a]) as u32).collect());
    let zeros: [Vec<u32>; 3] = [0, 1, 2].map(|a| back[a].iter().map(|&p| axis_class(p)).collect());
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
        let (ints, r) = forward(&x, dims, q);
        for (a, b) in x.iter().zip(&r) {
            assert!((a - b).abs() <= q / 2.0 * (1.0 + 1e-9), "{a} vs {b}");
        }
        let mut c: Vec<f64> = ints.iter().map(|&i| i as f64).collect();
        inverse(&mut c, dims, q);
        assert_eq!(c, r);
    }
}
