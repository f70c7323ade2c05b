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

/// Outputs per block of the polyphase kernel (its buffers stay in L1).
const POLY_BLOCK: usize = 512;

/// `pub fn $name(args)` that runs `$body(args)` compiled for AVX2 and FMA
/// when the CPU has them (8 floats per instruction), and as is otherwise.
macro_rules! avx2_dispatch {
    ($(#[$doc:meta])* $vis:vis fn $name:ident / $avx:ident => $body:ident ($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        $vis fn $name<T: Real>($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has AVX2 and FMA (checked just above).
                unsafe { $avx($($arg),*) };
                return;
            }
            $body($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx<T: Real>($($arg: $ty),*) {
            $body($($arg),*)
        }
    };
}

pub(crate) use avx2_dispatch;

avx2_dispatch!(
    /// The interior of the matrix form for `auto`: per block, the input window
    /// is split into its even and odd samples, and each filter tap becomes one
    /// contiguous multiply-add over the block (the compiler vectorizes it).
    /// Same sums as the seed's rows, summed tap by tap.
    pub fn interior_polyphase / interior_polyphase_avx2 => interior_polyphase_body
    (src: &[T], base: usize, bank: &Bank<T>, ca: &mut [T], cd: &mut [T])
);

#[inline(always)]
fn interior_polyphase_body<T: Real>(
    src: &[T],
    base: usize,
    bank: &Bank<T>,
    ca: &mut [T],
    cd: &mut [T],
) {
    // Filters of up to 24 taps keep every tap in registers and each output's
    // sums in registers too; the tap-by-tap passes over the block stored and
    // reloaded both outputs once per tap pair (db4 wavedec of 2^24 float64
    // samples, one core: 86 ms that way).
    match bank.len / 2 {
        1 => interior_registers::<T, 1>(src, base, bank, ca, cd),
        2 => interior_registers::<T, 2>(src, base, bank, ca, cd),
        3 => interior_registers::<T, 3>(src, base, bank, ca, cd),
        4 => interior_registers::<T, 4>(src, base, bank, ca, cd),
        5 => interior_registers::<T, 5>(src, base, bank, ca, cd),
        6 => interior_registers::<T, 6>(src, base, bank, ca, cd),
        7 => interior_registers::<T, 7>(src, base, bank, ca, cd),
        8 => interior_registers::<T, 8>(src, base, bank, ca, cd),
        9 => interior_registers::<T, 9>(src, base, bank, ca, cd),
        10 => interior_registers::<T, 10>(src, base, bank, ca, cd),
        11 => interior_registers::<T, 11>(src, base, bank, ca, cd),
        12 => interior_registers::<T, 12>(src, base, bank, ca, cd),
        _ => interior_tap_passes(src, base, bank, ca, cd),
    }
}

/// The interior for filters of 2 H taps: per block, even and odd samples
/// split, then for each output the H tap pairs summed in the order of
/// `interior_tap_passes` (so the results are the same bits).
#[inline(always)]
fn interior_registers<T: Real, const H: usize>(
    src: &[T],
    base: usize,
    bank: &Bank<T>,
    ca: &mut [T],
    cd: &mut [T],
) {
    let (rlo, rhi) = (&bank.dec_lo_rev[..2 * H], &bank.dec_hi_rev[..2 * H]);
    let le: [T; H] = std::array::from_fn(|m| rlo[2 * m]);
    let lo: [T; H] = std::array::from_fn(|m| rlo[2 * m + 1]);
    let he: [T; H] = std::array::from_fn(|m| rhi[2 * m]);
    let ho: [T; H] = std::array::from_fn(|m| rhi[2 * m + 1]);
    let mut even = vec![T::zero(); POLY_BLOCK + H];
    let mut odd = vec![T::zero(); POLY_BLOCK + H];
    let mut o0 = 0;
    while o0 < ca.len() {
        let b = (ca.len() - o0).min(POLY_BLOCK);
        let s = base + 2 * o0;
        let m = b - 1 + H;
        let win = &src[s..s + 2 * m];
        for (i, (e, o)) in even[..m].iter_mut().zip(odd[..m].iter_mut()).enumerate() {
            *e = win[2 * i];
            *o = win[2 * i + 1];
        }
        let (ev, ov) = (&even[..m], &odd[..m]);
        let (a, d) = (&mut ca[o0..o0 + b], &mut cd[o0..o0 + b]);
        // Eight outputs at a time as fixed-size arrays, which the compiler
        // keeps in vector registers across the taps.
        const W: usize = 8;
        let full = b / W * W;
        for (c, (a8, d8)) in a[..full]
            .chunks_exact_mut(W)
            .zip(d[..full].chunks_exact_mut(W))
            .enumerate()
        {
            let j = c * W;
            let mut sa = [T::zero(); W];
            let mut sd = [T::zero(); W];
            for t in 0..H {
                let e: &[T; W] = ev[j + t..j + t + W].try_into().expect("W values");
                let o: &[T; W] = ov[j + t..j + t + W].try_into().expect("W values");
                for k in 0..W {
                    if t == 0 {
                        sa[k] = le[0] * e[k] + lo[0] * o[k];
                        sd[k] = he[0] * e[k] + ho[0] * o[k];
                    } else {
                        sa[k] = le[t] * e[k] + lo[t] * o[k] + sa[k];
                        sd[k] = he[t] * e[k] + ho[t] * o[k] + sd[k];
                    }
                }
            }
            a8.copy_from_slice(&sa);
            d8.copy_from_slice(&sd);
        }
        for j in full..b {
            let (e, o) = (&ev[j..j + H], &ov[j..j + H]);
            let mut sa = le[0] * e[0] + lo[0] * o[0];
            let mut sd = he[0] * e[0] + ho[0] * o[0];
            for t in 1..H {
                sa = le[t] * e[t] + lo[t] * o[t] + sa;
                sd = he[t] * e[t] + ho[t] * o[t] + sd;
            }
            a[j] = sa;
            d[j] = sd;
        }
        o0 += b;
    }
}

/// The interior for long filters: each filter tap becomes one contiguous
/// multiply-add over the block.
#[inline(always)]
fn interior_tap_passes<T: Real>(
    src: &[T],
    base: usize,
    bank: &Bank<T>,
    ca: &mut [T],
    cd: &mut [T],
) {
    let f = bank.len;
    let h = f / 2;
    let (rlo, rhi) = (&bank.dec_lo_rev[..], &bank.dec_hi_rev[..]);
    let mut even = vec![T::zero(); POLY_BLOCK + h];
    let mut odd = vec![T::zero(); POLY_BLOCK + h];
    let mut o0 = 0;
    while o0 < ca.len() {
        let b = (ca.len() - o0).min(POLY_BLOCK);
        let s = base + 2 * o0;
        // Window of output o (in block): src[s + 2o .. s + 2o + F).
        let m = b - 1 + h;
        let win = &src[s..s + 2 * m];
        let (ev, ov) = (&mut even[..m], &mut odd[..m]);
        for i in 0..m {
            ev[i] = win[2 * i];
            ov[i] = win[2 * i + 1];
        }
        let (a, d) = (&mut ca[o0..o0 + b], &mut cd[o0..o0 + b]);
        // The first tap assigns, the others accumulate (one pass fewer).
        {
            let (ce, co) = (rlo[0], rlo[1]);
            let (he, ho) = (rhi[0], rhi[1]);
            for (((av, dv), e), o) in a
                .iter_mut()
                .zip(d.iter_mut())
                .zip(&even[..b])
                .zip(&odd[..b])
            {
                *av = ce * *e + co * *o;
                *dv = he * *e + ho * *o;
            }
        }
        for m in 1..h {
            let (ce, co) = (rlo[2 * m], rlo[2 * m + 1]);
            let (he, ho) = (rhi[2 * m], rhi[2 * m + 1]);
            let (ev, ov) = (&even[m..m + b], &odd[m..m + b]);
            for (((av, dv), e), o) in a.iter_mut().zip(d.iter_mut()).zip(ev).zip(ov) {
                *av = ce * *e + co * *o + *av;
                *dv = he * *e + ho * *o + *dv;
            }
        }
        o0 += b;
    }
}

avx2_dispatch!(
    /// The synthesis interior for `auto`: the even and odd outputs of a block
    /// as tap-by-tap multiply-adds over contiguous coefficients, then
    /// interleaved. `out` receives the outputs from `skip` (0 or 1) on, so an
    /// odd synthesis shift writes its final level straight to the caller.
    pub(crate) fn synth_interior_polyphase / synth_interior_polyphase_avx2 => synth_interior_polyphase_body
    (a: &[T], d: &[T], bank: &Bank<T>, i0: usize, skip: usize, out: &mut [T])
);

#[inline(always)]
fn synth_interior_polyphase_body<T: Real>(
    a: &[T],
    d: &[T],
    bank: &Bank<T>,
    i0: usize,
    skip: usize,
    out: &mut [T],
) {
    let h = bank.len / 2;
    let (re, ro, de, dro) = bank.rec_phases_rev();
    let mut ev = [T::zero(); POLY_BLOCK];
    let mut od = [T::zero(); POLY_BLOCK];
    let len = out.len();
    let pairs = (len + skip).div_ceil(2);
    let mut p0 = 0;
    while p0 < pairs {
        let b = (pairs - p0).min(POLY_BLOCK);
        let s = i0 + p0 + 1 - h;
        let (e, o) = (&mut ev[..b], &mut od[..b]);
        {
            let (wa, wd) = (&a[s..s + b], &d[s..s + b]);
            let (c1, c2, c3, c4) = (re[0], de[0], ro[0], dro[0]);
            for (((ev, ov), x), y) in e.iter_mut().zip(o.iter_mut()).zip(wa).zip(wd) {
                *ev = c1 * *x + c2 * *y;
                *ov = c3 * *x + c4 * *y;
            }
        }
        for k in 1..h {
            let (wa, wd) = (&a[s + k..s + k + b], &d[s + k..s + k + b]);
            let (c1, c2, c3, c4) = (re[k], de[k], ro[k], dro[k]);
            for (((ev, ov), x), y) in e.iter_mut().zip(o.iter_mut()).zip(wa).zip(wd) {
                *ev = c1 * *x + c2 * *y + *ev;
                *ov = c3 * *x + c4 * *y + *ov;
            }
        }
        // Pair p0 + j is (y[2 (p0 + j)], y[2 (p0 + j) + 1]); out[i] = y[i + skip].
        let (mut j, mut i) = (0, 2 * p0);
        if i < skip {
            // skip is 1 and this is the first block: y[0] is dropped.
            if let Some(x) = out.first_mut() {
                *x = o[0];
            }
            j = 1;
            i = 1;
        } else {
            i -= skip;
        }
        let full = ((len - i.min(len)) / 2).min(b - j);
        for (pair, (x, y)) in out[i..i + 2 * full]
            .chunks_exact_mut(2)
            .zip(e[j..j + full].iter().zip(&o[j..j + full]))
        {
            pair[0] = *x;
            pair[1] = *y;
        }
        let (j, i) = (j + full, i + 2 * full);
        if j < b && i < len {
            out[i] = e[j];
        }
        p0 += b;
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
#[allow(clippy::too_many_arguments)]
pub fn forward_wrap<T: Real>(
    x: &[T],
    bank: &Bank<T>,
    mode: Mode,
    g: Granularity,
    polyphase: bool,
    o0: usize,
    ca: &mut [T],
    cd: &mut [T],
) {
    let n = x.len() as isize;
    let f = bank.len as isize;
    let count = ca.len();
    // Outputs whose window [t, t + F) lies inside the signal.
    // first_tap grows by 2 per output: solve for the interior's bounds.
    let t0 = first_tap(bank.len, mode, o0);
    let lo_in = if t0 >= 0 { 0 } else { ((-t0 + 1) / 2) as usize }.min(count);
    // Last k with t0 + 2k + f <= n.
    let hi_in = if t0 + f > n {
        lo_in
    } else {
        (((n - f - t0) / 2 + 1) as usize).clamp(lo_in, count)
    };
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
        let (a, d) = (&mut ca[lo_in..hi_in], &mut cd[lo_in..hi_in]);
        if polyphase {
            interior_polyphase(x, base, bank, a, d);
        } else {
            interior(x, base, bank, g, a, d);
        }
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
    let (mut e, mut o) = (T::zero(), T::zero());
    for k in 0..bank.len / 2 {
        let Some(q) = super::coefficient_at(i - k as isize, a.len(), periodic) else {
            continue;
        };
        let (av, dv) = (a[q], d[q]);
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
    let (re, ro, de, dro) = bank.rec_phases_rev();
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
#[allow(clippy::too_many_arguments)]
pub fn inverse<T: Real>(
    a: &[T],
    d: &[T],
    bank: &Bank<T>,
    mode: Mode,
    g: Granularity,
    polyphase: bool,
    n0: usize,
    out: &mut [T],
) {
    let nc = a.len() as isize;
    let f = bank.len as isize;
    let h = f / 2;
    let periodic = mode == Mode::Periodization;
    let shift = super::synthesis_shift(f as usize, mode);
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
                if polyphase {
                    synth_interior_polyphase(a, d, bank, i as usize, 0, &mut out[k0..k1]);
                } else {
                    synth_interior(a, d, bank, i as usize, g, &mut out[k0..k1]);
                }
                k += 2 * pairs;
                continue;
            }
        }
        let (e, o) = synth_edge(a, d, bank, i, periodic);
        out[k as usize] = if m % 2 == 0 { e } else { o };
        k += 1;
    }
}
