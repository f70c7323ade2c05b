//! Error-bounded wavelet compression of 2-D and 3-D fields (seed:
//! haar-compression-multigpu; DESIGN.md's codec).
//!
//! The volume is cut into bricks, each coded on its own so that a region
//! decodes without the rest. By default a brick goes through the
//! interpolating wavelet in closed loop (`interp`: details quantized inside
//! the predict loop, step twice the bound). Otherwise it is lifted (Haar,
//! CDF 5/3 or 9/7, scaled to unit gain) and its coefficients quantized with
//! one uniform step. The integers are written in Morton order and entropy
//! coded: interp's by rANS with level and previous-value contexts
//! (`rans`), the lifting transforms' by block-adaptive Rice codes behind a
//! significance map (`rice`); the GPU writes both alike. The
//! brick is then decoded exactly as `decompress` will, and every value off
//! by more than the bound gets a correction (a whole number of steps of
//! twice the bound, or its exact value where rounding defeats that;
//! outlier correction, as in SPERR), so the bound holds on every value by
//! construction. For the lifting transforms the step is chosen per brick
//! among a few multiples of the bound, smallest output wins
//! (rate-distortion).

pub mod container;
mod elements;
pub mod fields;
pub mod interp;
pub mod lifting;
pub mod lorenzo;
pub mod lossless;
pub mod morton;
pub mod rans;
mod rans_wide;
pub mod rice;
pub mod seed;

pub use container::{MrzHeader, MrzParts, MrzReader, SharedBytes};
pub use elements::*;
use interp::Check;
pub use lifting::Lifting;

use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("{0}")]
    Invalid(String),
    #[error("value {index} is {value}: the GPU codec takes finite fields; one with NaN or infinities is coded on the CPU (--device cpu), which keeps them exactly")]
    NonFinite { index: usize, value: f64 },
    /// The reason is in the message, not a source, so that a chain of
    /// errors names it once.
    #[error("cannot read '{path}': {why}")]
    Io { path: String, why: std::io::Error },
    #[error("{path}: not a .mrz file ({what})")]
    NotMrz { path: String, what: String },
    #[error("{path}: {what}")]
    Corrupt { path: String, what: String },
    #[error("{path}: brick {brick} ({place}): {what}")]
    CorruptBrick {
        path: String,
        brick: usize,
        place: String,
        what: String,
    },
}

/// What the user bounds: the largest absolute error, that error relative
/// to the value range, or the PSNR (the range over the RMS error); or
/// nothing lost at all (every value's bits come back, NaN payloads,
/// infinities, signed zeros and subnormals included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ErrorBound {
    Abs(f64),
    Rel(f64),
    Psnr(f64),
    Lossless,
}

impl ErrorBound {
    pub(crate) fn code(self) -> (u8, f64) {
        match self {
            ErrorBound::Abs(e) => (0, e),
            ErrorBound::Rel(e) => (1, e),
            ErrorBound::Psnr(d) => (2, d),
            ErrorBound::Lossless => (3, 0.0),
        }
    }
    pub(crate) fn from_code(c: u8, v: f64) -> Option<Self> {
        match c {
            0 => Some(ErrorBound::Abs(v)),
            1 => Some(ErrorBound::Rel(v)),
            2 => Some(ErrorBound::Psnr(v)),
            3 => Some(ErrorBound::Lossless),
            _ => None,
        }
    }
    /// The absolute bound every value is held to. For a PSNR target the
    /// bound is range * 10^(-dB/20): a max error of E caps the RMS error at
    /// E, so the PSNR is at least the target.
    pub fn absolute(self, range: f64) -> f64 {
        match self {
            ErrorBound::Abs(e) => e,
            ErrorBound::Rel(e) => e * range,
            ErrorBound::Psnr(db) => range * 10f64.powf(-db / 20.0),
            ErrorBound::Lossless => 0.0,
        }
    }
}

impl fmt::Display for ErrorBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorBound::Abs(e) => write!(f, "abs:{e:e}"),
            ErrorBound::Rel(e) => write!(f, "rel:{e:e}"),
            ErrorBound::Psnr(d) => write!(f, "psnr:{d}"),
            ErrorBound::Lossless => write!(f, "lossless"),
        }
    }
}

impl FromStr for ErrorBound {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let help = "give abs:E (largest error), rel:E (of the value range), psnr:DB or lossless, e.g. abs:1e-3";
        if s.trim().eq_ignore_ascii_case("lossless") {
            return Ok(ErrorBound::Lossless);
        }
        let (kind, v) = s
            .split_once(':')
            .ok_or_else(|| format!("error bound '{s}': {help}"))?;
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("error bound '{s}': '{v}' is not a number; {help}"))?;
        let ok = v.is_finite() && v >= 0.0;
        match kind.trim().to_ascii_lowercase().as_str() {
            "abs" if ok => Ok(ErrorBound::Abs(v)),
            "rel" if ok => Ok(ErrorBound::Rel(v)),
            "psnr" if ok && v > 0.0 => Ok(ErrorBound::Psnr(v)),
            "abs" | "rel" | "psnr" => Err(format!(
                "error bound '{s}': the value must be finite and not negative (psnr: above 0)"
            )),
            _ => Err(format!("error bound '{s}': unknown kind '{kind}'; {help}")),
        }
    }
}

/// The stored precision; values are decoded to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    F32,
    F64,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 => 8,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }
    /// `v` as this type would hold it.
    pub fn round(self, v: f64) -> f64 {
        match self {
            DType::F32 => v as f32 as f64,
            DType::F64 => v,
        }
    }
}

/// The element type of the field as the user gave it: a float type, or
/// an integer type whose values are coded as floats of `coding()` (exact
/// for these) and decoded back to integers, rounded and clamped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F32,
    F64,
    U8,
    U16,
    I16,
    I32,
}

impl Elem {
    pub const ALL: [Elem; 6] = [
        Elem::F32,
        Elem::F64,
        Elem::U8,
        Elem::U16,
        Elem::I16,
        Elem::I32,
    ];
    pub fn code(self) -> u8 {
        Elem::ALL.iter().position(|&e| e == self).unwrap_or(0) as u8
    }
    pub fn from_code(c: u8) -> Option<Self> {
        Elem::ALL.get(c as usize).copied()
    }
    pub fn size(self) -> usize {
        match self {
            Elem::U8 => 1,
            Elem::U16 | Elem::I16 => 2,
            Elem::F32 | Elem::I32 => 4,
            Elem::F64 => 8,
        }
    }
    /// numpy's name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "float32",
            Elem::F64 => "float64",
            Elem::U8 => "uint8",
            Elem::U16 => "uint16",
            Elem::I16 => "int16",
            Elem::I32 => "int32",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Elem::ALL.into_iter().find(|e| e.name() == s)
    }
    pub fn is_integer(self) -> bool {
        !matches!(self, Elem::F32 | Elem::F64)
    }
    /// The float type the values are coded as: float32 holds every
    /// 8- and 16-bit integer exactly, float64 every 32-bit one.
    pub fn coding(self) -> DType {
        match self {
            Elem::F32 | Elem::U8 | Elem::U16 | Elem::I16 => DType::F32,
            Elem::F64 | Elem::I32 => DType::F64,
        }
    }
    /// The float type's own element.
    pub fn of_dtype(d: DType) -> Self {
        match d {
            DType::F32 => Elem::F32,
            DType::F64 => Elem::F64,
        }
    }
    /// The type's least and greatest values (integers).
    pub fn limits(self) -> (f64, f64) {
        match self {
            Elem::U8 => (0.0, u8::MAX as f64),
            Elem::U16 => (0.0, u16::MAX as f64),
            Elem::I16 => (i16::MIN as f64, i16::MAX as f64),
            Elem::I32 => (i32::MIN as f64, i32::MAX as f64),
            Elem::F32 | Elem::F64 => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }
    /// The absolute bound integers are coded under for a bound `e` in
    /// integer units: a decoded value within floor(e) + 0.49 of an integer
    /// rounds to one within floor(e) of it (and to it below 1: lossless).
    pub fn integer_bound(e: f64) -> f64 {
        e.floor() + 0.49
    }
}

/// A stored value type: float32 fields stay float32 on the host (half
/// the memory and bandwidth of widening them), and the codec computes in
/// f64 from either.
pub trait Sample: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
    /// `v` rounded to this type (exact for values decoded to it).
    fn of_f64(v: f64) -> Self;
    /// The value's bits (float32's in the low half): what a lossless
    /// brick codes, which a widening to f64 would change for a
    /// signaling NaN.
    fn to_bits64(self) -> u64;
    /// The value of `bits` of `dtype`, exact where `dtype` is this type.
    fn of_bits64(bits: u64, dtype: DType) -> Self;
}

impl Sample for f32 {
    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline]
    fn of_f64(v: f64) -> Self {
        v as f32
    }
    #[inline]
    fn to_bits64(self) -> u64 {
        self.to_bits() as u64
    }
    #[inline]
    fn of_bits64(bits: u64, dtype: DType) -> Self {
        match dtype {
            DType::F32 => f32::from_bits(bits as u32),
            DType::F64 => f64::from_bits(bits) as f32,
        }
    }
}

impl Sample for f64 {
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn of_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    #[inline]
    fn of_bits64(bits: u64, dtype: DType) -> Self {
        match dtype {
            DType::F32 => f32::from_bits(bits as u32) as f64,
            DType::F64 => f64::from_bits(bits),
        }
    }
}

/// A field's values in their stored type.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Runs `$body` with `$d` bound to the values' slice, whichever the type.
#[macro_export]
macro_rules! with_values {
    ($v:expr, $d:ident => $body:expr) => {
        match $v {
            $crate::codec::Values::F32($d) => $body,
            $crate::codec::Values::F64($d) => $body,
        }
    };
}

impl Values {
    /// `data` held as `dtype` (rounded to float32 for F32).
    pub fn from_f64(data: Vec<f64>, dtype: DType) -> Self {
        match dtype {
            DType::F32 => Values::F32(data.par_iter().map(|&v| v as f32).collect()),
            DType::F64 => Values::F64(data),
        }
    }
    pub fn dtype(&self) -> DType {
        match self {
            Values::F32(_) => DType::F32,
            Values::F64(_) => DType::F64,
        }
    }
    pub fn len(&self) -> usize {
        with_values!(self, d => d.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Value `i` (panics out of range, as indexing does).
    pub fn get(&self, i: usize) -> f64 {
        with_values!(self, d => d[i].to_f64())
    }
    /// The values widened to f64 (a copy).
    pub fn to_f64(&self) -> Vec<f64> {
        with_values!(self, d => d.par_iter().map(|v| v.to_f64()).collect())
    }
    /// The bytes of the values as stored.
    pub fn byte_len(&self) -> usize {
        self.len() * self.dtype().size()
    }
    /// `len` zeros of `dtype`, their pages touched in parallel.
    pub fn zeros(dtype: DType, len: usize) -> Self {
        match dtype {
            DType::F32 => Values::F32(crate::memory::touched_vec(len)),
            DType::F64 => Values::F64(crate::memory::touched_vec(len)),
        }
    }
}

/// A 2-D (dims[0] == 1) or 3-D field, [z, y, x] row-major, in its stored
/// type.
#[derive(Debug, Clone)]
pub struct Volume {
    pub data: Values,
    pub dims: [usize; 3],
    pub ndim: usize,
}

/// A field's values where they already lie (borrowed): a `Volume`'s, or
/// a memory-mapped file's, so that a field need not be copied (or fit in
/// memory) to be compressed.
#[derive(Debug, Clone, Copy)]
pub enum ValuesRef<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
}

macro_rules! with_values_ref {
    ($v:expr, $d:ident => $body:expr) => {
        match $v {
            $crate::codec::ValuesRef::F32($d) => $body,
            $crate::codec::ValuesRef::F64($d) => $body,
        }
    };
}

impl ValuesRef<'_> {
    pub fn len(&self) -> usize {
        with_values_ref!(self, d => d.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn dtype(&self) -> DType {
        match self {
            ValuesRef::F32(_) => DType::F32,
            ValuesRef::F64(_) => DType::F64,
        }
    }
    pub fn get(&self, i: usize) -> f64 {
        with_values_ref!(self, d => d[i].to_f64())
    }
}

/// A 2-D or 3-D field over borrowed values (`Volume::view`, or
/// `FieldView::of` over a memory-mapped file's values).
#[derive(Debug, Clone, Copy)]
pub struct FieldView<'a> {
    pub data: ValuesRef<'a>,
    pub dims: [usize; 3],
    pub ndim: usize,
}

impl<'a> FieldView<'a> {
    /// A field from its shape (2 or 3 axes) and its values.
    pub fn of(shape: &[usize], data: ValuesRef<'a>) -> Result<Self, CodecError> {
        let dims = Volume::check(shape, data.len())?;
        Ok(FieldView {
            data,
            dims,
            ndim: shape.len(),
        })
    }
    pub fn info(&self) -> FieldInfo {
        FieldInfo {
            dims: self.dims,
            ndim: self.ndim,
            dtype: self.data.dtype(),
        }
    }
}

/// [z, y, x] of a 2-D (z = 1) or 3-D shape.
fn dims_of(shape: &[usize]) -> Result<[usize; 3], CodecError> {
    match *shape {
        [y, x] => Ok([1, y, x]),
        [z, y, x] => Ok([z, y, x]),
        _ => Err(CodecError::Invalid(format!(
            "a field of shape {shape:?}: the codec takes 2-D or 3-D arrays"
        ))),
    }
}

/// What a field is apart from its values (the container's header needs
/// no more; a field on the GPU has no host values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldInfo {
    pub dims: [usize; 3],
    pub ndim: usize,
    pub dtype: DType,
}

impl FieldInfo {
    /// A field of `shape` (2 or 3 axes, none empty).
    pub fn new(shape: &[usize], dtype: DType) -> Result<Self, CodecError> {
        let dims = dims_of(shape)?;
        if dims.contains(&0) || dims.iter().any(|&d| d > u32::MAX as usize) {
            return Err(CodecError::Invalid(format!(
                "shape {shape:?}: axes must hold 1 to {} values",
                u32::MAX
            )));
        }
        Ok(FieldInfo {
            dims,
            ndim: shape.len(),
            dtype,
        })
    }
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn shape(&self) -> Vec<usize> {
        self.dims[3 - self.ndim..].to_vec()
    }
}

impl Volume {
    /// The field over its values, borrowed.
    pub fn view(&self) -> FieldView<'_> {
        FieldView {
            data: match &self.data {
                Values::F32(d) => ValuesRef::F32(d),
                Values::F64(d) => ValuesRef::F64(d),
            },
            dims: self.dims,
            ndim: self.ndim,
        }
    }

    pub fn info(&self) -> FieldInfo {
        FieldInfo {
            dims: self.dims,
            ndim: self.ndim,
            dtype: self.dtype(),
        }
    }
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// A field from its shape (2 or 3 axes) and values as f64, held as
    /// `dtype` (rounded to float32 for F32).
    pub fn new(shape: &[usize], data: Vec<f64>, dtype: DType) -> Result<Self, CodecError> {
        Self::of(shape, Values::from_f64(data, dtype))
    }

    /// A field from its shape (2 or 3 axes) and its values.
    pub fn of(shape: &[usize], data: Values) -> Result<Self, CodecError> {
        let dims = Self::check(shape, data.len())?;
        Ok(Volume {
            data,
            dims,
            ndim: shape.len(),
        })
    }

    fn check(shape: &[usize], len: usize) -> Result<[usize; 3], CodecError> {
        let dims = dims_of(shape)?;
        if dims.contains(&0) || dims.iter().product::<usize>() != len {
            return Err(CodecError::Invalid(format!(
                "shape {shape:?} does not match {len} values (or has an empty axis)"
            )));
        }
        if dims.iter().any(|&d| d > u32::MAX as usize) {
            return Err(CodecError::Invalid(format!(
                "shape {shape:?}: axes are limited to {} values",
                u32::MAX
            )));
        }
        Ok(dims)
    }
    pub fn shape(&self) -> Vec<usize> {
        self.info().shape()
    }
    pub fn range(&self) -> (f64, f64) {
        let (lo, hi, _) = with_values!(&self.data, d => scan(d));
        (lo, hi)
    }
}

/// The smallest and largest values and whether any is NaN (NaN escapes
/// min and max), in one parallel pass in the stored type. Sixteen running
/// minima and maxima a thread, so the compiler keeps them in vector
/// registers: one running pair was bound by its own latency (0.25 s for a
/// 4 GB field on 16 cores).
pub fn scan<T: Sample + PartialOrd>(d: &[T]) -> (f64, f64, bool) {
    const L: usize = 16;
    d.par_chunks(1 << 16)
        .map(|c| {
            let (mut lo, mut hi, mut nan) = ([c[0]; L], [c[0]; L], [false; L]);
            let mut rows = c.chunks_exact(L);
            for r in &mut rows {
                for i in 0..L {
                    let x = r[i];
                    lo[i] = if x < lo[i] { x } else { lo[i] };
                    hi[i] = if x > hi[i] { x } else { hi[i] };
                    // Only NaN is unequal to itself.
                    #[allow(clippy::eq_op)]
                    {
                        nan[i] |= x != x;
                    }
                }
            }
            let (mut l, mut h, mut n) = (f64::INFINITY, f64::NEG_INFINITY, false);
            for x in lo
                .iter()
                .chain(&hi)
                .chain(rows.remainder())
                .map(|x| x.to_f64())
            {
                l = l.min(x);
                h = h.max(x);
                n |= x.is_nan();
            }
            (l, h, n || nan.contains(&true))
        })
        .reduce(
            || (f64::INFINITY, f64::NEG_INFINITY, false),
            |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 | b.2),
        )
}

#[derive(Debug, Clone)]
pub struct CodecOptions {
    pub transform: Lifting,
    pub bound: ErrorBound,
    /// Brick extent [z, y, x] (default: 128^3 for 3-D, 256^2 for 2-D).
    pub brick: Option<[usize; 3]>,
    /// The longest rANS chunk in values (`interp`): a power of two from
    /// 2048 to 65536 (default). A GPU decodes each chunk in one serial chain, so shorter
    /// chunks decode faster there; each chunk costs about 36 bits, which
    /// only fields of very few bits a value notice (the smooth benchmark
    /// field at 1024^3: 2.3 times larger files at 2^14, 1.6 at 2^15).
    pub rans_chunk: usize,
    /// The element type the field was given in, when it is not the
    /// values' float type (integers: `Elem::coding`).
    pub elem: Option<Elem>,
    /// The shape the field was given in, when it is not the coded one
    /// (a 1-D signal coded as 1 x N, a 4-D field with its first two axes
    /// as one).
    pub axes: Option<Vec<usize>>,
}

impl CodecOptions {
    pub fn new(transform: Lifting, bound: ErrorBound) -> Self {
        CodecOptions {
            transform,
            bound,
            brick: None,
            rans_chunk: 1 << rans::CHUNK_MAX_LOG,
            elem: None,
            axes: None,
        }
    }

    /// log2 of `rans_chunk` (see `rans_chunk_log`).
    pub fn rans_chunk_log(&self) -> Result<u32, CodecError> {
        rans_chunk_log(self.rans_chunk)
    }

    /// The bricks a field of `dims` is cut into: the asked (or default)
    /// extent, clipped to the field.
    pub fn grid(&self, dims: [usize; 3]) -> Result<BrickGrid, CodecError> {
        let brick = self
            .brick
            .unwrap_or_else(|| default_brick(dims, self.transform));
        if brick.contains(&0) {
            return Err(CodecError::Invalid(format!(
                "brick {brick:?}: every extent must be at least 1"
            )));
        }
        let brick = [0, 1, 2].map(|a| brick[a].min(dims[a]));
        if brick
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .is_none_or(|v| v > MAX_BRICK_VALUES)
        {
            return Err(CodecError::Invalid(format!(
                "brick {brick:?}: at most {MAX_BRICK_VALUES} values a brick (each is decoded in memory on one core)"
            )));
        }
        Ok(BrickGrid { dims, brick })
    }
}

/// The most values a brick may hold: each is decoded in memory on one
/// core, so a file claiming more is forged (2^28 values: 2 GiB of float64;
/// the default bricks hold 129^3, about 2^21).
pub const MAX_BRICK_VALUES: usize = 1 << 28;

/// log2 of a longest rANS chunk of `values`, or an error naming the
/// lengths there are (the CLI checks its flags with it as it parses them).
pub fn rans_chunk_log(values: usize) -> Result<u32, CodecError> {
    let ok = values.is_power_of_two()
        && (rans::CHUNK_MIN_LOG..=rans::CHUNK_MAX_LOG).contains(&values.trailing_zeros());
    if ok {
        Ok(values.trailing_zeros())
    } else {
        let there: Vec<String> = (rans::CHUNK_MIN_LOG..=rans::CHUNK_MAX_LOG)
            .map(|l| (1usize << l).to_string())
            .collect();
        Err(CodecError::Invalid(format!(
            "rANS chunk of {values} values: give one of {}",
            there.join(", ")
        )))
    }
}

/// What a compression did, for the CLI and the benchmarks.
#[derive(Debug, Clone)]
pub struct CodecStats {
    pub abs_bound: f64,
    pub max_error: f64,
    pub psnr: f64,
    /// The squared errors overflowed float64 (errors beyond about 1e154),
    /// so `psnr` is the bound the largest error gives: the PSNR is at
    /// least that.
    pub psnr_bound: bool,
    pub outliers: usize,
    pub bytes: usize,
    pub ratio: f64,
}

/// Peak signal-to-noise ratio (dB) of `n` values spanning `range` with
/// squared errors summing to `sse`; infinite when exact.
pub fn psnr(range: f64, sse: f64, n: usize) -> f64 {
    let rmse = (sse / n.max(1) as f64).sqrt();
    if rmse > 0.0 {
        20.0 * (range / rmse).log10()
    } else {
        f64::INFINITY
    }
}

/// `psnr` of `n` values in `lo..=hi` for any finite field: where the
/// range overflows float64 its logarithm comes from its halves, and where
/// the squared errors' sum overflowed (errors beyond about 1e154) the
/// largest error stands for the root mean square error, which it bounds;
/// the second value says so. On other fields, exactly `psnr`.
pub fn psnr_of((lo, hi): (f64, f64), sse: f64, max_error: f64, n: usize) -> (f64, bool) {
    let range = hi - lo;
    if range.is_finite() && sse.is_finite() {
        return (psnr(range, sse, n), false);
    }
    let log_range = if range.is_finite() {
        range.log10()
    } else {
        (hi / 2.0 - lo / 2.0).log10() + 2f64.log10()
    };
    let (rmse, bound) = if sse.is_finite() {
        ((sse / n.max(1) as f64).sqrt(), false)
    } else {
        (max_error, true)
    };
    if rmse > 0.0 {
        (20.0 * (log_range - rmse.log10()), bound)
    } else {
        (f64::INFINITY, false)
    }
}

/// Levels a brick is lifted (at most).
pub const MAX_LEVELS: usize = 6;
/// Quantization steps tried per brick, as multiples of the bound.
pub const STEP_FACTORS: [f64; 3] = [1.2, 1.8, 2.6];

/// The quantization steps tried on a brick whose largest magnitude is
/// `peak`: multiples of the bound; a zero bound still needs a step (the
/// outliers then carry the values that do not come back exactly).
pub fn steps(e: f64, peak: f64) -> [f64; 3] {
    STEP_FACTORS.map(|f| {
        if e > 0.0 {
            f * e
        } else {
            (peak * 1e-6).max(f64::MIN_POSITIVE)
        }
    })
}

// After the macros above, which the parts use.
mod bricks;
mod coarse;
mod pipeline;

pub use bricks::*;
pub use coarse::*;
pub use pipeline::*;

#[cfg(test)]
mod tests;

/// The tests' xorshift64 generator from `seed`.
#[cfg(test)]
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
