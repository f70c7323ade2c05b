//! Float32 .npy files read and written on every core, straight between the
//! file and the caller's memory: a 4 GB field took seconds through one
//! buffered stream and an extra copy (ndarray-npy's reader, then a Vec),
//! and the GPU codec wants it in page-locked memory it owns.
use super::IoError;
use rayon::prelude::*;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// `buf.len()` bytes of `file` from byte `at` (positioned reads, so every
/// core reads its own piece of one open file).
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut at) = (buf, at);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, buf, at)? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                k => {
                    buf = &mut buf[k..];
                    at += k as u64;
                }
            }
        }
        Ok(())
    }
}

/// `buf` written into `file` at byte `at`.
fn write_all_at(file: &File, buf: &[u8], at: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut at) = (buf, at);
        while !buf.is_empty() {
            let k = std::os::windows::fs::FileExt::seek_write(file, buf, at)?;
            buf = &buf[k..];
            at += k as u64;
        }
        Ok(())
    }
}

/// What an .npy header says, and where its data start.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyHeader {
    /// numpy's type string, e.g. `<f4`.
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<usize>,
    /// Bytes before the data.
    pub data_offset: u64,
    /// Bytes of the whole file.
    pub file_len: u64,
}

impl NpyHeader {
    /// Whether the data are little-endian float32 in C order: what
    /// `read_f32_npy_vec` and `read_f32_npy_at` read.
    pub fn is_f32_c_order(&self) -> bool {
        matches!(self.descr.as_str(), "<f4" | "=f4") && !self.fortran_order
    }

    /// Whether the data are little-endian float64 in C order.
    pub fn is_f64_c_order(&self) -> bool {
        matches!(self.descr.as_str(), "<f8" | "=f8") && !self.fortran_order
    }

    pub fn len(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
    }

    /// Whether the file is exactly the header and its values of `size`
    /// bytes each.
    pub fn fits(&self, size: u64) -> bool {
        self.len()
            .and_then(|n| (n as u64).checked_mul(size))
            .and_then(|b| b.checked_add(self.data_offset))
            == Some(self.file_len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }
}

/// Pieces each core reads or writes at a time.
const PIECE: usize = 1 << 21;

fn format_err(path: &Path, why: impl Into<String>) -> IoError {
    IoError::Format {
        path: path.display().to_string(),
        why: why.into(),
    }
}

/// The header of the .npy at `path` (numpy format versions 1 to 3).
pub fn read_npy_header(path: &Path) -> Result<NpyHeader, IoError> {
    let open_err = |source| IoError::Open {
        path: path.display().to_string(),
        why: source,
    };
    let mut f = File::open(path).map_err(open_err)?;
    let file_len = f.metadata().map_err(open_err)?.len();
    parse_npy_header(&mut f, file_len, &path.display().to_string())
}

/// The header of an .npy stream of `file_len` bytes (a file, or an .npz
/// member), read from its start; `label` names it in errors.
pub(super) fn parse_npy_header(
    f: &mut impl Read,
    file_len: u64,
    label: &str,
) -> Result<NpyHeader, IoError> {
    let bad = |why: &str| IoError::Format {
        path: label.to_string(),
        why: format!("not a valid .npy file: {why}"),
    };
    let mut pre = [0u8; 8];
    f.read_exact(&mut pre)
        .map_err(|_| bad("shorter than the .npy preamble"))?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err(bad("it does not start with \\x93NUMPY"));
    }
    let (len, at) = match pre[6] {
        1 => {
            let mut l = [0u8; 2];
            f.read_exact(&mut l).map_err(|_| bad("truncated header"))?;
            (u16::from_le_bytes(l) as u64, 10u64)
        }
        2 | 3 => {
            let mut l = [0u8; 4];
            f.read_exact(&mut l).map_err(|_| bad("truncated header"))?;
            (u32::from_le_bytes(l) as u64, 12u64)
        }
        v => return Err(bad(&format!("format version {v} (1 to 3 are known)"))),
    };
    if at + len > file_len {
        return Err(bad("its header runs past the end of the file"));
    }
    let mut text = vec![0u8; len as usize];
    f.read_exact(&mut text)
        .map_err(|_| bad("truncated header"))?;
    // Versions 1 and 2 are latin-1, 3 UTF-8; a valid header is ASCII.
    let text = String::from_utf8(text).map_err(|_| bad("its header is not text"))?;
    // numpy writes a flat dict whose deepest value is the shape's tuple;
    // the literal parser backtracks exponentially on deep nesting (a
    // fuzzed header of 60 '{' took minutes), so deeper headers are refused
    // before it runs, here and before ndarray-npy parses them again.
    if nesting(&text) > MAX_HEADER_NESTING {
        return Err(bad(
            "its header nests deeper than numpy's {'descr', 'fortran_order', 'shape': (...)}",
        ));
    }
    let dict: py_literal::Value = text
        .trim_end()
        .parse()
        .map_err(|e| bad(&format!("its header does not parse ({e})")))?;
    let entries = dict
        .as_dict()
        .ok_or_else(|| bad("its header is not a dictionary"))?;
    let get = |k: &str| {
        entries
            .iter()
            .find(|(key, _)| key.as_string().is_some_and(|s| s == k))
            .map(|(_, v)| v)
            .ok_or_else(|| bad(&format!("its header has no '{k}'")))
    };
    let descr = get("descr")?
        .as_string()
        .ok_or_else(|| bad("'descr' is not a plain type string"))?
        .clone();
    let fortran_order = get("fortran_order")?
        .as_boolean()
        .ok_or_else(|| bad("'fortran_order' is not True or False"))?;
    let shape = get("shape")?
        .as_tuple()
        .ok_or_else(|| bad("'shape' is not a tuple"))?
        .iter()
        .map(|d| {
            d.as_integer()
                .and_then(|i| i.to_string().parse::<usize>().ok())
                .ok_or_else(|| bad("'shape' holds something other than sizes"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NpyHeader {
        descr,
        fortran_order,
        shape,
        data_offset: at + len,
        file_len,
    })
}

/// How deep a header's dict may nest brackets: the dict, the shape's
/// tuple, and one more for a structured type's list of fields.
const MAX_HEADER_NESTING: usize = 3;

/// The deepest nesting of (), [] and {} in `text`, outside quotes.
fn nesting(text: &str) -> usize {
    let (mut depth, mut most, mut quote) = (0usize, 0usize, None);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => {
                depth += 1;
                most = most.max(depth);
            }
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    most
}

/// Bytes of one value of numpy type string `descr` (`<f8` -> 8, `<c16` ->
/// 16, `|u1` -> 1); None for types multires does not read.
fn item_size(descr: &str) -> Option<u64> {
    let digits = descr.get(2..)?;
    match descr.get(1..2)? {
        "f" | "c" | "i" | "u" | "b" => digits.parse().ok().filter(|&n| n > 0 && n <= 16),
        _ => None,
    }
}

/// Checks what an .npy header claims before anything is allocated: its
/// values must lie in the stream (`h.file_len` bytes), and the widened
/// float64 (or complex128) copy the readers make must fit `memory` bytes.
/// A header that claims 1e15 values is then a clear error, not an abort.
pub(super) fn check_npy_claim(h: &NpyHeader, label: &str, memory: u64) -> Result<(), IoError> {
    let err = |why: String| IoError::Format {
        path: label.to_string(),
        why,
    };
    let n = h.len().ok_or_else(|| {
        err(format!(
            "its header's shape {:?} is too large to address",
            h.shape
        ))
    })? as u64;
    let Some(size) = item_size(&h.descr) else {
        // The element readers name the unsupported type.
        return Ok(());
    };
    let data = h.file_len.saturating_sub(h.data_offset);
    match n.checked_mul(size) {
        Some(bytes) if bytes <= data => {}
        _ => {
            return Err(err(format!(
                "its header says shape {:?} of {} ({} values, {}), but the file holds only {} of data: truncated or corrupt",
                h.shape,
                h.descr,
                n,
                crate::memory::human_bytes(n.saturating_mul(size)),
                crate::memory::human_bytes(data)
            )))
        }
    }
    let widened = n
        .saturating_mul(size.max(8))
        .saturating_add(n.saturating_mul(size));
    if widened > memory {
        return Err(err(format!(
            "reading shape {:?} needs about {} of memory, more than the {} available",
            h.shape,
            crate::memory::human_bytes(widened),
            crate::memory::human_bytes(memory)
        )));
    }
    Ok(())
}

/// `check_npy_claim` for the .npy file at `path`, against the memory the
/// machine has free.
pub fn check_npy_file(path: &Path) -> Result<(), IoError> {
    let h = read_npy_header(path)?;
    check_npy_claim(
        &h,
        &path.display().to_string(),
        crate::memory::default_limit(),
    )
}

/// The data of a float32 .npy (`h`, from `read_npy_header`) read into
/// `dst[..]`, a piece of the array starting at value `first`: for callers
/// that own the destination (page-locked memory) and read it in parallel.
pub fn read_f32_npy_at(
    path: &Path,
    file: &File,
    h: &NpyHeader,
    first: usize,
    dst: &mut [f32],
) -> Result<(), IoError> {
    let at = h.data_offset + 4 * first as u64;
    read_exact_at(file, bytemuck::cast_slice_mut(dst), at)
        .map_err(|e| format_err(path, format!("reading values {first}..: {e}")))?;
    if cfg!(target_endian = "big") {
        for v in dst.iter_mut() {
            *v = f32::from_bits(u32::from_le(v.to_bits()));
        }
    }
    Ok(())
}

/// Checks that `h` describes a float32 C-order array whose data fill the
/// rest of the file exactly.
pub fn check_f32_npy(path: &Path, h: &NpyHeader) -> Result<usize, IoError> {
    if !h.is_f32_c_order() {
        return Err(format_err(
            path,
            format!(
                "holds {} {} values; this reader takes little-endian float32 in C order",
                h.descr,
                if h.fortran_order {
                    "Fortran-order"
                } else {
                    "C-order"
                }
            ),
        ));
    }
    let n = h
        .len()
        .ok_or_else(|| format_err(path, format!("shape {:?} is too large", h.shape)))?;
    let want = (n as u64)
        .checked_mul(4)
        .and_then(|b| b.checked_add(h.data_offset))
        .ok_or_else(|| format_err(path, format!("shape {:?} is too large", h.shape)))?;
    if want != h.file_len {
        return Err(format_err(
            path,
            format!(
                "its header says {:?} float32 values ({} bytes with the header), but the file has {} bytes",
                h.shape, want, h.file_len
            ),
        ));
    }
    Ok(n)
}

/// A little-endian file's values where they lie (memory-mapped,
/// read-only): no copy in ordinary memory, and the file may be larger
/// than RAM. The file must not shrink while it is mapped.
pub struct MappedValues<T> {
    map: memmap2::Mmap,
    start: usize,
    len: usize,
    _values: std::marker::PhantomData<T>,
}

/// A float32 file's values in place.
pub type MappedF32 = MappedValues<f32>;

impl<T: bytemuck::Pod> MappedValues<T> {
    /// The `h.len()` values of type T at `h.data_offset` of `path` (an
    /// .npy, or a raw file with offset 0); None where they cannot be used
    /// in place (a big-endian host, a start not aligned to T, a file
    /// system without maps): read them instead. A file shorter than its
    /// values is an error.
    pub fn open(path: &Path, h: &NpyHeader) -> Result<Option<Self>, IoError> {
        let size = std::mem::size_of::<T>();
        if cfg!(target_endian = "big") || !h.data_offset.is_multiple_of(size as u64) {
            return Ok(None);
        }
        let len = h
            .len()
            .ok_or_else(|| format_err(path, format!("shape {:?} is too large", h.shape)))?;
        let file = File::open(path).map_err(|why| IoError::Open {
            path: path.display().to_string(),
            why,
        })?;
        // SAFETY: the map is read-only and lives in this value; the file
        // is an input the caller does not change while it is mapped.
        let Ok(map) = (unsafe { memmap2::Mmap::map(&file) }) else {
            return Ok(None);
        };
        let start = h.data_offset as usize;
        let end = len.checked_mul(size).and_then(|b| b.checked_add(start));
        if end.is_none_or(|end| end > map.len()) {
            return Err(format_err(
                path,
                format!("the file is shorter than its {len} values of {size} bytes"),
            ));
        }
        Ok(Some(MappedValues {
            map,
            start,
            len,
            _values: std::marker::PhantomData,
        }))
    }

    pub fn values(&self) -> &[T] {
        // The start is aligned to T in a page-aligned map, and the bytes
        // were checked to hold `len` values.
        bytemuck::cast_slice(
            &self.map[self.start..self.start + std::mem::size_of::<T>() * self.len],
        )
    }
}

/// A shape and its values in C order.
pub type ShapedF32 = (Vec<usize>, Vec<f32>);

/// A float32 C-order .npy read on every core; None when the file is an
/// .npy of another type (for the general reader).
pub fn read_f32_npy_vec(path: &Path) -> Result<Option<ShapedF32>, IoError> {
    let h = read_npy_header(path)?;
    if !h.is_f32_c_order() {
        return Ok(None);
    }
    let n = check_f32_npy(path, &h)?;
    let file = File::open(path).map_err(|source| IoError::Open {
        path: path.display().to_string(),
        why: source,
    })?;
    // Zeroed by the allocator (fresh pages), then overwritten once.
    let mut data = vec![0f32; n];
    data.par_chunks_mut(PIECE)
        .enumerate()
        .try_for_each(|(i, d)| read_f32_npy_at(path, &file, &h, i * PIECE, d))?;
    Ok(Some((h.shape, data)))
}

/// Writes `data` (C order, `shape`) as a float32 .npy on every core,
/// atomically (a temporary file renamed into place when complete).
pub fn write_f32_npy(path: &Path, shape: &[usize], data: &[f32]) -> Result<(), IoError> {
    let n: usize = shape.iter().product();
    if n != data.len() {
        return Err(IoError::Write {
            path: path.display().to_string(),
            why: format!("shape {shape:?} does not match {} values", data.len()),
        });
    }
    super::write::with_temp_file(path, |file| {
        // The header, and the file's full length (a hole the pieces fill).
        ndarray_npy::write_zeroed_npy::<f32, _>(file, ndarray::IxDyn(shape))
            .map_err(|e| e.to_string())?;
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        let start = len
            .checked_sub(4 * n as u64)
            .ok_or("the header is longer than the file")?;
        data.par_chunks(PIECE).enumerate().try_for_each(|(i, d)| {
            let at = start + 4 * (i * PIECE) as u64;
            if cfg!(target_endian = "big") {
                let le: Vec<u8> = d.iter().flat_map(|v| v.to_le_bytes()).collect();
                write_all_at(file, &le, at)
            } else {
                write_all_at(file, bytemuck::cast_slice(d), at)
            }
            .map_err(|e| e.to_string())
        })
    })
}

/// The file's `len` bytes mapped for writing, with its blocks reserved
/// first (a write into a hole of a full disk through a map is a SIGBUS,
/// where `write` would return an error); None where that cannot be done.
#[cfg(all(target_os = "linux", target_endian = "little"))]
fn map_reserved(file: &File, len: u64) -> Option<memmap2::MmapMut> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(len).ok()?;
    // SAFETY: a valid descriptor of an open file.
    if unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) } != 0 {
        return None;
    }
    // SAFETY: the file is the caller's own temporary file, which nothing
    // else maps, truncates or writes until it is renamed after the map is
    // dropped.
    unsafe { memmap2::MmapMut::map_mut(file) }.ok()
}

#[cfg(not(all(target_os = "linux", target_endian = "little")))]
fn map_reserved(_file: &File, _len: u64) -> Option<memmap2::MmapMut> {
    None
}

/// Free bytes on the file system that holds `dir` (None where unknown).
#[cfg(target_os = "linux")]
#[allow(clippy::unnecessary_cast)] // the field types differ between targets
pub(crate) fn free_space(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct from a NUL-terminated path.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c.as_ptr(), &mut st) == 0)
            .then(|| (st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn free_space(_dir: &Path) -> Option<u64> {
    None
}

/// Refuses an output of `bytes` that the disk holding `path` has no room
/// for, before a block is reserved (a forged .mrz header claiming 4096^3
/// values would otherwise reserve 256 GiB).
fn check_room(path: &Path, bytes: u64) -> Result<(), IoError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match free_space(dir) {
        Some(free) if bytes > free => Err(IoError::Write {
            path: path.display().to_string(),
            why: format!(
                "it needs {} and the disk holding '{}' has {} free",
                crate::memory::human_bytes(bytes),
                dir.display(),
                crate::memory::human_bytes(free)
            ),
        }),
        _ => Ok(()),
    }
}

/// Writes a .npy of `shape` whose values `fill` puts straight into the
/// file's pages (memory-mapped): no copy of the whole field in ordinary
/// memory, so a field larger than RAM can be written, and no pass that
/// copies it into the file. As every writer here, it goes to a temporary
/// file renamed at the end: if `fill` fails, its error is returned and
/// nothing is left at `path`. Where the file's blocks cannot be reserved
/// and mapped (a full disk, a file system without either, big-endian
/// hosts), the values are made in memory and written as usual.
pub fn write_npy_mapped<T, E>(
    path: &Path,
    shape: &[usize],
    fill: impl FnOnce(&mut [T]) -> Result<(), E>,
) -> Result<(), E>
where
    T: ndarray_npy::WritableElement + bytemuck::Pod + Default,
    E: From<IoError>,
{
    write_npy_filled(path, shape, fill, true)
}

/// `write_npy_mapped`, mapping the file only where `may_map` (the tests
/// take the in-memory way that a failed map or reservation takes).
fn write_npy_filled<T, E>(
    path: &Path,
    shape: &[usize],
    fill: impl FnOnce(&mut [T]) -> Result<(), E>,
    may_map: bool,
) -> Result<(), E>
where
    T: ndarray_npy::WritableElement + bytemuck::Pod + Default,
    E: From<IoError>,
{
    let size = std::mem::size_of::<T>();
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|n| n.checked_mul(size).is_some())
        .ok_or_else(|| {
            E::from(IoError::Write {
                path: path.display().to_string(),
                why: format!("shape {shape:?} is too large to address"),
            })
        })?;
    let bytes = (n * size) as u64;
    check_room(path, bytes).map_err(E::from)?;
    let memory = crate::memory::default_limit();
    let mut failed: Option<E> = None;
    let written = super::write::with_temp_file(path, |file| {
        ndarray_npy::write_zeroed_npy::<T, _>(file, ndarray::IxDyn(shape))
            .map_err(|e| e.to_string())?;
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        let start = len
            .checked_sub((size * n) as u64)
            .ok_or("the header is longer than the file")? as usize;
        let mut map = if may_map {
            map_reserved(file, len)
        } else {
            None
        };
        let run = |out: &mut [T]| {
            fill(out).map_err(|e| {
                failed = Some(e);
                "the values could not be made".to_string()
            })
        };
        match map
            .as_mut()
            .and_then(|m| bytemuck::try_cast_slice_mut::<u8, T>(&mut m[start..]).ok())
        {
            // The pages are the file's: written back as any write is.
            Some(out) => run(out),
            // Never a buffer in memory larger than memory: say so instead.
            None if bytes > memory => Err(format!(
                "the file's {} cannot be mapped for writing here, and decoding them in memory needs more than the {} available",
                crate::memory::human_bytes(bytes),
                crate::memory::human_bytes(memory)
            )),
            None => {
                let mut owned = vec![T::default(); n];
                run(&mut owned)?;
                let bytes = bytemuck::cast_slice::<T, u8>(&owned);
                if cfg!(target_endian = "big") {
                    // .npy is little-endian: a swapped copy, only here.
                    let mut le = bytes.to_vec();
                    le.chunks_exact_mut(size).for_each(|b| b.reverse());
                    write_all_at(file, &le, start as u64)
                } else {
                    write_all_at(file, bytes, start as u64)
                }
                .map_err(|e| e.to_string())
            }
        }
    });
    match failed {
        Some(e) => Err(e),
        None => written.map_err(E::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray_npy::WriteNpyExt;

    #[test]
    fn a_mapped_npy_equals_the_written_one() {
        let dir = tempfile::tempdir().unwrap();
        let shape = [3, 5, 7];
        let v: Vec<f32> = (0..105).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
        let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
        write_f32_npy(&a, &shape, &v).unwrap();
        write_npy_mapped::<f32, IoError>(&b, &shape, |o| {
            o.copy_from_slice(&v);
            Ok(())
        })
        .unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let w: Vec<f64> = v.iter().map(|&x| x as f64 / 3.0).collect();
        let c = dir.path().join("c.npy");
        write_npy_mapped::<f64, IoError>(&c, &[15, 7], |o| {
            o.copy_from_slice(&w);
            Ok(())
        })
        .unwrap();
        let want = ndarray::Array2::from_shape_vec((15, 7), w).unwrap();
        let mut bytes = Vec::new();
        want.write_npy(&mut bytes).unwrap();
        assert_eq!(std::fs::read(&c).unwrap(), bytes);
    }

    /// The way taken where the file cannot be mapped writes the same
    /// bytes, and a failed fill there leaves nothing either.
    #[test]
    fn the_in_memory_way_writes_the_mapped_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let v: Vec<f64> = (0..231).map(|i| (i as f64 * 0.91).cos() * 1e5).collect();
        let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
        for (p, may_map) in [(&a, true), (&b, false)] {
            write_npy_filled::<f64, IoError>(
                p,
                &[3, 7, 11],
                |o| {
                    o.copy_from_slice(&v);
                    Ok(())
                },
                may_map,
            )
            .unwrap();
        }
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let c = dir.path().join("c.npy");
        let r = write_npy_filled::<f32, IoError>(
            &c,
            &[5],
            |_| {
                Err(IoError::Write {
                    path: "c".into(),
                    why: "brick 0 is corrupt".into(),
                })
            },
            false,
        );
        assert!(r.is_err_and(|e| e.to_string().contains("brick 0 is corrupt")));
        assert!(!c.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_mapped_f32_file_holds_the_read_values() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        let v: Vec<f32> = (0..60).map(|i| i as f32 * 0.5 - 7.0).collect();
        write_f32_npy(&p, &[3, 4, 5], &v).unwrap();
        let h = read_npy_header(&p).unwrap();
        let m = MappedF32::open(&p, &h).unwrap().unwrap();
        assert_eq!(m.values(), &v[..]);
        // More values than the file holds: an error, not a short slice.
        let long = NpyHeader {
            shape: vec![61],
            ..h.clone()
        };
        let e = MappedF32::open(&p, &long).err().unwrap();
        assert!(e.to_string().contains("shorter than its 61 values"), "{e}");
        // A start that is not 4-byte aligned: read, not mapped.
        let odd = NpyHeader {
            data_offset: h.data_offset + 2,
            shape: vec![10],
            ..h
        };
        assert!(MappedF32::open(&p, &odd).unwrap().is_none());
    }

    #[test]
    fn a_failed_mapped_npy_leaves_nothing_and_says_why() {
        #[derive(Debug)]
        enum E {
            Fill(&'static str),
            Io,
        }
        impl From<IoError> for E {
            fn from(_: IoError) -> Self {
                E::Io
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.npy");
        let r = write_npy_mapped::<f32, E>(&p, &[4, 4], |o| {
            o[0] = 1.0;
            Err(E::Fill("brick 3 is corrupt"))
        });
        assert!(matches!(r, Err(E::Fill("brick 3 is corrupt"))), "{r:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let r = write_npy_mapped::<f32, E>(&dir.path().join("no/such/dir.npy"), &[2], |_| Ok(()));
        assert!(matches!(r, Err(E::Io)), "{r:?}");
    }

    fn npy_of(shape: &[usize], v: &[f32]) -> Vec<u8> {
        let a = ndarray::ArrayD::from_shape_vec(shape.to_vec(), v.to_vec()).unwrap();
        let mut b = Vec::new();
        a.write_npy(&mut b).unwrap();
        b
    }

    #[test]
    fn float32_npy_reads_and_writes_like_ndarray_npy() {
        let dir = tempfile::tempdir().unwrap();
        // More than one piece, and a last piece that is not full.
        let n = 2 * PIECE + 1234;
        let v: Vec<f32> = (0..n).map(|i| (i as f32).sin() * 1e3).collect();
        let shape = [n / 2, 2];
        let p = dir.path().join("a.npy");
        std::fs::write(&p, npy_of(&shape, &v)).unwrap();
        let (s, back) = read_f32_npy_vec(&p).unwrap().unwrap();
        assert_eq!(s, shape);
        assert_eq!(back, v);
        // A piece from the middle, as the GPU codec's reader takes them.
        let h = read_npy_header(&p).unwrap();
        assert_eq!(check_f32_npy(&p, &h).unwrap(), n);
        let file = File::open(&p).unwrap();
        let mut dst = vec![-1f32; 1000];
        read_f32_npy_at(&p, &file, &h, PIECE + 7, &mut dst).unwrap();
        assert_eq!(dst, v[PIECE + 7..PIECE + 1007]);
        let e = read_f32_npy_at(&p, &file, &h, n - 10, &mut dst).unwrap_err();
        assert!(e.to_string().contains("a.npy"), "{e}");
        // Written on every core: the same bytes as ndarray-npy's writer.
        let q = dir.path().join("b.npy");
        write_f32_npy(&q, &shape, &v).unwrap();
        assert_eq!(std::fs::read(&q).unwrap(), npy_of(&shape, &v));
    }

    #[test]
    fn other_types_are_left_to_the_general_reader() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.npy");
        let a = ndarray::Array2::<f64>::zeros((3, 4));
        let mut b = Vec::new();
        a.write_npy(&mut b).unwrap();
        std::fs::write(&p, b).unwrap();
        assert!(read_f32_npy_vec(&p).unwrap().is_none());
        let h = read_npy_header(&p).unwrap();
        assert_eq!(h.shape, [3, 4]);
        assert_eq!(h.descr, "<f8");
        let e = check_f32_npy(&p, &h).unwrap_err();
        assert!(e.to_string().contains("<f8"), "{e}");
    }

    /// A header of deeply nested brackets (found by fuzzing: the literal
    /// parser took minutes on 60 of them) is refused at once.
    #[test]
    fn deeply_nested_headers_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("deep.npy");
        let text = format!(
            "{}'descr': '<f8', 'fortran_order': False, 'shape': (3,), }}",
            "{".repeat(60)
        );
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(text.len() as u16).to_le_bytes());
        b.extend_from_slice(text.as_bytes());
        b.extend_from_slice(&[0u8; 24]);
        std::fs::write(&p, b).unwrap();
        let t = std::time::Instant::now();
        let e = read_npy_header(&p).unwrap_err().to_string();
        assert!(e.contains("nests deeper"), "{e}");
        assert!(crate::io::read_signal(&p, &Default::default()).is_err());
        assert!(t.elapsed().as_secs() < 2);
        assert_eq!(nesting("{'descr': '<f8', 'shape': (3, 4), }"), 2);
        assert_eq!(nesting("{'descr': '(((', 'shape': (3,), }"), 2);
    }

    #[test]
    fn truncated_and_malformed_files_are_errors_naming_the_fault() {
        let dir = tempfile::tempdir().unwrap();
        let good = npy_of(&[4, 5], &[1.5; 20]);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..good.len() - 3].to_vec(), "the file has"),
            ([good.clone(), vec![0; 4]].concat(), "the file has"),
            (good[..5].to_vec(), "preamble"),
            (b"PK\x03\x04 not numpy".to_vec(), "NUMPY"),
            (good[..40].to_vec(), "header runs past"),
            (
                {
                    let mut g = good.clone();
                    g[6] = 9;
                    g
                },
                "version 9",
            ),
            (
                {
                    let mut g = good.clone();
                    let at = g.windows(5).position(|w| w == b"shape").unwrap();
                    g[at..at + 5].copy_from_slice(b"shapf");
                    g
                },
                "no 'shape'",
            ),
        ];
        for (i, (bytes, want)) in cases.into_iter().enumerate() {
            let p = dir.path().join(format!("c{i}.npy"));
            std::fs::write(&p, bytes).unwrap();
            let e = match read_f32_npy_vec(&p) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("case {i} read"),
            };
            assert!(e.contains(want), "case {i}: {e}");
            assert!(e.contains(&format!("c{i}.npy")), "case {i}: {e}");
        }
    }

    #[test]
    fn failed_writes_name_the_path_and_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w.npy");
        let e = write_f32_npy(&p, &[3, 3], &[0.0; 8]).unwrap_err();
        assert!(e.to_string().contains("w.npy"), "{e}");
        let q = dir.path().join("missing").join("w.npy");
        let e = write_f32_npy(&q, &[2, 2], &[0.0; 4]).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }
}
