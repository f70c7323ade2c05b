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
            prev.clear();
            if p0 >= 0 && p0 as usize + len0 <= n {
                prev.extend_from_slice(&x[p0 as usize..p0 as usize + len0]);
            } else {
                // Only the first and last chunks wrap around the signal.
                prev.extend(
                    (0..len0 as isize).map(|j| x[(p0 + j).rem_euclid(n as isize) as usize]),
                );
            }
            for k in 1..=level {
                let ck = (2 * CHUNK) >> k;
                let count = ck + 2 * ext[k];
                a.resize(count, T::zero());
                d.resize(count, T::zero());
                // Output i reads prev[2 i + 1 .. 2 i + 1 + F] (see the module's derivation).
                interior_polyphase(prev, 1, bank, a, d);
                // slices: [cA_L, cD_L, ..., cD_1]; cD_k is at index level + 1 - k.
                let centre = ext[k]..ext[k] + ck;
                slices[level + 1 - k].copy_from_slice(&d[centre.clone()]);
                if k == level {
                    slices[0].copy_from_slice(&a[centre]);
                }
                std::mem::swap(prev, a);
            }
        },
    );
}
