//! The .mrz container: a versioned header, independently decodable bricks,
//! and an index with a checksum per brick. All integers little-endian.
//!
//! ```text
//! header  "MRZ" 0x1a | version u16 | dtype u8 | ndim u8 | transform u8 |
//!         bound kind u8 | bound f64 | absolute bound f64 | dims 3 x u64 |
//!         brick 3 x u32 | value min f64 | value max f64 | bricks u64 |
//!         index offset u64 | [version 8: element u8 | axes u8 | 0 u16 |
//!         first axis u32] | crc32 of the above u32
//! bricks  payloads, one after the other
//! index   per brick: offset u64 | length u64 | crc32 u32; then crc32 of the index
//! ```

use super::{BrickGrid, CodecError, DType, Elem, ErrorBound, Lifting};
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

pub const MAGIC: [u8; 4] = *b"MRZ\x1a";
/// 9: the fast profile's Lorenzo bricks (`lorenzo`; no other field is
/// written as 9);
/// 8: integer elements, 1-D and 4-D shapes and lossless bricks (the
/// header's eight bytes more say which; a float field of 2 or 3 axes under
/// a lossy bound is still written as version 7, byte for byte);
/// 7: rANS contexts restart every 2^11 values and chunks may be 2^11
/// (`rans::RESET`; a stream's first word says which restart it has);
/// 6: rANS chunks of 2^12 and 2^13 values (`rans::CHUNK_MIN_LOG`);
/// 5: the interpolation's details coded pass by pass (`interp::Order`);
/// 4: dense rANS chunks split; 3: the interpolating wavelet's bricks
/// rANS-coded; 2: all Rice-coded; 1, zstd, was never released.
pub const VERSION: u16 = 9;
/// What integer, 1-D, 4-D and lossless fields are written as.
pub const LAYOUT_VERSION: u16 = 8;
/// What a float field of 2 or 3 axes under a lossy bound is written as:
/// the bytes of the builds before version 8.
pub const PLAIN_VERSION: u16 = 7;
/// The oldest version this build reads (version 4 codes the
/// interpolation's details in Morton order, and version 3 also has no
/// split rANS chunks: `rans::Split`).
pub const OLDEST_VERSION: u16 = 3;
pub const HEADER_LEN: usize = 4 + 2 + 4 + 8 + 8 + 24 + 12 + 16 + 8 + 8 + 4;
/// Version 8's header: `HEADER_LEN` and the layout's eight bytes.
pub const HEADER_LEN_V8: usize = HEADER_LEN + 8;

/// The header's length in a file of `version`.
pub fn header_len(version: u16) -> usize {
    if version >= 8 {
        HEADER_LEN_V8
    } else {
        HEADER_LEN
    }
}
/// Bytes of a brick's index entry: offset (u64), length (u64), CRC-32 (u32).
pub const ENTRY_LEN: usize = 20;

#[derive(Debug, Clone, PartialEq)]
pub struct MrzHeader {
    /// The format version (`OLDEST_VERSION` to `VERSION`): the encoder
    /// writes `VERSION`; a file read keeps its own.
    pub version: u16,
    pub dtype: DType,
    pub ndim: usize,
    pub dims: [usize; 3],
    pub transform: Lifting,
    pub bound: ErrorBound,
    pub abs_bound: f64,
    pub brick: [usize; 3],
    pub value_range: (f64, f64),
    /// The element type the field was given in (integers are coded as
    /// floats of `dtype` and decoded back).
    pub elem: Elem,
    /// The field's shape as given (1 to 4 axes): a 1-D signal is coded as
    /// a 1 x N field, a 4-D one with its first two axes as one.
    pub axes: Vec<usize>,
}

impl MrzHeader {
    /// The field's shape as given.
    pub fn shape(&self) -> Vec<usize> {
        self.axes.clone()
    }
    /// Whether the bricks are lossless float bricks (`lossless`; an
    /// integer field's lossless bricks are lossy ones within 0.49).
    pub fn is_lossless(&self) -> bool {
        self.bound == ErrorBound::Lossless && !self.elem.is_integer()
    }
    /// The coded field's shape (2 or 3 axes).
    pub fn coded_shape(&self) -> Vec<usize> {
        self.dims[3 - self.ndim..].to_vec()
    }
    /// The version a header of this field is written with: 7 unless the
    /// field needs version 8 (or its bricks 9).
    pub fn needed_version(&self) -> u16 {
        if self.transform == Lifting::Lorenzo {
            return VERSION;
        }
        let plain = self.elem == Elem::of_dtype(self.dtype)
            && self.axes == self.coded_shape()
            && self.bound != ErrorBound::Lossless;
        if plain {
            PLAIN_VERSION
        } else {
            LAYOUT_VERSION
        }
    }
    pub fn grid(&self) -> BrickGrid {
        BrickGrid {
            dims: self.dims,
            brick: self.brick,
        }
    }
    /// The field's size as given (a uint8 image is a byte a value).
    pub fn raw_bytes(&self) -> usize {
        self.dims.iter().product::<usize>() * self.elem.size()
    }
}

/// The whole file for `payloads` (one per brick of the header's grid).
pub fn write(h: &MrzHeader, payloads: &[&[u8]]) -> Vec<u8> {
    parts(h, payloads.to_vec()).to_vec()
}

/// A .mrz file as its parts: header, payloads (in brick order, left where
/// they were coded) and index. Written one after another they are the
/// file, so a writer need not join them: for a GPU's 600 MB of payloads
/// the join (a copy into fresh memory) took a quarter of the compression.
pub struct MrzParts<P> {
    pub head: Vec<u8>,
    pub payloads: Vec<P>,
    pub index: Vec<u8>,
}

/// The container's CRC-32 (zlib's polynomial, as crc32fast sums it) by
/// crc-fast, which folds with 256/512-bit carry-less multiplies where the
/// CPU has them: 15-18 GB/s a thread on the H200 host's Xeon against
/// crc32fast's 12-13, which a decode's checks on two GPUs wait for
///.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32IsoHdlc, bytes) as u32
}

/// The header and index for `payloads` (one per brick of the header's
/// grid), each payload's checksum taken on every core.
pub fn parts<P: AsRef<[u8]> + Sync>(h: &MrzHeader, payloads: Vec<P>) -> MrzParts<P> {
    use rayon::prelude::*;
    let crcs: Vec<u32> = payloads.par_iter().map(|p| crc32(p.as_ref())).collect();
    parts_with_checksums(h, payloads, crcs)
}

/// `parts` with each payload's CRC-32 (`crc32`) already taken, as the
/// GPU's slots take them while the next batches code; a list of the wrong
/// length is taken again here.
pub fn parts_with_checksums<P: AsRef<[u8]> + Sync>(
    h: &MrzHeader,
    payloads: Vec<P>,
    crcs: Vec<u32>,
) -> MrzParts<P> {
    if crcs.len() != payloads.len() {
        return parts(h, payloads);
    }
    let entries: Vec<(u64, u32)> = payloads
        .iter()
        .zip(&crcs)
        .map(|(p, &c)| (p.as_ref().len() as u64, c))
        .collect();
    let (head, index) = frame(h, &entries);
    MrzParts {
        head,
        payloads,
        index,
    }
}

/// The header and the index of a file of header `h` whose payloads, in
/// brick order, have the lengths and CRC-32s `entries`: what surrounds
/// the payloads (written by MPI rank 0 while every rank writes its own).
pub fn frame(h: &MrzHeader, entries: &[(u64, u32)]) -> (Vec<u8>, Vec<u8>) {
    let total: u64 = entries.iter().map(|e| e.0).sum();
    let head_len = header_len(h.version);
    let mut out = Vec::with_capacity(head_len);
    let index_offset = head_len as u64 + total;
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&h.version.to_le_bytes());
    let (bk, bv) = h.bound.code();
    out.push(match h.dtype {
        DType::F32 => 0,
        DType::F64 => 1,
    });
    out.push(h.ndim as u8);
    out.push(h.transform.code());
    out.push(bk);
    out.extend_from_slice(&bv.to_le_bytes());
    out.extend_from_slice(&h.abs_bound.to_le_bytes());
    for d in h.dims {
        out.extend_from_slice(&(d as u64).to_le_bytes());
    }
    for b in h.brick {
        out.extend_from_slice(&(b as u32).to_le_bytes());
    }
    out.extend_from_slice(&h.value_range.0.to_le_bytes());
    out.extend_from_slice(&h.value_range.1.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    out.extend_from_slice(&index_offset.to_le_bytes());
    if h.version >= 8 {
        out.push(h.elem.code());
        out.push(h.axes.len() as u8);
        out.extend_from_slice(&[0, 0]);
        let first = if h.axes.len() == 4 { h.axes[0] } else { 1 };
        out.extend_from_slice(&(first as u32).to_le_bytes());
    }
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(out.len(), head_len);
    let mut index = Vec::with_capacity(entries.len() * ENTRY_LEN + 4);
    let mut at = out.len() as u64;
    for &(len, crc) in entries {
        index.extend_from_slice(&at.to_le_bytes());
        index.extend_from_slice(&len.to_le_bytes());
        index.extend_from_slice(&crc.to_le_bytes());
        at += len;
    }
    let crc = crc32(&index);
    index.extend_from_slice(&crc.to_le_bytes());
    (out, index)
}

impl<P: AsRef<[u8]>> std::fmt::Debug for MrzParts<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body: usize = self.payloads.iter().map(|p| p.as_ref().len()).sum();
        write!(
            f,
            "MrzParts {{ {} payloads, {} + {body} + {} bytes }}",
            self.payloads.len(),
            self.head.len(),
            self.index.len()
        )
    }
}

impl<P: AsRef<[u8]> + Sync> MrzParts<P> {
    /// The file's length in bytes.
    pub fn len(&self) -> usize {
        let body: usize = self.payloads.iter().map(|p| p.as_ref().len()).sum();
        self.head.len() + body + self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parts in file order.
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> {
        std::iter::once(self.head.as_slice())
            .chain(self.payloads.iter().map(|p| p.as_ref()))
            .chain(std::iter::once(self.index.as_slice()))
    }

    /// Writes the file to `w`, part after part.
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.pieces().try_for_each(|p| w.write_all(p))
    }

    /// Whether the file equals `bytes`, without joining it.
    pub fn equals(&self, bytes: &[u8]) -> bool {
        let mut rest = bytes;
        for p in self.pieces() {
            match rest.split_at_checked(p.len()) {
                Some((a, b)) if a == p => rest = b,
                _ => return false,
            }
        }
        rest.is_empty()
    }

    /// The file in one vector, copied on every core.
    pub fn to_vec(&self) -> Vec<u8> {
        use rayon::prelude::*;
        // The file's pages come untouched and are first written by the
        // copying workers: a serial resize of 1 GB (page faults and zeroing
        // on one core) took longer than the GPU's coding.
        let mut out = crate::memory::zeroed_vec::<u8>(self.len());
        let mut rest = out.as_mut_slice();
        let mut dsts = Vec::with_capacity(self.payloads.len() + 2);
        let pieces: Vec<&[u8]> = self.pieces().collect();
        for p in &pieces {
            let (a, b) = rest.split_at_mut(p.len());
            dsts.push(a);
            rest = b;
        }
        dsts.into_par_iter()
            .zip(pieces.par_iter())
            .for_each(|(d, p)| d.copy_from_slice(p));
        out
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}
impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&self.b[self.pos..self.pos + N]);
        self.pos += N;
        a
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
}

/// An open .mrz: header and index read and checked; bricks read on demand.
pub struct MrzReader {
    path: String,
    file: Source,
    header: MrzHeader,
    index: Vec<(u64, u64, u32)>,
    file_len: u64,
}

pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// A payload, and the index's checksum of it where that is still to verify.
pub type Unverified<'a> = (std::borrow::Cow<'a, [u8]>, Option<u32>);

/// A file's bytes in memory, shared with whoever else holds them.
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Where the bytes come from. Files (on Unix) and bytes in memory are read
/// at positions, so many bricks are read at once; any other reader is read
/// one brick at a time behind a lock.
enum Source {
    #[cfg(unix)]
    File(std::fs::File),
    Bytes(SharedBytes),
    Reader(std::sync::Mutex<Box<dyn ReadSeek>>),
}

impl Source {
    fn len(&mut self) -> std::io::Result<u64> {
        match self {
            #[cfg(unix)]
            Source::File(f) => Ok(f.metadata()?.len()),
            Source::Bytes(b) => Ok((**b).as_ref().len() as u64),
            Source::Reader(r) => r
                .get_mut()
                .map_err(|_| std::io::Error::other("the reader failed before"))?
                .seek(SeekFrom::End(0)),
        }
    }

    /// Fills `buf` from byte `at` on.
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        match self {
            #[cfg(unix)]
            Source::File(f) => std::os::unix::fs::FileExt::read_exact_at(f, buf, at),
            Source::Bytes(b) => {
                let part = usize::try_from(at)
                    .ok()
                    .and_then(|a| (**b).as_ref().get(a..a.checked_add(buf.len())?))
                    .ok_or(std::io::ErrorKind::UnexpectedEof)?;
                buf.copy_from_slice(part);
                Ok(())
            }
            Source::Reader(r) => {
                let mut r = r
                    .lock()
                    .map_err(|_| std::io::Error::other("the reader failed before"))?;
                r.seek(SeekFrom::Start(at))?;
                r.read_exact(buf)
            }
        }
    }
}

impl MrzReader {
    pub fn open(path: &std::path::Path) -> Result<Self, CodecError> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|why| CodecError::Io {
            path: name.clone(),
            why,
        })?;
        #[cfg(unix)]
        let src = Source::File(file);
        #[cfg(not(unix))]
        let src = {
            let r: Box<dyn ReadSeek> = Box::new(std::io::BufReader::new(file));
            Source::Reader(std::sync::Mutex::new(r))
        };
        Self::from_source(src, &name)
    }

    /// Reads and checks the header and index of `file` (`name` for errors).
    pub fn from_reader(file: Box<dyn ReadSeek>, name: &str) -> Result<Self, CodecError> {
        Self::from_source(Source::Reader(std::sync::Mutex::new(file)), name)
    }

    /// The same for a file's bytes in memory (bricks are then read on
    /// every core).
    pub fn from_bytes(bytes: Vec<u8>, name: &str) -> Result<Self, CodecError> {
        Self::from_source(Source::Bytes(Arc::new(bytes)), name)
    }

    /// The same for bytes held elsewhere, for example in page-locked
    /// memory, which a GPU decoder copies up without gathering them first.
    pub fn from_shared(bytes: SharedBytes, name: &str) -> Result<Self, CodecError> {
        Self::from_source(Source::Bytes(bytes), name)
    }

    fn from_source(mut file: Source, name: &str) -> Result<Self, CodecError> {
        let io = |why: std::io::Error| CodecError::Io {
            path: name.to_string(),
            why,
        };
        let corrupt = |what: String| CodecError::Corrupt {
            path: name.to_string(),
            what,
        };
        let file_len = file.len().map_err(io)?;
        let mut head = vec![0u8; (HEADER_LEN_V8 as u64).min(file_len) as usize];
        file.read_at(&mut head, 0).map_err(io)?;
        if head.len() < 6 || head[..4] != MAGIC {
            return Err(CodecError::NotMrz {
                path: name.to_string(),
                what: "it does not start with the MRZ magic".into(),
            });
        }
        let version = u16::from_le_bytes([head[4], head[5]]);
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(CodecError::NotMrz {
                path: name.to_string(),
                what: format!(
                    "format version {version}; this build reads versions {OLDEST_VERSION} to {VERSION}"
                ),
            });
        }
        let head_len = header_len(version);
        if head.len() < head_len {
            return Err(corrupt(format!(
                "truncated: {file_len} bytes, shorter than the {head_len}-byte header"
            )));
        }
        head.truncate(head_len);
        let crc = u32::from_le_bytes(head[head_len - 4..].try_into().unwrap_or_default());
        if crc32(&head[..head_len - 4]) != crc {
            return Err(corrupt("the header's checksum does not match".into()));
        }
        let mut c = Cursor { b: &head, pos: 6 };
        let dtype = match c.u8() {
            0 => DType::F32,
            1 => DType::F64,
            d => return Err(corrupt(format!("unknown value type {d}"))),
        };
        let ndim = c.u8() as usize;
        let tcode = c.u8();
        let transform = Lifting::from_code(tcode)
            .filter(|&t| t != Lifting::Lorenzo || version >= 9)
            .ok_or_else(|| corrupt(format!("unknown transform {tcode}")))?;
        let (bk, bv) = (c.u8(), c.f64());
        let bound = ErrorBound::from_code(bk, bv)
            .ok_or_else(|| corrupt(format!("unknown bound kind {bk}")))?;
        let abs_bound = c.f64();
        let dims = [c.u64(), c.u64(), c.u64()];
        let brick = [c.u32(), c.u32(), c.u32()].map(|b| b as usize);
        let value_range = (c.f64(), c.f64());
        let n_bricks = c.u64();
        let index_offset = c.u64();
        let (elem, n_axes, first) = if version >= 8 {
            let (e, a, _, _) = (c.u8(), c.u8(), c.u8(), c.u8());
            let elem =
                Elem::from_code(e).ok_or_else(|| corrupt(format!("unknown element type {e}")))?;
            (elem, a as usize, c.u32() as u64)
        } else {
            (Elem::of_dtype(dtype), ndim, 1)
        };
        if elem.coding() != dtype && elem.is_integer() {
            return Err(corrupt(format!(
                "{} values coded as {}",
                elem.name(),
                dtype.name()
            )));
        }
        if !(ndim == 2 || ndim == 3) || dims.contains(&0) || brick.contains(&0) {
            return Err(corrupt(format!(
                "shape {dims:?} / brick {brick:?} of a {ndim}-D field"
            )));
        }
        let dims = dims.map(|d| d as usize);
        let count = dims
            .iter()
            .try_fold(1u128, |a, &d| a.checked_mul(d as u128));
        if count.is_none_or(|c| c > (1u128 << 48)) || (ndim == 2 && dims[0] != 1) {
            return Err(corrupt(format!("implausible shape {dims:?}")));
        }
        let axes = match (n_axes, ndim) {
            (1, 2) if dims[1] == 1 => vec![dims[2]],
            (2, 2) | (3, 3) => dims[3 - ndim..].to_vec(),
            (4, 3) if first >= 1 && (dims[0] as u64).is_multiple_of(first) => {
                vec![first as usize, dims[0] / first as usize, dims[1], dims[2]]
            }
            _ => {
                return Err(corrupt(format!(
                    "a field of {n_axes} axes coded as {dims:?} ({ndim}-D)"
                )))
            }
        };
        let brick = [0, 1, 2].map(|a| brick[a].min(dims[a]));
        if brick.iter().product::<usize>() > super::MAX_BRICK_VALUES {
            return Err(corrupt(format!(
                "bricks of {brick:?} values: larger than any this codec writes (at most {} values)",
                super::MAX_BRICK_VALUES
            )));
        }
        let header = MrzHeader {
            version,
            dtype,
            ndim,
            dims,
            transform,
            bound,
            abs_bound,
            brick,
            value_range,
            elem,
            axes,
        };
        let grid = header.grid();
        if grid.len() as u64 != n_bricks {
            return Err(corrupt(format!(
                "{n_bricks} bricks listed, the shape and brick size make {}",
                grid.len()
            )));
        }
        let index_len = n_bricks
            .checked_mul(ENTRY_LEN as u64)
            .and_then(|l| l.checked_add(4))
            .filter(|&l| index_offset.checked_add(l) == Some(file_len))
            .ok_or_else(|| {
                corrupt(format!(
                    "truncated or padded: {file_len} bytes, the index of {n_bricks} bricks at {index_offset} does not end the file"
                ))
            })?;
        let mut idx = vec![0u8; index_len as usize];
        file.read_at(&mut idx, index_offset).map_err(io)?;
        let (body, tail) = idx.split_at(idx.len() - 4);
        if crc32(body) != u32::from_le_bytes(tail.try_into().unwrap_or_default()) {
            return Err(corrupt("the brick index's checksum does not match".into()));
        }
        let mut c = Cursor { b: body, pos: 0 };
        let mut index = Vec::with_capacity(n_bricks as usize);
        for k in 0..n_bricks as usize {
            let (o, l, crc) = (c.u64(), c.u64(), c.u32());
            if o < head_len as u64 || o.checked_add(l).is_none_or(|e| e > index_offset) {
                return Err(corrupt(format!(
                    "brick {k} ({}) lies outside the data ({o} + {l} bytes)",
                    grid.describe(k)
                )));
            }
            index.push((o, l, crc));
        }
        Ok(MrzReader {
            path: name.to_string(),
            file,
            header,
            index,
            file_len,
        })
    }

    /// The file's format version (`OLDEST_VERSION` to `VERSION`).
    pub fn version(&self) -> u16 {
        self.header.version
    }

    pub fn header(&self) -> &MrzHeader {
        &self.header
    }
    pub fn grid(&self) -> BrickGrid {
        self.header.grid()
    }
    pub fn path(&self) -> &str {
        &self.path
    }
    pub fn file_len(&self) -> u64 {
        self.file_len
    }
    /// Bytes of each brick's payload.
    pub fn brick_sizes(&self) -> Vec<u64> {
        self.index.iter().map(|e| e.1).collect()
    }

    /// The payloads of bricks `ks`, read and their checksums verified on
    /// every core; an error names the first bad brick of `ks`.
    pub fn read_bricks(&self, ks: &[usize]) -> Result<Vec<Vec<u8>>, CodecError> {
        use rayon::prelude::*;
        let got: Vec<Result<Vec<u8>, CodecError>> =
            ks.par_iter().map(|&k| self.read_brick(k)).collect();
        got.into_iter().collect()
    }

    /// An error naming brick `k` and where it lies.
    fn brick_error(&self, k: usize, what: String) -> CodecError {
        CodecError::CorruptBrick {
            path: self.path.clone(),
            brick: k,
            place: self.grid().describe(k),
            what,
        }
    }

    fn checksum_mismatch(&self, k: usize) -> CodecError {
        self.brick_error(k, "checksum mismatch: the brick is corrupt".into())
    }

    /// Brick `k`'s index entry: offset, length, checksum.
    fn entry(&self, k: usize) -> Result<(u64, u64, u32), CodecError> {
        self.index.get(k).copied().ok_or_else(|| {
            self.brick_error(
                k,
                format!("no such brick; the file has {}", self.index.len()),
            )
        })
    }

    /// The payloads of bricks `ks` (checksums verified) on every core,
    /// borrowed from a file held in memory instead of copied: the GPU
    /// decoder gathers them into pinned memory anyway, and copying 1 GB of
    /// payloads into fresh vectors took 40 ms.
    pub fn brick_slices(
        &self,
        ks: &[usize],
    ) -> Result<Vec<std::borrow::Cow<'_, [u8]>>, CodecError> {
        use rayon::prelude::*;
        self.brick_slices_unverified(ks)?
            .into_par_iter()
            .zip(ks.par_iter())
            .map(|((p, crc), &k)| {
                if let Some(c) = crc {
                    self.verify_brick(k, &p, c)?;
                }
                Ok(p)
            })
            .collect()
    }

    /// The payloads of bricks `ks` as `brick_slices` gives them, except
    /// that a payload borrowed from a file in memory comes with its
    /// checksum still to verify (`verify_brick`): a GPU decoder verifies
    /// them while its kernels decode, instead of before (about 10 ms for
    /// 1 GB on 16 cores). Payloads read from a file are verified here.
    pub fn brick_slices_unverified(&self, ks: &[usize]) -> Result<Vec<Unverified<'_>>, CodecError> {
        use std::borrow::Cow;
        let Source::Bytes(bytes) = &self.file else {
            return Ok(self
                .read_bricks(ks)?
                .into_iter()
                .map(|p| (Cow::Owned(p), None))
                .collect());
        };
        let bytes: &[u8] = (**bytes).as_ref();
        ks.iter()
            .map(|&k| {
                let (o, l, crc) = self.entry(k)?;
                let p = usize::try_from(o)
                    .ok()
                    .zip(usize::try_from(l).ok())
                    .and_then(|(o, l)| bytes.get(o..o.checked_add(l)?));
                match p {
                    Some(p) => Ok((Cow::Borrowed(p), Some(crc))),
                    // Past the end: read_brick names the fault.
                    None => self.read_brick(k).map(|p| (Cow::Owned(p), None)),
                }
            })
            .collect()
    }

    /// Whether `p`, brick `k`'s payload, has the checksum `crc` of the
    /// index: an error naming the brick if not.
    pub fn verify_brick(&self, k: usize, p: &[u8], crc: u32) -> Result<(), CodecError> {
        if crc32(p) == crc {
            Ok(())
        } else {
            Err(self.checksum_mismatch(k))
        }
    }

    /// Bytes `range` of brick `k`'s payload (cut to its length), without
    /// the checksum, which covers the whole payload: a coarse view reads
    /// its brick's first passes and outliers only, and its decoder checks
    /// what it reads. Also the payload's length.
    pub fn read_brick_part(
        &self,
        k: usize,
        range: std::ops::Range<u64>,
    ) -> Result<(Vec<u8>, u64), CodecError> {
        let (o, l, _) = self.entry(k)?;
        let (a, b) = (range.start.min(l), range.end.min(l));
        let mut p = vec![0u8; (b.saturating_sub(a)) as usize];
        self.file
            .read_at(&mut p, o + a)
            .map_err(|e| self.brick_error(k, format!("cannot be read ({e})")))?;
        Ok((p, l))
    }

    /// Brick `k`'s payload, its checksum verified.
    pub fn read_brick(&self, k: usize) -> Result<Vec<u8>, CodecError> {
        let (o, l, crc) = self.entry(k)?;
        let mut p = crate::memory::zeroed_vec::<u8>(l as usize);
        self.file
            .read_at(&mut p, o)
            .map_err(|e| self.brick_error(k, format!("cannot be read ({e})")))?;
        if crc32(&p) != crc {
            return Err(self.checksum_mismatch(k));
        }
        Ok(p)
    }
}
