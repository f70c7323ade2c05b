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
pub mod fields;
pub mod interp;
pub mod lifting;
pub mod morton;
pub mod rans;
mod rans_wide;
pub mod rice;
pub mod seed;

pub use container::{MrzHeader, MrzParts, MrzReader, SharedBytes};
use interp::Check;
pub use lifting::Lifting;

use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("{0}")]
    Invalid(String),
    #[error("value {index} is {value}: the codec bounds the error of finite values only; replace NaN/Inf first")]
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
/// to the value range, or the PSNR (the range over the RMS error).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ErrorBound {
    Abs(f64),
    Rel(f64),
    Psnr(f64),
}

impl ErrorBound {
    pub(crate) fn code(self) -> (u8, f64) {
        match self {
            ErrorBound::Abs(e) => (0, e),
            ErrorBound::Rel(e) => (1, e),
            ErrorBound::Psnr(d) => (2, d),
        }
    }
    pub(crate) fn from_code(c: u8, v: f64) -> Option<Self> {
        match c {
            0 => Some(ErrorBound::Abs(v)),
            1 => Some(ErrorBound::Rel(v)),
            2 => Some(ErrorBound::Psnr(v)),
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
        }
    }
}

impl fmt::Display for ErrorBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorBound::Abs(e) => write!(f, "abs:{e:e}"),
            ErrorBound::Rel(e) => write!(f, "rel:{e:e}"),
            ErrorBound::Psnr(d) => write!(f, "psnr:{d}"),
        }
    }
}

impl FromStr for ErrorBound {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let help =
            "give abs:E (largest error), rel:E (of the value range) or psnr:DB, e.g. abs:1e-3";
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

/// A stored value type: float32 fields stay float32 on the host (half
/// the memory and bandwidth of widening them), and the codec computes in
/// f64 from either.
pub trait Sample: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
    /// `v` rounded to this type (exact for values decoded to it).
    fn of_f64(v: f64) -> Self;
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
}

impl CodecOptions {
    pub fn new(transform: Lifting, bound: ErrorBound) -> Self {
        CodecOptions {
            transform,
            bound,
            brick: None,
            rans_chunk: 1 << rans::CHUNK_MAX_LOG,
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

/// The bricks of a volume: extents of the grid and each brick's box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrickGrid {
    pub dims: [usize; 3],
    pub brick: [usize; 3],
}

impl BrickGrid {
    pub fn counts(&self) -> [usize; 3] {
        [0, 1, 2].map(|a| self.dims[a].div_ceil(self.brick[a]))
    }
    pub fn len(&self) -> usize {
        self.counts().iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Start and extent of brick `k` (z-major over the grid).
    pub fn bounds(&self, k: usize) -> ([usize; 3], [usize; 3]) {
        let c = self.counts();
        let idx = [k / (c[1] * c[2]), (k / c[2]) % c[1], k % c[2]];
        let start = [0, 1, 2].map(|a| idx[a] * self.brick[a]);
        let ext = [0, 1, 2].map(|a| self.brick[a].min(self.dims[a] - start[a]));
        (start, ext)
    }
    pub fn describe(&self, k: usize) -> String {
        let (s, e) = self.bounds(k);
        format!(
            "z {}..{}, y {}..{}, x {}..{}",
            s[0],
            s[0] + e[0],
            s[1],
            s[1] + e[1],
            s[2],
            s[2] + e[2]
        )
    }
}

/// Default brick. Open-loop transforms: 128^3 (3-D), 256^2 (2-D); each
/// brick's faces are extended symmetrically, which costs detail
/// coefficients along them (on smooth 3-D fields 128^3 bricks code to half
/// the bytes of 64^3 ones). The interpolating wavelet: 129^3 and 257^2,
/// 2^k + 1 points, so every point inside a brick is interpolated and none
/// extrapolated (smooth 3-D fields code 2.7 times smaller than in 128^3
/// bricks). Clipped to the field.
pub fn default_brick(dims: [usize; 3], t: Lifting) -> [usize; 3] {
    let odd = (t == Lifting::Interp) as usize;
    if dims[0] > 1 {
        [128 + odd; 3]
    } else {
        [1, 256 + odd, 256 + odd]
    }
}

/// Brick values, row-major, copied out of the volume as f64.
pub fn gather(v: &Volume, start: [usize; 3], ext: [usize; 3]) -> Vec<f64> {
    let mut out = Vec::new();
    gather_into(v, start, ext, &mut out);
    out
}

/// `gather` into a buffer reused from brick to brick.
pub fn gather_into(v: &Volume, start: [usize; 3], ext: [usize; 3], out: &mut Vec<f64>) {
    gather_view(v.view(), start, ext, out)
}

/// `gather_into` from a field over borrowed values.
pub fn gather_view(v: FieldView, start: [usize; 3], ext: [usize; 3], out: &mut Vec<f64>) {
    out.clear();
    out.reserve(ext.iter().product());
    with_values_ref!(v.data, d => brick_rows(d, v.dims, start, ext)
        .for_each(|r| out.extend(r.iter().map(|x| x.to_f64()))));
}

/// A coding thread's buffers of brick size, reused from brick to brick:
/// fresh ones cost a page fault and a cleared page every 4 KiB, which
/// was a quarter of a one-thread compression and half a decompression.
#[derive(Default)]
pub struct BrickScratch {
    /// The brick's values (compression).
    pub x: Vec<f64>,
    /// Its reconstruction (compression and decompression).
    pub r: Vec<f64>,
    /// Zigzag codes in coding order.
    pub zz: Vec<u32>,
    /// The rANS coder's entries and words (compression).
    pub rans: rans::EncodeScratch,
}

/// Scratch buffers lent to one call's bricks: a brick takes the buffers a
/// finished brick gave back, so each thread faults in their pages (tens
/// of megabytes a 129^3 brick) once a call. rayon's `map_init` makes
/// fresh ones for every piece it splits the work into, and this VM
/// clears fresh pages slowly (a third of a one-core smooth decode's
/// profile was the kernel zeroing pages). Freed when the call ends.
#[derive(Default)]
struct ScratchPool(std::sync::Mutex<Vec<BrickScratch>>);

impl ScratchPool {
    fn with<R>(&self, f: impl FnOnce(&mut BrickScratch) -> R) -> R {
        let mut sc = self
            .0
            .lock()
            .ok()
            .and_then(|mut free| free.pop())
            .unwrap_or_default();
        let r = f(&mut sc);
        if let Ok(mut free) = self.0.lock() {
            free.push(sc);
        }
        r
    }
}

/// The x rows of the box at `start` of extent `ext` of a field of `dims`
/// held in `data`, in row-major order (what `gather` copies; the GPU
/// copies them into pinned memory).
pub fn brick_rows<T>(
    data: &[T],
    dims: [usize; 3],
    start: [usize; 3],
    ext: [usize; 3],
) -> impl Iterator<Item = &[T]> + '_ {
    (0..ext[0]).flat_map(move |z| {
        (0..ext[1]).map(move |y| {
            let o = ((start[0] + z) * dims[1] + start[1] + y) * dims[2] + start[2];
            &data[o..o + ext[2]]
        })
    })
}

/// A coefficient's quantized value: round half away from zero, clamped to
/// +-2^30 (what the clamp spoils becomes an outlier). The GPU kernel
/// computes the same.
pub(crate) fn quantize(c: f64, q: f64) -> i32 {
    // `round` (half away from zero) without its libm call or a branch, so
    // that rows of it vectorize: clamped to just past the clamp below (NaN
    // stays NaN and converts to 0), the truncation is exact and so is the
    // fraction left.
    let most = rice::MAX_INT;
    let v = (c / q).clamp(-most - 1.0, most + 1.0);
    let t = v as i32;
    let f = v - t as f64;
    let r = t + (f >= 0.5) as i32 - (f <= -0.5) as i32;
    r.clamp(-(most as i32), most as i32)
}

/// The brick's values as decoded from quantized coefficients (Morton
/// order) with step `q`: the one reconstruction both the encoder's check
/// and the decoder use.
fn reconstruct(
    ints: &[i32],
    q: f64,
    (t, o): (Lifting, interp::Order),
    dims: [usize; 3],
    dtype: DType,
) -> Vec<f64> {
    if t == Lifting::Interp {
        // The details of order `o` put in the pass order the inverse
        // reads (the decoder takes files of the current order, already
        // in it, another way: versions 3 and 4 come here).
        let mut grid = vec![0u32; ints.len()];
        for (&i, &k) in ints.iter().zip(interp::order(dims, o).iter()) {
            grid[k as usize] = rice::zigzag(i);
        }
        let zz: Vec<u32> = interp::order(dims, interp::Order::Passes)
            .iter()
            .map(|&k| grid[k as usize])
            .collect();
        let mut c = Vec::new();
        interp::inverse(&zz, dims, q, &mut c);
        c.iter_mut().for_each(|v| *v = dtype.round(*v));
        return c;
    }
    let levels = lifting::levels_for(dims, MAX_LEVELS);
    let order = morton::order(dims);
    let mut c = vec![0.0; ints.len()];
    for (&i, &k) in ints.iter().zip(order.iter()) {
        c[k as usize] = i as f64 * q;
    }
    lifting::inverse(t, true, &mut c, dims, levels);
    c.iter_mut().for_each(|v| *v = dtype.round(*v));
    c
}

/// The steps of 2e that bring `got` within `e` of `want` after rounding to
/// the stored type, if any (None: the exact value must be stored).
fn correction(want: f64, got: f64, e: f64, dtype: DType) -> Option<i32> {
    if !(e > 0.0 && got.is_finite()) {
        return None;
    }
    let k = ((want - got) / (2.0 * e)).round();
    if k == 0.0 || k.abs() > i32::MAX as f64 {
        return None;
    }
    let k = k as i32;
    ((want - apply(got, k, e, dtype)).abs() <= e).then_some(k)
}

/// `got` moved by k steps of 2e, as the decoder computes it.
fn apply(got: f64, k: i32, e: f64, dtype: DType) -> f64 {
    dtype.round(got + k as f64 * 2.0 * e)
}

/// The interpolation's zero-bound step for float64, relative to the
/// brick's peak: a power of two, so that the peak is exactly 2^20 steps
/// and a constant brick's anchors come back exactly (at `peak * 1e-6`
/// every value of a constant float64 field of ones was an outlier: ratio
/// 0.5 against 11,500 now). The lifting transforms keep `steps`': their
/// unit-gain coefficients are not exact either way.
pub const ZERO_BOUND_STEP: f64 = 1.0 / (1u64 << 20) as f64;

/// A float32 field's zero-bound step for the interpolation, relative to
/// the peak: a sixteenth of float32's epsilon, so that a reconstruction
/// within half a step of a value in the top four binades rounds back to
/// it (smooth 64^3 at `abs:0`: ratio 1.32 against 0.34 at `peak * 1e-6`).
/// A detail (at most 4.5 peaks, in steps divided by up to 1.5) stays
/// under the codes' clamp of 2^30 steps.
pub const ZERO_BOUND_STEP_F32: f64 = f32::EPSILON as f64 / 16.0;

/// The step of the closed-loop interpolation (`interp`): twice the bound,
/// less a margin for rounding the reconstruction to the stored type (an
/// ulp at the brick's largest magnitude `peak`), so few values need
/// outlier corrections. The brick's own peak, not the volume's, so a brick
/// can be coded before the rest of the volume has been read (streaming
/// under an absolute bound); each payload stores its step.
pub fn interp_step(e: f64, peak: f64, dtype: DType) -> f64 {
    let (ulp, z) = interp_step_factors(dtype);
    if e > 0.0 {
        2.0 * (e - peak * ulp).max(0.5 * e)
    } else {
        (peak * z).max(f64::MIN_POSITIVE)
    }
}

/// `interp_step`'s factors of the peak for `dtype`: the stored type's ulp
/// (a positive bound's margin) and the zero-bound step. The GPU's ISTEP
/// takes them from here, so the two cannot drift.
pub fn interp_step_factors(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F32 => (f32::EPSILON as f64, ZERO_BOUND_STEP_F32),
        DType::F64 => (f64::EPSILON, ZERO_BOUND_STEP),
    }
}

/// Encodes one brick (row-major values `x` of extent `dims`) under the
/// absolute bound `e`, with a thread's reused buffers (`s.x` is not
/// touched: `x` may be taken from it). The interpolating wavelet codes
/// once, at its step; the open-loop transforms try each candidate step
/// and keep the smallest output.
pub(crate) fn encode_brick_with(
    x: &[f64],
    dims: [usize; 3],
    t: Lifting,
    dtype: DType,
    (e, chunk_log): (f64, u32),
    s: &mut BrickScratch,
) -> Result<CodedBrick, CodecError> {
    let peak = x.iter().fold(0f64, |m, v| m.max(v.abs()));
    if t == Lifting::Interp {
        let q = interp_step(e, peak, dtype);
        let ck = match dtype {
            DType::F32 => interp::forward::<f32>(x, dims, (q, e), (&mut s.zz, &mut s.r)),
            DType::F64 => interp::forward::<f64>(x, dims, (q, e), (&mut s.zz, &mut s.r)),
        };
        let cl = interp::classes(dims, interp::Order::CURRENT);
        return Ok(finish_brick(
            (x, &s.r),
            ck,
            &s.zz,
            (q, e, dtype),
            Some((&cl, chunk_log, &mut s.rans)),
        ));
    }
    let levels = lifting::levels_for(dims, MAX_LEVELS);
    let mut c = x.to_vec();
    lifting::forward(t, true, &mut c, dims, levels);
    let order = morton::order(dims);
    // The candidate steps run side by side (a field may have fewer bricks
    // than the machine has cores); the smallest output wins, the first on
    // ties, so the choice does not depend on scheduling.
    let tries: Vec<CodedBrick> = steps(e, peak)
        .par_iter()
        .map(|&q| {
            let ints: Vec<i32> = order.iter().map(|&k| quantize(c[k as usize], q)).collect();
            let y = reconstruct(&ints, q, (t, interp::Order::CURRENT), dims, dtype);
            let zz: Vec<u32> = ints.iter().map(|&i| rice::zigzag(i)).collect();
            let mut ck = Check::default();
            for (k, (&a, &b)) in x.iter().zip(&y).enumerate() {
                ck.value(k, a, b, e);
            }
            finish_brick((x, &y), ck, &zz, (q, e, dtype), None)
        })
        .collect();
    tries
        .into_iter()
        .reduce(|a, b| if b.0.len() < a.0.len() { b } else { a })
        .ok_or_else(|| CodecError::Invalid("no quantization step was tried".into()))
}

/// A brick's payload from its quantized values (zigzag codes, coding
/// order), the values `x` and their reconstruction `y` (as the decoder
/// computes it, before rounding to the stored type) and the bound's check
/// of them: the step, the coefficient stream (rANS with the level
/// `classes` of the interpolation, Rice for the lifting transforms), then
/// the outliers: every value off by more than `e` gets a correction of
/// whole steps of 2e (within e once applied) or, where rounding to the
/// stored type defeats that, 0 and its exact value.
fn finish_brick(
    (x, y): (&[f64], &[f64]),
    ck: Check,
    zz: &[u32],
    (q, e, dtype): (f64, f64, DType),
    classes: Option<(&[u8], u32, &mut rans::EncodeScratch)>,
) -> CodedBrick {
    let Check {
        mut maxe,
        mut sse,
        mut bad,
    } = ck;
    // The outliers in index order (the interpolation meets them in its
    // coding order).
    bad.sort_unstable();
    let (mut steps, mut raw) = (Vec::with_capacity(bad.len()), Vec::new());
    for &k in &bad {
        let (a, b) = (x[k as usize], dtype.round(y[k as usize]));
        let fixed = correction(a, b, e, dtype);
        steps.push(fixed.unwrap_or(0));
        let v = match fixed {
            Some(s) => apply(b, s, e, dtype),
            None => {
                raw.push(a);
                a
            }
        };
        let d = (a - v).abs();
        maxe = maxe.max(d);
        sse += d * d;
    }
    let idx = bad;
    let words = match classes {
        Some((cl, most, scratch)) => rans::encode_with(zz, cl, most, scratch),
        None => rice::encode(zz),
    };
    let mut out =
        Vec::with_capacity(16 + 4 * words.len() + 8 * idx.len() + raw.len() * dtype.size());
    out.extend_from_slice(&q.to_le_bytes());
    words
        .iter()
        .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    out.extend_from_slice(&(idx.len() as u32).to_le_bytes());
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    idx.iter()
        .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    steps
        .iter()
        .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    for &v in &raw {
        match dtype {
            DType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            DType::F64 => out.extend_from_slice(&v.to_le_bytes()),
        }
    }
    (out, maxe, sse, idx.len())
}

/// A payload's step and the words after it (the coefficient stream and
/// the outliers), checked: the decoders' (CPU and GPU) first step.
pub fn brick_step(payload: &[u8]) -> Result<(f64, Vec<u32>), String> {
    let (q, words, _) = brick_step_prefix(payload, usize::MAX)?;
    Ok((q, words))
}

/// A brick's step and the first `words` words after it (all when fewer),
/// checked as `brick_step` says, and how many words follow the step. The
/// GPU decoder's host reads only headers: converting whole payloads (1 GB
/// for a 1024^3 turbulent field at 1e-4) cost more than decoding them on
/// the device.
pub fn brick_step_prefix(payload: &[u8], words: usize) -> Result<(f64, Vec<u32>, usize), String> {
    if payload.len() < 8 || !payload.len().is_multiple_of(4) {
        return Err(format!(
            "{} bytes, not a brick (a step and whole words)",
            payload.len()
        ));
    }
    let q = f64::from_le_bytes(payload[0..8].try_into().map_err(|_| "header")?);
    if !(q.is_finite() && q > 0.0) {
        return Err(format!("quantization step {q} is not a positive number"));
    }
    let total = (payload.len() - 8) / 4;
    Ok((
        q,
        payload_words(payload, 0..words.min(total)).collect(),
        total,
    ))
}

/// Words `range` after a checked payload's step, as stored (little-endian).
fn payload_words(payload: &[u8], range: std::ops::Range<usize>) -> impl Iterator<Item = u32> + '_ {
    payload[8 + 4 * range.start..8 + 4 * range.end]
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// The step and rANS header of an `interp` brick of `n` values, reading
/// only the header's words.
pub fn brick_rans_header(payload: &[u8], n: usize) -> Result<(f64, rans::Header), String> {
    let (q, mut words, total) = brick_step_prefix(payload, 2)?;
    if let [h0, h1] = words[..] {
        // The rest of the header's words, once the first two said how many.
        let need = rans::header_len(h0, h1, n).min(total);
        if need > words.len() {
            words.extend(payload_words(payload, words.len()..need));
        }
    }
    Ok((q, rans::read_header_of(&words, total, n)?))
}

/// Decodes a brick of extent `dims` of the file of header `h` from its
/// payload; errors say what is wrong (the container adds which brick).
pub fn decode_brick(payload: &[u8], dims: [usize; 3], h: &MrzHeader) -> Result<Vec<f64>, String> {
    let mut s = BrickScratch::default();
    decode_brick_with(payload, dims, h, &mut s)?;
    s.r.iter_mut().for_each(|v| *v = h.dtype.round(*v));
    Ok(std::mem::take(&mut s.r))
}

/// `decode_brick` into `s.r`, with a thread's reused buffers, but not yet
/// rounded to the stored type (but for outliers): `RegionOut::place`
/// rounds as it writes, which spares a pass over the brick's doubles
/// (about 2 ms of a 256^3 one-core decompression's 100-130).
pub fn decode_brick_with(
    payload: &[u8],
    dims: [usize; 3],
    h: &MrzHeader,
    s: &mut BrickScratch,
) -> Result<(), String> {
    let n: usize = dims.iter().product();
    let (q, words) = brick_step(payload)?;
    let (t, o) = (h.transform, interp::Order::of_version(h.version));
    let used = if t == Lifting::Interp && o == interp::Order::Passes {
        let used = rans::decode_into(&words, n, &interp::classes(dims, o), &mut s.zz)?;
        interp::inverse(&s.zz, dims, q, &mut s.r);
        used
    } else {
        let (zz, used) = if t == Lifting::Interp {
            rans::decode(&words, n, &interp::classes(dims, o))?
        } else {
            rice::decode(&words, n)?
        };
        let ints: Vec<i32> = zz.into_iter().map(rice::unzigzag).collect();
        s.r = reconstruct(&ints, q, (t, o), dims, h.dtype);
        used
    };
    correct(&mut s.r, &payload[8 + 4 * used..], h.abs_bound, h.dtype)
}

/// One stored correction: the value at `index` of its brick moves by
/// `steps` times twice the bound, or (steps 0) is `exact`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlier {
    pub index: usize,
    pub steps: i32,
    pub exact: f64,
}

/// The outlier section of a brick of `n` values (the bytes after its
/// coefficient stream), checked: indices inside and increasing, the exact
/// values all used.
pub fn outliers(rest: &[u8], n: usize, dtype: DType) -> Result<Vec<Outlier>, String> {
    let word = |i: usize| -> Result<u32, String> {
        rest.get(4 * i..4 * i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .ok_or_else(|| "the outlier list ends early".to_string())
    };
    let (count, nraw) = (word(0)? as usize, word(1)? as usize);
    if count > n || nraw > count {
        return Err(format!(
            "{count} outliers ({nraw} stored exactly) in {n} values"
        ));
    }
    let sz = dtype.size();
    let expect = 8 + 8 * count + sz * nraw;
    if rest.len() != expect {
        return Err(format!(
            "{} bytes of outliers, {expect} expected for {count} ({nraw} exact)",
            rest.len()
        ));
    }
    let raws = &rest[8 + 8 * count..];
    let (mut prev, mut r) = (None, 0usize);
    let mut list = Vec::with_capacity(count);
    for j in 0..count {
        let k = word(2 + j)? as usize;
        if k >= n || prev.is_some_and(|p| k <= p) {
            return Err(format!(
                "outlier {j} points outside the brick or out of order"
            ));
        }
        prev = Some(k);
        let steps = word(2 + count + j)? as i32;
        let mut exact = 0.0;
        if steps == 0 {
            let v = raws
                .get(r * sz..(r + 1) * sz)
                .ok_or("more exact outliers than stored values")?;
            r += 1;
            exact = match dtype {
                DType::F32 => f32::from_le_bytes([v[0], v[1], v[2], v[3]]) as f64,
                DType::F64 => f64::from_le_bytes(v.try_into().map_err(|_| "outlier")?),
            };
        }
        list.push(Outlier {
            index: k,
            steps,
            exact,
        });
    }
    if r != nraw {
        return Err(format!("{nraw} exact outliers stored, {r} used"));
    }
    Ok(list)
}

/// The outlier section of a brick applied to its reconstruction `y`: the
/// decoder's last step, shared with the GPU decoder.
pub fn apply_outliers(
    mut y: Vec<f64>,
    rest: &[u8],
    e: f64,
    dtype: DType,
) -> Result<Vec<f64>, String> {
    correct(&mut y, rest, e, dtype)?;
    Ok(y)
}

/// `apply_outliers` in place. A correction moves the value rounded to the
/// stored type, as the coder computed it; `y` may be rounded or not.
fn correct(y: &mut [f64], rest: &[u8], e: f64, dtype: DType) -> Result<(), String> {
    for o in outliers(rest, y.len(), dtype)? {
        y[o.index] = if o.steps != 0 {
            apply(dtype.round(y[o.index]), o.steps, e, dtype)
        } else {
            o.exact
        };
    }
    Ok(())
}

/// What every compression of `v` starts from: the value range, the
/// absolute bound and the bricks (errors for non-finite values or bounds).
pub fn plan(v: &Volume, opts: &CodecOptions) -> Result<((f64, f64), f64, BrickGrid), CodecError> {
    plan_view(v.view(), opts)
}

/// `plan` of a field over borrowed values.
pub fn plan_view(
    v: FieldView,
    opts: &CodecOptions,
) -> Result<((f64, f64), f64, BrickGrid), CodecError> {
    // One pass for the range and the finiteness; the offending index is
    // looked up only on error.
    let (lo, hi, nan) = with_values_ref!(v.data, d => scan(d));
    if nan || !lo.is_finite() || !hi.is_finite() {
        let first =
            with_values_ref!(v.data, d => d.par_iter().position_first(|x| !x.to_f64().is_finite()));
        if let Some(i) = first {
            return Err(CodecError::NonFinite {
                index: i,
                value: v.data.get(i),
            });
        }
    }
    plan_range((lo, hi), v.dims, opts)
}

/// `plan` from a range found elsewhere (the GPU's, for a field on the
/// device): the absolute bound and the bricks.
pub fn plan_range(
    (lo, hi): (f64, f64),
    dims: [usize; 3],
    opts: &CodecOptions,
) -> Result<((f64, f64), f64, BrickGrid), CodecError> {
    opts.rans_chunk_log()?;
    let e = opts.bound.absolute(hi - lo);
    if !(e.is_finite() && e >= 0.0) {
        let why = if (hi - lo).is_finite() {
            String::new()
        } else {
            format!(" (the values run from {lo:e} to {hi:e}, a range float64 cannot hold; give an absolute bound, abs:E)")
        };
        return Err(CodecError::Invalid(format!(
            "the bound {} gives an absolute bound of {e} on a range of {}{why}",
            opts.bound,
            hi - lo
        )));
    }
    Ok(((lo, hi), e, opts.grid(dims)?))
}

/// A coded brick: payload, largest error, squared error sum, outliers.
pub type CodedBrick = (Vec<u8>, f64, f64, usize);

/// The .mrz bytes and the statistics from the coded bricks (in grid
/// order), whichever device coded them (the GPU's payloads are ranges of
/// its batches' bytes).
pub fn assemble<P: AsRef<[u8]> + Sync>(
    v: FieldInfo,
    opts: &CodecOptions,
    range: (f64, f64),
    e: f64,
    grid: BrickGrid,
    coded: &[(P, f64, f64, usize)],
) -> (Vec<u8>, CodecStats) {
    let payloads: Vec<&[u8]> = coded.iter().map(|c| c.0.as_ref()).collect();
    let stats = coded.iter().map(|c| (c.1, c.2, c.3));
    let (parts, stats) = assemble_parts(v, opts, range, e, grid, (payloads, None), stats);
    (parts.to_vec(), stats)
}

/// `assemble` without joining the file: its parts, the payloads moved in
/// with their checksums if taken (`stats`: each brick's largest error,
/// squared error sum and outliers).
pub fn assemble_parts<P: AsRef<[u8]> + Sync>(
    v: FieldInfo,
    opts: &CodecOptions,
    range: (f64, f64),
    e: f64,
    grid: BrickGrid,
    (payloads, crcs): (Vec<P>, Option<Vec<u32>>),
    stats: impl Iterator<Item = (f64, f64, usize)>,
) -> (container::MrzParts<P>, CodecStats) {
    let (lo, hi) = range;
    let header = MrzHeader {
        version: container::VERSION,
        dtype: v.dtype,
        ndim: v.ndim,
        dims: v.dims,
        transform: opts.transform,
        bound: opts.bound,
        abs_bound: e,
        brick: grid.brick,
        value_range: (lo, hi),
    };
    let parts = match crcs {
        Some(c) => container::parts_with_checksums(&header, payloads, c),
        None => container::parts(&header, payloads),
    };
    let (mut max_error, mut sse, mut outliers) = (0.0f64, 0.0f64, 0usize);
    for (m, s, o) in stats {
        max_error = max_error.max(m);
        sse += s;
        outliers += o;
    }
    let bytes = parts.len();
    let (psnr, psnr_bound) = psnr_of((lo, hi), sse, max_error, v.len());
    let stats = CodecStats {
        abs_bound: e,
        max_error,
        psnr,
        psnr_bound,
        outliers,
        bytes,
        ratio: (v.len() * v.dtype.size()) as f64 / bytes as f64,
    };
    (parts, stats)
}

/// Compresses `v` into the bytes of a .mrz file.
pub fn compress(
    v: &Volume,
    opts: &CodecOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(Vec<u8>, CodecStats), CodecError> {
    compress_view(v.view(), opts, progress)
}

/// `compress` of a field over borrowed values (a memory-mapped .npy's, so
/// that it is neither copied nor needs to fit in memory).
pub fn compress_view(
    v: FieldView,
    opts: &CodecOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(Vec<u8>, CodecStats), CodecError> {
    let (range, e, grid) = plan_view(v, opts)?;
    let chunk_log = opts.rans_chunk_log()?;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let scratch = ScratchPool::default();
    let coded: Vec<CodedBrick> = (0..grid.len())
        .into_par_iter()
        .map(|k| {
            scratch.with(|sc| {
                let (s, ext) = grid.bounds(k);
                let mut x = std::mem::take(&mut sc.x);
                gather_view(v, s, ext, &mut x);
                let r =
                    encode_brick_with(&x, ext, opts.transform, v.data.dtype(), (e, chunk_log), sc);
                sc.x = x;
                progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
                r
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(assemble(v.info(), opts, range, e, grid, &coded))
}

/// A [start, end) range per axis [z, y, x] of a region to decode.
pub type Region = [(usize, usize); 3];

/// Parses "z0:z1,y0:y1,x0:x1" (3-D) or "y0:y1,x0:x1" (2-D); an empty end
/// means the axis's end, an empty start 0.
pub fn parse_region(s: &str, shape: &[usize]) -> Result<Region, String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() != shape.len() {
        return Err(format!(
            "region '{s}' has {} ranges for a {}-D field of shape {shape:?}; give one start:end per axis, e.g. {}",
            parts.len(),
            shape.len(),
            if shape.len() == 3 { "0:64,0:64,0:64" } else { "0:256,0:256" }
        ));
    }
    let mut r: Region = [(0, 1); 3];
    let off = 3 - shape.len();
    for (a, (p, &n)) in parts.iter().zip(shape).enumerate() {
        let (a0, a1) = p
            .split_once(':')
            .ok_or_else(|| format!("region '{s}': '{p}' is not start:end"))?;
        let num = |t: &str, dflt: usize| -> Result<usize, String> {
            if t.trim().is_empty() {
                Ok(dflt)
            } else {
                t.trim()
                    .parse()
                    .map_err(|_| format!("region '{s}': '{t}' is not a whole number"))
            }
        };
        let (b0, b1) = (num(a0, 0)?, num(a1, n)?);
        if b0 >= b1 || b1 > n {
            return Err(format!(
                "region '{s}': axis {a} range {b0}:{b1} must be non-empty and within 0:{n}"
            ));
        }
        r[a + off] = (b0, b1);
    }
    Ok(r)
}

/// The whole field as a region.
pub fn full_region(dims: [usize; 3]) -> Region {
    [(0, dims[0]), (0, dims[1]), (0, dims[2])]
}

/// The bricks of `grid` that meet `region`.
pub fn bricks_in(grid: &BrickGrid, region: &Region) -> Vec<usize> {
    (0..grid.len())
        .filter(|&k| {
            let (s, e) = grid.bounds(k);
            (0..3).all(|a| s[a] < region[a].1 && s[a] + e[a] > region[a].0)
        })
        .collect()
}

/// A region's output that decoded bricks are placed into from any thread,
/// each brick once: bricks never overlap, so no two placements write the
/// same value, and a brick placed twice is refused rather than raced.
pub struct RegionOut<'a, U> {
    ptr: *mut U,
    region: Region,
    dims: [usize; 3],
    grid: &'a BrickGrid,
    placed: Vec<std::sync::atomic::AtomicBool>,
    _out: std::marker::PhantomData<&'a mut [U]>,
}

// SAFETY: every write goes to a brick's own box within the region, and a
// brick's box is written by the one call that claimed the brick.
unsafe impl<U: Send> Send for RegionOut<'_, U> {}
unsafe impl<U: Send> Sync for RegionOut<'_, U> {}

impl<'a, U: Sample> RegionOut<'a, U> {
    /// `out` holds the region's values, row-major (None: its length is not
    /// the region's).
    pub fn new(out: &'a mut [U], region: Region, grid: &'a BrickGrid) -> Option<Self> {
        let dims = region.map(|(a, b)| b.saturating_sub(a));
        let inside = (0..3).all(|a| region[a].0 <= region[a].1 && region[a].1 <= grid.dims[a]);
        (inside && out.len() == dims.iter().product::<usize>()).then(|| RegionOut {
            ptr: out.as_mut_ptr(),
            region,
            dims,
            grid,
            placed: (0..grid.len())
                .map(|_| std::sync::atomic::AtomicBool::new(false))
                .collect(),
            _out: std::marker::PhantomData,
        })
    }

    /// Places brick `k`'s decoded values `y` (row-major over its extent)
    /// rounded to the stored type `dtype`, then moves its outliers `fix`
    /// (bound `e`) as the decoder does. False, with nothing written, when
    /// `k` is not a brick, `y` is not its size, or it was placed before.
    pub fn place<T: Sample>(
        &self,
        k: usize,
        y: &[T],
        fix: &[Outlier],
        e: f64,
        dtype: DType,
    ) -> bool {
        use std::sync::atomic::Ordering;
        if k >= self.grid.len() {
            return false;
        }
        let (s, ext) = self.grid.bounds(k);
        let n: usize = ext.iter().product();
        if y.len() != n || self.placed[k].swap(true, Ordering::AcqRel) {
            return false;
        }
        let (r, d) = (self.region, self.dims);
        let lo = [0, 1, 2].map(|a| s[a].max(r[a].0));
        let hi = [0, 1, 2].map(|a| (s[a] + ext[a]).min(r[a].1));
        if (0..3).any(|a| lo[a] >= hi[a]) {
            return true;
        }
        let at = |p: [usize; 3]| ((p[0] - r[0].0) * d[1] + p[1] - r[1].0) * d[2] + p[2] - r[2].0;
        for z in lo[0]..hi[0] {
            for yy in lo[1]..hi[1] {
                let src = ((z - s[0]) * ext[1] + (yy - s[1])) * ext[2] + lo[2] - s[2];
                let len = hi[2] - lo[2];
                // SAFETY: the row lies in brick k's box within the region
                // (inside `out`), which only this call writes.
                let row = unsafe {
                    std::slice::from_raw_parts_mut(self.ptr.add(at([z, yy, lo[2]])), len)
                };
                // Rounded to the stored type first (`decode_brick_with`
                // leaves that to here), then to the output's.
                for (o, &v) in row.iter_mut().zip(&y[src..src + len]) {
                    *o = U::of_f64(dtype.round(v.to_f64()));
                }
            }
        }
        for o in fix.iter().filter(|o| o.index < n) {
            let p = [
                s[0] + o.index / (ext[1] * ext[2]),
                s[1] + (o.index / ext[2]) % ext[1],
                s[2] + o.index % ext[2],
            ];
            if (0..3).any(|a| p[a] < lo[a] || p[a] >= hi[a]) {
                continue;
            }
            // SAFETY: as above, a value of brick k's box in the region.
            let v = unsafe { &mut *self.ptr.add(at(p)) };
            *v = U::of_f64(if o.steps != 0 {
                apply(v.to_f64(), o.steps, e, dtype)
            } else {
                o.exact
            });
        }
        true
    }
}

/// Decodes the bricks that meet `region` (all when None) of an open .mrz.
pub fn decompress(
    r: &mut MrzReader,
    region: Option<Region>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Volume, CodecError> {
    let h = r.header().clone();
    let region = region.unwrap_or(full_region(h.dims));
    let out_dims = region.map(|(a, b)| b.saturating_sub(a));
    let mut out = Values::zeros(h.dtype, out_dims.iter().product());
    with_values!(&mut out, o => decompress_into(r, Some(region), o, progress))?;
    let shape: Vec<usize> = out_dims[3 - h.ndim..].to_vec();
    Volume::of(&shape, out)
}

/// `decompress` into the caller's `out` (the region's values, row-major):
/// memory it already holds, such as the pages of a memory-mapped output
/// file. Values stored as float64 and decoded into float32 are rounded.
pub fn decompress_into<U: Sample>(
    r: &mut MrzReader,
    region: Option<Region>,
    out: &mut [U],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(), CodecError> {
    let h = r.header().clone();
    let region = region.unwrap_or(full_region(h.dims));
    let grid = r.grid();
    let o = RegionOut::new(out, region, &grid).ok_or_else(|| {
        CodecError::Invalid(format!(
            "region {region:?} is not inside the field {:?}, or the output does not hold its values",
            h.dims
        ))
    })?;
    let wanted = bricks_in(&grid, &region);
    let payloads: Vec<(usize, Vec<u8>)> = wanted
        .iter()
        .copied()
        .zip(r.read_bricks(&wanted)?)
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let path = r.path().to_string();
    let scratch = ScratchPool::default();
    // Each brick is placed as soon as it is decoded, so the decoded bricks
    // are never all held at once.
    payloads.into_par_iter().try_for_each(|(k, p)| {
        scratch.with(|sc| {
            let (_, ext) = grid.bounds(k);
            decode_brick_with(&p, ext, &h, sc).map_err(|what| CodecError::CorruptBrick {
                path: path.clone(),
                brick: k,
                place: grid.describe(k),
                what,
            })?;
            o.place(k, &sc.r, &[], 0.0, h.dtype);
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
            Ok::<(), CodecError>(())
        })
    })
}

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
