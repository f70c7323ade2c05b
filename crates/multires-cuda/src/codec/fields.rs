//! Fields the GPUs read and write in place: on a device (`DeviceField`) or
//! in page-locked host memory (`PinnedField`), and their value ranges.

use super::*;

/// A float32 field (2-D or 3-D, row-major) in a GPU's memory: what
/// `compress_resident` reads and `decompress_resident` writes, for
/// pipelines whose data never leaves the device.
pub struct DeviceField {
    pub data: CudaSlice<f32>,
    pub info: FieldInfo,
}

impl DeviceField {
    /// `values` of `shape` copied to `gpu` through the transfer ring (a
    /// pageable copy goes at the driver's staging rate, a few GB/s).
    pub fn upload(gpu: &Gpu, shape: &[usize], values: &[f32]) -> Result<Self, CudaError> {
        let info = FieldInfo::new(shape, DType::F32)?;
        if info.len() != values.len() {
            return Err(CudaError::Unsupported(format!(
                "shape {shape:?} does not match {} values",
                values.len()
            )));
        }
        let data = crate::transfer::upload(gpu, &gpu.stream, values)?;
        Ok(DeviceField { data, info })
    }

    /// The values, copied back to the host through the transfer ring.
    pub fn download(&self, gpu: &Gpu) -> Result<Vec<f32>, CudaError> {
        let mut out = multires::memory::zeroed_vec::<f32>(self.info.len());
        crate::transfer::download_into(gpu, &gpu.stream, &self.data, 0, &mut out)?;
        Ok(out)
    }
}

/// A float32 field (2-D or 3-D, row-major) in page-locked host memory
/// that every GPU maps: `compress_pinned` reads it and `decompress_pinned`
/// writes it from the kernels, across PCIe. A field in ordinary
/// (pageable) memory must first be copied into pinned buffers by the host,
/// whose memory bandwidth then bounds every GPU together (48 GB/s on 32
/// cores of the two-GPU machine: two GPUs no faster than one).
pub struct PinnedField {
    pub(super) data: Registered<f32>,
    pub info: FieldInfo,
    /// The values' range (least and greatest finite value, and the first
    /// value that is not finite), taken on the host as the field was
    /// written (the values were in cache then); None once it may have
    /// changed. With it, a relative or PSNR bound is known before the
    /// field crosses PCIe, so `compress_pinned` codes layers as they
    /// arrive, as under an absolute bound.
    pub(super) range: Option<Range32>,
}

/// The range of `v` (values `first` on), in the form RANGE gives: least
/// and greatest finite value, and the first index that is not finite.
/// The CPU codec's vectorized `scan` first; a value-by-value pass only
/// where something is not finite.
pub(super) fn host_range(first: usize, v: &[f32]) -> Range32 {
    let (lo, hi, nan) = codec::scan(v);
    if !nan && lo.is_finite() && hi.is_finite() {
        return (lo as f32, hi as f32, None);
    }
    let (mut lo, mut hi, mut bad) = (f32::INFINITY, f32::NEG_INFINITY, None);
    for (i, &x) in v.iter().enumerate() {
        if x.is_finite() {
            lo = lo.min(x);
            hi = hi.max(x);
        } else if bad.is_none() {
            bad = Some(first + i);
        }
    }
    (lo, hi, bad)
}

/// Two ranges as one (the first bad index of either).
pub(super) fn join_ranges(a: Range32, b: Range32) -> Range32 {
    let bad = match (a.2, b.2) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    (a.0.min(b.0), a.1.max(b.1), bad)
}

/// Writes a piece of a field (values `first` on): `PinnedField::filled`.
pub type Filler<'f, E> = dyn Fn(usize, &mut [f32]) -> Result<(), E> + Sync + 'f;

/// Where a `PinnedField`'s values come from.
pub(super) enum Source<'a, E> {
    Zeros,
    Values(&'a [f32]),
    With(&'a Filler<'a, E>),
}

/// Why `PinnedField::filled` failed: the page-locked allocation (the
/// caller may fall back to ordinary memory), or the filler's own error.
#[derive(Debug)]
pub enum FillError<E> {
    Cuda(CudaError),
    Fill(E),
}

impl<E> From<CudaError> for FillError<E> {
    fn from(e: CudaError) -> Self {
        FillError::Cuda(e)
    }
}

impl FillError<std::convert::Infallible> {
    pub(super) fn into_cuda(self) -> CudaError {
        match self {
            FillError::Cuda(e) => e,
            FillError::Fill(never) => match never {},
        }
    }
}

impl PinnedField {
    /// The index of the first NaN or infinity, when the range taken as the
    /// field was written found one (the GPU codes finite fields; the CPU
    /// codec keeps such values exactly).
    pub fn first_nonfinite(&self) -> Option<usize> {
        self.range.and_then(|r| r.2)
    }

    /// A field of `shape` set to zero.
    pub fn zeros(gpu: &Arc<Gpu>, shape: &[usize]) -> Result<Self, CudaError> {
        Self::page_locked(gpu, shape, Source::Zeros).map_err(FillError::into_cuda)
    }

    /// `values` of `shape` copied into page-locked memory.
    pub fn from_values(gpu: &Arc<Gpu>, shape: &[usize], values: &[f32]) -> Result<Self, CudaError> {
        Self::page_locked(gpu, shape, Source::Values(values)).map_err(FillError::into_cuda)
    }

    /// A field of `shape` whose values `fill(first, piece)` writes, piece
    /// by piece on every core (value `first` on): a file read straight
    /// into page-locked memory, with no copy in ordinary memory first.
    pub fn filled<E: Send>(
        gpu: &Arc<Gpu>,
        shape: &[usize],
        fill: &Filler<'_, E>,
    ) -> Result<Self, FillError<E>> {
        Self::page_locked(gpu, shape, Source::With(fill))
    }

    /// A field of `shape` in ordinary memory on transparent huge pages,
    /// written on every core (zero, from `values`, or by a filler), then
    /// registered with CUDA. `cuMemHostAlloc` of 4 GiB took 2.4 s on the
    /// H100 machine (a million 4 KiB page faults, one thread);
    /// registering memory already touched took 0.18 s.
    pub(super) fn page_locked<E: Send>(
        gpu: &Arc<Gpu>,
        shape: &[usize],
        values: Source<'_, E>,
    ) -> Result<Self, FillError<E>> {
        use cudarc::driver::sys::{CU_MEMHOSTREGISTER_DEVICEMAP, CU_MEMHOSTREGISTER_PORTABLE};
        use rayon::prelude::*;
        const PIECE: usize = 1 << 18;
        let info = FieldInfo::new(shape, DType::F32).map_err(CudaError::from)?;
        if let Source::Values(v) = values {
            if v.len() != info.len() {
                return Err(FillError::Cuda(CudaError::Unsupported(format!(
                    "shape {shape:?} does not match {} values",
                    v.len()
                ))));
            }
        }
        if info.len().checked_mul(4).is_none() {
            return Err(FillError::Cuda(CudaError::Unsupported(format!(
                "shape {shape:?}: too many values to address"
            ))));
        }
        let none = (f32::INFINITY, f32::NEG_INFINITY, None);
        let (data, range) = match values {
            Source::Zeros => (
                multires::memory::touched_vec::<f32>(info.len()),
                (0.0, 0.0, None),
            ),
            Source::Values(v) => {
                let mut d = multires::memory::zeroed_vec::<f32>(info.len());
                let r = d
                    .par_chunks_mut(PIECE)
                    .zip(v.par_chunks(PIECE))
                    .enumerate()
                    .map(|(i, (d, s))| {
                        d.copy_from_slice(s);
                        host_range(i * PIECE, d)
                    })
                    .reduce(|| none, join_ranges);
                (d, r)
            }
            Source::With(fill) => {
                let mut d = multires::memory::zeroed_vec::<f32>(info.len());
                let r = d
                    .par_chunks_mut(PIECE)
                    .enumerate()
                    .map(|(i, c)| {
                        fill(i * PIECE, c)?;
                        Ok(host_range(i * PIECE, c))
                    })
                    .try_reduce(|| none, |a, b| Ok(join_ranges(a, b)))
                    .map_err(FillError::Fill)?;
                (d, r)
            }
        };
        // Portable: pinned for every GPU's context; device-mapped: the
        // kernels address it.
        let data = Registered::register(
            &gpu.ctx,
            data,
            CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP,
        )
        .map_err(|e| match e {
            CudaError::Driver { what, source } => CudaError::Driver {
                what: format!("{what} (a field of {shape:?})"),
                source,
            },
            e => e,
        })?;
        Ok(PinnedField {
            data,
            info,
            range: Some(range),
        })
    }

    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// The values to change (the range taken when it was written is
    /// forgotten: `compress_pinned` then takes it on the device).
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        self.range = None;
        &mut self.data
    }

    /// Its address for kernels of the context bound to this thread.
    pub(super) fn device_at(&self) -> Result<u64, CudaError> {
        crate::device::mapped_at(self.data.as_ptr() as *mut std::ffi::c_void)
    }
}

/// The error for brick `k` of the file at `path` that does not decode.
pub(super) fn corrupt_brick(
    path: &str,
    grid: &codec::BrickGrid,
    k: usize,
    what: String,
) -> CudaError {
    CudaError::Codec(codec::CodecError::CorruptBrick {
        path: path.to_string(),
        brick: k,
        place: grid.describe(k),
        what,
    })
}

/// Brick origins of a batch as GATHER and SCATTER take them.
pub(super) fn origins(grid: &codec::BrickGrid, bricks: impl Iterator<Item = usize>) -> Vec<i64> {
    bricks
        .flat_map(|k| grid.bounds(k).0.map(|v| v as i64))
        .collect()
}

impl Slot {
    /// The batch's bricks gathered from a float32 field at device address
    /// `at` (GPU memory, or page-locked host memory read across PCIe): as
    /// stored for the interpolation, as doubles into `x` for the lifting
    /// transforms (`t`). `in_place`: `at` is GPU memory that stays there
    /// until the batch is coded, so the interpolation reads the field
    /// itself and GATHER takes only the peaks (across PCIe, a point read
    /// at a time would cost a round trip each).
    pub(super) fn gather_from(
        &mut self,
        (at, in_place): (u64, bool),
        info: &FieldInfo,
        grid: &codec::BrickGrid,
        b: &Batch,
        t: lifting::Lifting,
    ) -> Result<(), CudaError> {
        let s = &self.stream.clone();
        let org = self
            .stage
            .up(&self.gpu, s, &origins(grid, b.bricks.iter().copied()))?;
        let (yy, xx) = (info.dims[1] as i64, info.dims[2] as i64);
        let d = b.dims.map(|v| v as i32);
        let stored = t == lifting::Lifting::Interp;
        let func = self.f(
            if stored {
                "GATHER(kernel, float)"
            } else {
                "GATHER(kernel, double)"
            },
            0,
        )?;
        let mut l = s.launch_builder(&func);
        l.arg(&at)
            .arg(&org)
            .arg(&yy)
            .arg(&xx)
            .arg(&d[0])
            .arg(&d[1])
            .arg(&d[2]);
        let in_place = stored && in_place;
        match (stored, &mut self.in32) {
            (true, None) => {
                return Err(CudaError::Unsupported(
                    "a float32 field needs a float32 slot".into(),
                ))
            }
            _ if in_place => l.arg(&NO_BUFFER),
            (true, Some(v)) => l.arg(v),
            (false, _) => l.arg(&mut self.x),
        };
        let mut peak = s
            .alloc_zeros::<u64>(b.bricks.len())
            .during(|| "alloc".into())?;
        l.arg(&mut peak);
        // A warp a row, about four rows a warp.
        let rows = b.dims[0] * b.dims[1];
        let gx = rows.div_ceil(8 * 4).clamp(1, 4096) as u32;
        unsafe { l.launch(cfg((gx, b.bricks.len() as u32), 256, 0)) }
            .during(|| "launching GATHER".into())?;
        self.gathered_peak = Some(peak);
        self.field_in = in_place.then_some(FieldIn {
            at,
            org,
            rows: yy,
            cols: xx,
        });
        Ok(())
    }
}

/// The least and greatest finite value of `n` floats at device address
/// `at` (GPU memory or mapped host memory), and the first index of a value
/// that is not finite.
pub(super) fn range_at(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    at: u64,
    n: usize,
) -> Result<Range32, CudaError> {
    range_rows(gpu, s, at, Rows::span(n))
}

/// Rows of floats that start `pitch` floats apart: a piece of a slab (its
/// planes' rows `y0..y1`) as the copy engines move it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rows {
    pub(super) width: usize,
    pub(super) rows: usize,
    pub(super) pitch: usize,
}

impl Rows {
    pub(super) fn span(n: usize) -> Rows {
        Rows {
            width: n,
            rows: 1,
            pitch: n,
        }
    }
}

/// `range_at` over `r`'s rows; the index of a bad value is
/// `row * pitch + column`.
pub(super) fn range_rows(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    at: u64,
    r: Rows,
) -> Result<Range32, CudaError> {
    let mut out = unsafe { s.alloc::<f32>(3 * range_blocks(r)) }.during(|| "alloc".into())?;
    launch_range(gpu, s, at, r, &mut out.slice_mut(..))?;
    let res = s.clone_dtoh(&out).during(|| "reading the range".into())?;
    range_of(gpu, s, at, r, &res)
}

/// RANGE's grid over `r`'s rows.
pub(super) fn range_grid(r: Rows) -> (u32, u32) {
    let gy = r.rows.clamp(1, 1024);
    let gx = r.width.div_ceil(256).clamp(1, (2048 / gy).max(1));
    (gx as u32, gy as u32)
}

/// Blocks of RANGE over `r`'s rows: its results are three floats each.
pub(super) fn range_blocks(r: Rows) -> usize {
    let (gx, gy) = range_grid(r);
    gx as usize * gy as usize
}

/// RANGE over `r`'s rows at `at`, into the first `3 * range_blocks(r)`
/// floats of `out` (read back together, then `range_of`).
pub(super) fn launch_range(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    at: u64,
    r: Rows,
    out: &mut cudarc::driver::CudaViewMut<f32>,
) -> Result<(), CudaError> {
    let (w, h, p) = (r.width as i64, r.rows as i64, r.pitch as i64);
    let func = gpu.function(Kernel::Codec, "RANGE(kernel)", 0)?;
    let mut l = s.launch_builder(&func);
    l.arg(&at).arg(&w).arg(&h).arg(&p).arg(out);
    unsafe { l.launch(cfg(range_grid(r), 256, 0)) }.during(|| "launching RANGE".into())?;
    Ok(())
}

/// The range from RANGE's results `res` (least, greatest and not-finite
/// flags, a block each); where a value is not finite, FIRST_BAD finds the
/// first.
pub(super) fn range_of(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    at: u64,
    r: Rows,
    res: &[f32],
) -> Result<Range32, CudaError> {
    let blocks = range_blocks(r);
    if res.len() < 3 * blocks {
        return Err(CudaError::Unsupported("the range's read-back".into()));
    }
    let lo = res[..blocks].iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let hi = res[blocks..2 * blocks]
        .iter()
        .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    if res[2 * blocks..3 * blocks].iter().all(|&c| c == 0.0) {
        return Ok((lo, hi, None));
    }
    let (w, h, p) = (r.width as i64, r.rows as i64, r.pitch as i64);
    let mut first = s
        .clone_htod(&[u64::MAX])
        .during(|| "copying a flag".into())?;
    let func = gpu.function(Kernel::Codec, "FIRST_BAD(kernel)", 0)?;
    let mut l = s.launch_builder(&func);
    l.arg(&at).arg(&w).arg(&h).arg(&p).arg(&mut first);
    unsafe { l.launch(cfg(range_grid(r), 256, 0)) }.during(|| "launching FIRST_BAD".into())?;
    let i = s.clone_dtoh(&first).during(|| "reading a flag".into())?[0] as usize;
    Ok((lo, hi, Some(i)))
}

/// The least and greatest of the first `n` values of `data` on the GPU (a
/// field, or a slab of one whose first value is the field's `first`); an
/// error names the first value that is not finite by its field index.
pub(super) fn device_range(
    gpu: &Gpu,
    data: &CudaSlice<f32>,
    n: usize,
    first: usize,
) -> Result<(f64, f64), CudaError> {
    Ok(range_and_rows(gpu, data, n, first, &[])?.0)
}

/// The least and greatest finite values of `data` (n values; 0, 0 when
/// none is finite): the fast profile stores blocks with NaN or infinities
/// raw, so it codes such fields where the other paths refuse them.
pub(super) fn finite_span(
    gpu: &Gpu,
    data: &CudaSlice<f32>,
    n: usize,
) -> Result<(f64, f64), CudaError> {
    use cudarc::driver::DevicePtr;
    let s = &gpu.stream;
    let r = Rows::span(n);
    let res = 3 * range_blocks(r);
    let mut out = unsafe { s.alloc::<f32>(res) }.during(|| "alloc".into())?;
    let (at, _sync) = data.device_ptr(s);
    launch_range(gpu, s, at, r, &mut out.slice_mut(0..res))?;
    let host = s.clone_dtoh(&out).during(|| "reading the range".into())?;
    let (lo, hi, _) = range_of(gpu, s, at, r, &host)?;
    Ok(if lo <= hi {
        (lo as f64, hi as f64)
    } else {
        (0.0, 0.0)
    })
}

/// `device_range`, and the values of `data` at each of `rows` (start,
/// length) copied on the device beside the range's results: one read-back
/// for both (a slab's density sample took eight copies down, 0.3-0.4 ms
/// after its range on two H100s).
pub(super) fn range_and_rows(
    gpu: &Gpu,
    data: &CudaSlice<f32>,
    n: usize,
    first: usize,
    rows: &[(usize, usize)],
) -> Result<((f64, f64), Vec<f32>), CudaError> {
    use cudarc::driver::DevicePtr;
    let s = &gpu.stream;
    let r = Rows::span(n);
    let res = 3 * range_blocks(r);
    let taken: usize = rows.iter().map(|&(_, len)| len).sum();
    if rows.iter().any(|&(at, len)| at + len > data.len()) {
        return Err(CudaError::Unsupported("sample rows past the data".into()));
    }
    let mut out = unsafe { s.alloc::<f32>(res + taken) }.during(|| "alloc".into())?;
    let (at, _sync) = data.device_ptr(s);
    launch_range(gpu, s, at, r, &mut out.slice_mut(0..res))?;
    let mut to = res;
    for &(from, len) in rows {
        s.memcpy_dtod(
            &data.slice(from..from + len),
            &mut out.slice_mut(to..to + len),
        )
        .during(|| "sampling the field".into())?;
        to += len;
    }
    head_mark("range queued");
    let host = s.clone_dtoh(&out).during(|| "reading the range".into())?;
    head_mark("range read");
    let (lo, hi, bad) = range_of(gpu, s, at, r, &host[..res])?;
    if let Some(i) = bad {
        let value = s
            .clone_dtoh(&data.slice(i..i + 1))
            .during(|| "reading a value".into())?[0];
        return Err(codec::CodecError::NonFinite {
            index: first + i,
            value: value as f64,
        }
        .into());
    }
    Ok(((lo as f64, hi as f64), host[res..].to_vec()))
}
