//! The frequency tables as the stream stores them (bit writer and reader,
//! exp-Golomb codes, `read_tables`) and the coder's tables built from them.

use super::*;

#[derive(Default)]
pub(super) struct BitWriter {
    pub(super) words: Vec<u32>,
    /// The bits not yet in `words` (fewer than 32), least significant
    /// first.
    pub(super) acc: u64,
    pub(super) held: u32,
}

impl BitWriter {
    /// The low `n` bits of `v` (n <= 64), least significant first: whole
    /// words at a time (bit by bit, the tables of a dense brick took 150
    /// us, half of `plan`, and a GPU run plans some 500 bricks on the
    /// host).
    pub(super) fn put(&mut self, v: u64, n: u32) {
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
    pub(super) fn put32(&mut self, v: u32, n: u32) {
        self.acc |= (v as u64) << self.held;
        self.held += n;
        if self.held >= 32 {
            self.words.push(self.acc as u32);
            self.acc >>= 32;
            self.held -= 32;
        }
    }
    pub(super) fn finish(mut self) -> Vec<u32> {
        if self.held > 0 {
            self.words.push(self.acc as u32);
        }
        self.words
    }
}

/// Exp-Golomb of order 0: v + 1 in b bits, after b - 1 zeros.
pub(super) fn exp_golomb(w: &mut BitWriter, v: u32) {
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
pub(super) struct FloorDiv {
    pub(super) d: u64,
    pub(super) inv: f64,
}

impl FloorDiv {
    pub(super) fn new(d: u64) -> Self {
        FloorDiv {
            d: d.max(1),
            inv: 1.0 / d.max(1) as f64,
        }
    }
    #[inline]
    pub(super) fn floor(&self, x: u64) -> u64 {
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

pub(super) struct BitReader<'a> {
    pub(super) words: &'a [u32],
    pub(super) bit: usize,
}

impl BitReader<'_> {
    /// The next 33 bits or more, least significant first (as many as two
    /// words hold from `bit`): None at the stream's last word, where the
    /// bit-at-a-time path reads instead. Bit at a time, a dense brick's
    /// header took 18 us on this machine's core and 110 us on a GPU host
    /// whose other slots parsed theirs at once, before its batch's
    /// device work could start.
    pub(super) fn window(&self) -> Option<u64> {
        let i = self.bit / 32;
        let (lo, hi) = (*self.words.get(i)?, *self.words.get(i + 1)?);
        Some(((hi as u64) << 32 | lo as u64) >> (self.bit % 32))
    }
    pub(super) fn bit(&mut self) -> Result<u32, String> {
        let w = self
            .words
            .get(self.bit / 32)
            .ok_or("the stream header ends early")?;
        let b = (w >> (self.bit % 32)) & 1;
        self.bit += 1;
        Ok(b)
    }
    /// `n` bits, least significant first (as `BitWriter::put` writes).
    pub(super) fn bits(&mut self, n: u32) -> Result<u32, String> {
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
    pub(super) fn exp_golomb(&mut self) -> Result<u32, String> {
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
    pub(super) m: u64,
    pub(super) add: u32,
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
pub(super) struct EncodeEntry {
    pub(super) bound: u64,
    pub(super) div: Divisor,
    pub(super) freq: u32,
    pub(super) start: u32,
    pub(super) scale: u32,
}

pub(super) struct EncodeTable(pub(super) Vec<EncodeEntry>);

impl EncodeTable {
    pub(super) fn new(t: &Tables) -> Self {
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
pub(super) struct Emitted<'a> {
    pub(super) buf: &'a mut [u16],
    pub(super) len: usize,
}

impl Emitted<'_> {
    /// The state after renormalising it for a step whose states must stay
    /// under `bound`.
    #[inline(always)]
    pub(super) fn renorm(&mut self, x: u32, bound: u64) -> u32 {
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
pub(super) fn put_raw(x: u32, out: &mut Emitted, v: u32, bits: u32) -> u32 {
    let x = out.renorm(x, ((RANS_L >> bits) as u64) << 16);
    (x << bits) + v
}

/// One rANS step of the encoder for entry `e` (a context and symbol). A
/// context of one symbol (scale 0, frequency 1, start 0) leaves the state
/// as it is.
#[inline(always)]
pub(super) fn put(x: u32, out: &mut Emitted, e: &EncodeEntry) -> u32 {
    let x = out.renorm(x, e.bound);
    let q = e.div.quotient(x);
    (q << e.scale) + (x - q * e.freq) + e.start
}
