//! Block-adaptive Rice coding behind a hierarchical significance map: the
//! coefficient coder that the CPU and the GPU write byte for byte alike.
//! Every section's size follows from a prefix sum over blocks, so a device
//! writes (and reads) all blocks at once; zstd, whose output depends on a
//! sequential match search, could not be reproduced there.
//!
//! Values (zigzag-coded quantized coefficients in Morton order) go in
//! blocks of 32. A block that is all zero costs nothing beyond its bit in
//! the significance map. A block with a few nonzero values (SPARSE_MAX or
//! fewer, where that is shorter) lists their positions; any other block
//! gets the Rice parameter k that minimizes its length (the first on
//! ties). Layout, in little-endian u32 words, bits filled from the least
//! significant:
//!
//! ```text
//! counts   nonzero blocks | map words | k words | count words | low words | unary words
//! map      level 0 has a bit per block (set: nonzero), level j+1 a bit per
//!          word of level j; the top level (one word) is stored, then each
//!          level below it, top down, as its nonzero words only
//! k        5 bits per nonzero block; 31 (never the best k) marks a sparse block
//! count    per sparse block, 5 bits: its nonzero values less one
//! low      Rice block: the k low bits of each value; sparse: 5-bit positions
//! unary    Rice block: per value, (v >> k) zeros then a one;
//!          sparse: per nonzero value, v - 1 zeros then a one
//! ```

pub const BLOCK: usize = 32;
/// Quantized coefficients are clamped to +-2^30 so that zigzag codes fit
/// u32 (a value the clamp spoils becomes an outlier).
pub const MAX_INT: f64 = (1u64 << 30) as f64;
const HEADER_WORDS: usize = StreamHeader::WORDS;
/// The k code of a sparse block.
pub const SPARSE: u32 = 31;
/// Sparse blocks hold at most this many nonzero values.
pub const SPARSE_MAX: usize = 8;

pub fn zigzag(i: i32) -> u32 {
    ((i << 1) ^ (i >> 31)) as u32
}
pub fn unzigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// The Rice parameter of a block: its length 32 k + sum(v >> k) is convex
/// in k, so walking up while it falls finds the first minimum.
pub fn best_k(v: &[u32]) -> u32 {
    let sum = |k: u32| v.iter().map(|&x| (x >> k) as u64).sum::<u64>();
    let (mut k, mut s) = (0u32, sum(0));
    while k < 31 {
        let s1 = sum(k + 1);
        if BLOCK as u64 + s1 < s {
            k += 1;
            s = s1;
        } else {
            break;
        }
    }
    k
}

/// The counts that open a coded stream: nonzero blocks, and the words of
/// the map, k, count, low and unary sections (what the GPU decoder needs
/// to find every section without reading the stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamHeader {
    pub nnz: usize,
    pub words: [usize; 5],
}

impl StreamHeader {
    pub const WORDS: usize = 6;

    /// Reads and checks the header of a stream of `n` values at the front
    /// of `words`: its sections lie within `words` and its parameter
    /// section fits its nonzero blocks.
    pub fn read(words: &[u32], n: usize) -> Result<Self, String> {
        Self::read_of(words, words.len(), n)
    }

    /// `read` from the stream's first `WORDS` words (or more), the stream
    /// being `total` words long.
    pub fn read_of(words: &[u32], total: usize, n: usize) -> Result<Self, String> {
        let blocks = n.div_ceil(BLOCK);
        let head = words
            .get(..Self::WORDS)
            .ok_or("the coefficient stream is shorter than its header")?;
        let h = StreamHeader {
            nnz: head[0] as usize,
            words: [1, 2, 3, 4, 5].map(|i| head[i] as usize),
        };
        h.total()
            .filter(|&t| t <= total)
            .ok_or("the coefficient sections run past the brick")?;
        if h.nnz > blocks || h.words[1] != (5 * h.nnz).div_ceil(32) {
            return Err(format!(
                "{} nonzero blocks and {} words of parameters do not fit {blocks} blocks",
                h.nnz, h.words[1]
            ));
        }
        Ok(h)
    }

    /// Words of the whole stream, header included (None on overflow).
    pub fn total(&self) -> Option<usize> {
        self.words
            .iter()
            .try_fold(Self::WORDS, |a, &b| a.checked_add(b))
    }

    /// Where each section starts, in words from the stream's start.
    pub fn offsets(&self) -> [usize; 5] {
        let mut at = Self::WORDS;
        self.words.map(|w| {
            let o = at;
            at += w;
            o
        })
    }

    pub fn to_words(&self) -> [u32; 6] {
        let w = self.words;
        [self.nnz, w[0], w[1], w[2], w[3], w[4]].map(|v| v as u32)
    }
}

/// How a nonzero block is coded: its k (SPARSE for a position list).
pub fn block_mode(v: &[u32]) -> u32 {
    let k = best_k(v);
    let rice = BLOCK as u64 * (k as u64 + 1) + v.iter().map(|&x| (x >> k) as u64).sum::<u64>();
    let nz = v.iter().filter(|&&x| x != 0).count();
    let sparse = 5 + 6 * nz as u64 + v.iter().map(|&x| x as u64).sum::<u64>() - nz as u64;
    if nz <= SPARSE_MAX && sparse < rice {
        SPARSE
    } else {
        k
    }
}

struct BitWriter {
    words: Vec<u32>,
    bit: usize,
}

impl BitWriter {
    fn new() -> Self {
        BitWriter {
            words: Vec::new(),
            bit: 0,
        }
    }
    fn put(&mut self, v: u32, n: u32) {
        if n == 0 {
            return;
        }
        let v = if n == 32 { v } else { v & ((1u32 << n) - 1) };
        let (w, o) = (self.bit / 32, (self.bit % 32) as u32);
        self.words.resize((self.bit + n as usize).div_ceil(32), 0);
        self.words[w] |= v << o;
        if o + n > 32 {
            self.words[w + 1] |= v >> (32 - o);
        }
        self.bit += n as usize;
    }
    fn zeros_then_one(&mut self, z: u32) {
        self.bit += z as usize;
        self.put(1, 1);
    }
}

struct BitReader<'a> {
    words: &'a [u32],
    bit: usize,
}

impl BitReader<'_> {
    fn get(&mut self, n: u32) -> Option<u32> {
        if n == 0 {
            return Some(0);
        }
        let (w, o) = (self.bit / 32, (self.bit % 32) as u32);
        let lo = (*self.words.get(w)? as u64) >> o;
        let hi = if o + n > 32 {
            (*self.words.get(w + 1)? as u64) << (32 - o)
        } else {
            0
        };
        self.bit += n as usize;
        Some(((lo | hi) & ((1u64 << n) - 1)) as u32)
    }
    /// Counts zeros up to the next one and steps past it.
    fn unary(&mut self) -> Option<u32> {
        let mut z = 0u32;
        loop {
            let (w, o) = (self.bit / 32, (self.bit % 32) as u32);
            let rest = *self.words.get(w)? >> o;
            if rest != 0 {
                let t = rest.trailing_zeros();
                self.bit += t as usize + 1;
                return z.checked_add(t);
            }
            z = z.checked_add(32 - o)?;
            self.bit += (32 - o) as usize;
        }
    }
}

/// Word counts of the significance map's levels, bottom (blocks) up to the
/// one-word top.
pub fn map_levels(blocks: usize) -> Vec<usize> {
    let mut bits = vec![blocks.max(1)];
    while *bits.last().unwrap_or(&1) > 32 {
        let b = bits.last().copied().unwrap_or(1).div_ceil(32);
        bits.push(b);
    }
    bits.iter().map(|b| b.div_ceil(32)).collect()
}

/// The coded words of `v` (any length; the last block is padded with zeros).
pub fn encode(v: &[u32]) -> Vec<u32> {
    let blocks = v.len().div_ceil(BLOCK);
    let block = |b: usize| {
        let mut x = [0u32; BLOCK];
        let s = &v[b * BLOCK..((b + 1) * BLOCK).min(v.len())];
        x[..s.len()].copy_from_slice(s);
        x
    };
    // Significance map, levels bottom up.
    let lv = map_levels(blocks);
    let mut levels: Vec<Vec<u32>> = lv.iter().map(|&w| vec![0u32; w]).collect();
    for b in 0..blocks {
        if block(b).iter().any(|&x| x != 0) {
            levels[0][b / 32] |= 1 << (b % 32);
        }
    }
    for j in 1..levels.len() {
        for w in 0..levels[j - 1].len() {
            if levels[j - 1][w] != 0 {
                levels[j][w / 32] |= 1 << (w % 32);
            }
        }
    }
    let mut map: Vec<u32> = levels.last().cloned().unwrap_or_default();
    for l in levels[..levels.len() - 1].iter().rev() {
        map.extend(l.iter().copied().filter(|&w| w != 0));
    }
    let (mut ks, mut counts, mut low, mut unary) = (
        BitWriter::new(),
        BitWriter::new(),
        BitWriter::new(),
        BitWriter::new(),
    );
    let mut nnz = 0u32;
    for b in 0..blocks {
        if levels[0][b / 32] & (1 << (b % 32)) == 0 {
            continue;
        }
        nnz += 1;
        let x = block(b);
        let k = block_mode(&x);
        ks.put(k, 5);
        if k == SPARSE {
            let nz = x.iter().filter(|&&a| a != 0).count() as u32;
            counts.put(nz - 1, 5);
            for (p, &a) in x.iter().enumerate() {
                if a != 0 {
                    low.put(p as u32, 5);
                    unary.zeros_then_one(a - 1);
                }
            }
            continue;
        }
        for &a in &x {
            low.put(a, k);
        }
        for &a in &x {
            unary.zeros_then_one(a >> k);
        }
    }
    let mut out = Vec::with_capacity(
        HEADER_WORDS
            + map.len()
            + ks.words.len()
            + counts.words.len()
            + low.words.len()
            + unary.words.len(),
    );
    let head = StreamHeader {
        nnz: nnz as usize,
        words: [
            map.len(),
            ks.words.len(),
            counts.words.len(),
            low.words.len(),
            unary.words.len(),
        ],
    };
    out.extend_from_slice(&head.to_words());
    out.extend_from_slice(&map);
    out.extend_from_slice(&ks.words);
    out.extend_from_slice(&counts.words);
    out.extend_from_slice(&low.words);
    out.extend_from_slice(&unary.words);
    out
}

/// Decodes `n` values from the front of `words`; returns them and the
/// words used. Errors say what is inconsistent.
pub fn decode(words: &[u32], n: usize) -> Result<(Vec<u32>, usize), String> {
    let blocks = n.div_ceil(BLOCK);
    let h = StreamHeader::read(words, n)?;
    let total = h.total().unwrap_or(words.len());
    let (nnz, [map_w, k_w, c_w, low_w, un_w]) = (h.nnz, h.words);
    let mut pos = HEADER_WORDS;
    let map = &words[pos..pos + map_w];
    pos += map_w;
    let ks = &words[pos..pos + k_w];
    pos += k_w;
    let cnt = &words[pos..pos + c_w];
    pos += c_w;
    let low = &words[pos..pos + low_w];
    pos += low_w;
    let unary = &words[pos..pos + un_w];
    // Significance map, top down.
    let lv = map_levels(blocks);
    let mut cur: Vec<u32> = map.first().copied().into_iter().collect();
    let mut used = cur.len();
    if cur.is_empty() {
        return Err("the significance map is empty".into());
    }
    for j in (0..lv.len() - 1).rev() {
        let mut next = vec![0u32; lv[j]];
        for (pw, &parent) in cur.iter().enumerate() {
            let mut bits = parent;
            while bits != 0 {
                let w = pw * 32 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let slot = next
                    .get_mut(w)
                    .ok_or("the significance map points past the brick")?;
                *slot = *map.get(used).ok_or("the significance map ends early")?;
                if *slot == 0 {
                    return Err("the significance map stores a zero word".into());
                }
                used += 1;
            }
        }
        cur = next;
    }
    if used != map_w {
        return Err(format!(
            "the significance map has {map_w} words, {used} are used"
        ));
    }
    let ones: usize = cur.iter().map(|w| w.count_ones() as usize).sum();
    if ones != nnz || cur.len() * 32 < blocks {
        return Err(format!(
            "the significance map marks {ones} blocks, the header {nnz}"
        ));
    }
    let mut out = vec![0u32; blocks * BLOCK];
    let (mut kr, mut cr, mut lr, mut ur) = (
        BitReader { words: ks, bit: 0 },
        BitReader { words: cnt, bit: 0 },
        BitReader { words: low, bit: 0 },
        BitReader {
            words: unary,
            bit: 0,
        },
    );
    for b in 0..blocks {
        if cur[b / 32] & (1 << (b % 32)) == 0 {
            continue;
        }
        let k = kr.get(5).ok_or("the Rice parameters end early")?;
        let x = &mut out[b * BLOCK..(b + 1) * BLOCK];
        if k == SPARSE {
            let nz = cr.get(5).ok_or("the sparse counts end early")? + 1;
            for _ in 0..nz {
                let p = lr.get(5).ok_or("the positions end early")? as usize;
                let v = ur.unary().ok_or("the unary codes end early")?;
                x[p] = v.checked_add(1).ok_or("a unary code overflows")?;
            }
            continue;
        }
        for a in x.iter_mut() {
            *a = lr.get(k).ok_or("the low bits end early")?;
        }
        for a in x.iter_mut() {
            let hi = ur.unary().ok_or("the unary codes end early")?;
            if hi > (u32::MAX >> k) {
                return Err("a unary code overflows".into());
            }
            *a |= hi << k;
        }
    }
    if cur.iter().enumerate().any(|(w, &m)| {
        let valid = blocks.saturating_sub(w * 32).min(32);
        valid < 32 && m >> valid != 0
    }) {
        return Err("the significance map marks blocks past the brick".into());
    }
    out.truncate(n);
    Ok((out, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_sparse_dense_and_awkward_lengths() {
        let mut next = crate::codec::xorshift(12345);
        for n in [1, 31, 32, 33, 1000, 1024, 1025, 40_000, 70_000] {
            for density in [0u64, 1, 10, 100] {
                let v: Vec<u32> = (0..n)
                    .map(|_| {
                        let r = next();
                        if r % 100 < density {
                            // Mostly small, now and then huge.
                            if r % 1000 == 7 {
                                (r >> 33) as u32
                            } else {
                                ((r >> 40) % 37) as u32
                            }
                        } else {
                            0
                        }
                    })
                    .collect();
                let w = encode(&v);
                let (back, used) = decode(&w, n).unwrap();
                assert_eq!(back, v, "n {n} density {density}");
                assert_eq!(used, w.len());
            }
        }
    }

    #[test]
    fn zero_blocks_cost_only_the_map() {
        let v = vec![0u32; 1 << 21];
        // One top word; no stored lower levels.
        assert_eq!(encode(&v).len(), HEADER_WORDS + 1);
        let mut v = v;
        v[1_000_000] = 3;
        // Top word, one word per lower level, a k word, a low word, a unary word.
        let lv = map_levels(v.len() / 32).len();
        assert_eq!(encode(&v).len(), HEADER_WORDS + lv + 4);
    }

    #[test]
    fn best_k_is_the_first_minimum() {
        for v in [[0u32; 32], [1; 32], [1000; 32], [u32::MAX; 32]] {
            let k = best_k(&v);
            let cost = |k: u32| 32 * k as u64 + v.iter().map(|&x| (x >> k) as u64).sum::<u64>();
            let m = (0..32).map(cost).min().unwrap();
            assert_eq!(cost(k), m);
            assert!((0..k).all(|j| cost(j) > m));
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(unzigzag(zigzag(-(1 << 30))), -(1 << 30));
        assert_eq!(unzigzag(zigzag(1 << 30)), 1 << 30);
    }

    #[test]
    fn corrupt_streams_are_errors_not_panics() {
        let v: Vec<u32> = (0..5000).map(|i| (i * 7919 % 13) as u32).collect();
        let w = encode(&v);
        for i in 0..w.len() {
            for flip in [1u32, 0x8000_0000, 0xffff_ffff] {
                let mut c = w.clone();
                c[i] ^= flip;
                if let Ok((back, _)) = decode(&c, v.len()) {
                    // Low and unary bits carry no redundancy: a decode may
                    // succeed with other values, never panic.
                    assert_eq!(back.len(), v.len());
                }
            }
        }
        for cut in 0..w.len() {
            let _ = decode(&w[..cut], v.len());
        }
    }
}
