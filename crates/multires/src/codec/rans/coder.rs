//! The rANS encoder and decoder: chunks coded side by side in lanes, the
//! stream's header, and the decoders' fast paths for sparse chunks.

use super::*;

/// Chunks coded side by side: each state's step is a serial chain of
/// about 20 cycles, so one chunk at a time left the core mostly idle.
pub(super) const LANES: usize = 4;

/// A chunk to code: its values and their table entries.
pub(super) type Chunk<'a> = (&'a [u32], &'a [u16]);

/// Value i of chunk `(v, entry)` through the state `x` (the high raw
/// piece, the low one, then the symbol: the decoder reads them in the
/// other order). Every step runs for every value, since a piece of no
/// bits and a context of one symbol change nothing, except the high
/// piece, which is rare and costs the chain a step.
/// `SPARSE` chunks (few values with raw bits) branch past the raw pieces
/// of a direct value instead: the branch is then predicted, and a smooth
/// field's values are nearly all direct.
#[inline(always)]
pub(super) fn encode_value<const SPARSE: bool>(
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
pub(super) fn encode_chunks<const SPARSE: bool>(
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
pub(super) struct DecodeTable<'a> {
    pub(super) t: &'a Tables,
    pub(super) slots: Vec<Vec<u8>>,
    pub(super) missing: [bool; NCTX],
    /// Per context, its symbol when it holds one below DIRECT: such a
    /// value reads nothing and leaves the state as it is (nearly every
    /// value of a smooth field), and a branch on it is well predicted.
    pub(super) one: [Option<u32>; NCTX],
    /// Per context, its first symbol (slots from 0) and that symbol's
    /// frequency: a slot below it is that symbol without a look-up, as
    /// in RDEC. On a smooth field nearly every coded step is a context's
    /// likely 0, and the look-ups (slot, frequency, start) were three
    /// loads on the state's serial chain.
    pub(super) first: [(u32, u32); NCTX],
    /// Classes whose values after a 0 are zeros that read nothing
    /// (`zero_classes`): a sparse chunk passes over a run of them at once.
    pub(super) zero_runs: u8,
    /// Contexts whose first slots, at least seven eighths of them, are
    /// the symbol 0 (not alone): a sparse chunk decodes runs of such
    /// zeros in one loop (`Lane::zeros_of_one_class`). Below that the runs
    /// are too short to pay for starting one.
    pub(super) likely_zero: [bool; NCTX],
    /// Whether the stream is sparse enough for those runs (under half a
    /// bit a value): on a turbulent field at 3e-2 (one bit a value) the
    /// runs were short, and trying them cost 3% of a decompression.
    pub(super) runs: bool,
}

impl<'a> DecodeTable<'a> {
    /// The tables `t` made ready; `runs`: whether the stream is sparse
    /// enough for runs of likely zeros.
    pub(super) fn new(t: &'a Tables, runs: bool) -> Self {
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
pub(super) struct Lane<'a> {
    pub(super) words: &'a [u16],
    pub(super) p: usize,
    pub(super) x: u32,
    pub(super) lv: &'a [u8],
    pub(super) at: usize,
    /// The context's restart less one (`Header::reset`).
    pub(super) reset_mask: usize,
    pub(super) out: &'a mut [u32],
    /// Values decoded so far.
    pub(super) done: usize,
    /// The last value decoded: the next one's context, kept here rather
    /// than read back from `out` (no measurable change on its own).
    pub(super) last: u32,
}

impl<'a> Lane<'a> {
    pub(super) fn new(
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
    pub(super) fn renorm(&mut self) {
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
    pub(super) fn value<const SPARSE: bool>(
        &mut self,
        i: usize,
        d: &DecodeTable,
    ) -> Result<(), String> {
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
    pub(super) fn sparse_values(&mut self, d: &DecodeTable) -> Result<(), String> {
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
    pub(super) fn zeros_of_one_class(&mut self, i: usize, d: &DecodeTable) -> usize {
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
    pub(super) fn finish(&self) -> Result<(), String> {
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
thread_local!(pub(super) static FIRST_RUNS_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

/// Whether a sparse chunk decodes runs of likely zeros in one loop
/// (`Lane::zeros_of_one_class`); the tests turn it off to compare.
#[inline(always)]
pub(super) fn first_runs() -> bool {
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
pub(super) fn decode_chunks(
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
    pub(super) entries: Vec<u16>,
    pub(super) data: Vec<u16>,
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
pub(super) fn pack(data: &[u16]) -> impl Iterator<Item = u32> + '_ {
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
pub(super) fn parse_h0(h0: u32, n: usize) -> Result<(u32, usize, u32, Split), String> {
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

/// `decode_into` of the first `m` values only (those of the chunks that
/// hold them, which may run past `m`): what a coarse view of a brick
/// needs, its passes being stored coarsest first. The words the whole
/// stream uses, as `decode_into`.
///
/// `words` may be the stream's first `prefix_words` only, of the `total`
/// the brick holds.
pub fn decode_prefix_into(
    (words, total): (&[u32], usize),
    n: usize,
    m: usize,
    lv: &[u8],
    out: &mut Vec<u32>,
) -> Result<usize, String> {
    let h = read_header_of(words, total, n)?;
    let pieces: Vec<(usize, usize)> = prefix_pieces(&h, n, m).collect();
    let end = prefix_words(&h, n, m);
    let data: Vec<u16> = words
        .get(h.data_word..end)
        .ok_or("the coarse part of the stream is cut short")?
        .iter()
        .flat_map(|&w| [w as u16, (w >> 16) as u16])
        .collect();
    // The whole stream's length picks the decoding tactics, as for `decode_into`.
    let len16 = 2 * (h.used - h.data_word);
    let d = DecodeTable::new(&h.tables, len16 * 32 < n);
    let together = len16 * 16 >= 2 * n;
    out.resize(n, 0);
    let mut rest: &mut [u32] = out;
    let mut j = 0;
    while j < pieces.len() {
        let end = (j + LANES).min(pieces.len());
        let lanes = (j..end)
            .map(|k| chunk_lane(&mut rest, (&data, lv, &h.offsets), k, (pieces[k], h.reset)))
            .collect::<Result<Vec<_>, _>>()?;
        decode_chunks(lanes, (j, together), &d)?;
        j = end;
    }
    Ok(h.used)
}

/// The pieces that hold the first `m` of a stream's `n` values.
fn prefix_pieces(h: &Header, n: usize, m: usize) -> impl Iterator<Item = (usize, usize)> {
    pieces(n, h.chunk_log, h.split).take_while(move |&(at, _)| at < m.min(n))
}

/// Words from the stream's start through the pieces that hold its first
/// `m` values: what `decode_prefix_into` reads.
pub fn prefix_words(h: &Header, n: usize, m: usize) -> usize {
    let k = prefix_pieces(h, n, m).count();
    (h.data_word + h.offsets[k].div_ceil(2)).min(h.used)
}

/// Groups of chunks the wide decoder took (for the tests to know it ran).
#[cfg(test)]
pub(super) static WIDE_GROUPS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// `decode_into`, with sixteen chunks at once (`rans_wide`) where `wide`
/// and the processor allow: the same values either way.
pub(super) fn decode_into_by(
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
pub(super) fn chunk_lane<'a>(
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
