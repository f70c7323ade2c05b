//! The seed's matrix (convolution) form of one DWT level, forward and
//! inverse: each output is a dot product of the filter with the input, the
//! matrix rows of the seed's Fig. 5. With wrapping, samples outside the
//! signal come from the extension mode's index arithmetic; without wrapping,
//! each block of outputs first copies its input window, extended by the
//! filter length minus two, so the loop has no conditions. Granularity is
//! the outputs one step produces: 1 (low-pass and high-pass in separate
//! passes), 2 (both at one position) or 4 (both at two positions).

use super::{Bank, Granularity, Mode};
use crate::real::Real;

/// Outputs per block of the no-wrap form (its window fits in L1).
const BLOCK: usize = 2048;

#[inline(always)]
fn dot<T: Real>(w: &[T], f: &[T]) -> T {
    let mut acc = T::zero();
    for (a, b) in w.iter().zip(f) {
        acc = *a * *b + acc;
    }
    acc
}

/// Dot products of the two reversed filters with windows starting at
/// `base` of `src`, for outputs o0..o1 (window of output o at base + 2 (o - o0)).
#[inline(always)]
fn interior<T: Real>(
    src: &[T],
    base: usize,
    bank: &Bank<T>,
    g: Granularity,
    ca: &mut [T],
    cd: &mut [T],
) {
    let f = bank.len;
    let (rlo, rhi) = (&bank.dec_lo_rev[..], &bank.dec_hi_rev[..]);
    let count = ca.len();
    match g {
        Granularity::One => {
            for (o, a) in ca.iter_mut().enumerate() {
                let s = base + 2 * o;
                *a = dot(&src[s..s + f], rlo);
            }
            for (o, d) in cd.iter_mut().enumerate() {
                let s = base + 2 * o;
                *d = dot(&src[s..s + f], rhi);
            }
        }
        Granularity::Two => {
            for o in 0..count {
                let s = base + 2 * o;
                let w = &src[s..s + f];
                let (mut a, mut d) = (T::zero(), T::zero());
                for j in 0..f {
                    a = w[j] * rlo[j] + a;
                    d = w[j] * rhi[j] + d;
                }
                ca[o] = a;
                cd[o] = d;
            }
        }
        Granularity::Four => {
            let mut o = 0;
            while o + 1 < count {
                let s = base + 2 * o;
                let w = &src[s..s + f + 2];
                let (mut a0, mut d0, mut a1, mut d1) = (T::zero(), T::zero(), T::zero(), T::zero());
                for j in 0..f {
                    a0 = w[j] * rlo[j] + a0;
                    d0 = w[j] * rhi[j] + d0;
                    a1 = w[j + 2] * rlo[j] + a1;
                    d1 = w[j + 2] * rhi[j] + d1;
                }
                ca[o] = a0;
                cd[o] = d0;
                ca[o + 1] = a1;
                cd[o + 1] = d1;
                o += 2;
            }
            if o < count {
                let s = base + 2 * o;
                ca[o] = dot(&src[s..s + f], rlo);
                cd[o] = dot(&src[s..s + f], rhi);
            }
        }
    }
}

/// First input position read by output o: s0 + 2 o - (F - 1).
pub(crate) fn first_tap(bank_len: usize, mode: Mode, o: usize) -> isize {
    let s0 = if mode == Mode::Periodization {
        bank_len / 2
    } else {
        1
    };
    (s0 + 2 * o) as isize - (bank_len as isize - 1)
}

/// Outputs o0..o0 + ca.len() of one forward level, with wrapping: index
/// arithmetic at the edges, a plain loop inside.
pub fn forward_wrap<T: Real>(
    x: &[T],
    bank: &Bank<T>,
    mode: Mode,
    g: Granularity,
    o0: usize,
    ca: &mut [T],
    cd: &mut [T],
) {
    let n = x.len() as isize;
    let f = bank.len as isize;
    let count = ca.len();
    // Outputs whose window [t, t + F) lies inside the signal.
    let lo_in = (0..count)
        .find(|&k| first_tap(bank.len, mode, o0 + k) >= 0)
        .unwrap_or(count);
    let hi_in = (lo_in..count)
        .find(|&k| first_tap(bank.len, mode, o0 + k) + f > n)
        .unwrap_or(count);
    let edge = |k: usize, ca: &mut [T], cd: &mut [T]| {
        let t = first_tap(bank.len, mode, o0 + k);
        let (mut a, mut d) = (T::zero(), T::zero());
        for j in 0..bank.len {
            let v = mode.at(x, t + j as isize);
            a = v * bank.dec_lo_rev[j] + a;
            d = v * bank.dec_hi_rev[j] + d;
        }
        ca[k] = a;
        cd[k] = d;
    };
    for k in (0..lo_in).chain(hi_in..count) {
        edge(k, ca, cd);
    }
    if lo_in < hi_in {
        let base = first_tap(bank.len, mode, o0 + lo_in) as usize;
        interior(
            x,
            base,
            bank,
            g,
            &mut ca[lo_in..hi_in],
            &mut cd[lo_in..hi_in],
        );
    }
}

/// The same outputs without wrapping: each block copies its extended window
/// (2 B + F - 2 samples) and runs the branch-free loop on it.
pub fn forward_nowrap<T: Real>(
    x: &[T],
    bank: &Bank<T>,
    mode: Mode,
    g: Granularity,
    o0: usize,
    ca: &mut [T],
    cd: &mut [T],
) {
    let n = x.len() as isize;
    let mut window = Vec::with_capacity(2 * BLOCK + bank.len);
    for (ca, (cd, b)) in ca
        .chunks_mut(BLOCK)
        .zip(cd.chunks_mut(BLOCK).zip((0..).step_by(BLOCK)))
    {
        let t0 = first_tap(bank.len, mode, o0 + b);
        let len = 2 * (ca.len() - 1) + bank.len;
        window.clear();
        if t0 >= 0 && t0 + len as isize <= n {
            window.extend_from_slice(&x[t0 as usize..t0 as usize + len]);
        } else {
            window.extend((0..len as isize).map(|j| mode.at(x, t0 + j)));
        }
        interior(&window, 0, bank, g, ca, cd);
    }
}

/// One synthesis output pair's sums at polyphase position i: the even and
/// odd samples of upsample(a) * rec_lo + upsample(d) * rec_hi, with
/// coefficients outside [0, Nc) read by `get` (zero or periodic).
#[inline(always)]
fn synth_edge<T: Real>(a: &[T], d: &[T], bank: &Bank<T>, i: isize, periodic: bool) -> (T, T) {
    let nc = a.len() as isize;
    let (mut e, mut o) = (T::zero(), T::zero());
    for k in 0..bank.len / 2 {
        let q = i - k as isize;
        let q = if periodic {
            q.rem_euclid(nc)
        } else if (0..nc).contains(&q) {
            q
        } else {
            continue;
        };
        let (av, dv) = (a[q as usize], d[q as usize]);
        e = av * bank.rec_lo[2 * k] + dv * bank.rec_hi[2 * k] + e;
        o = av * bank.rec_lo[2 * k + 1] + dv * bank.rec_hi[2 * k + 1] + o;
    }
    (e, o)
}

/// Interior synthesis pairs for positions i0.. (all taps inside): out gets
/// (even, odd) interleaved.
#[inline(always)]
fn synth_interior<T: Real>(
    a: &[T],
    d: &[T],
    bank: &Bank<T>,
    i0: usize,
    g: Granularity,
    out: &mut [T],
) {
    let h = bank.len / 2;
    // Coefficient window for position i: [i - h + 1, i], reversed filters.
    let (re, ro, de, dro) = (
        &bank.rec_lo_even_rev[..],
        &bank.rec_lo_odd_rev[..],
        &bank.rec_hi_even_rev[..],
        &bank.rec_hi_odd_rev[..],
    );
    let pairs = out.len() / 2;
    match g {
        Granularity::One => {
            for p in 0..pairs {
                let s = i0 + p + 1 - h;
                out[2 * p] = dot(&a[s..s + h], re) + dot(&d[s..s + h], de);
            }
            for p in 0..pairs {
                let s = i0 + p + 1 - h;
                out[2 * p + 1] = dot(&a[s..s + h], ro) + dot(&d[s..s + h], dro);
            }
        }
        Granularity::Two | Granularity::Four => {
            for p in 0..pairs {
                let s = i0 + p + 1 - h;
                let (wa, wd) = (&a[s..s + h], &d[s..s + h]);
                let (mut e, mut o) = (T::zero(), T::zero());
                for k in 0..h {
                    e = wa[k] * re[k] + wd[k] * de[k] + e;
                    o = wa[k] * ro[k] + wd[k] * dro[k] + o;
                }
                out[2 * p] = e;
                out[2 * p + 1] = o;
            }
        }
    }
}

/// Output samples n0..n0 + out.len() of one inverse level (PyWavelets'
/// idwt): for periodization the circular synthesis shifted by
/// 2 floor(F/4) - [F/2 even], otherwise the valid part of the full synthesis
/// (out[n] = y[n + F - 2]).
pub fn inverse<T: Real>(
    a: &[T],
    d: &[T],
    bank: &Bank<T>,
    mode: Mode,
    g: Granularity,
    n0: usize,
    out: &mut [T],
) {
    let nc = a.len() as isize;
    let f = bank.len as isize;
    let h = f / 2;
    let periodic = mode == Mode::Periodization;
    let shift = if periodic {
        2 * (f / 4) - if h % 2 == 0 { 1 } else { 0 }
    } else {
        f - 2
    };
    let total = if periodic { 2 * nc } else { 2 * nc - f + 2 };
    let pos = |n: isize| {
        let m = n + shift;
        if periodic {
            m.rem_euclid(total)
        } else {
            m
        }
    };
    let len = out.len() as isize;
    let mut k = 0isize;
    while k < len {
        let m = pos(n0 as isize + k);
        let i = m / 2;
        // A run of whole interior pairs starting at an even m.
        if m % 2 == 0 && i - h + 1 >= 0 {
            let mut pairs = ((len - k) / 2).min(nc - i);
            if periodic {
                pairs = pairs.min((total - m) / 2);
            }
            if pairs > 0 {
                let (k0, k1) = (k as usize, (k + 2 * pairs) as usize);
                synth_interior(a, d, bank, i as usize, g, &mut out[k0..k1]);
                k += 2 * pairs;
                continue;
            }
        }
        let (e, o) = synth_edge(a, d, bank, i, periodic);
        out[k as usize] = if m % 2 == 0 { e } else { o };
        k += 1;
    }
}
