//! All levels of a periodization wavedec in one pass over memory: the signal
//! is cut into chunks, and each chunk runs every level on buffers that stay
//! in cache, with enough halo (recomputed from the neighbours' samples) that
//! its outputs equal the level-by-level transform. Intermediate
//! approximations never reach main memory; only the details and the last
//! approximation are written.

use super::matrix::interior_polyphase;
use super::{Bank, Mode};
use crate::real::Real;
use rayon::prelude::*;

/// Level-1 outputs per chunk.
const CHUNK: usize = 1 << 15;

/// Whether the fused path applies: periodization, every level of even
/// length, and a signal long enough for chunks to pay.
pub fn applies(n: usize, level: usize, mode: Mode) -> bool {
    mode == Mode::Periodization
        && level >= 1
        && level < usize::BITS as usize - 1
        && n >= 2 * CHUNK
        && n.is_multiple_of(2 * CHUNK)
        && (2 * CHUNK).is_multiple_of(1 << level)
}

/// wavedec into `outs` = [cA_L, cD_L, ..., cD_1] (lengths n / 2^k), parallel over chunks.
pub fn wavedec_periodization<T: Real>(x: &[T], bank: &Bank<T>, level: usize, outs: &mut [Vec<T>]) {
    let n = x.len();
    let f = bank.len;
    let half = f / 2;
    // Halo (in approximations) each level needs around its chunk range.
    let mut ext = vec![0usize; level + 1];
    for k in (0..level).rev() {
        ext[k] = 2 * ext[k + 1] + half;
    }
    let chunks = n / (2 * CHUNK);
    // Per chunk, its slice of every output array.
    let mut per_chunk: Vec<Vec<&mut [T]>> =
        (0..chunks).map(|_| Vec::with_capacity(level + 1)).collect();
    for (i, out) in outs.iter_mut().enumerate() {
        // outs[0] = cA_L (level L), outs[i] = cD_{L - i + 1} for i >= 1.
        let k = if i == 0 { level } else { level + 1 - i };
        let ck = (2 * CHUNK) >> k;
        for (c, s) in out.chunks_mut(ck).enumerate() {
            per_chunk[c].push(s);
        }
    }
    // Buffers live per worker and are reused chunk after chunk (fresh
    // allocations of this size would be fresh pages, i.e. page faults).
    per_chunk.into_par_iter().enumerate().for_each_init(
        || (Vec::<T>::new(), Vec::<T>::new(), Vec::<T>::new()),
        |(prev, a, d), (c, mut slices)| {
            // Level 0 buffer: global positions [P0, P0 + 2 CHUNK + 2 E0), wrapped.
            let p0 = (c * 2 * CHUNK) as isize - ext[0] as isize;
            let len0 = 2 * CHUNK + 2 * ext[0];
            // Interior chunks read level 0 straight from the signal; only the
            // first and last wrap around it and need a gathered copy.
            let inside = p0 >= 0 && p0 as usize + len0 <= n;
            if !inside {
                prev.clear();
                prev.extend(
                    (0..len0 as isize).map(|j| x[(p0 + j).rem_euclid(n as isize) as usize]),
                );
            }
            for k in 1..=level {
                let ck = (2 * CHUNK) >> k;
                let count = ck + 2 * ext[k];
                a.resize(count, T::zero());
                d.resize(ext[k].max(1), T::zero());
                // Output i reads level[k-1][2 i + 1 .. 2 i + 1 + F] (see the module's derivation).
                let (src, base): (&[T], usize) = if k == 1 && inside {
                    (x, p0 as usize + 1)
                } else {
                    (prev, 1)
                };
                // Details are only needed in the centre, where they go
                // straight to their output; the halos only feed the next level.
                let e = ext[k];
                let (left, rest) = a.split_at_mut(e);
                let (centre, right) = rest.split_at_mut(ck);
                interior_polyphase(src, base, bank, left, &mut d[..e]);
                // slices: [cA_L, cD_L, ..., cD_1]; cD_k is at index level + 1 - k.
                if k == level {
                    let (ca, cds) = slices.split_at_mut(1);
                    interior_polyphase(src, base + 2 * e, bank, ca[0], cds[0]);
                    centre.copy_from_slice(ca[0]);
                } else {
                    interior_polyphase(src, base + 2 * e, bank, centre, slices[level + 1 - k]);
                }
                interior_polyphase(src, base + 2 * (e + ck), bank, right, &mut d[..e]);
                std::mem::swap(prev, a);
            }
        },
    );
}

/// Whether the fused inverse applies to [cA_L, cD_L, ..., cD_1] lengths:
/// periodization, each detail twice the one before, and an output length
/// that chunks evenly.
pub fn applies_inverse(lens: &[usize], mode: Mode) -> bool {
    if mode != Mode::Periodization || lens.len() < 2 || lens[0] != lens[1] {
        return false;
    }
    let ok = lens[1..].windows(2).all(|w| w[1] == 2 * w[0]);
    let n = 2 * lens[lens.len() - 1];
    ok && n >= 2 * CHUNK && n.is_multiple_of(2 * CHUNK)
}

/// waverec of [cA_L, cD_L, ..., cD_1] into `out` (length 2 len(cD_1)), one
/// chunk of output at a time: each chunk gathers the coefficients its
/// outputs depend on at every level (with halo) and synthesizes top-down in
/// cache, so intermediate approximations never reach main memory.
pub fn waverec_periodization<T: Real>(coeffs: &[&[T]], bank: &Bank<T>, out: &mut [T]) {
    let levels = coeffs.len() - 1;
    let h = (bank.len / 2) as isize;
    let sh = super::synthesis_shift(bank.len, Mode::Periodization);
    let block = 2 * CHUNK;
    out.par_chunks_mut(block).enumerate().for_each_init(
        || {
            (
                Vec::<T>::new(),
                Vec::<T>::new(),
                [Vec::<T>::new(), Vec::<T>::new()],
            )
        },
        |(ga, gd, ys), (c, chunk)| {
            // ranges[k] = [lo, hi) of level k's coefficients (level 0: the output) needed.
            let mut ranges = vec![(0isize, 0isize); levels + 1];
            ranges[0] = ((c * block) as isize, ((c + 1) * block) as isize);
            for k in 1..=levels {
                let (lo, hi) = ranges[k - 1];
                let i_min = (lo + sh).div_euclid(2);
                let i_max = (hi - 1 + sh).div_euclid(2);
                ranges[k] = (i_min - (h - 1), i_max + 1);
            }
            // Coefficients inside their array are read in place; only ranges
            // that wrap around it are gathered into a buffer.
            fn window<'s, T: Real>(
                src: &'s [T],
                (lo, hi): (isize, isize),
                buf: &'s mut Vec<T>,
            ) -> &'s [T] {
                let m = src.len() as isize;
                if lo >= 0 && hi <= m {
                    &src[lo as usize..hi as usize]
                } else {
                    buf.clear();
                    buf.extend((lo..hi).map(|j| src[j.rem_euclid(m) as usize]));
                    buf
                }
            }
            let [y0, y1] = ys;
            let mut a_start = usize::MAX; // a lives in `ga` (top level) or in y1 at this offset
            for k in (1..=levels).rev() {
                let (lo_k, _) = ranges[k];
                let (lo, hi) = ranges[k - 1];
                let i_min = (lo + sh).div_euclid(2);
                let i_max = (hi - 1 + sh).div_euclid(2);
                let pairs = (i_max - i_min + 1) as usize;
                // a_{k-1}[p] = y[p + sh - 2 i_min] for p in [lo, hi).
                let start = (lo + sh - 2 * i_min) as usize;
                let a: &[T] = if k == levels {
                    window(coeffs[0], ranges[levels], ga)
                } else {
                    &y1[a_start..]
                };
                // coeffs[levels + 1 - k] is cD_k.
                let d = window(coeffs[levels + 1 - k], ranges[k], gd);
                let i0 = (i_min - lo_k) as usize;
                if k == 1 {
                    // The last level writes straight to the output (start is
                    // 0 or 1: the parity of the synthesis shift).
                    super::matrix::synth_interior_polyphase(a, d, bank, i0, start, chunk);
                } else {
                    y0.resize(2 * pairs, T::zero());
                    super::matrix::synth_interior_polyphase(a, d, bank, i0, 0, y0);
                    std::mem::swap(y0, y1);
                    a_start = start;
                }
            }
        },
    );
}
