//! The entropy coder of the interpolating wavelet's details: static rANS
//! (range asymmetric numeral systems, 32-bit state, 16-bit words) with one
//! frequency table per context, contexts being the detail's level and the
//! previous value's magnitude. Tables are made per brick from its
//! histogram on the host; the stream is cut into chunks that decode
//! independently, so a GPU codes one chunk per thread, and the CPU and the
//! GPU write the same bytes. On the benchmark fields this codes 5 to 40%
//! smaller than the block Rice coder (BENCHMARKS.md), within 0.3% of the
//! contexts' entropy.
//!
//! Values are zigzag codes. Those below `DIRECT` are symbols of their own;
//! a larger value of bit length b is the symbol of (b, its two bits below
//! the leading one) followed by its b - 3 low bits, sent through the rANS
//! state as uniform pieces of at most `PIECE` bits.
//!
//! Layout, in little-endian u32 words:
//!
//! ```text
//! chunk log2 | r << 7 | width << 8 | m << 16 | s << 24, table words T | T words of tables |
//! chunk lengths (u16 units, width bits each) |
//! chunk data (u16 units; per chunk: final state high, low, then the words emitted in reverse), padded to a u32
//! tables   per context, Exp-Golomb codes: m (symbols present); if m = 1 the
//!          symbol; if m > 1 the total's log2 less one, the present symbols
//!          as gaps, the index of the largest one, and the others'
//!          frequencies less one (the largest takes what is left)
//! ```
//!
//! Chunks are 2^(chunk log2) values, except that each of the first m is
//! cut into 2^s pieces (`Split`): a brick's coarse levels come first in
//! the coding order and hold nearly all of its coded values, so there a
//! chunk's serial chain would set the GPU's time. Version-3 streams have
//! m = s = 0.
//!
//! The previous-value context restarts every 2^11 values where r = 1
//! (the streams of container version 7, whose chunks and pieces may then
//! be 2^11), every 2^12 where r = 0 (versions 3 to 6).
use super::rans_wide::{self, Group, WideTable, WIDE};

mod coder;
mod tables;
#[cfg(test)]
mod tests;

pub use coder::*;
pub use tables::*;

/// Zigzag values coded as symbols of their own.
pub const DIRECT: u32 = 64;
/// Symbols: direct values, then 4 per bit length from 7 to 32.
pub const NSYM: usize = DIRECT as usize + 4 * 26;
/// Level classes (finest detail 0, coarsest 7) times 4 previous-value classes.
pub const LEVELS: usize = 8;
pub const NCTX: usize = LEVELS * 4;
pub const PROB_BITS: u32 = 15;
const RANS_L: u32 = 1 << 16;
/// Raw bits go through the state in pieces of at most this many.
pub const PIECE: u32 = 14;
/// The previous-value context restarts every `RESET` values in the
/// streams this build writes, so chunks (multiples of it) decode on their
/// own. Streams of container versions 3 to 6 restart every `RESET_V6`;
/// each stream's first word says which (`H0_RESET`).
pub const RESET: usize = 1 << RESET_LOG;
pub const RESET_LOG: u32 = 11;
pub const RESET_V6: usize = 4096;
/// The flag of a stream's first word (beside the chunk log2) for contexts
/// that restart every `RESET` values.
const H0_RESET: u32 = 0x80;
/// Chunks are 2^c values, c at least this, and long enough to hold about
/// `CHUNK_BITS` bits, so the per-chunk state and length cost under 0.6%,
/// up to `CHUNK_MAX_LOG`: a GPU thread decodes a chunk in sequence, so a
/// brick must have a few dozen (129^3 has 33 at 2^16). Fields of 4 bits a
/// value or more get 2^11 (version 7; 2^12 in version 6, 2^14 before): a
/// GPU's decode of a batch lasts one chunk's chain, which a run pays at
/// its start and its end whatever its size, so shorter chains gain two
/// GPUs more than one (turbulent 1024^3: two GPUs decode
/// 5-11% faster, one GPU codes 3-4% slower).
pub const CHUNK_MIN_LOG: u32 = RESET_LOG;
pub const CHUNK_MAX_LOG: u32 = 16;
const CHUNK_BITS: f64 = 8192.0;
/// A split piece is at least 2^this values (a multiple of `RESET`).
pub const PIECE_MIN_LOG: u32 = RESET_LOG;
/// Coded steps (values whose context leaves a choice, or with raw bits)
/// below which a chunk's chain is short enough: the GPU coders' time is
/// the longest chain of such steps in a brick, so a brick whose longest
/// chunk holds more is split where that shortens it.
const DENSE_STEPS: f64 = 8192.0;
/// Pieces a split may add to a brick: each costs its final state and
/// length (about 6 bytes), 1-2% of a smooth brick's stream.
const SPLIT_PIECES: usize = 7;

fn split_knobs() -> (f64, usize) {
    (DENSE_STEPS, SPLIT_PIECES)
}

/// Coded steps a piece's chain may hold before `plan` spends up to
/// `WIDE_SPLIT_PIECES` more pieces on shorter chains (`shorter_chains`).
/// A GPU decodes a batch in its longest chain: on the smooth 1024^3
/// field at 1e-3, two edge bricks kept chains of
/// 32,768 steps under the usual split (12 ms of RDEC where the other
/// bricks' 8,192 took 3), and held the second GPU's half 4-12 ms behind
/// the first's.
const LONG_CHAIN: f64 = 2.0 * DENSE_STEPS;

/// Pieces `shorter_chains` may add to a brick (about 6 bytes each):
/// enough for four chunks of dense coarse levels in eight pieces each.
const WIDE_SPLIT_PIECES: usize = 31;

fn long_chain() -> f64 {
    LONG_CHAIN
}

/// The shortest chunk's log2 that `plan` chooses.
fn chunk_floor() -> u32 {
    CHUNK_MIN_LOG
}

/// What `plan` reads besides a brick's histogram and shape, for a coder
/// that plans elsewhere (the GPU's RPLAN) and must choose as `plan` does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanKnobs {
    /// The longest chunk (log2) and the shortest, for `plan`'s `most_log`.
    pub most: u32,
    pub floor: u32,
    /// `DENSE_STEPS` and `SPLIT_PIECES` (or their knobs).
    pub dense: f64,
    pub most_pieces: usize,
    /// `LONG_CHAIN` (or its knob) and `WIDE_SPLIT_PIECES`.
    pub long_chain: f64,
    pub wide: usize,
}

/// `plan`'s knobs for chunks of at most 2^`most_log` values.
pub fn plan_knobs(most_log: u32) -> PlanKnobs {
    let most = most_log.clamp(CHUNK_MIN_LOG, CHUNK_MAX_LOG);
    let (dense, most_pieces) = split_knobs();
    PlanKnobs {
        most,
        floor: chunk_floor().min(most),
        dense,
        most_pieces,
        long_chain: long_chain(),
        wide: WIDE_SPLIT_PIECES,
    }
}

/// The most pieces `plan` can give a brick of `n` values: the shortest
/// chunks, and every piece a split may add (a device that plans sizes
/// its lists by this before it knows the plans).
pub fn piece_bound(n: usize, knobs: &PlanKnobs) -> usize {
    chunks(n, knobs.floor) + knobs.most_pieces + knobs.wide
}

/// Histograms and brick shapes (`class_blocks`) of the kinds `plan` meets,
/// seeded: dense and sparse contexts, contexts of one symbol (direct or
/// not), totals past 2^`PROB_BITS`, coarse levels dense at a brick's head
/// (where splits and shorter chains are chosen). For tests of planners
/// that must agree with `plan` (the GPU's).
#[doc(hidden)]
pub fn synthetic_plan_cases(seed: u64, count: usize) -> Vec<(Vec<u32>, Vec<[u32; LEVELS]>, usize)> {
    // Three bricks a shape in turn (a batch's bricks share one).
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut n = RESET;
    (0..count)
        .map(|i| {
            // Bricks of 2^12 to 2^22 values, some not a multiple of RESET.
            if i % 3 == 0 {
                n = (RESET << (rnd() % 10))
                    + if i % 2 == 0 {
                        (rnd() % 4000) as usize
                    } else {
                        0
                    };
            }
            let nblk = n.div_ceil(RESET);
            // Level classes in coding order: coarse (7) first, finest last,
            // each level twice the one above (the interpolation's).
            let mut lv = Vec::with_capacity(n);
            let mut left = n;
            for l in (0..LEVELS).rev() {
                let take = if l == 0 {
                    left
                } else {
                    (n >> (l + 1)).min(left)
                };
                lv.extend(std::iter::repeat_n(l as u8, take));
                left -= take;
            }
            let blocks = class_blocks(&lv);
            debug_assert_eq!(blocks.len(), nblk);
            let per_level: Vec<u64> = (0..LEVELS)
                .map(|l| blocks.iter().map(|b| b[l] as u64).sum())
                .collect();
            let mut hist = vec![0u32; NCTX * NSYM];
            let style = rnd() % 4;
            for c in 0..NCTX {
                let l = c / 4;
                let h = &mut hist[c * NSYM..(c + 1) * NSYM];
                let values = per_level[l] / 4 + 1;
                let kind = if style == 1 && l >= 5 { 5 } else { rnd() % 6 };
                match (style, kind) {
                    (_, 0) => {}
                    (_, 1) => h[(rnd() % 3) as usize] = values as u32,
                    (_, 2) => h[DIRECT as usize + (rnd() % 40) as usize] = values as u32,
                    // Sparse fine levels under dense coarse ones: long
                    // chains at a brick's head (style 1 mostly).
                    (0, _) if l < 4 => h[0] = values as u32,
                    (1, _) if l < 5 => h[0] = values as u32,
                    _ => {
                        // A two-sided geometric spread of `values` over the
                        // symbols, some of them past the direct ones.
                        let width = 1 + rnd() % 120;
                        let mut left = values;
                        while left > 0 {
                            let s = ((rnd() % width) * (rnd() % width) / width) as usize % NSYM;
                            let k = (1 + rnd() % (left / 8 + 1)).min(left);
                            h[s] = h[s].saturating_add(k as u32);
                            left -= k;
                        }
                    }
                }
            }
            (hist, blocks, n)
        })
        .collect()
}

/// The first `chunks` chunks of a stream are cut into 2^`log` pieces each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Split {
    pub chunks: u32,
    pub log: u32,
}

/// The pieces (first value, values) of a brick of `n` values in chunks of
/// 2^`chunk_log` under `split`, in stream order.
pub fn pieces(n: usize, chunk_log: u32, split: Split) -> impl Iterator<Item = (usize, usize)> {
    let len = 1usize << chunk_log;
    (0..chunks(n, chunk_log)).flat_map(move |j| {
        let (a, z) = (j * len, (j * len + len).min(n));
        let step = if j < split.chunks as usize {
            len >> split.log
        } else {
            len
        };
        (a..z).step_by(step).map(move |p| (p, step.min(z - p)))
    })
}

/// How many pieces `pieces` gives.
pub fn piece_count(n: usize, chunk_log: u32, split: Split) -> usize {
    pieces(n, chunk_log, split).count()
}

/// Values of each level class in each `RESET` block of a brick's coding
/// order (level classes `lv`): what `plan` needs of the brick's shape.
pub fn class_blocks(lv: &[u8]) -> Vec<[u32; LEVELS]> {
    lv.chunks(RESET)
        .map(|b| {
            let mut c = [0u32; LEVELS];
            for &l in b {
                c[(l as usize).min(LEVELS - 1)] += 1;
            }
            c
        })
        .collect()
}

/// Coded steps in each `RESET` block of a brick (estimated: per level
/// class, the share of its values in contexts that code them, times the
/// class's values in the block): what a GPU thread's chain through the
/// block costs. Values of a context with one direct symbol are no step.
fn block_steps(hist: &[u32], blocks: &[[u32; LEVELS]]) -> Vec<f64> {
    let mut share = [0f64; LEVELS];
    for (l, sh) in share.iter_mut().enumerate() {
        let (mut all, mut coded) = (0u64, 0u64);
        for p in 0..4 {
            let h = &hist[(4 * l + p) * NSYM..(4 * l + p + 1) * NSYM];
            let total: u64 = h.iter().map(|&x| x as u64).sum();
            let present = h.iter().filter(|&&x| x > 0).count();
            let lone_direct = present == 1 && h[..DIRECT as usize].iter().any(|&x| x > 0);
            all += total;
            if !lone_direct {
                coded += total;
            }
        }
        if all > 0 {
            *sh = coded as f64 / all as f64;
        }
    }
    blocks
        .iter()
        .map(|b| (0..LEVELS).map(|l| b[l] as f64 * share[l]).sum())
        .collect()
}

/// The longest chain of coded steps (`block_steps`) among a brick's
/// pieces.
fn longest_chain(steps: &[f64], n: usize, chunk_log: u32, split: Split) -> f64 {
    pieces(n, chunk_log, split)
        .map(|(a, len)| {
            let (b0, b1) = (a / RESET, (a + len).div_ceil(RESET));
            steps[b0.min(steps.len())..b1.min(steps.len())]
                .iter()
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// `usual` (chunk log, split), or where its longest chain is over
/// `LONG_CHAIN`, the layout with the fewest pieces that brings it there,
/// at most `WIDE_SPLIT_PIECES` pieces more: a wider split of the first
/// chunks (a dense head), or shorter chunks down to 2^`floor` (a small
/// brick coded throughout). A brick coded throughout in more chunks than
/// that keeps its chains: shortening them would cost a smooth 256^3 file
/// a third of its bytes. The limits are `k`'s (`plan_knobs`).
fn shorter_chains(steps: &[f64], n: usize, usual: (u32, Split), k: &PlanKnobs) -> (u32, Split) {
    let (log, split) = usual;
    if longest_chain(steps, n, log, split) <= k.long_chain {
        return usual;
    }
    let wide = plan_split(steps, n, log, (k.dense, k.most_pieces.max(k.wide)));
    let shorter = (k.floor..log).map(|l| (l, plan_split(steps, n, l, (k.dense, k.most_pieces))));
    let most = piece_count(n, log, split) + k.wide;
    std::iter::once((log, wide))
        .chain(shorter)
        .filter(|&(l, s)| longest_chain(steps, n, l, s) <= k.long_chain)
        .filter(|&(l, s)| piece_count(n, l, s) <= most)
        .min_by_key(|&(l, s)| (piece_count(n, l, s), std::cmp::Reverse(l)))
        .unwrap_or(usual)
}

/// The split that most shortens the brick's longest chain of coded steps
/// (`est`: `block_steps`), adding at most `most_pieces` pieces; none
/// where the longest chain is under `dense` (`DENSE_STEPS` or its knob)
/// already. Only the first chunks can be split, which is where a brick's
/// dense values lie (its coarse levels).
fn plan_split(est: &[f64], n: usize, chunk_log: u32, (dense, most_pieces): (f64, usize)) -> Split {
    let per = 1usize << (chunk_log - PIECE_MIN_LOG);
    // Blocks of RESET values: a piece of 2^PIECE_MIN_LOG is one.
    let span = |a: usize, len: usize| est[a.min(est.len())..(a + len).min(est.len())].iter().sum();
    let chunk_est: Vec<f64> = (0..chunks(n, chunk_log))
        .map(|j| span(j * per, per))
        .collect();
    // The longest chain from chunk j on.
    let mut after = vec![0f64; chunk_est.len() + 1];
    for j in (0..chunk_est.len()).rev() {
        after[j] = after[j + 1].max(chunk_est[j]);
    }
    let whole = after[0];
    if whole <= dense {
        return Split::default();
    }
    let nc = chunk_est.len();
    let mut best = (whole, 0usize, Split::default());
    for log in 1..=chunk_log - PIECE_MIN_LOG {
        let step = per >> log;
        let mut head = 0f64;
        for (m, &rest) in after
            .iter()
            .enumerate()
            .take(nc.min(u8::MAX as usize) + 1)
            .skip(1)
        {
            let split = Split {
                chunks: m as u32,
                log,
            };
            let extra = piece_count(n, chunk_log, split) - nc;
            if extra > most_pieces {
                break;
            }
            let a = (m - 1) * per;
            for p in 0..1usize << log {
                head = head.max(span(a + p * step, step));
            }
            // Chains under DENSE_STEPS count as DENSE_STEPS: no more
            // pieces than reach it.
            let chain = head.max(rest).max(dense);
            if (chain, extra) < (best.0, best.1) {
                best = (chain, extra, split);
            }
        }
    }
    // Pieces that shorten the chain by less than a quarter are not worth
    // their bytes.
    if best.0 > 0.75 * whole {
        return Split::default();
    }
    best.2
}

/// A value's symbol, the number of raw bits after it, and those bits.
/// Without a branch, the selects in arithmetic: whether a value is direct
/// is as good as random on a field of a few bits a value, and the
/// encoder's table entries (`entry`) take it for every value, a vector at
/// once (a compiled branch there missed on every other value).
#[inline(always)]
pub fn symbol(v: u32) -> (u32, u32, u32) {
    let direct = ((v < DIRECT) as u32).wrapping_neg();
    let b = 32 - (v | 1).leading_zeros();
    let nraw = b.wrapping_sub(3) & !direct;
    let coded = DIRECT
        .wrapping_add(4u32.wrapping_mul(b.wrapping_sub(7)))
        .wrapping_add((v >> nraw) & 3);
    let s = (v & direct) | (coded & !direct);
    (s, nraw, v & ((1u32 << nraw) - 1))
}

/// Raw bits after symbol `s`.
#[inline]
pub fn raw_bits(s: u32) -> u32 {
    if s < DIRECT {
        0
    } else {
        (s - DIRECT) / 4 + 4
    }
}

/// The value of symbol `s` with raw bits `raw`.
#[inline]
pub fn value(s: u32, raw: u32) -> u32 {
    if s < DIRECT {
        return s;
    }
    let nraw = raw_bits(s);
    ((4 | ((s - DIRECT) & 3)) << nraw) | raw
}

/// The context of a value: its level class and the previous value.
#[inline]
pub fn context(level: u32, prev: u32) -> usize {
    (level.min(LEVELS as u32 - 1) * 4 + prev.min(3)) as usize
}

/// Counts per context and symbol of `v` (coding order) whose level
/// classes are `lv`.
pub fn histogram(v: &[u32], lv: &[u8]) -> Vec<u32> {
    histogram_and_entries(v, lv, &mut Vec::new())
}

/// `histogram`, and each value's entry (context times `NSYM` plus
/// symbol) into `entries`, which the encoder then reads instead of
/// working them out again. The entries come first, in a pass where no
/// value waits for another (a vector's worth at once), then the counts.
/// Done in one pass, value by value, the histograms of the turbulent
/// 256^3 field at 1e-4 took 64-70 ms on one core of an EPYC with AVX-512,
/// and of the smooth one 25-27 ms; now 10 and 6.
fn histogram_and_entries(v: &[u32], lv: &[u8], entries: &mut Vec<u16>) -> Vec<u32> {
    const T: usize = NCTX * NSYM;
    entries.clear();
    entries.resize(v.len(), 0);
    for ((vc, lc), ec) in v
        .chunks(RESET)
        .zip(lv.chunks(RESET))
        .zip(entries.chunks_mut(RESET))
    {
        entries_of(vc, lc, ec);
    }
    // Sixteen values of one entry (zeros, mostly, on a smooth field) count
    // at once. Others go to four tables a value each in turn (runs of one
    // entry made each count wait for the one before it to be stored), of
    // 16 bits so that all four stay in the first-level cache, added to the
    // total before any can overflow.
    const WAYS: usize = 4;
    const RUN: usize = 16;
    let mut total = vec![0u32; T];
    let mut h = vec![0u16; WAYS * T];
    for block in entries.chunks(WAYS * u16::MAX as usize) {
        let (h0, rest) = h.split_at_mut(T);
        let (h1, rest) = rest.split_at_mut(T);
        let (h2, h3) = rest.split_at_mut(T);
        let mut runs = block.chunks_exact(RUN);
        for r in &mut runs {
            let e0 = r[0];
            if r.iter().fold(0, |a, &e| a | (e ^ e0)) == 0 {
                total[e0 as usize] += RUN as u32;
                continue;
            }
            for q in r.chunks_exact(WAYS) {
                h0[q[0] as usize] += 1;
                h1[q[1] as usize] += 1;
                h2[q[2] as usize] += 1;
                h3[q[3] as usize] += 1;
            }
        }
        for &e in runs.remainder() {
            h0[e as usize] += 1;
        }
        for way in h.chunks_exact_mut(T) {
            for (t, c) in total.iter_mut().zip(way.iter_mut()) {
                *t += *c as u32;
                *c = 0;
            }
        }
    }
    total
}

/// A value's entry (context times `NSYM` plus symbol) after `prev`.
#[inline(always)]
fn entry(x: u32, level: u8, prev: u32) -> u16 {
    (context(level as u32, prev) * NSYM + symbol(x).0 as usize) as u16
}

/// The entries of one reset chunk's values `vc` (the first after a 0).
#[inline(always)]
fn entries_of_generic(vc: &[u32], lc: &[u8], out: &mut [u16]) {
    let (Some(&x0), Some(&l0), Some(o0)) = (vc.first(), lc.first(), out.first_mut()) else {
        return;
    };
    *o0 = entry(x0, l0, 0);
    for ((o, (&x, &l)), &p) in out[1..]
        .iter_mut()
        .zip(vc[1..].iter().zip(&lc[1..]))
        .zip(vc)
    {
        *o = entry(x, l, p);
    }
}

/// `entries_of_generic`, sixteen values a vector where the processor has
/// AVX-512 (with a vector leading-zero count) or eight with AVX2.
fn entries_of(vc: &[u32], lc: &[u8], out: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512cd")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            // SAFETY: the processor has these features.
            return unsafe { entries_of_avx512(vc, lc, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2.
            return unsafe { entries_of_avx2(vc, lc, out) };
        }
    }
    entries_of_generic(vc, lc, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512cd,avx512bw,avx512vl")]
unsafe fn entries_of_avx512(vc: &[u32], lc: &[u8], out: &mut [u16]) {
    entries_of_generic(vc, lc, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn entries_of_avx2(vc: &[u32], lc: &[u8], out: &mut [u16]) {
    entries_of_generic(vc, lc, out)
}

/// Frequencies (each context summing to 2^scale, or all zero when
/// unused) and their cumulative starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tables {
    pub freq: Vec<u32>,
    pub cum: Vec<u32>,
    pub scale: Vec<u32>,
}

impl Tables {
    /// Per context, the symbol of every slot (a direct look-up for the
    /// decoder: a binary search per value took 30 ns).
    pub fn slots(&self) -> Vec<Vec<u8>> {
        (0..NCTX)
            .map(|c| {
                let cum = &self.cum[c * (NSYM + 1)..(c + 1) * (NSYM + 1)];
                let mut v = vec![0u8; cum[NSYM] as usize];
                for s in 0..NSYM {
                    v[cum[s] as usize..cum[s + 1] as usize].fill(s as u8);
                }
                v
            })
            .collect()
    }

    fn from_freq(freq: Vec<u32>, scale: Vec<u32>) -> Self {
        let mut cum = vec![0u32; NCTX * (NSYM + 1)];
        for (cm, f) in cum.chunks_exact_mut(NSYM + 1).zip(freq.chunks_exact(NSYM)) {
            let mut run = 0u32;
            for (d, &x) in cm[1..].iter_mut().zip(f) {
                run += x;
                *d = run;
            }
        }
        Tables { freq, cum, scale }
    }
}

/// What the host decides for a brick from its histogram: the tables,
/// their coded words, and the chunk length (log2).
#[derive(Debug, Clone)]
pub struct Plan {
    pub tables: Tables,
    pub words: Vec<u32>,
    pub chunk_log: u32,
    pub split: Split,
}

/// Tables, their coding and the chunk length for a brick of `n` values
/// with histogram `hist`: frequencies in proportion to the counts (every
/// present symbol at least 1), what the flooring leaves taken by the most
/// frequent symbol. A context's total is the power of two at
/// or above its count (at most 2^PROB_BITS), so the tables of sparse
/// contexts cost a few bits (on the smooth field they were 11% of the
/// stream at a fixed 2^15). Chunks are at most 2^`most_log` values, and
/// dense ones are split (`class_blocks` of the brick's level classes).
pub fn plan(hist: &[u32], blocks: &[[u32; LEVELS]], n: usize, most_log: u32) -> Plan {
    let mut freq = vec![0u32; NCTX * NSYM];
    let mut scale = vec![0u32; NCTX];
    let mut bits = BitWriter::default();
    let mut est = 0f64;
    let lg = log2_table();
    // A context's present symbols, in order (a vector a context was a
    // fifth of `plan`).
    let mut seen = [0usize; NSYM];
    for c in 0..NCTX {
        let h = &hist[c * NSYM..(c + 1) * NSYM];
        let f = &mut freq[c * NSYM..(c + 1) * NSYM];
        let (mut total, mut np) = (0u64, 0usize);
        for (s, &x) in h.iter().enumerate() {
            total += x as u64;
            seen[np] = s;
            np += (x > 0) as usize;
        }
        let present = &seen[..np];
        exp_golomb(&mut bits, present.len() as u32);
        if present.is_empty() {
            continue;
        }
        if present.len() == 1 {
            f[present[0]] = 1;
            exp_golomb(&mut bits, present[0] as u32);
            continue;
        }
        let sc = (64 - (total - 1).leading_zeros()).clamp(1, PROB_BITS);
        scale[c] = sc;
        exp_golomb(&mut bits, sc - 1);
        let by_total = FloorDiv::new(total);
        for &s in present {
            // Floors: at most the total, and at least 1 while the total
            // is at or above the count; past 2^PROB_BITS the raised ones
            // (at most NSYM) are fewer than the largest's share.
            f[s] = by_total.floor((h[s] as u64) << sc).max(1) as u32;
        }
        // The first most frequent symbol takes the rounding's difference.
        let big = present
            .iter()
            .copied()
            .fold(present[0], |b, s| if h[s] > h[b] { s } else { b });
        let rest: u32 = present.iter().filter(|&&s| s != big).map(|&s| f[s]).sum();
        f[big] = (1 << sc) - rest;
        for &s in present {
            let l2 = lg
                .get(f[s] as usize)
                .copied()
                .unwrap_or_else(|| (f[s] as f64).log2());
            est += h[s] as f64 * (sc as f64 - l2 + raw_bits(s as u32) as f64);
        }
        let mut last = 0;
        for (i, &s) in present.iter().enumerate() {
            exp_golomb(&mut bits, (s - if i == 0 { 0 } else { last + 1 }) as u32);
            last = s;
        }
        let at = present.iter().position(|&s| s == big).unwrap_or(0);
        exp_golomb(&mut bits, at as u32);
        for &s in present.iter().filter(|&&s| s != big) {
            exp_golomb(&mut bits, f[s] - 1);
        }
    }
    // Every knob from `plan_knobs`, as a planner elsewhere takes them.
    let k = plan_knobs(most_log);
    let mut chunk_log = k.floor;
    while chunk_log < k.most
        && (1usize << chunk_log) < n
        && ((1u64 << chunk_log) as f64) * est < CHUNK_BITS * n as f64
    {
        chunk_log += 1;
    }
    let steps = block_steps(hist, blocks);
    let usual = plan_split(&steps, n, chunk_log, (k.dense, k.most_pieces));
    let (chunk_log, split) = shorter_chains(&steps, n, (chunk_log, usual), &k);
    Plan {
        tables: Tables::from_freq(freq, scale),
        words: bits.finish(),
        chunk_log,
        split,
    }
}

/// log2 of every frequency (0 to 2^PROB_BITS), as f64::log2 gives it:
/// `plan` took 40 us a brick in log2 calls. A device that plans (the GPU's
/// RPLAN) takes this table, so its estimate rounds as the host's does.
pub fn log2_table() -> &'static [f64] {
    static T: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    T.get_or_init(|| (0..=1u32 << PROB_BITS).map(|f| (f as f64).log2()).collect())
}
