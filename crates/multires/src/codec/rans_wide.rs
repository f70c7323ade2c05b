//! The rANS decoder's steps for sixteen chunks at once, one in each
//! 32-bit lane of an AVX-512 register, for processors that have it.
//!
//! One chunk's step is a serial chain and the scalar decoder (four chunks
//! side by side) is bound by its instructions: about 20 a value, most of
//! them table look-ups and bounds checks. Here a step's look-ups are
//! gathers and the per-context tables (32 contexts) sit in registers, so
//! sixteen values cost about what one did. The values are the scalar
//! decoder's: the same steps in the same order, every lane masked where
//! the scalar step would not run. Anything the scalar decoder would
//! refuse (a context without a table) sends the whole group back to it,
//! so errors read the same.

use super::rans::{Tables, DIRECT, LEVELS, NCTX, NSYM, PIECE, PROB_BITS};

/// Lanes of a group: chunks decoded together.
pub(super) const WIDE: usize = 16;

// A context's tables fill two registers of lanes.
const _: () = assert!(NCTX == 2 * WIDE);

/// The tables in the form the lanes read them.
pub(super) struct WideTable {
    /// Every context's symbol of each slot, back to back (the scalar
    /// decoder's `slots`), and three bytes more: a gather reads four.
    slots: Vec<u8>,
    /// Where each context's slots start in `slots`.
    slot_at: [u32; NCTX],
    /// Per context and symbol: its frequency | its start << 16 (both at
    /// most 2^15, `PROB_BITS`).
    fs: Vec<u32>,
    scale: [u32; NCTX],
    /// A context's lone symbol that reads nothing, or `u32::MAX`.
    one: [u32; NCTX],
    /// Bit c: context c has no table (the scalar decoder's error).
    missing: u32,
    /// Every scale within `PROB_BITS` (as `read_tables` ensures), so a
    /// slot stays within its context's 2^scale: otherwise the scalar
    /// decoder takes the brick.
    sound: bool,
}

impl WideTable {
    pub(super) fn new(
        t: &Tables,
        slots: &[Vec<u8>],
        one: &[Option<u32>; NCTX],
        missing: &[bool; NCTX],
    ) -> Self {
        let mut flat = Vec::with_capacity(slots.iter().map(Vec::len).sum::<usize>() + 3);
        let mut slot_at = [0u32; NCTX];
        for (c, s) in slots.iter().enumerate().take(NCTX) {
            slot_at[c] = flat.len() as u32;
            flat.extend_from_slice(s);
        }
        flat.extend_from_slice(&[0; 3]);
        let fs = (0..NCTX * NSYM)
            .map(|k| {
                let (c, s) = (k / NSYM, k % NSYM);
                (t.freq[k] & 0xffff) | t.cum[c * (NSYM + 1) + s] << 16
            })
            .collect();
        WideTable {
            slots: flat,
            slot_at,
            fs,
            scale: std::array::from_fn(|c| t.scale[c]),
            one: std::array::from_fn(|c| one[c].unwrap_or(u32::MAX)),
            missing: (0..NCTX).fold(0, |m, c| m | (missing[c] as u32) << c),
            sound: t.scale.iter().all(|&s| s <= PROB_BITS),
        }
    }
}

/// Sixteen lanes after their steps: state, next word (an index into the
/// brick's words) and last value of each.
pub(super) struct WideState {
    pub x: [u32; WIDE],
    pub p: [u32; WIDE],
    pub last: [u32; WIDE],
}

/// Whether this processor runs the wide decoder (checked once).
pub(super) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ON.get_or_init(|| std::is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A group's buffers: the brick's words (followed by at least one more),
/// the level classes and outputs from the group's first value on, and
/// per lane `(at, (w0, w1))`: its chunk's first value in `lv` and `out`
/// and its words `w0..w1` in `data`.
pub(super) struct Group<'a> {
    pub data: &'a [u16],
    pub lv: &'a [u8],
    pub out: &'a mut [u32],
    pub lanes: [(u32, (u32, u32)); WIDE],
    /// Values between the context's restarts (`rans::Header::reset`).
    pub reset: usize,
}

/// Steps whose values a group keeps before writing them (`transpose16`).
const BLOCK: usize = WIDE;

/// Sixteen rows of sixteen u32 transposed in registers: row j becomes
/// the j-th value of every row.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose16(r: &mut [std::arch::x86_64::__m512i; 16]) {
    use std::arch::x86_64::*;
    let mut t = [_mm512_setzero_si512(); 16];
    for k in 0..8 {
        t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
    }
    for k in 0..4 {
        let b = 4 * k;
        r[b] = _mm512_unpacklo_epi64(t[b], t[b + 2]);
        r[b + 1] = _mm512_unpackhi_epi64(t[b], t[b + 2]);
        r[b + 2] = _mm512_unpacklo_epi64(t[b + 1], t[b + 3]);
        r[b + 3] = _mm512_unpackhi_epi64(t[b + 1], t[b + 3]);
    }
    for h in 0..2 {
        let b = 8 * h;
        for k in 0..4 {
            t[b + k] = _mm512_shuffle_i32x4::<0x88>(r[b + k], r[b + k + 4]);
            t[b + k + 4] = _mm512_shuffle_i32x4::<0xdd>(r[b + k], r[b + k + 4]);
        }
    }
    for k in 0..8 {
        r[k] = _mm512_shuffle_i32x4::<0x88>(t[k], t[k + 8]);
        r[k + 8] = _mm512_shuffle_i32x4::<0xdd>(t[k], t[k + 8]);
    }
}

/// Groups whose lanes each kept one class (for the tests to know that
/// path ran).
#[cfg(test)]
pub(super) static FIXED_GROUPS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// The first `steps` values of a group's sixteen chunks, written to its
/// `out`: the lanes' states, or None where the scalar decoder must take
/// the group: a lane of under two words, a step out of the buffers'
/// reach, a context without a table, a scale above `PROB_BITS`, or a
/// processor without AVX-512.
pub(super) fn steps(g: Group, steps: usize, t: &WideTable) -> Option<WideState> {
    // Every gather and store stays inside its buffer: a lane's words
    // (plus the one after, as a gather reads two), its values' classes
    // (plus three bytes), its outputs; offsets fit in an i32.
    let fits = |n: usize| n < i32::MAX as usize;
    let inside = fits(g.data.len()) && fits(g.lv.len()) && fits(g.out.len()) && fits(steps);
    let lanes_inside = g.lanes.iter().all(|&(at, (w0, w1))| {
        let (at, w0, w1) = (at as usize, w0 as usize, w1 as usize);
        w0 + 2 <= w1
            && w1 < g.data.len()
            && at + steps + 3 <= g.lv.len()
            && at + steps <= g.out.len()
    });
    if !(t.sound && inside && lanes_inside && available()) {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // Where every lane's classes stay one level over its steps (most
        // of a brick: the finest pass is one class), the steps skip their
        // classes' gather.
        let level = |&(at, _): &(u32, (u32, u32))| -> Option<u32> {
            let run = &g.lv[at as usize..at as usize + steps];
            let first = *run.first()?;
            (run.iter().fold(0u8, |d, &b| d | (b ^ first)) == 0).then_some(first as u32)
        };
        let mut levels = [0u32; WIDE];
        let fixed = g
            .lanes
            .iter()
            .zip(levels.iter_mut())
            .all(|(lane, l)| level(lane).map(|v| *l = v).is_some())
            .then_some(levels);
        #[cfg(test)]
        if fixed.is_some() {
            FIXED_GROUPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        // SAFETY: AVX-512F is present (`available`), and the checks above
        // keep every access of `steps_avx512` inside its buffer.
        unsafe {
            match fixed {
                Some(levels) => steps_avx512::<true>(g, steps, t, levels),
                None => steps_avx512::<false>(g, steps, t, [0; WIDE]),
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn steps_avx512<const FIXED: bool>(
    g: Group,
    steps: usize,
    t: &WideTable,
    levels: [u32; WIDE],
) -> Option<WideState> {
    let Group {
        data,
        lv,
        out,
        lanes,
        reset,
    } = g;
    use std::arch::x86_64::*;
    let load = |a: &[u32; WIDE]| unsafe { _mm512_loadu_si512(a.as_ptr() as *const __m512i) };
    let load32 = |a: &[u32; NCTX]| unsafe {
        (
            _mm512_loadu_si512(a.as_ptr() as *const __m512i),
            _mm512_loadu_si512(a[WIDE..].as_ptr() as *const __m512i),
        )
    };
    let one = _mm512_set1_epi32(1);
    let zero = _mm512_setzero_si512();
    let ones = |n: __m512i| _mm512_sub_epi32(_mm512_sllv_epi32(one, n), one);
    let at = load(&std::array::from_fn(|j| lanes[j].0));
    let w1 = load(&std::array::from_fn(|j| lanes[j].1 .1));
    let (one_lo, one_hi) = load32(&t.one);
    let (sc_lo, sc_hi) = load32(&t.scale);
    let (sa_lo, sa_hi) = load32(&t.slot_at);
    let missing = _mm512_set1_epi32(t.missing as i32);
    let (lv_p, data_p) = (lv.as_ptr() as *const i32, data.as_ptr() as *const i32);
    let (slots_p, fs_p) = (t.slots.as_ptr() as *const i32, t.fs.as_ptr() as *const i32);
    let out_p = out.as_mut_ptr() as *mut i32;
    // Each lane's first two words are its state (`Lane::new`).
    let mut x = load(&std::array::from_fn(|j| {
        let w0 = lanes[j].1 .0 as usize;
        (data[w0] as u32) << 16 | data[w0 + 1] as u32
    }));
    let mut p = load(&std::array::from_fn(|j| lanes[j].1 .0 + 2));
    let mut last = zero;
    let fixed_level = load(&levels);
    let ats: [u32; WIDE] = std::array::from_fn(|j| lanes[j].0);
    let mut block = [zero; BLOCK];
    let word_mask = _mm512_set1_epi32(0xffff);
    let byte_mask = _mm512_set1_epi32(0xff);
    let rans_l = _mm512_set1_epi32(1 << 16);
    // One renormalisation of the lanes in `k`: a word shifted in where the
    // state fell under the bound (a word past a lane's end reads as 0).
    let renorm = |k: __mmask16, x: __m512i, p: __m512i| -> (__m512i, __m512i) {
        let need = k & _mm512_cmplt_epu32_mask(x, rans_l);
        let read = need & _mm512_cmplt_epu32_mask(p, w1);
        // SAFETY: lanes in `read` read words p and p + 1 < data.len().
        let w = unsafe { _mm512_mask_i32gather_epi32::<2>(zero, read, p, data_p) };
        let w = _mm512_and_si512(w, word_mask);
        let x = _mm512_mask_mov_epi32(x, need, _mm512_or_si512(_mm512_slli_epi32::<16>(x), w));
        let p = _mm512_mask_add_epi32(p, need, p, one);
        (x, p)
    };
    for i in 0..steps {
        let pos = _mm512_add_epi32(at, _mm512_set1_epi32(i as i32));
        let fresh = !_mm512_test_epi32_mask(pos, _mm512_set1_epi32(reset as i32 - 1));
        let prev = if i == 0 {
            zero
        } else {
            _mm512_mask_mov_epi32(last, fresh, zero)
        };
        let level = if FIXED {
            fixed_level
        } else {
            // SAFETY: at + i + 3 < lv.len() for every lane.
            _mm512_and_si512(unsafe { _mm512_i32gather_epi32::<1>(pos, lv_p) }, byte_mask)
        };
        // The context, as `rans::context` makes it.
        let c = _mm512_add_epi32(
            _mm512_slli_epi32::<2>(_mm512_min_epu32(
                level,
                _mm512_set1_epi32(LEVELS as i32 - 1),
            )),
            _mm512_min_epu32(prev, _mm512_set1_epi32(3)),
        );
        let lone = _mm512_permutex2var_epi32(one_lo, c, one_hi);
        let act = _mm512_cmpeq_epi32_mask(lone, _mm512_set1_epi32(-1));
        let miss = act & _mm512_test_epi32_mask(_mm512_srlv_epi32(missing, c), one);
        if miss != 0 {
            return None;
        }
        let sc = _mm512_permutex2var_epi32(sc_lo, c, sc_hi);
        let slot = _mm512_and_si512(x, ones(sc));
        let sa = _mm512_permutex2var_epi32(sa_lo, c, sa_hi);
        // SAFETY: a context with a table has 2^scale slots, so the byte
        // read is one of its own (and the three after, padding at most).
        let s = unsafe {
            _mm512_mask_i32gather_epi32::<1>(zero, act, _mm512_add_epi32(sa, slot), slots_p)
        };
        let s = _mm512_and_si512(s, byte_mask);
        let entry = _mm512_add_epi32(_mm512_mullo_epi32(c, _mm512_set1_epi32(NSYM as i32)), s);
        // SAFETY: c < NCTX and s < NSYM.
        let fs = unsafe { _mm512_mask_i32gather_epi32::<4>(zero, act, entry, fs_p) };
        let f = _mm512_and_si512(fs, word_mask);
        let start = _mm512_srli_epi32::<16>(fs);
        let stepped = _mm512_sub_epi32(
            _mm512_add_epi32(_mm512_mullo_epi32(f, _mm512_srlv_epi32(x, sc)), slot),
            start,
        );
        x = _mm512_mask_mov_epi32(x, act, stepped);
        (x, p) = renorm(act, x, p);
        // The raw pieces: the low one in every stepped lane (of no bits
        // below DIRECT), the high one where there are more than PIECE.
        let coded = act & _mm512_cmpge_epu32_mask(s, _mm512_set1_epi32(DIRECT as i32));
        let nraw = _mm512_maskz_add_epi32(
            coded,
            _mm512_srli_epi32::<2>(_mm512_sub_epi32(s, _mm512_set1_epi32(DIRECT as i32))),
            _mm512_set1_epi32(4),
        );
        let lo = _mm512_min_epu32(nraw, _mm512_set1_epi32(PIECE as i32));
        let mut raw = _mm512_and_si512(x, ones(lo));
        x = _mm512_srlv_epi32(x, lo);
        (x, p) = renorm(act, x, p);
        let high = _mm512_cmpgt_epu32_mask(nraw, _mm512_set1_epi32(PIECE as i32));
        if high != 0 {
            let hi = _mm512_maskz_sub_epi32(high, nraw, _mm512_set1_epi32(PIECE as i32));
            let piece = _mm512_slli_epi32::<{ PIECE }>(_mm512_and_si512(x, ones(hi)));
            raw = _mm512_or_si512(raw, piece);
            x = _mm512_srlv_epi32(x, hi);
            (x, p) = renorm(high, x, p);
        }
        let top = _mm512_or_si512(
            _mm512_set1_epi32(4),
            _mm512_and_si512(
                _mm512_sub_epi32(s, _mm512_set1_epi32(DIRECT as i32)),
                _mm512_set1_epi32(3),
            ),
        );
        let v = _mm512_mask_mov_epi32(s, coded, _mm512_or_si512(_mm512_sllv_epi32(top, nraw), raw));
        let v = _mm512_mask_mov_epi32(lone, act, v);
        // Sixteen steps' values are kept, then written a lane's row at a
        // time (a transpose): with a scatter a step, a turbulent 256^3
        // decode on one core took 0.125-0.130 s against 0.116-0.125.
        block[i % BLOCK] = v;
        if i % BLOCK == BLOCK - 1 {
            let mut rows = block;
            transpose16(&mut rows);
            let first = i + 1 - BLOCK;
            for (j, row) in rows.iter().enumerate() {
                // SAFETY: at_j + i < out.len() (the checks of `steps`),
                // and lanes' chunks are disjoint.
                unsafe {
                    _mm512_storeu_si512(out_p.add(ats[j] as usize + first) as *mut __m512i, *row)
                };
            }
        }
        last = v;
    }
    // The last steps short of a block, a value at a time.
    let first = steps - steps % BLOCK;
    for (k, v) in block[..steps % BLOCK].iter().enumerate() {
        let mut vals = [0u32; WIDE];
        // SAFETY: `vals` holds sixteen u32.
        unsafe { _mm512_storeu_si512(vals.as_mut_ptr() as *mut __m512i, *v) };
        for (j, &val) in vals.iter().enumerate() {
            out[ats[j] as usize + first + k] = val;
        }
    }
    let mut st = WideState {
        x: [0; WIDE],
        p: [0; WIDE],
        last: [0; WIDE],
    };
    // SAFETY: each array holds sixteen u32.
    unsafe {
        _mm512_storeu_si512(st.x.as_mut_ptr() as *mut __m512i, x);
        _mm512_storeu_si512(st.p.as_mut_ptr() as *mut __m512i, p);
        _mm512_storeu_si512(st.last.as_mut_ptr() as *mut __m512i, last);
    }
    Some(st)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn transpose16_transposes() {
        if !available() {
            eprintln!("no AVX-512 here: nothing to check");
            return;
        }
        use std::arch::x86_64::*;
        let m: Vec<[u32; 16]> = (0..16u32)
            .map(|r| std::array::from_fn(|c| r * 1000 + c as u32))
            .collect();
        // SAFETY: AVX-512F is present; every array holds sixteen u32.
        unsafe {
            let mut rows: [__m512i; 16] =
                std::array::from_fn(|r| _mm512_loadu_si512(m[r].as_ptr() as *const __m512i));
            transpose16(&mut rows);
            for (j, row) in rows.iter().enumerate() {
                let mut got = [0u32; 16];
                _mm512_storeu_si512(got.as_mut_ptr() as *mut __m512i, *row);
                let want: [u32; 16] = std::array::from_fn(|r| m[r][j]);
                assert_eq!(got, want, "row {j}");
            }
        }
    }
}
