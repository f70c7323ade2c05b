//! Lossless bricks: every value's bits come back (NaN payloads,
//! infinities, signed zeros and subnormals included). The interpolation's
//! walk predicts each value from values already coded, the prediction is
//! rounded to the stored type, and the difference of the two values'
//! ordered-integer images (IEEE bits mapped so that integer order is value
//! order) is coded: zigzagged, its top bits through the same rANS coder
//! and contexts as the lossy details, its low `shift` bits as they are
//! (they are noise at that depth), the rare difference too wide for that
//! stored whole.
//!
//! A brick whose values are all integers (images and counts stored as
//! floats; no NaN, infinity or negative zero) codes the integers
//! themselves instead: predictions rounded to the nearest integer, the
//! differences of integers, which are as small as the values are smooth
//! (float bit patterns of integers differ by millions of ulps).
//!
//! ```text
//! payload  shift u32 (bit 31: integer brick) | wide count u32 | rANS words
//!          | low bits (packed, u32 words) | wide differences u64 each, in
//!          coding order
//! ```

use super::interp::{self, Point};
use super::{rans, DType};

/// The escape among the rANS values: a difference stored whole.
const WIDE: u32 = u32::MAX;

/// The value order's integer image of float bits of `dtype`.
#[inline]
pub fn ordered(bits: u64, dtype: DType) -> u64 {
    match dtype {
        DType::F32 => {
            let b = bits as u32;
            (if b >> 31 == 1 { !b } else { b | 1 << 31 }) as u64
        }
        DType::F64 => {
            if bits >> 63 == 1 {
                !bits
            } else {
                bits | 1 << 63
            }
        }
    }
}

/// `ordered`'s inverse.
#[inline]
pub fn unordered(o: u64, dtype: DType) -> u64 {
    match dtype {
        DType::F32 => {
            let o = o as u32;
            (if o >> 31 == 1 { o & !(1 << 31) } else { !o }) as u64
        }
        DType::F64 => {
            if o >> 63 == 1 {
                o & !(1 << 63)
            } else {
                !o
            }
        }
    }
}

/// The numeric value of bits of `dtype`.
#[inline]
pub fn value_of(bits: u64, dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f32::from_bits(bits as u32) as f64,
        DType::F64 => f64::from_bits(bits),
    }
}

/// What a value contributes to later predictions: itself, or 0 where it
/// is not finite (so a NaN never spreads, and both sides agree).
#[inline]
fn known(bits: u64, dtype: DType) -> f64 {
    let v = value_of(bits, dtype);
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// The ordered image of the prediction `p` rounded to `dtype` (0 where it
/// is not finite).
#[inline]
fn predicted(p: f64, dtype: DType) -> u64 {
    let p = dtype.round(p);
    let p = if p.is_finite() { p } else { 0.0 };
    let bits = match dtype {
        DType::F32 => (p as f32).to_bits() as u64,
        DType::F64 => p.to_bits(),
    };
    ordered(bits, dtype)
}

/// The difference of ordered images, wrapped to the type's width and
/// zigzagged.
#[inline]
fn difference(o: u64, p: u64, dtype: DType) -> u64 {
    match dtype {
        DType::F32 => {
            let d = (o as u32).wrapping_sub(p as u32) as i32;
            ((d << 1) ^ (d >> 31)) as u32 as u64
        }
        DType::F64 => {
            let d = o.wrapping_sub(p) as i64;
            ((d << 1) ^ (d >> 63)) as u64
        }
    }
}

/// `difference`'s inverse: the ordered image from the prediction's.
#[inline]
fn undifference(z: u64, p: u64, dtype: DType) -> u64 {
    let d = (z >> 1) ^ (z & 1).wrapping_neg();
    match dtype {
        DType::F32 => (p as u32).wrapping_add(d as u32) as u64,
        DType::F64 => p.wrapping_add(d),
    }
}

/// The flag of an integer brick in the payload's first word.
const INTEGERS: u32 = 1 << 31;

/// Integers of magnitude below this code as integers (i64 differences
/// cannot wrap past it).
const INTEGER_LIMIT: f64 = (1u64 << 62) as f64;

/// Whether every value of a brick is an integer that codes as one: finite,
/// whole, below `INTEGER_LIMIT`, and not -0 (whose sign an integer loses).
fn all_integers(bits: &[u64], dtype: DType) -> bool {
    bits.iter().all(|&b| {
        let v = value_of(b, dtype);
        v.fract() == 0.0 && v.abs() < INTEGER_LIMIT && !(v == 0.0 && v.is_sign_negative())
    })
}

/// An integer brick's prediction: the nearest integer (0 where not finite).
#[inline]
fn predicted_integer(p: f64) -> i64 {
    if p.is_finite() {
        p.round().clamp(-INTEGER_LIMIT, INTEGER_LIMIT) as i64
    } else {
        0
    }
}

/// The bits of the integer `i` as a value of `dtype` (exact: it came from one).
#[inline]
fn integer_bits(i: i64, dtype: DType) -> u64 {
    match dtype {
        DType::F32 => (i as f32).to_bits() as u64,
        DType::F64 => (i as f64).to_bits(),
    }
}

struct Encode<'a> {
    bits: &'a [u64],
    dtype: DType,
    integers: bool,
    zz: Vec<u64>,
}

impl Point for Encode<'_> {
    #[inline(always)]
    fn point(&mut self, r: &mut [f64], k: usize, pred: f64, _: f64) {
        let b = self.bits[k];
        if self.integers {
            let v = value_of(b, self.dtype);
            let d = (v as i64).wrapping_sub(predicted_integer(pred));
            self.zz.push(((d << 1) ^ (d >> 63)) as u64);
            r[k] = v;
            return;
        }
        let o = ordered(b, self.dtype);
        self.zz
            .push(difference(o, predicted(pred, self.dtype), self.dtype));
        r[k] = known(b, self.dtype);
    }
    fn cubic_row(&mut self, r: &mut [f64], k0: usize, m: usize, d: usize, qs: f64) {
        for k in k0..k0 + m {
            let pred = interp::cubic(r, k, d);
            self.point(r, k, pred, qs);
        }
    }
}

struct Decode<'a> {
    zz: &'a [u64],
    at: usize,
    dtype: DType,
    integers: bool,
    bits: &'a mut [u64],
}

impl Point for Decode<'_> {
    #[inline(always)]
    fn point(&mut self, r: &mut [f64], k: usize, pred: f64, _: f64) {
        let z = self.zz.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        if self.integers {
            let d = ((z >> 1) ^ (z & 1).wrapping_neg()) as i64;
            let i = predicted_integer(pred).wrapping_add(d);
            let b = integer_bits(i, self.dtype);
            self.bits[k] = b;
            r[k] = value_of(b, self.dtype);
            return;
        }
        let o = undifference(z, predicted(pred, self.dtype), self.dtype);
        let b = unordered(o, self.dtype);
        self.bits[k] = b;
        r[k] = known(b, self.dtype);
    }
    fn cubic_row(&mut self, r: &mut [f64], k0: usize, m: usize, d: usize, qs: f64) {
        for k in k0..k0 + m {
            let pred = interp::cubic(r, k, d);
            self.point(r, k, pred, qs);
        }
    }
}

/// Bits of a zigzag difference.
fn bit_len(z: u64) -> u32 {
    64 - z.leading_zeros()
}

/// Codes a brick of extent `dims` whose values' bits (row-major; float32
/// bits in the low half) are `bits`, in rANS chunks of 2^`chunk_log`.
pub fn encode(bits: &[u64], dims: [usize; 3], dtype: DType, chunk_log: u32) -> Vec<u8> {
    let n = bits.len();
    let integers = all_integers(bits, dtype);
    let mut f = Encode {
        bits,
        dtype,
        integers,
        zz: Vec::with_capacity(n),
    };
    let mut r = vec![0.0; n];
    if n > 0 {
        interp::walk(dims, 1.0, &mut r, &mut f);
    }
    let zz = f.zz;
    // The shift: the low bits below the 999th-in-1000 difference's top 30
    // go as they are, so the rANS values are at most 30 bits but for the
    // few stored whole.
    let mut lens = vec![0u32; 65];
    zz.iter().for_each(|&z| lens[bit_len(z) as usize] += 1);
    let (mut seen, mut top) = (0usize, 0u32);
    for (b, &c) in lens.iter().enumerate() {
        seen += c as usize;
        if seen * 1000 >= n * 999 {
            top = b as u32;
            break;
        }
    }
    let shift = top.saturating_sub(30);
    let mut hi = Vec::with_capacity(n);
    let mut wide = Vec::new();
    let mut low = BitWriter::default();
    for &z in &zz {
        let h = z >> shift;
        if h >= WIDE as u64 {
            hi.push(WIDE);
            wide.push(z);
        } else {
            hi.push(h as u32);
            low.put(z & ((1u64 << shift) - 1), shift);
        }
    }
    let classes = interp::classes(dims, interp::Order::CURRENT);
    let words = rans::encode(&hi, &classes, chunk_log);
    let low = low.finish();
    let mut out = Vec::with_capacity(8 + 4 * (words.len() + low.len()) + 8 * wide.len());
    let head = shift | if integers { INTEGERS } else { 0 };
    out.extend_from_slice(&head.to_le_bytes());
    out.extend_from_slice(&(wide.len() as u32).to_le_bytes());
    for w in words.iter().chain(&low) {
        out.extend_from_slice(&w.to_le_bytes());
    }
    for w in &wide {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

/// Decodes a lossless brick of extent `dims` into `bits` (row-major).
pub fn decode(
    payload: &[u8],
    dims: [usize; 3],
    dtype: DType,
    bits: &mut Vec<u64>,
) -> Result<(), String> {
    let n: usize = dims.iter().product();
    let word = |i: usize| -> Option<u32> {
        payload
            .get(4 * i..4 * i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    };
    let (Some(head), Some(n_wide)) = (word(0), word(1)) else {
        return Err(format!("{} bytes: not a lossless brick", payload.len()));
    };
    let (integers, shift) = (head & INTEGERS != 0, head & !INTEGERS);
    let n_wide = n_wide as usize;
    if shift > 34 || n_wide > n {
        return Err(format!(
            "shift {shift}, {n_wide} wide values: not a lossless brick of {n} values"
        ));
    }
    let wide_bytes = 8 * n_wide;
    let body = payload
        .len()
        .checked_sub(8 + wide_bytes)
        .filter(|b| b % 4 == 0)
        .ok_or_else(|| format!("{} bytes: the lossless brick is cut short", payload.len()))?;
    let words: Vec<u32> = (0..body / 4).filter_map(|i| word(2 + i)).collect();
    let mut hi = Vec::new();
    let used = rans::decode_into(
        &words,
        n,
        &interp::classes(dims, interp::Order::CURRENT),
        &mut hi,
    )?;
    let wides: Vec<u64> = payload[8 + body..]
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
        .collect();
    let escapes = hi.iter().filter(|&&h| h == WIDE).count();
    let need = ((n - escapes) as u64 * shift as u64).div_ceil(32) as usize;
    if escapes != n_wide || used + need != words.len() {
        return Err(format!(
            "{escapes} wide values for {n_wide} stored, or {} words of low bits for {need}",
            words.len() - used.min(words.len())
        ));
    }
    let mut low = BitReader::new(&words[used..]);
    let mut w = wides.iter();
    let zz: Vec<u64> = hi
        .iter()
        .map(|&h| {
            if h == WIDE {
                w.next().copied().unwrap_or(0)
            } else {
                (h as u64) << shift | low.get(shift)
            }
        })
        .collect();
    bits.clear();
    bits.resize(n, 0);
    let mut r = vec![0.0; n];
    if n > 0 {
        let mut f = Decode {
            zz: &zz,
            at: 0,
            dtype,
            integers,
            bits,
        };
        interp::walk(dims, 1.0, &mut r, &mut f);
    }
    Ok(())
}

#[derive(Default)]
struct BitWriter {
    words: Vec<u32>,
    acc: u64,
    fill: u32,
}

impl BitWriter {
    fn put(&mut self, v: u64, bits: u32) {
        if bits == 0 {
            return;
        }
        // At most 34 bits a value: in two pieces so the accumulator holds them.
        if bits > 32 {
            self.put(v >> 32, bits - 32);
            return self.put(v & 0xffff_ffff, 32);
        }
        self.acc |= v << self.fill;
        self.fill += bits;
        while self.fill >= 32 {
            self.words.push(self.acc as u32);
            self.acc >>= 32;
            self.fill -= 32;
        }
    }
    fn finish(mut self) -> Vec<u32> {
        if self.fill > 0 {
            self.words.push(self.acc as u32);
        }
        self.words
    }
}

struct BitReader<'a> {
    words: &'a [u32],
    at: usize,
    acc: u64,
    fill: u32,
}

impl<'a> BitReader<'a> {
    fn new(words: &'a [u32]) -> Self {
        BitReader {
            words,
            at: 0,
            acc: 0,
            fill: 0,
        }
    }
    fn get(&mut self, bits: u32) -> u64 {
        if bits == 0 {
            return 0;
        }
        if bits > 32 {
            let h = self.get(bits - 32);
            return h << 32 | self.get(32);
        }
        while self.fill < bits {
            let w = self.words.get(self.at).copied().unwrap_or(0) as u64;
            self.at += 1;
            self.acc |= w << self.fill;
            self.fill += 32;
        }
        let v = self.acc & ((1u64 << bits) - 1);
        self.acc >>= bits;
        self.fill -= bits;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_images_keep_value_order_and_invert() {
        let vals = [
            -f32::INFINITY,
            -1e30,
            -1.0,
            -1e-45,
            -0.0,
            0.0,
            1e-45,
            1.0,
            3e38,
            f32::INFINITY,
        ];
        let o: Vec<u64> = vals
            .iter()
            .map(|v| ordered(v.to_bits() as u64, DType::F32))
            .collect();
        assert!(o.windows(2).all(|w| w[0] < w[1]), "{o:?}");
        for b in [0u64, 1, 0x7fc0_1234, 0xffff_ffff, 0x8000_0000] {
            assert_eq!(unordered(ordered(b, DType::F32), DType::F32), b);
        }
        for b in [0u64, 1, 0x7ff8_0000_0000_1234, u64::MAX, 1 << 63] {
            assert_eq!(unordered(ordered(b, DType::F64), DType::F64), b);
        }
        for (o, p) in [(5u64, 9u64), (0, u32::MAX as u64), (u32::MAX as u64, 0)] {
            assert_eq!(undifference(difference(o, p, DType::F32), p, DType::F32), o);
        }
        for (o, p) in [(5u64, 9u64), (0, u64::MAX), (u64::MAX, 0)] {
            assert_eq!(undifference(difference(o, p, DType::F64), p, DType::F64), o);
        }
    }

    #[test]
    fn integer_bricks_code_the_integers() {
        let dims = [9, 33, 33];
        let n: usize = dims.iter().product();
        let mut next = crate::codec::xorshift(4);
        for dtype in [DType::F32, DType::F64] {
            let big = if dtype == DType::F32 { 3.0e9 } else { 4.0e18 };
            for scale in [100.0, -3000.0, big] {
                let ints: Vec<f64> = (0..n)
                    .map(|i| ((i as f64 * 0.013).sin() * scale + (next() % 3) as f64).round() + 0.0)
                    .collect();
                let bits: Vec<u64> = ints
                    .iter()
                    .map(|&v| match dtype {
                        DType::F32 => (v as f32).to_bits() as u64,
                        DType::F64 => v.to_bits(),
                    })
                    .collect();
                assert!(all_integers(&bits, dtype));
                let p = encode(&bits, dims, dtype, 11);
                assert_ne!(u32::from_le_bytes([p[0], p[1], p[2], p[3]]) & INTEGERS, 0);
                let mut back = Vec::new();
                decode(&p, dims, dtype, &mut back).unwrap();
                assert_eq!(back, bits, "{dtype:?} {scale}");
                if scale == 100.0 {
                    // Under 8 bits a value (the bits' path takes over 20 here).
                    assert!(p.len() < n, "{} bytes for {n} values", p.len());
                }
            }
            // A negative zero keeps the brick on the bits' path, exactly.
            let mut bits: Vec<u64> = (0..n)
                .map(|i| (i % 7) as u64)
                .map(|v| match dtype {
                    DType::F32 => (v as f32).to_bits() as u64,
                    DType::F64 => (v as f64).to_bits(),
                })
                .collect();
            bits[17] = match dtype {
                DType::F32 => (-0.0f32).to_bits() as u64,
                DType::F64 => (-0.0f64).to_bits(),
            };
            assert!(!all_integers(&bits, dtype));
            let p = encode(&bits, dims, dtype, 11);
            let mut back = Vec::new();
            decode(&p, dims, dtype, &mut back).unwrap();
            assert_eq!(back, bits);
        }
    }

    #[test]
    fn adversarial_bricks_come_back_bit_for_bit() {
        let mut next = crate::codec::xorshift(9);
        for dtype in [DType::F32, DType::F64] {
            for dims in [[1, 1, 1], [1, 7, 5], [9, 17, 33], [3, 1, 40]] {
                let n: usize = dims.iter().product();
                let bits: Vec<u64> = (0..n)
                    .map(|i| {
                        let smooth = (i as f64 * 0.01).sin() * 100.0;
                        let special = [
                            f64::NAN.to_bits(),
                            0x7ff0_0000_0000_0001, // signaling NaN
                            f64::INFINITY.to_bits(),
                            (-0.0f64).to_bits(),
                            1, // the least subnormal
                            next(),
                        ];
                        let v = if i % 5 == 0 {
                            special[(next() % 6) as usize]
                        } else {
                            smooth.to_bits()
                        };
                        match dtype {
                            DType::F64 => v,
                            DType::F32 => {
                                if i % 5 == 0 {
                                    [
                                        0x7fc0_1234u64,
                                        0x7f80_0001,
                                        0x8000_0000,
                                        1,
                                        next() & 0xffff_ffff,
                                    ][(next() % 5) as usize]
                                } else {
                                    (smooth as f32).to_bits() as u64
                                }
                            }
                        }
                    })
                    .collect();
                let p = encode(&bits, dims, dtype, 11);
                let mut back = Vec::new();
                decode(&p, dims, dtype, &mut back).unwrap();
                assert_eq!(back, bits, "{dtype:?} {dims:?}");
                // Cut short, it is refused, not misread.
                assert!(decode(&p[..p.len() - 4], dims, dtype, &mut back).is_err() || p.len() < 12);
            }
        }
    }
}
