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
/// GPUs more than one (session 63, turbulent 1024^3: two GPUs decode
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
/// and of the smooth one 25-27 ms; now 10 and 6 (session 44).
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

#[derive(Default)]
struct BitWriter {
    words: Vec<u32>,
    /// The bits not yet in `words` (fewer than 32), least significant
    /// first.
    acc: u64,
    held: u32,
}

impl BitWriter {
    /// The low `n` bits of `v` (n <= 64), least significant first: whole
    /// words at a time (bit by bit, the tables of a dense brick took 150
    /// us, half of `plan`, and a GPU run plans some 500 bricks on the
    /// host).
    fn put(&mut self, v: u64, n: u32) {
        let v = if n < 64 { v & ((1u64 << n) - 1) } else { v };
        if n > 32 {
            self.put32(v as u32, 32);
            self.put32((v >> 32) as u32, n - 32);
        } else {
            self.put32(v as u32, n);
        }
    }
    /// `n` <= 32 bits (none above them set).
    #[inline]
    fn put32(&mut self, v: u32, n: u32) {
        self.acc |= (v as u64) << self.held;
        self.held += n;
        if self.held >= 32 {
            self.words.push(self.acc as u32);
            self.acc >>= 32;
            self.held -= 32;
        }
    }
    fn finish(mut self) -> Vec<u32> {
        if self.held > 0 {
            self.words.push(self.acc as u32);
        }
        self.words
    }
}

/// Exp-Golomb of order 0: v + 1 in b bits, after b - 1 zeros.
fn exp_golomb(w: &mut BitWriter, v: u32) {
    let x = v as u64 + 1;
    let b = 64 - x.leading_zeros();
    // Most significant bit first, so the reader finds the leading one;
    // the zeros and the bits in one put where they fit.
    let code = x.reverse_bits() >> (64 - b);
    if b <= 32 {
        w.put(code << (b - 1), 2 * b - 1);
    } else {
        w.put(0, b - 1);
        w.put(code, b);
    }
}

/// Exact floor(x / d) for x below 2^53 by a multiply: a 64-bit division
/// a present symbol was the slowest step of `plan`. The float quotient is
/// within one of the true one (its relative error is under 2^-51 and
/// the quotient under 2^48), and the integer checks correct it.
struct FloorDiv {
    d: u64,
    inv: f64,
}

impl FloorDiv {
    fn new(d: u64) -> Self {
        FloorDiv {
            d: d.max(1),
            inv: 1.0 / d.max(1) as f64,
        }
    }
    #[inline]
    fn floor(&self, x: u64) -> u64 {
        if x >= 1 << 53 {
            return x / self.d;
        }
        let q = (x as f64 * self.inv) as u64;
        if q * self.d > x {
            q - 1
        } else if (q + 1) * self.d <= x {
            q + 1
        } else {
            q
        }
    }
}

struct BitReader<'a> {
    words: &'a [u32],
    bit: usize,
}

impl BitReader<'_> {
    /// The next 33 bits or more, least significant first (as many as two
    /// words hold from `bit`): None at the stream's last word, where the
    /// bit-at-a-time path reads instead. Bit at a time, a dense brick's
    /// header took 18 us on this machine's core and 110 us on a GPU host
    /// whose other slots parsed theirs at once, before its batch's
    /// device work could start.
    fn window(&self) -> Option<u64> {
        let i = self.bit / 32;
        let (lo, hi) = (*self.words.get(i)?, *self.words.get(i + 1)?);
        Some(((hi as u64) << 32 | lo as u64) >> (self.bit % 32))
    }
    fn bit(&mut self) -> Result<u32, String> {
        let w = self
            .words
            .get(self.bit / 32)
            .ok_or("the stream header ends early")?;
        let b = (w >> (self.bit % 32)) & 1;
        self.bit += 1;
        Ok(b)
    }
    /// `n` bits, least significant first (as `BitWriter::put` writes).
    fn bits(&mut self, n: u32) -> Result<u32, String> {
        if let (Some(w), true) = (self.window(), n <= 32) {
            self.bit += n as usize;
            return Ok((w & ((1u64 << n) - 1)) as u32);
        }
        let mut v = 0u32;
        for i in 0..n {
            v |= self.bit()? << i;
        }
        Ok(v)
    }
    fn exp_golomb(&mut self) -> Result<u32, String> {
        // Codes of up to 31 bits (values below 2^16) from one window: the
        // leading one and the bits after it, most significant first.
        if let Some(w) = self.window() {
            let zeros = w.trailing_zeros();
            if zeros <= 15 {
                let b = zeros + 1;
                let x = ((w >> zeros) & ((1u64 << b) - 1)).reverse_bits() >> (64 - b);
                self.bit += (zeros + b) as usize;
                return Ok((x - 1) as u32);
            }
        }
        let mut zeros = 0;
        while self.bit()? == 0 {
            zeros += 1;
            if zeros > 32 {
                return Err("a frequency table holds a code longer than 32 bits".into());
            }
        }
        let mut x = 1u64;
        for _ in 0..zeros {
            x = (x << 1) | self.bit()? as u64;
        }
        u32::try_from(x - 1).map_err(|_| "a frequency table value overflows".to_string())
    }
}

/// Reads the tables that `plan` coded.
pub fn read_tables(words: &[u32]) -> Result<Tables, String> {
    let mut r = BitReader { words, bit: 0 };
    let mut freq = vec![0u32; NCTX * NSYM];
    let mut scale = vec![0u32; NCTX];
    for c in 0..NCTX {
        let m = r.exp_golomb()? as usize;
        if m > NSYM {
            return Err(format!("context {c} lists {m} symbols of {NSYM}"));
        }
        let f = &mut freq[c * NSYM..(c + 1) * NSYM];
        if m == 1 {
            let s = r.exp_golomb()? as usize;
            *f.get_mut(s)
                .ok_or_else(|| format!("context {c} names symbol {s} of {NSYM}"))? = 1;
            continue;
        }
        if m == 0 {
            continue;
        }
        let sc = r.exp_golomb()?.saturating_add(1);
        if sc > PROB_BITS {
            return Err(format!("context {c}: total 2^{sc} is above 2^{PROB_BITS}"));
        }
        scale[c] = sc;
        let mut present = Vec::with_capacity(m);
        for i in 0..m {
            let s = r.exp_golomb()? as usize + if i == 0 { 0 } else { present[i - 1] + 1 };
            if s >= NSYM {
                return Err(format!("context {c} names symbol {s} of {NSYM}"));
            }
            present.push(s);
        }
        let at = r.exp_golomb()? as usize;
        let big = *present
            .get(at)
            .ok_or_else(|| format!("context {c}: largest symbol {at} of {m}"))?;
        let mut rest = 0u64;
        for &s in present.iter().filter(|&&s| s != big) {
            f[s] = r.exp_golomb()?.saturating_add(1);
            rest += f[s] as u64;
        }
        if rest >= 1u64 << sc {
            return Err(format!("context {c}: frequencies exceed 2^{sc}"));
        }
        f[big] = (1 << sc) - rest as u32;
    }
    Ok(Tables::from_freq(freq, scale))
}

/// x / d for every 32-bit x as the high half of one 64-bit product
/// (Lemire, Kaser and Kurz 2019: m = ceil(2^64 / d)); d = 1, whose m
/// does not fit, takes m = 2^64 - 1 (giving x - 1) and adds 1. The
/// encoder's state step divides by a symbol's frequency, and a hardware
/// division on its serial chain cost a fifth of a one-thread compression.
#[derive(Debug, Clone, Copy, Default)]
pub struct Divisor {
    m: u64,
    add: u32,
}

impl Divisor {
    pub fn new(d: u32) -> Self {
        match d {
            0 | 1 => Divisor {
                m: u64::MAX,
                add: 1,
            },
            _ => Divisor {
                m: u64::MAX / d as u64 + 1,
                add: 0,
            },
        }
    }
    /// x / d (x >= 1 when d = 1; the coder's states are at least 2^16).
    #[inline(always)]
    pub fn quotient(self, x: u32) -> u32 {
        ((x as u128 * self.m as u128) >> 64) as u32 + self.add
    }
}

/// The encoder's view of a brick's tables: per context and symbol, in one
/// entry (one cache line's fetch a step, where four arrays took four),
/// its start, frequency, divisor, its context's scale and the bound the
/// state must stay under before the step.
#[derive(Debug, Clone, Copy, Default)]
struct EncodeEntry {
    bound: u64,
    div: Divisor,
    freq: u32,
    start: u32,
    scale: u32,
}

struct EncodeTable(Vec<EncodeEntry>);

impl EncodeTable {
    fn new(t: &Tables) -> Self {
        let mut e = vec![EncodeEntry::default(); NCTX * NSYM];
        for c in 0..NCTX {
            for s in 0..NSYM {
                let f = t.freq[c * NSYM + s];
                e[c * NSYM + s] = EncodeEntry {
                    bound: (((RANS_L >> t.scale[c]) as u64) << 16) * f as u64,
                    div: Divisor::new(f),
                    freq: f,
                    start: t.cum[c * (NSYM + 1) + s],
                    scale: t.scale[c],
                };
            }
        }
        EncodeTable(e)
    }
}

/// The words a chunk's encoder emits, by index into a buffer with room
/// for the chunk's most (three a value), so that a step's word is
/// written whether or not it is emitted and only the length moves: the
/// renormalisation is data-dependent, and as a branch it was mispredicted
/// about once a value.
struct Emitted<'a> {
    buf: &'a mut [u16],
    len: usize,
}

impl Emitted<'_> {
    /// The state after renormalising it for a step whose states must stay
    /// under `bound`.
    #[inline(always)]
    fn renorm(&mut self, x: u32, bound: u64) -> u32 {
        let out = x as u64 >= bound;
        self.buf[self.len] = x as u16;
        self.len += out as usize;
        if out {
            x >> 16
        } else {
            x
        }
    }
}

/// One rANS step of the encoder for a uniform piece of `bits` bits
/// (frequency 1 out of 2^bits); with no bits it changes nothing.
#[inline(always)]
fn put_raw(x: u32, out: &mut Emitted, v: u32, bits: u32) -> u32 {
    let x = out.renorm(x, ((RANS_L >> bits) as u64) << 16);
    (x << bits) + v
}

/// One rANS step of the encoder for entry `e` (a context and symbol). A
/// context of one symbol (scale 0, frequency 1, start 0) leaves the state
/// as it is.
#[inline(always)]
fn put(x: u32, out: &mut Emitted, e: &EncodeEntry) -> u32 {
    let x = out.renorm(x, e.bound);
    let q = e.div.quotient(x);
    (q << e.scale) + (x - q * e.freq) + e.start
}

/// Chunks coded side by side: each state's step is a serial chain of
/// about 20 cycles, so one chunk at a time left the core mostly idle.
const LANES: usize = 4;

/// A chunk to code: its values and their table entries.
type Chunk<'a> = (&'a [u32], &'a [u16]);

/// Value i of chunk `(v, entry)` through the state `x` (the high raw
/// piece, the low one, then the symbol: the decoder reads them in the
/// other order). Every step runs for every value, since a piece of no
/// bits and a context of one symbol change nothing, except the high
/// piece, which is rare and costs the chain a step.
/// `SPARSE` chunks (few values with raw bits) branch past the raw pieces
/// of a direct value instead: the branch is then predicted, and a smooth
/// field's values are nearly all direct.
#[inline(always)]
fn encode_value<const SPARSE: bool>(
    x: u32,
    em: &mut Emitted,
    (v, entry): Chunk,
    i: usize,
    t: &EncodeTable,
) -> u32 {
    // The raw bits as `symbol` gives them (the symbol comes with the
    // entry). Calling `symbol` here made a turbulent 1e-4 compression
    // 10% slower: its symbol's arithmetic was not all dropped.
    let v = v[i];
    if SPARSE && v < DIRECT {
        return put(x, em, &t.0[entry[i] as usize]);
    }
    let b = 32 - (v | 1).leading_zeros();
    let nraw = if v < DIRECT { 0 } else { b - 3 };
    let raw = v & ((1u32 << nraw) - 1);
    let mut x = x;
    if nraw > PIECE {
        x = put_raw(x, em, raw >> PIECE, nraw - PIECE);
    }
    let lo = nraw.min(PIECE);
    x = put_raw(x, em, raw & ((1 << lo) - 1), lo);
    put(x, em, &t.0[entry[i] as usize])
}

/// Codes up to `LANES` chunks side by side, each from its last value to
/// its first, appending each one's words in decoding order (final state,
/// then what it emitted, reversed) to `out`, in the order given, and its
/// length in u16 units to `sizes`. `bufs` are reused from call to call.
fn encode_chunks<const SPARSE: bool>(
    chunks: &[Chunk],
    t: &EncodeTable,
    bufs: &mut [Vec<u16>; LANES],
    (out, sizes): (&mut Vec<u16>, &mut Vec<u32>),
) {
    // Lanes past the chunks given code the last one again, unread.
    let Some(&last) = chunks.last() else {
        return;
    };
    let lanes: [Chunk; LANES] = std::array::from_fn(|l| chunks.get(l).copied().unwrap_or(last));
    let mut x = [RANS_L; LANES];
    for (b, c) in bufs.iter_mut().zip(&lanes) {
        if b.len() < 3 * c.0.len() + 3 {
            b.resize(3 * c.0.len() + 3, 0);
        }
    }
    let mut ems = bufs.each_mut().map(|b| Emitted { buf: b, len: 0 });
    let most = lanes.iter().map(|c| c.0.len()).max().unwrap_or(0);
    let least = lanes[..chunks.len()]
        .iter()
        .map(|c| c.0.len())
        .min()
        .unwrap_or(0);
    // The longer chunks' last values alone, then all in step.
    for i in (least..most).rev() {
        for l in 0..chunks.len() {
            if i < lanes[l].0.len() {
                x[l] = encode_value::<SPARSE>(x[l], &mut ems[l], lanes[l], i, t);
            }
        }
    }
    // Each lane's state and buffer in locals of their own, so the states
    // stay in registers (a loop over the lanes kept them in memory).
    let [e0, e1, e2, e3] = &mut ems;
    let [mut x0, mut x1, mut x2, mut x3] = x;
    for i in (0..least).rev() {
        x0 = encode_value::<SPARSE>(x0, e0, lanes[0], i, t);
        x1 = encode_value::<SPARSE>(x1, e1, lanes[1], i, t);
        x2 = encode_value::<SPARSE>(x2, e2, lanes[2], i, t);
        x3 = encode_value::<SPARSE>(x3, e3, lanes[3], i, t);
    }
    let x = [x0, x1, x2, x3];
    let lens = ems.map(|em| em.len);
    for l in 0..chunks.len() {
        let before = out.len();
        out.push((x[l] >> 16) as u16);
        out.push(x[l] as u16);
        out.extend(bufs[l][..lens[l]].iter().rev());
        sizes.push((out.len() - before) as u32);
    }
}

/// The decoder's view of a brick's tables: per context its scale and
/// whether it has a table, the symbol of every slot, and per context and
/// symbol its frequency and start.
struct DecodeTable<'a> {
    t: &'a Tables,
    slots: Vec<Vec<u8>>,
    missing: [bool; NCTX],
    /// Per context, its symbol when it holds one below DIRECT: such a
    /// value reads nothing and leaves the state as it is (nearly every
    /// value of a smooth field), and a branch on it is well predicted.
    one: [Option<u32>; NCTX],
    /// Per context, its first symbol (slots from 0) and that symbol's
    /// frequency: a slot below it is that symbol without a look-up, as
    /// in RDEC. On a smooth field nearly every coded step is a context's
    /// likely 0, and the look-ups (slot, frequency, start) were three
    /// loads on the state's serial chain.
    first: [(u32, u32); NCTX],
    /// Classes whose values after a 0 are zeros that read nothing
    /// (`zero_classes`): a sparse chunk passes over a run of them at once.
    zero_runs: u8,
    /// Contexts whose first slots, at least seven eighths of them, are
    /// the symbol 0 (not alone): a sparse chunk decodes runs of such
    /// zeros in one loop (`Lane::zeros_of_one_class`). Below that the runs
    /// are too short to pay for starting one.
    likely_zero: [bool; NCTX],
    /// Whether the stream is sparse enough for those runs (under half a
    /// bit a value): on a turbulent field at 3e-2 (one bit a value) the
    /// runs were short, and trying them cost 3% of a decompression.
    runs: bool,
}

impl<'a> DecodeTable<'a> {
    /// The tables `t` made ready; `runs`: whether the stream is sparse
    /// enough for runs of likely zeros.
    fn new(t: &'a Tables, runs: bool) -> Self {
        let slots = t.slots();
        let missing: [bool; NCTX] =
            std::array::from_fn(|c| t.cum[c * (NSYM + 1) + NSYM] != 1 << t.scale[c]);
        let one: [Option<u32>; NCTX] = std::array::from_fn(|c| {
            let s = *slots[c].first()? as u32;
            (t.scale[c] == 0 && t.cum[c * (NSYM + 1) + NSYM] == 1 && s < DIRECT).then_some(s)
        });
        let first: [(u32, u32); NCTX] = std::array::from_fn(|c| match slots[c].first() {
            Some(&s) => (s as u32, t.freq[c * NSYM + s as usize]),
            None => (0, 0),
        });
        DecodeTable {
            t,
            likely_zero: std::array::from_fn(|c| {
                let (s0, f0) = first[c];
                s0 == 0 && one[c].is_none() && !missing[c] && 8 * f0 as u64 >= 7 << t.scale[c]
            }),
            missing,
            one,
            first,
            slots,
            zero_runs: zero_classes(t),
            runs,
        }
    }
}

/// A chunk being decoded: its words (exactly its own), the next one to
/// read, its state, and its values' level classes, first position in the
/// brick and output.
struct Lane<'a> {
    words: &'a [u16],
    p: usize,
    x: u32,
    lv: &'a [u8],
    at: usize,
    /// The context's restart less one (`Header::reset`).
    reset_mask: usize,
    out: &'a mut [u32],
    /// Values decoded so far.
    done: usize,
    /// The last value decoded: the next one's context, kept here rather
    /// than read back from `out` (no measurable change on its own).
    last: u32,
}

impl<'a> Lane<'a> {
    fn new(
        words: &'a [u16],
        lv: &'a [u8],
        (at, reset): (usize, usize),
        out: &'a mut [u32],
    ) -> Result<Self, String> {
        match words {
            [w0, w1, ..] => Ok(Lane {
                words,
                p: 2,
                x: (*w0 as u32) << 16 | *w1 as u32,
                lv,
                at,
                reset_mask: reset - 1,
                out,
                done: 0,
                last: 0,
            }),
            _ => Err("the chunk's words end early".into()),
        }
    }

    /// One renormalisation: a word shifted in where the state fell under
    /// the bound, without a branch (a word past the end reads as 0, and
    /// `finish` then refuses the chunk).
    #[inline(always)]
    fn renorm(&mut self) {
        let need = self.x < RANS_L;
        let w = self.words.get(self.p).copied().unwrap_or(0) as u32;
        self.x = if need { self.x << 16 | w } else { self.x };
        self.p += need as usize;
    }

    /// Value i: the symbol, then the low raw piece, then the high one.
    /// A piece of no bits changes nothing, so it runs as every other
    /// does; the high piece, rare, is a branch. `SPARSE` streams (under 2
    /// bits a value) branch past the raw pieces of a direct symbol
    /// instead: there nearly every symbol is one, and the branch is
    /// predicted (smooth 256^3 at 1e-3, one core: 0.10 to 0.09 s).
    #[inline(always)]
    fn value<const SPARSE: bool>(&mut self, i: usize, d: &DecodeTable) -> Result<(), String> {
        let prev = if i == 0 || (self.at + i) & self.reset_mask == 0 {
            0
        } else {
            self.last
        };
        let c = context(self.lv[i] as u32, prev);
        if let Some(s) = d.one[c] {
            self.out[i] = s;
            self.last = s;
            return Ok(());
        }
        if d.missing[c] {
            return Err(format!(
                "value {} uses context {c}, which has no table",
                self.at + i
            ));
        }
        let t = d.t;
        let sc = t.scale[c];
        let slot = self.x & ((1 << sc) - 1);
        let (s0, f0) = d.first[c];
        let (s, f, start) = if slot < f0 {
            (s0 as usize, f0, 0)
        } else {
            let s = d.slots[c][slot as usize] as usize;
            (s, t.freq[c * NSYM + s], t.cum[c * (NSYM + 1) + s])
        };
        self.x = f * (self.x >> sc) + slot - start;
        self.renorm();
        if SPARSE && s < DIRECT as usize {
            self.out[i] = s as u32;
            self.last = s as u32;
            return Ok(());
        }
        let nraw = raw_bits(s as u32);
        let lo = nraw.min(PIECE);
        let mut raw = self.x & ((1 << lo) - 1);
        self.x >>= lo;
        self.renorm();
        if nraw > PIECE {
            raw |= (self.x & ((1 << (nraw - PIECE)) - 1)) << PIECE;
            self.x >>= nraw - PIECE;
            self.renorm();
        }
        let v = value(s as u32, raw);
        self.out[i] = v;
        self.last = v;
        Ok(())
    }

    /// Values `done..` of a sparse chunk (`value::<true>`), where a run of
    /// zeros after a 0, in classes whose context then holds 0 alone, is
    /// written at once: it reads nothing and leaves the state as it is
    /// (nearly all of a smooth field's values).
    fn sparse_values(&mut self, d: &DecodeTable) -> Result<(), String> {
        let zr = d.zero_runs;
        let mut i = self.done;
        while i < self.out.len() {
            if self.last == 0 && zr != 0 {
                let run = self.lv[i..self.out.len()]
                    .iter()
                    .take_while(|&&c| zr >> c.min(LEVELS as u8 - 1) & 1 == 1)
                    .count();
                if run > 0 {
                    self.out[i..i + run].fill(0);
                    i += run;
                    continue;
                }
            }
            if d.runs
                && (i == 0 || self.last == 0 || (self.at + i) & self.reset_mask == 0)
                && first_runs()
            {
                let run = self.zeros_of_one_class(i, d);
                if run > 0 {
                    i += run;
                    continue;
                }
            }
            self.value::<true>(i, d)?;
            i += 1;
        }
        Ok(())
    }

    /// From value `i` (after a 0, or at a context reset), the zeros of one
    /// level class whose context after a 0 takes its first slots for the
    /// symbol 0: each is one state step (`value::<true>`'s, without its
    /// look-ups, and a branch for the rare word read), until the class
    /// changes or a slot falls past the zeros'. On a smooth field nearly
    /// every value is such a zero of a likely but not lone 0; the general
    /// step's look-ups and branchless reads held its chain to about 2.7 ns
    /// a value. Returns how many it decoded (0: none apply).
    #[inline(always)]
    fn zeros_of_one_class(&mut self, i: usize, d: &DecodeTable) -> usize {
        let cls = self.lv[i];
        let c = context(cls as u32, 0);
        if !d.likely_zero[c] {
            return 0;
        }
        let f0 = d.first[c].1;
        let sc = d.t.scale[c];
        let mask = (1u32 << sc) - 1;
        let (mut x, mut p, mut j) = (self.x, self.p, i);
        let n = self.out.len();
        while j < n && self.lv[j] == cls {
            let slot = x & mask;
            if slot >= f0 {
                break;
            }
            x = f0 * (x >> sc) + slot;
            if x < RANS_L {
                // A word past the end reads as 0, and `finish` then
                // refuses the chunk (as `renorm`).
                x = x << 16 | self.words.get(p).copied().unwrap_or(0) as u32;
                p += 1;
            }
            j += 1;
        }
        if j > i {
            self.out[i..j].fill(0);
            (self.x, self.p, self.last) = (x, p, 0);
        }
        j - i
    }

    /// A chunk ends with the state the encoder began with, its words all
    /// read.
    #[inline(always)]
    fn finish(&self) -> Result<(), String> {
        if self.p > self.words.len() {
            Err("the chunk's words end early".into())
        } else if self.x != RANS_L || self.p != self.words.len() {
            Err("the chunk does not end where its length says".into())
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
thread_local!(static FIRST_RUNS_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

/// Whether a sparse chunk decodes runs of likely zeros in one loop
/// (`Lane::zeros_of_one_class`); the tests turn it off to compare.
#[inline(always)]
fn first_runs() -> bool {
    #[cfg(test)]
    if FIRST_RUNS_OFF.with(|c| c.get()) {
        return false;
    }
    true
}

/// Decodes up to `LANES` chunks, side by side when `together` (each
/// one's step is a serial chain): in step while all have values left,
/// then each alone. Errors name the chunk (`first` is the first one's
/// number).
fn decode_chunks(
    lanes: Vec<Lane>,
    (first, together): (usize, bool),
    d: &DecodeTable,
) -> Result<(), String> {
    let named = |j: usize| move |e: String| format!("chunk {}: {e}", first + j);
    // Each lane is moved into a local of its own, so that its state and
    // position stay in registers (through the vector, every step stored
    // and reloaded them: a chain through memory).
    let rest: Vec<Lane> = match <[Lane; LANES]>::try_from(lanes) {
        // Lanes part-decoded elsewhere (`rans_wide`) go on one at a time.
        Ok(mut four) if together && four.iter().all(|l| l.done == 0) => {
            let least = four.iter().map(|l| l.out.len()).min().unwrap_or(0);
            let [l0, l1, l2, l3] = &mut four;
            for i in 0..least {
                l0.value::<false>(i, d).map_err(named(0))?;
                l1.value::<false>(i, d).map_err(named(1))?;
                l2.value::<false>(i, d).map_err(named(2))?;
                l3.value::<false>(i, d).map_err(named(3))?;
            }
            four.into_iter()
                .map(|mut l| {
                    l.done = least;
                    l
                })
                .collect()
        }
        Ok(four) => four.into(),
        Err(fewer) => fewer,
    };
    for (j, mut l) in rest.into_iter().enumerate() {
        if together {
            for i in l.done..l.out.len() {
                l.value::<false>(i, d).map_err(named(j))?;
            }
        } else {
            l.sparse_values(d).map_err(named(j))?;
        }
        l.finish().map_err(named(j))?;
    }
    Ok(())
}

/// The level classes (bit c for class c) whose context after a 0 holds
/// the symbol 0 alone: past a 0, their values are zeros that read nothing
/// from the stream (the GPU decoder passes over tiles of them).
pub fn zero_classes(t: &Tables) -> u8 {
    (0..LEVELS).fold(0, |m, l| {
        let c = context(l as u32, 0);
        let one = t.scale[c] == 0 && t.cum[c * (NSYM + 1) + NSYM] == 1 && t.freq[c * NSYM] == 1;
        m | (one as u8) << l
    })
}

/// Chunks of a brick of `n` values at 2^`chunk_log` each.
pub fn chunks(n: usize, chunk_log: u32) -> usize {
    n.div_ceil(1usize << chunk_log)
}

/// The coded stream of `v` (coding order, level classes `lv`), in chunks
/// of at most 2^`most_log` values.
pub fn encode(v: &[u32], lv: &[u8], most_log: u32) -> Vec<u32> {
    encode_with(v, lv, most_log, &mut EncodeScratch::default())
}

/// A coding thread's buffers of brick size for `encode_with`, kept from
/// brick to brick: fresh ones fault in and clear their pages (a third of
/// a one-core turbulent compression's profile was the kernel clearing
/// pages, most of it for these and the stream's words).
#[derive(Default)]
pub struct EncodeScratch {
    entries: Vec<u16>,
    data: Vec<u16>,
}

/// `encode` with a thread's reused buffers.
pub fn encode_with(v: &[u32], lv: &[u8], most_log: u32, s: &mut EncodeScratch) -> Vec<u32> {
    let EncodeScratch { entries, data } = s;
    let hist = histogram_and_entries(v, lv, entries);
    let p = plan(&hist, &class_blocks(lv), v.len(), most_log);
    let t = EncodeTable::new(&p.tables);
    data.clear();
    data.reserve(v.len());
    let mut bufs: [Vec<u16>; LANES] = Default::default();
    let mut sizes = Vec::new();
    let chunks: Vec<Chunk> = pieces(v.len(), p.chunk_log, p.split)
        .map(|(a, len)| (&v[a..a + len], &entries[a..a + len]))
        .collect();
    // Under one value in 16 with raw bits, the sparse steps (the same
    // words either way): smooth 256^3 compression on one core 0.19-0.21
    // to 0.16-0.18 s, turbulent at 1e-2 and 1e-3 0.21 to 0.19 s.
    let raw: u64 = hist
        .chunks(NSYM)
        .map(|h| h[DIRECT as usize..].iter().map(|&c| c as u64).sum::<u64>())
        .sum();
    let sparse = raw * 16 < v.len() as u64;
    for group in chunks.chunks(LANES) {
        if sparse {
            encode_chunks::<true>(group, &t, &mut bufs, (data, &mut sizes));
        } else {
            encode_chunks::<false>(group, &t, &mut bufs, (data, &mut sizes));
        }
    }
    let mut out = header_words(p.chunk_log, p.split, &p.words, &sizes);
    out.reserve_exact(data.len().div_ceil(2));
    out.extend(pack(data));
    out
}

/// A stream's words before its data: chunk log2, the lengths' bit width
/// and the split, the table words, then the pieces' lengths (u16 units)
/// packed at that width. The GPU encoder's host writes the same.
pub fn header_words(chunk_log: u32, split: Split, tables: &[u32], sizes: &[u32]) -> Vec<u32> {
    let width = 32 - sizes.iter().fold(1u32, |m, &s| m.max(s)).leading_zeros();
    let mut lens = BitWriter::default();
    sizes.iter().for_each(|&s| lens.put(s as u64, width));
    let lens = lens.finish();
    let h0 = chunk_log | H0_RESET | width << 8 | split.chunks << 16 | split.log << 24;
    let mut out = vec![h0, tables.len() as u32];
    out.extend_from_slice(tables);
    out.extend_from_slice(&lens);
    out
}

/// u16 words packed two to a u32 (the low half first), the last padded.
fn pack(data: &[u16]) -> impl Iterator<Item = u32> + '_ {
    data.chunks(2)
        .map(|c| c[0] as u32 | (c.get(1).copied().unwrap_or(0) as u32) << 16)
}

/// A stream's header as the decoders (CPU and GPU) need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub chunk_log: u32,
    /// Values between the context's restarts: `RESET`, or `RESET_V6` in
    /// streams of versions 3 to 6.
    pub reset: usize,
    pub split: Split,
    pub tables: Tables,
    /// Start of each piece in u16 units from the data's start, and the end.
    pub offsets: Vec<usize>,
    /// Where the data starts, in u32 words from the stream's start.
    pub data_word: usize,
    /// Words of the whole stream.
    pub used: usize,
}

/// Reads and checks a stream's header for `n` values.
pub fn read_header(words: &[u32], n: usize) -> Result<Header, String> {
    read_header_of(words, words.len(), n)
}

/// Words of a stream's header (chunk sizes included) as its first two
/// words give them; 2 when those are out of range (`read_header` then says
/// why).
pub fn header_len(h0: u32, h1: u32, n: usize) -> usize {
    match parse_h0(h0, n) {
        Ok((chunk_log, _, width, split)) => {
            let lw = (piece_count(n, chunk_log, split) * width as usize).div_ceil(32);
            2usize.saturating_add(h1 as usize).saturating_add(lw)
        }
        Err(_) => 2,
    }
}

/// A stream's first word: chunk log2, the context's restart (values
/// between), the lengths' bit width and the split, checked against a
/// brick of `n` values. Chunks and pieces are at least a restart's values.
fn parse_h0(h0: u32, n: usize) -> Result<(u32, usize, u32, Split), String> {
    let (chunk_log, width) = (h0 & 0x7f, (h0 >> 8) & 0xff);
    let reset_log = if h0 & H0_RESET != 0 {
        RESET_LOG
    } else {
        RESET_V6.trailing_zeros()
    };
    let split = Split {
        chunks: (h0 >> 16) & 0xff,
        log: h0 >> 24,
    };
    if !(reset_log..=CHUNK_MAX_LOG).contains(&chunk_log) || !(1..=32).contains(&width) {
        return Err(format!(
            "chunk length 2^{chunk_log} (2^{reset_log} to 2^{CHUNK_MAX_LOG}) or length width {width} (1 to 32) is wrong"
        ));
    }
    let most = chunk_log - reset_log;
    if split.log > most
        || (split.log == 0) != (split.chunks == 0)
        || split.chunks as usize > chunks(n, chunk_log)
    {
        return Err(format!(
            "the split ({} chunks in 2^{} pieces) is wrong for {} chunks of 2^{chunk_log} (pieces of 2^{reset_log} values or more)",
            split.chunks,
            split.log,
            chunks(n, chunk_log)
        ));
    }
    Ok((chunk_log, 1 << reset_log, width, split))
}

/// `read_header` from the stream's first words only (at least
/// `header_len` of them, or all), the stream being `total` words long.
pub fn read_header_of(words: &[u32], total: usize, n: usize) -> Result<Header, String> {
    let head = words
        .get(..2)
        .ok_or("the coefficient stream is shorter than its header")?;
    let (chunk_log, reset, width, split) = parse_h0(head[0], n)?;
    let tw = head[1] as usize;
    let tables = read_tables(
        words
            .get(2..2 + tw)
            .ok_or("the frequency tables run past the brick")?,
    )?;
    let nc = piece_count(n, chunk_log, split);
    let lw = (nc * width as usize).div_ceil(32);
    let mut lens = BitReader {
        words: words
            .get(2 + tw..2 + tw + lw)
            .ok_or("the chunk lengths run past the brick")?,
        bit: 0,
    };
    let mut offsets = Vec::with_capacity(nc + 1);
    let mut at = 0usize;
    offsets.push(0);
    for _ in 0..nc {
        at += lens.bits(width)? as usize;
        offsets.push(at);
    }
    let data_word = 2 + tw + lw;
    let used = data_word + at.div_ceil(2);
    if used > total {
        return Err(format!(
            "the chunks need {} words, {} are left",
            at.div_ceil(2),
            total - data_word.min(total)
        ));
    }
    Ok(Header {
        chunk_log,
        reset,
        split,
        tables,
        offsets,
        data_word,
        used,
    })
}

/// Decodes a stream of `n` values with level classes `lv`: the values
/// and the words the stream used.
pub fn decode(words: &[u32], n: usize, lv: &[u8]) -> Result<(Vec<u32>, usize), String> {
    let mut out = Vec::new();
    let used = decode_into(words, n, lv, &mut out)?;
    Ok((out, used))
}

/// `decode` into a buffer reused from brick to brick (its old values are
/// overwritten): the words the stream used.
pub fn decode_into(
    words: &[u32],
    n: usize,
    lv: &[u8],
    out: &mut Vec<u32>,
) -> Result<usize, String> {
    decode_into_by(words, n, lv, out, rans_wide::available())
}

/// Groups of chunks the wide decoder took (for the tests to know it ran).
#[cfg(test)]
static WIDE_GROUPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `decode_into`, with sixteen chunks at once (`rans_wide`) where `wide`
/// and the processor allow: the same values either way.
fn decode_into_by(
    words: &[u32],
    n: usize,
    lv: &[u8],
    out: &mut Vec<u32>,
    wide: bool,
) -> Result<usize, String> {
    let h = read_header(words, n)?;
    let mut data: Vec<u16> = words[h.data_word..h.used]
        .iter()
        .flat_map(|&w| [w as u16, (w >> 16) as u16])
        .collect();
    let d = DecodeTable::new(&h.tables, data.len() * 32 < n);
    // Chunks side by side pay where values cost the state steps; on a
    // stream of under 2 bits a value (a smooth field's: nearly all values
    // a context's lone symbol, a predicted branch) one chunk at a time
    // ran 1.4 times faster.
    let together = data.len() * 16 >= 2 * n;
    // Sixteen at once where the processor has AVX-512 (`rans_wide`); its
    // gathers read one word past a chunk's last.
    let wide = (wide && together && data.len() < i32::MAX as usize)
        .then(|| WideTable::new(&h.tables, &d.slots, &d.one, &d.missing));
    if wide.is_some() {
        data.push(0);
    }
    out.resize(n, 0);
    let pieces: Vec<(usize, usize)> = pieces(n, h.chunk_log, h.split).collect();
    let mut rest: &mut [u32] = out;
    let mut j = 0;
    while j < pieces.len() {
        if let (Some(wt), Some(g)) = (&wide, pieces.get(j..j + WIDE)) {
            // The last three classes of the brick stay with the scalar
            // steps (a gather reads four bytes).
            let g0 = g[0].0;
            let steps = g
                .iter()
                .map(|&(at, len)| len.min(lv.len().saturating_sub(at + 3)))
                .min()
                .unwrap_or(0);
            // Each lane: its first value (from the group's) and its words.
            let mut lanes = [(0u32, (0u32, 0u32)); WIDE];
            let mut fit = true;
            for (k, lane) in lanes.iter_mut().enumerate() {
                let [at, w0, w1] = [g[k].0 - g0, h.offsets[j + k], h.offsets[j + k + 1]]
                    .map(|v| u32::try_from(v).ok());
                match (at, w0, w1) {
                    (Some(at), Some(w0), Some(w1)) => *lane = (at, (w0, w1)),
                    _ => fit = false,
                }
            }
            let lv_g = lv.get(g0..).unwrap_or_default();
            if let Some(st) = (fit && steps > 0)
                .then(|| {
                    let group = Group {
                        data: &data,
                        lv: lv_g,
                        out: rest,
                        lanes,
                        reset: h.reset,
                    };
                    rans_wide::steps(group, steps, wt)
                })
                .flatten()
            {
                // The chunks' tails, from the lanes' states, one at a time.
                let mut lanes = Vec::with_capacity(WIDE);
                for (k, &piece) in g.iter().enumerate() {
                    let mut l =
                        chunk_lane(&mut rest, (&data, lv, &h.offsets), j + k, (piece, h.reset))?;
                    l.x = st.x[k];
                    l.p = st.p[k] as usize - h.offsets[j + k];
                    l.last = st.last[k];
                    l.done = steps;
                    lanes.push(l);
                }
                decode_chunks(lanes, (j, together), &d)?;
                #[cfg(test)]
                WIDE_GROUPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                j += WIDE;
                continue;
            }
        }
        let end = (j + LANES).min(pieces.len());
        let lanes = (j..end)
            .map(|k| chunk_lane(&mut rest, (&data, lv, &h.offsets), k, (pieces[k], h.reset)))
            .collect::<Result<Vec<_>, _>>()?;
        decode_chunks(lanes, (j, together), &d)?;
        j = end;
    }
    Ok(h.used)
}

/// The lane of chunk `j` (values `at..at + len` of the brick, the
/// context restarting every `reset`), its outputs split off the front of
/// `rest`, its words `offsets[j]..offsets[j + 1]` of `data`.
fn chunk_lane<'a>(
    rest: &mut &'a mut [u32],
    (data, lv, offsets): (&'a [u16], &'a [u8], &[usize]),
    j: usize,
    ((at, len), reset): ((usize, usize), usize),
) -> Result<Lane<'a>, String> {
    let (o, r) = std::mem::take(rest).split_at_mut(len);
    *rest = r;
    let words = &data[offsets[j]..offsets[j + 1]];
    Lane::new(words, &lv[at..at + len], (at, reset), o).map_err(|e| format!("chunk {j}: {e}"))
}

/// Level classes of a brick's values in the interpolating wavelet's coding
/// order: the fewest trailing zero bits among the nonzero coordinates
/// (the detail's level less one), at most `LEVELS - 1`.
pub fn level_classes(dims: [usize; 3], order: &[u32]) -> Vec<u8> {
    order
        .iter()
        .map(|&k| {
            let k = k as usize;
            let c = [
                k / (dims[1] * dims[2]),
                (k / dims[2]) % dims[1],
                k % dims[2],
            ];
            c.iter()
                .filter(|&&v| v != 0)
                .map(|&v| v.trailing_zeros())
                .min()
                .unwrap_or(64)
                .min(LEVELS as u32 - 1) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `synthetic_plan_cases` in threes (a batch of one shape), with
    /// their plans, to the file MULTIRES_RPLAN_CASES names, for the RPLAN
    /// emulator (tools/kernel_emu/rplan_check.sh reads it).
    #[test]
    #[ignore = "a tool's input: tools/kernel_emu/rplan_check.sh runs it"]
    fn write_rplan_cases() {
        let Ok(path) = std::env::var("MULTIRES_RPLAN_CASES") else {
            panic!("MULTIRES_RPLAN_CASES names no file");
        };
        let cases = synthetic_plan_cases(7, 240);
        let mut out: Vec<u8> = Vec::new();
        let u64s = |o: &mut Vec<u8>, v: &[u64]| v.iter().for_each(|x| o.extend(x.to_le_bytes()));
        let u32s = |o: &mut Vec<u8>, v: &[u32]| v.iter().for_each(|x| o.extend(x.to_le_bytes()));
        u64s(&mut out, &[(cases.len() / 3) as u64]);
        out.extend(log2_table().iter().flat_map(|x| x.to_le_bytes()));
        for (g, group) in cases.chunks_exact(3).enumerate() {
            let most_log = [16, 14, 12, 15, 13][g % 5];
            let k = plan_knobs(most_log);
            let n = group[0].2;
            let nblk = group[0].1.len();
            u64s(
                &mut out,
                &[n as u64, nblk as u64, k.most as u64, k.floor as u64],
            );
            u64s(&mut out, &[k.most_pieces as u64, k.wide as u64]);
            out.extend(k.dense.to_le_bytes());
            out.extend(k.long_chain.to_le_bytes());
            let flat: Vec<u32> = group[0].1.iter().flatten().copied().collect();
            u32s(&mut out, &flat);
            for (hist, blocks, m) in group {
                assert_eq!((*m, blocks.len()), (n, nblk));
                let p = plan(hist, blocks, n, most_log);
                u32s(&mut out, hist);
                u32s(&mut out, &p.tables.cum);
                u32s(&mut out, &p.tables.scale);
                let pc = piece_count(n, p.chunk_log, p.split) as u32;
                let w = p.words.len() as u32;
                u32s(&mut out, &[p.chunk_log, p.split.chunks, p.split.log, pc, w]);
                u32s(&mut out, &p.words);
            }
        }
        std::fs::write(&path, out).expect("writing the cases");
    }

    /// The synthetic cases reach every kind of plan the GPU's planner must
    /// match: splits, shorter chains, every chunk length, tables of one
    /// symbol and none.
    #[test]
    fn synthetic_plan_cases_cover_the_plans() {
        let cases = synthetic_plan_cases(7, 240);
        let (mut split, mut wide, mut logs) = (0, 0, std::collections::BTreeSet::new());
        let (mut lone, mut empty) = (0, 0);
        for (g, group) in cases.chunks_exact(3).enumerate() {
            let most_log = [16, 14, 12, 15, 13][g % 5];
            for (hist, blocks, n) in group {
                let p = plan(hist, blocks, *n, most_log);
                split += (p.split.chunks > 0) as usize;
                // More pieces than the usual split may add: shorter_chains'.
                let extra = piece_count(*n, p.chunk_log, p.split) - chunks(*n, p.chunk_log);
                wide += (extra > SPLIT_PIECES) as usize;
                logs.insert(p.chunk_log);
                for h in hist.chunks(NSYM) {
                    let present = h.iter().filter(|&&x| x > 0).count();
                    lone += (present == 1) as usize;
                    empty += (present == 0) as usize;
                }
            }
        }
        eprintln!("splits {split} wide {wide} logs {logs:?} lone {lone} empty {empty}");
        assert!(split >= 10 && wide >= 3, "{split} splits, {wide} wide");
        assert!(logs.len() >= 4, "chunk logs {logs:?}");
        assert!(lone >= 100 && empty >= 100, "{lone} lone, {empty} empty");
    }

    /// Every value's entry, whichever of the vector forms runs here, and
    /// the counts, against `context` and `symbol` value by value.
    #[test]
    fn entries_and_counts_equal_the_value_by_value_ones() {
        let mut r = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        // Runs of zeros, small values, wide ones up to u32::MAX, and every
        // level class (past LEVELS too), over a few reset chunks.
        let n = 3 * RESET + 123;
        let v: Vec<u32> = (0..n)
            .map(|i| match (i / 700) % 4 {
                0 => 0,
                1 => (next() % 70) as u32,
                2 => (next() >> (next() % 64)) as u32,
                _ => u32::MAX - (next() % 3) as u32,
            })
            .collect();
        let lv: Vec<u8> = (0..n).map(|i| ((i / 300) % 11) as u8).collect();
        let want_entry = |i: usize| {
            let prev = if i.is_multiple_of(RESET) { 0 } else { v[i - 1] };
            (context(lv[i] as u32, prev) * NSYM + symbol(v[i]).0 as usize) as u16
        };
        let mut entries = Vec::new();
        let hist = histogram_and_entries(&v, &lv, &mut entries);
        let mut want_hist = vec![0u32; NCTX * NSYM];
        for i in 0..n {
            assert_eq!(entries[i], want_entry(i), "value {i}: {}", v[i]);
            want_hist[want_entry(i) as usize] += 1;
        }
        assert_eq!(hist, want_hist);
        // The scalar form too, where the processor would take a vector one.
        let mut scalar = vec![0u16; RESET];
        entries_of_generic(&v[RESET..2 * RESET], &lv[RESET..2 * RESET], &mut scalar);
        assert_eq!(scalar, entries[RESET..2 * RESET]);
        // Counts past a 16-bit table's reach: no run of sixteen is one
        // entry, so every value goes through the four tables.
        let m = 300_000;
        let v: Vec<u32> = (0..m).map(|i| (i % 16 == 15) as u32).collect();
        let h = histogram(&v, &vec![2u8; m]);
        let mut want = vec![0u32; NCTX * NSYM];
        for i in 0..m {
            let prev = if i.is_multiple_of(RESET) { 0 } else { v[i - 1] };
            want[context(2, prev) * NSYM + v[i] as usize] += 1;
        }
        assert!(want[context(2, 0) * NSYM] > 2 * u16::MAX as u32);
        assert_eq!(h, want);
    }

    #[test]
    fn divisor_divides_as_division_does() {
        let mut r = crate::codec::xorshift(7);
        let edges = [1u32, 2, 65535, 65536, 1 << 31, u32::MAX - 1, u32::MAX];
        for d in (1..=1u32 << 15).chain([(1 << 16) - 1, 1 << 16, 12345678, u32::MAX]) {
            let dv = Divisor::new(d);
            for x in edges
                .iter()
                .copied()
                .chain((0..8).map(|_| r() as u32))
                .chain([d - 1, d, d.wrapping_mul(3).wrapping_sub(1)])
                .chain([(u32::MAX / d) * d, (u32::MAX / d) * d - 1])
                .filter(|&x| x > 0 || d > 1)
            {
                assert_eq!(dv.quotient(x), x / d, "{x} / {d}");
            }
        }
    }

    #[test]
    fn floor_div_divides_as_division_does() {
        let mut next = crate::codec::xorshift(0x51ed_270b_a9c3_4f1d);
        let ds = [
            1u64,
            2,
            3,
            7,
            168,
            1 << 15,
            (1 << 22) + 1,
            4_294_967_291,
            (1 << 40) - 3,
        ];
        let random: Vec<u64> = (0..200).map(|_| 1 + next() % (1 << 40)).collect();
        for d in ds.into_iter().chain(random) {
            let fd = FloorDiv::new(d);
            let near = |x: u64| [x.saturating_sub(1), x, x + 1];
            let xs = (0..50)
                .map(|_| next() % (1 << 47))
                .chain(near((1u64 << 47) / d * d))
                .chain(near(d))
                .chain(near(((1u64 << 53) - 1) / d * d))
                .chain([0, u64::MAX, 1 << 53]);
            for x in xs {
                assert_eq!(fd.floor(x), x / d, "{x} / {d}");
            }
        }
    }

    #[test]
    fn bit_writer_writes_what_a_bit_at_a_time_writes() {
        // The reference: each bit on its own, least significant first.
        let mut want: Vec<u32> = Vec::new();
        let mut at = 0usize;
        let mut w = BitWriter::default();
        let mut next = crate::codec::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut put = |w: &mut BitWriter, v: u64, n: u32| {
            for i in 0..n {
                if at.is_multiple_of(32) {
                    want.push(0);
                }
                if i < 64 && (v >> i) & 1 == 1 {
                    let k = want.len() - 1;
                    want[k] |= 1 << (at % 32);
                }
                at += 1;
            }
            w.put(v, n);
        };
        for k in 0..5000u32 {
            // Every length from 0 to 64, at every offset in a word.
            put(&mut w, next(), k % 65);
        }
        let mut g = BitWriter::default();
        for v in [0u32, 1, 2, 3, 1000, 65535, u32::MAX - 1] {
            exp_golomb(&mut g, v);
        }
        let words = g.finish();
        let mut r = BitReader {
            words: &words,
            bit: 0,
        };
        for v in [0u32, 1, 2, 3, 1000, 65535, u32::MAX - 1] {
            assert_eq!(r.exp_golomb(), Ok(v));
        }
        assert_eq!(w.finish(), want);
    }

    /// The reader's word-at-a-time paths (`window`) read what the writer
    /// wrote, codes of every length and fields of every width mixed, at
    /// every offset, up to the stream's last word (read bit by bit), and
    /// a code that runs past the end is an error.
    #[test]
    fn bit_reader_reads_what_the_writer_wrote() {
        let mut next = crate::codec::xorshift(0x2545_f491_4f6c_dd1d);
        let mut w = BitWriter::default();
        let mut want = Vec::new();
        for k in 0..4000u32 {
            let r = next();
            if k % 3 == 0 {
                let n = (r % 33) as u32;
                let v = (r >> 8) as u32 & ((1u64 << n) - 1) as u32;
                w.put(v as u64, n);
                want.push((true, n, v));
            } else {
                // Values of 0 to 32 significant bits (codes of 1 to 65).
                let v = ((r >> 8) as u32) >> (r % 33).min(31) as u32;
                let v = if r.is_multiple_of(97) {
                    u32::MAX - 1
                } else {
                    v
                };
                exp_golomb(&mut w, v);
                want.push((false, 0, v));
            }
        }
        let words = w.finish();
        let mut r = BitReader {
            words: &words,
            bit: 0,
        };
        for (i, &(fixed, n, v)) in want.iter().enumerate() {
            let got = if fixed { r.bits(n) } else { r.exp_golomb() };
            assert_eq!(got, Ok(v), "item {i}");
        }
        let mut r = BitReader {
            words: &[0, 0, 0],
            bit: 0,
        };
        assert!(r.exp_golomb().is_err());
    }

    #[test]
    fn symbols_round_trip_every_bit_length() {
        let mut vals: Vec<u32> = (0..300).collect();
        for b in 7..=32u32 {
            let top = 1u64 << (b - 1);
            vals.extend([top, top + 12345 % top, (1u64 << b) - 1].map(|v| v as u32));
        }
        for v in vals {
            let (s, nraw, raw) = symbol(v);
            assert!((s as usize) < NSYM, "{v}");
            assert_eq!(raw_bits(s), nraw, "{v}");
            assert_eq!(value(s, raw), v, "{v}");
        }
    }

    /// Round trips at every chunk cap; the stream's length at the default.
    fn check(v: &[u32], lv: &[u8]) -> usize {
        let mut len = 0;
        for most in CHUNK_MIN_LOG..=CHUNK_MAX_LOG {
            let w = encode(v, lv, most);
            let (d, used) = decode(&w, v.len(), lv).unwrap();
            assert_eq!(used, w.len());
            assert_eq!(d, v);
            let h = read_header(&w, v.len()).unwrap();
            assert!(h.chunk_log <= most);
            len = w.len();
        }
        len
    }

    #[test]
    fn streams_round_trip() {
        let mut next = crate::codec::xorshift(12345);
        for n in [1, 2, 100, 4096, 4097, 70_000] {
            for scale in [0u32, 1, 3, 10, 30] {
                let v: Vec<u32> = (0..n)
                    .map(|_| {
                        let x = next();
                        if scale == 0 {
                            0
                        } else {
                            ((x % (1u64 << scale)) >> (x >> 60)) as u32
                        }
                    })
                    .collect();
                let lv: Vec<u8> = (0..n).map(|_| (next() % 9) as u8).collect();
                check(&v, &lv);
            }
        }
        // The largest zigzag code a clamped coefficient can have.
        check(&[u32::MAX >> 1, 0, 1 << 31, 5], &[0, 1, 2, 3]);
    }

    /// A stream of under 2 bits a value (the decoder's sparse path: a
    /// branch past a direct symbol's raw pieces) that still holds every
    /// kind of value: mostly zeros, contexts' other direct symbols, and
    /// values with one raw piece and with two.
    #[test]
    fn sparse_streams_round_trip_with_rare_symbols_of_every_kind() {
        let mut next = crate::codec::xorshift(777);
        for n in [5000, 70_000, 300_000] {
            let v: Vec<u32> = (0..n)
                .map(|_| match next() % 1000 {
                    0 => 1 + (next() % 60) as u32,
                    1 => 64 + (next() % 10_000) as u32,
                    2 => (1 << 20) + (next() % (1 << 20)) as u32,
                    _ => 0,
                })
                .collect();
            let lv: Vec<u8> = (0..n).map(|i| (i * 7 / n) as u8).collect();
            for most in CHUNK_MIN_LOG..=CHUNK_MAX_LOG {
                let w = encode(&v, &lv, most);
                let h = read_header(&w, n).unwrap();
                assert!((h.used - h.data_word) * 32 < 2 * n, "not sparse");
            }
            check(&v, &lv);
        }
    }

    /// A sparse stream whose classes 0-3 hold only zeros (their contexts
    /// after a 0 hold 0 alone: runs the decoder writes at once) between
    /// classes with rare values of every kind, so that runs start and end
    /// everywhere, across chunk and context resets.
    #[test]
    fn sparse_zero_runs_round_trip() {
        let mut next = crate::codec::xorshift(99);
        for n in [3000, 70_000, 300_000] {
            let lv: Vec<u8> = (0..n).map(|i| ((i / 5 + i / 97) % 9) as u8).collect();
            let v: Vec<u32> = lv
                .iter()
                .map(|&c| match (c, next() % 50) {
                    (0..=3, _) => 0,
                    (_, 0) => 1 + (next() % 60) as u32,
                    (_, 1) => 64 + (next() % 100_000) as u32,
                    _ => 0,
                })
                .collect();
            let w = encode(&v, &lv, CHUNK_MAX_LOG);
            let h = read_header(&w, n).unwrap();
            assert_eq!(zero_classes(&h.tables) & 0b1111, 0b1111, "n {n}");
            assert!((h.used - h.data_word) * 32 < 2 * n, "not sparse");
            check(&v, &lv);
        }
    }

    #[test]
    fn tables_sum_to_their_totals_and_read_back() {
        // Small and large totals, flat and skewed counts.
        let mut cases: Vec<Vec<u32>> = (1..40).map(|k| vec![1; k]).collect();
        cases.push(vec![5, 1, 1, 1, 1, 1, 1, 1]);
        cases.push(vec![1_000_000, 1, 1, 3, 0, 7]);
        cases.push((0..NSYM as u32).map(|s| 1 + s * s * 40).collect());
        for counts in cases {
            let mut h = vec![0u32; NCTX * NSYM];
            for c in [0, 5, NCTX - 1] {
                h[c * NSYM..c * NSYM + counts.len()].copy_from_slice(&counts);
            }
            let p = plan(&h, &[], 1000, CHUNK_MAX_LOG);
            for c in 0..NCTX {
                let cum = &p.tables.cum[c * (NSYM + 1)..(c + 1) * (NSYM + 1)];
                let used = h[c * NSYM..(c + 1) * NSYM].iter().any(|&x| x > 0);
                assert_eq!(cum[NSYM], if used { 1 << p.tables.scale[c] } else { 0 });
                for s in 0..NSYM {
                    assert_eq!(p.tables.freq[c * NSYM + s] > 0, h[c * NSYM + s] > 0);
                }
            }
            assert_eq!(read_tables(&p.words).unwrap(), p.tables, "{counts:?}");
        }
    }

    #[test]
    fn zero_classes_are_those_of_a_lone_zero_after_a_zero() {
        // Class 0 after a 0: only 0s. Class 1 after a 0: 0s and a 1.
        // Class 2 after a 0: only 3s. Class 5: only 0s, but after a 1 (not
        // a 0), so its context after a 0 is unused. Class 7 (also 9 and
        // up, clamped) after a 0: only 0s.
        let mut v = vec![0, 0, 0, 0, 1, 0, 3, 3, 1, 0, 0];
        let mut lv = vec![0, 0, 1, 1, 1, 1, 2, 2, 0, 5, 7];
        v.extend([0, 0]);
        lv.extend([9, 12]);
        let p = plan(
            &histogram(&v, &lv),
            &class_blocks(&lv),
            v.len(),
            CHUNK_MAX_LOG,
        );
        assert_eq!(zero_classes(&p.tables), 0b1000_0001);
        // A lone 0 of class 1 after a 0 makes it one.
        let p = plan(
            &histogram(&[0, 0], &[0, 1]),
            &class_blocks(&[0, 1]),
            2,
            CHUNK_MAX_LOG,
        );
        assert_eq!(zero_classes(&p.tables), 0b11);
    }

    #[test]
    fn a_constant_stream_costs_its_header_only() {
        let n = 100_000;
        let w = check(&vec![0; n], &vec![0; n]);
        // Header, a few table words, 7 chunk lengths and 2 state words each.
        assert!(w < 20, "{w} words");
    }

    #[test]
    fn coded_size_is_near_the_entropy() {
        // A two-sided geometric source: 0 with p 0.5, then halving.
        let mut next = crate::codec::xorshift(99);
        let n = 1 << 18;
        let v: Vec<u32> = (0..n)
            .map(|_| (next() | 1 << 40).trailing_zeros())
            .collect();
        let lv = vec![0; n];
        let words = check(&v, &lv);
        // Entropy 2 bits per value (geometric with p 1/2).
        let bits = 32.0 * words as f64 / n as f64;
        assert!((bits - 2.0).abs() < 0.02, "{bits} bits per value");
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let v: Vec<u32> = (0..20_000u32).map(|i| (i * 7919) % 37).collect();
        let lv = vec![1; v.len()];
        let w = encode(&v, &lv, CHUNK_MAX_LOG);
        let mut errors = 0;
        for i in 0..w.len() {
            for bit in [0, 5, 17, 31] {
                let mut d = w.clone();
                d[i] ^= 1 << bit;
                match decode(&d, v.len(), &lv) {
                    Ok((got, _)) => assert!(got.len() == v.len()),
                    Err(_) => errors += 1,
                }
            }
        }
        assert!(errors > 0);
        for cut in [0, 1, 2, w.len() / 2, w.len() - 1] {
            assert!(decode(&w[..cut], v.len(), &lv).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn pieces_cover_the_brick_in_order() {
        for n in [1usize, 4096, 70_000, 200_000, 1 << 18] {
            for chunk_log in CHUNK_MIN_LOG..=CHUNK_MAX_LOG {
                let nc = chunks(n, chunk_log);
                for log in 0..=chunk_log - PIECE_MIN_LOG {
                    for m in [0, 1, nc] {
                        if (m == 0) != (log == 0) {
                            continue;
                        }
                        let split = Split {
                            chunks: m as u32,
                            log,
                        };
                        let p: Vec<_> = pieces(n, chunk_log, split).collect();
                        assert_eq!(p.len(), piece_count(n, chunk_log, split));
                        let mut at = 0;
                        for &(a, len) in &p {
                            assert_eq!(a, at, "{n} {chunk_log} {split:?}");
                            assert!(len > 0 && a % RESET == 0);
                            assert!(len <= 1 << chunk_log);
                            at += len;
                        }
                        assert_eq!(at, n);
                    }
                }
            }
        }
    }

    /// A brick whose first values are coded and the rest a lone zero:
    /// like a smooth field's brick, its coarse levels first.
    fn dense_start(n: usize, dense: usize) -> (Vec<u32>, Vec<u8>) {
        let mut next = crate::codec::xorshift(777);
        let v = (0..n)
            .map(|i| (i < dense && next().is_multiple_of(10)) as u32)
            .collect();
        let lv = (0..n).map(|i| if i < dense { 3 } else { 0 }).collect();
        (v, lv)
    }

    #[test]
    fn a_brick_dense_at_its_start_is_split_and_round_trips() {
        let n = 1 << 18;
        let (v, lv) = dense_start(n, 32768);
        let p = plan(&histogram(&v, &lv), &class_blocks(&lv), n, CHUNK_MAX_LOG);
        assert_eq!(p.chunk_log, 16);
        // 32768 coded steps in chunk 0: eight pieces of 8192 values.
        assert_eq!(p.split, Split { chunks: 1, log: 3 });
        let w = encode(&v, &lv, CHUNK_MAX_LOG);
        let h = read_header(&w, n).unwrap();
        assert_eq!(h.split, p.split);
        assert_eq!(h.offsets.len(), 4 + 7 + 1);
        assert_eq!(header_len(w[0], w[1], n), h.data_word);
        let (d, used) = decode(&w, n, &lv).unwrap();
        assert_eq!((d, used), (v, w.len()));
        // Dense everywhere, in more chunks than a split may add pieces:
        // splitting the first would not shorten the longest chain.
        let n = 1 << 20;
        let mut next = crate::codec::xorshift(3);
        let v: Vec<u32> = (0..n).map(|_| next().is_multiple_of(10) as u32).collect();
        let lv = vec![3u8; n];
        let p = plan(&histogram(&v, &lv), &class_blocks(&lv), n, CHUNK_MAX_LOG);
        assert_eq!(p.split, Split::default());
    }

    /// Dense coarse levels over four chunks (two edge bricks of the
    /// smooth 1024^3 field): the usual seven pieces leave chains of 2^15,
    /// a wide split brings them to 2^13.
    #[test]
    fn a_long_dense_head_takes_a_wide_split_and_round_trips() {
        let n = 1 << 20;
        let (v, lv) = dense_start(n, 1 << 18);
        let (hist, blocks) = (histogram(&v, &lv), class_blocks(&lv));
        let steps = block_steps(&hist, &blocks);
        let usual = plan_split(&steps, n, 16, (plan_knobs(16).dense, SPLIT_PIECES));
        assert_eq!(usual, Split { chunks: 4, log: 1 });
        assert_eq!(longest_chain(&steps, n, 16, usual), 32768.0);
        let p = plan(&hist, &blocks, n, CHUNK_MAX_LOG);
        assert_eq!((p.chunk_log, p.split), (16, Split { chunks: 4, log: 3 }));
        assert_eq!(longest_chain(&steps, n, 16, p.split), 8192.0);
        let w = encode(&v, &lv, CHUNK_MAX_LOG);
        let h = read_header(&w, n).unwrap();
        assert_eq!((h.split, h.offsets.len()), (p.split, 16 + 32 - 4 + 1));
        let (d, used) = decode(&w, n, &lv).unwrap();
        assert_eq!((d, used), (v, w.len()));
        // Coded throughout (an edge brick of a smaller field): no split
        // of the first chunks shortens its chains, so none is made.
        let mut next = crate::codec::xorshift(5);
        let v: Vec<u32> = (0..n).map(|_| next().is_multiple_of(100) as u32).collect();
        let lv = vec![0u8; n];
        let p = plan(&histogram(&v, &lv), &class_blocks(&lv), n, CHUNK_MAX_LOG);
        assert_eq!((p.chunk_log, p.split), (16, Split::default()));
    }

    /// Bricks with dense runs of every length and place, at every chunk
    /// length: what `shorter_chains` picks never lengthens the usual
    /// layout's longest chain, reaches `LONG_CHAIN` where it differs, adds
    /// at most `WIDE_SPLIT_PIECES` pieces; the plan's layout round trips.
    #[test]
    fn shorter_chains_never_cost_more_than_they_may() {
        let mut next = crate::codec::xorshift(2024);
        let (mut wide, mut shorter) = (0, 0);
        for case in 0..24 {
            let n = RESET * (1 + (next() % 300) as usize) - (next() % 100) as usize;
            let (a, len) = ((next() as usize) % n, (next() as usize) % n);
            let every = 2 + next() % 40;
            let v: Vec<u32> = (0..n)
                .map(|i| (i >= a && i < a + len && next().is_multiple_of(every)) as u32)
                .collect();
            let lv: Vec<u8> = (0..n).map(|i| (i * 8 / n) as u8).collect();
            let (hist, blocks) = (histogram(&v, &lv), class_blocks(&lv));
            let steps = block_steps(&hist, &blocks);
            let what = format!("case {case}: n {n}, dense {a}+{len} 1/{every}");
            for log in CHUNK_MIN_LOG..=CHUNK_MAX_LOG {
                let k = PlanKnobs {
                    floor: CHUNK_MIN_LOG,
                    ..plan_knobs(log)
                };
                let usual = (log, plan_split(&steps, n, log, (k.dense, k.most_pieces)));
                let (l, sp) = shorter_chains(&steps, n, usual, &k);
                let chain = longest_chain(&steps, n, l, sp);
                assert!(l <= log, "{what}, 2^{log}");
                wide += (l == log && sp != usual.1) as usize;
                shorter += (l < log) as usize;
                assert!(
                    chain <= longest_chain(&steps, n, log, usual.1),
                    "{what}, 2^{log}"
                );
                assert!((l, sp) == usual || chain <= k.long_chain, "{what}, 2^{log}");
                assert!(
                    piece_count(n, l, sp) <= piece_count(n, log, usual.1) + WIDE_SPLIT_PIECES,
                    "{what}, 2^{log}"
                );
            }
            let p = plan(&hist, &blocks, n, CHUNK_MAX_LOG);
            let w = encode(&v, &lv, CHUNK_MAX_LOG);
            let h = read_header(&w, n).unwrap();
            assert_eq!((h.chunk_log, h.split), (p.chunk_log, p.split), "{what}");
            let (d, used) = decode(&w, n, &lv).unwrap();
            assert_eq!((d, used), (v, w.len()), "{what}");
        }
        // Both ways were taken.
        assert!(wide > 0 && shorter > 0, "wide {wide}, shorter {shorter}");
    }

    #[test]
    fn a_wrong_split_is_an_error_naming_it() {
        let n = 1 << 18;
        let (v, lv) = dense_start(n, 32768);
        let w = encode(&v, &lv, CHUNK_MAX_LOG);
        let low = w[0] & 0xffff;
        // Pieces under 2^11 values (2^12 without the restart's flag), more
        // split chunks than chunks, a split count without a split.
        let finest = (w[0] & 0x7f) - RESET_LOG;
        for h0 in [
            low | 1 << 16 | (finest + 1) << 24,
            (low & !H0_RESET) | 1 << 16 | finest << 24,
            low | 5 << 16 | 1 << 24,
            low | 1 << 24,
        ] {
            let mut bad = w.clone();
            bad[0] = h0;
            let e = read_header(&bad, n).unwrap_err();
            assert!(e.contains("split"), "{e}");
            assert_eq!(header_len(bad[0], bad[1], n), 2);
            assert!(decode(&bad, n, &lv).is_err());
        }
    }

    /// `count` copies of stream `w` with one to three bits flipped in its
    /// words past the header (from `data_word`), each handed to `f`.
    fn each_damaged(
        w: &[u32],
        data_word: usize,
        next: &mut impl FnMut() -> u64,
        count: usize,
        mut f: impl FnMut(&[u32]),
    ) {
        for k in 0..count {
            let mut d = w.to_vec();
            for _ in 0..1 + k % 3 {
                let at = data_word + (next() as usize) % (w.len() - data_word);
                d[at] ^= 1 << (next() % 32);
            }
            f(&d);
        }
    }

    /// Sparse streams decode to the same values, and fail with the same
    /// errors, with and without the runs of likely zeros
    /// (`zeros_of_one_class`): zeros of a likely but not lone 0 in long
    /// runs of one class, rare other values with and without raw bits,
    /// and damaged copies (one to three bits flipped in their words).
    #[test]
    fn runs_of_likely_zeros_decode_as_single_steps() {
        let mut next = crate::codec::xorshift(777);
        let n = 150_000;
        let both = |w: &[u32], lv: &[u8]| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let ra = decode_into_by(w, n, lv, &mut a, false);
            FIRST_RUNS_OFF.with(|c| c.set(true));
            let rb = decode_into_by(w, n, lv, &mut b, false);
            FIRST_RUNS_OFF.with(|c| c.set(false));
            assert_eq!(ra, rb, "runs and single steps end differently");
            if ra.is_ok() {
                assert!(a == b, "runs and single steps give other values");
            }
            ra.is_ok()
        };
        for kind in 0..4 {
            let v: Vec<u32> = (0..n)
                .map(|_| {
                    let x = next();
                    match (kind, x % 1000) {
                        (0, 0..=2) => 1 + (x >> 20) as u32 % 5,
                        (1, 0..=20) => (x >> 20) as u32 % 40,
                        (2, 0) => 64 + (x >> 20) as u32 % 100_000,
                        (3, 0..=1) => 2,
                        _ => 0,
                    }
                })
                .collect();
            // Runs of one class, of many lengths, and classes past the
            // last level.
            let lv: Vec<u8> = (0..n).map(|i| ((i / 700 + i / 9000) % 11) as u8).collect();
            let w = encode(&v, &lv, CHUNK_MAX_LOG);
            let h = read_header(&w, n).unwrap();
            // Under half a bit a value: the runs are tried.
            assert!(
                (h.used - h.data_word) * 64 < n,
                "kind {kind}: not sparse enough for the runs"
            );
            let mut got = Vec::new();
            decode_into_by(&w, n, &lv, &mut got, false).unwrap();
            assert!(got == v, "kind {kind}: not the values coded");
            assert!(both(&w, &lv));
            each_damaged(&w, h.data_word, &mut next, 60, |d| {
                both(d, &lv);
            });
        }
    }

    /// The wide decoder (sixteen chunks in AVX-512 lanes) gives the
    /// scalar decoder's values, and refuses what it refuses, on dense
    /// streams of every kind of value (lone-symbol contexts, one raw
    /// piece, two) and on damaged copies of them (one to three bits
    /// flipped in their words).
    #[test]
    fn wide_and_scalar_decoders_agree() {
        use std::sync::atomic::Ordering;
        let mut next = crate::codec::xorshift(4242);
        let n = 200_000;
        let before = WIDE_GROUPS.load(Ordering::Relaxed);
        let fixed_before = rans_wide::FIXED_GROUPS.load(Ordering::Relaxed);
        let both = |w: &[u32], lv: &[u8]| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let ra = decode_into_by(w, n, lv, &mut a, true);
            let rb = decode_into_by(w, n, lv, &mut b, false);
            match (&ra, &rb) {
                (Ok(ua), Ok(ub)) => {
                    assert_eq!(ua, ub);
                    assert!(a == b, "wide and scalar values differ");
                }
                (Err(_), Err(_)) => {}
                _ => panic!("wide {ra:?} against scalar {rb:?}"),
            }
            ra.is_ok()
        };
        // Classes that change every value, and classes in runs of 2^16
        // (most groups' lanes then keep one class: `rans_wide`'s steps
        // without the classes' gather).
        for (kind, runs) in (0..4).flat_map(|k| [(k, false), (k, true)]) {
            let v: Vec<u32> = (0..n)
                .map(|i| {
                    let x = next();
                    match kind {
                        // Level class 0 all zeros: contexts of a lone symbol.
                        0 if i % 8 == 0 => 0,
                        0 | 1 => (x % 5000) as u32,
                        // Two raw pieces now and then.
                        2 => ((x % (1 << 22)) >> (x >> 61)) as u32,
                        _ => ((x % 300) as u32) * (1 + (i % 3) as u32),
                    }
                })
                .collect();
            let lv: Vec<u8> = (0..n)
                .map(|i| if runs { (i >> 16) % 8 } else { i % 8 } as u8)
                .collect();
            let w = encode(&v, &lv, CHUNK_MIN_LOG);
            let mut got = Vec::new();
            decode_into_by(&w, n, &lv, &mut got, true).unwrap();
            assert!(got == v, "kind {kind}: not the values coded");
            assert!(both(&w, &lv));
            let h = read_header(&w, n).unwrap();
            each_damaged(&w, h.data_word, &mut next, 60, |d| {
                both(d, &lv);
            });
        }
        if rans_wide::available() {
            assert!(
                WIDE_GROUPS.load(Ordering::Relaxed) > before,
                "the wide decoder never ran"
            );
            assert!(
                rans_wide::FIXED_GROUPS.load(Ordering::Relaxed) > fixed_before,
                "the wide decoder never kept a group's classes"
            );
        } else {
            eprintln!("no AVX-512 here: only the scalar decoder ran");
        }
    }

    #[test]
    fn random_streams_are_errors_or_values_never_panics() {
        // Headers that pass the first checks, then random tables, lengths
        // and data: the decoder must answer, whatever it reads.
        let mut next = crate::codec::xorshift(7);
        let n = 40_000;
        let lv: Vec<u8> = (0..n).map(|i| (i % 8) as u8).collect();
        let mut decoded = 0;
        for _ in 0..3000 {
            let len = 3 + (next() % 200) as usize;
            let mut w: Vec<u32> = (0..len).map(|_| next() as u32).collect();
            w[0] = (14 + (next() % 3) as u32) | ((1 + next() % 20) as u32) << 8;
            w[1] = (next() % 40) as u32;
            if let Ok((v, used)) = decode(&w, n, &lv) {
                assert_eq!(v.len(), n);
                assert!(used <= w.len());
                decoded += 1;
            }
        }
        // Valid tables of an encoded stream with random data after them.
        let v: Vec<u32> = (0..n as u32).map(|i| (i * 31) % 7).collect();
        let good = encode(&v, &lv, CHUNK_MAX_LOG);
        let h = read_header(&good, n).unwrap();
        for _ in 0..300 {
            let mut w = good.clone();
            for x in &mut w[h.data_word..] {
                *x = next() as u32;
            }
            let _ = decode(&w, n, &lv);
        }
        assert!(decoded < 3000);
    }
}
