//! Whole fields: the plan (range, bound, bricks), coding every brick on
//! every core, assembling the file, and decoding a field or a region of it
//! into any buffer.

use super::*;

/// What every compression of `v` starts from: the value range, the
/// absolute bound and the bricks (an error for a bound that is not a
/// finite number; the range is that of the finite values).
pub fn plan(v: &Volume, opts: &CodecOptions) -> Result<((f64, f64), f64, BrickGrid), CodecError> {
    plan_view(v.view(), opts)
}

/// `plan` of a field over borrowed values.
pub fn plan_view(
    v: FieldView,
    opts: &CodecOptions,
) -> Result<((f64, f64), f64, BrickGrid), CodecError> {
    plan_range(finite_range(v.data), v.dims, opts)
}

/// The smallest and largest finite values ((0, 0) when none is finite).
pub fn finite_range(v: ValuesRef) -> (f64, f64) {
    finite_span(v).unwrap_or((0.0, 0.0))
}

/// The smallest and largest finite values, None when none is finite (an
/// MPI rank's slab then takes no part in the range). One vectorized pass
/// answers a finite field; one with NaN or infinities takes a second pass
/// for the range of its finite values (the bound holds on those; the
/// others are kept exactly).
pub fn finite_span(v: ValuesRef) -> Option<(f64, f64)> {
    let (lo, hi, nan) = with_values_ref!(v, d => scan(d));
    if !nan && lo.is_finite() && hi.is_finite() {
        return Some((lo, hi));
    }
    let (lo, hi) = with_values_ref!(v, d => d
    .par_iter()
    .map(|x| x.to_f64())
    .filter(|x| x.is_finite())
    .fold(
        || (f64::INFINITY, f64::NEG_INFINITY),
        |(l, h), x| (l.min(x), h.max(x)),
    )
    .reduce(
        || (f64::INFINITY, f64::NEG_INFINITY),
        |a, b| (a.0.min(b.0), a.1.max(b.1)),
    ));
    (lo <= hi).then_some((lo, hi))
}

/// `plan` from a range found elsewhere (the GPU's, for a field on the
/// device): the absolute bound and the bricks.
pub fn plan_range(
    (lo, hi): (f64, f64),
    dims: [usize; 3],
    opts: &CodecOptions,
) -> Result<((f64, f64), f64, BrickGrid), CodecError> {
    opts.rans_chunk_log()?;
    let mut e = opts.bound.absolute(hi - lo);
    if let Some(elem) = opts.elem.filter(|e| e.is_integer()) {
        if opts.transform != Lifting::Interp {
            return Err(CodecError::Invalid(format!(
                "{} fields are coded by the interpolation (transform interp), which holds their bound exactly",
                elem.name()
            )));
        }
        e = Elem::integer_bound(e);
    } else if opts.bound == ErrorBound::Lossless && opts.transform != Lifting::Interp {
        return Err(CodecError::Invalid(
            "lossless coding predicts with the interpolation: use transform interp".into(),
        ));
    }
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

/// The header of a file of field `v` coded with `opts` (its value range,
/// absolute bound and bricks as planned), at the version it needs.
pub fn header_of(
    v: FieldInfo,
    opts: &CodecOptions,
    range: (f64, f64),
    e: f64,
    grid: &BrickGrid,
) -> MrzHeader {
    let mut header = MrzHeader {
        version: container::VERSION,
        dtype: v.dtype,
        ndim: v.ndim,
        dims: v.dims,
        transform: opts.transform,
        bound: opts.bound,
        abs_bound: e,
        brick: grid.brick,
        value_range: range,
        elem: opts.elem.unwrap_or(Elem::of_dtype(v.dtype)),
        axes: opts.axes.clone().unwrap_or_else(|| v.shape()),
    };
    header.version = header.needed_version();
    header
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
    let header = header_of(v, opts, range, e, &grid);
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
    // Integers decode rounded: an error d on the coded value of an integer
    // is round(d) on the decoded integer, and the bound is floor(E).
    let (e, max_error) = match header.elem.is_integer() {
        true => (e.floor(), max_error.round()),
        false => (e, max_error),
    };
    let stats = CodecStats {
        abs_bound: e,
        max_error,
        psnr,
        psnr_bound,
        outliers,
        bytes,
        ratio: header.raw_bytes() as f64 / bytes as f64,
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
    let coded = code_bricks(v, opts, e, grid.brick, progress)?;
    Ok(assemble(v.info(), opts, range, e, grid, &coded))
}

/// The payloads (and each one's largest error, squared error sum and
/// outliers) of every brick of `v` cut into bricks of `brick`, coded
/// within `e` on every core, in brick order. A slab of whole brick layers
/// of a larger field gives that field's payloads for those bricks: the
/// bytes depend on a brick's values, extent and the bound only (MPI ranks
/// code their slabs so).
pub fn code_bricks(
    v: FieldView,
    opts: &CodecOptions,
    e: f64,
    brick: [usize; 3],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<CodedBrick>, CodecError> {
    let grid = BrickGrid {
        dims: v.dims,
        brick,
    };
    let chunk_log = opts.rans_chunk_log()?;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let scratch = ScratchPool::default();
    let lossless = opts.bound == ErrorBound::Lossless && !opts.elem.is_some_and(|e| e.is_integer());
    let coded: Vec<CodedBrick> = (0..grid.len())
        .into_par_iter()
        .map(|k| {
            scratch.with(|sc| {
                let (s, ext) = grid.bounds(k);
                if lossless {
                    let mut bits = std::mem::take(&mut sc.bits);
                    bits.clear();
                    with_values_ref!(v.data, d => brick_rows(d, v.dims, s, ext)
                        .for_each(|r| bits.extend(r.iter().map(|x| x.to_bits64()))));
                    let p = lossless::encode(&bits, ext, v.data.dtype(), chunk_log);
                    sc.bits = bits;
                    progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
                    return Ok((p, 0.0, 0.0, 0));
                }
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
    Ok(coded)
}

/// A [start, end) range per axis [z, y, x] of a region to decode.
pub type Region = [(usize, usize); 3];

/// Parses "z0:z1,y0:y1,x0:x1" (3-D) or "y0:y1,x0:x1" (2-D); an empty end
/// means the axis's end, an empty start 0.
pub fn parse_region(s: &str, shape: &[usize]) -> Result<Region, String> {
    if !(2..=3).contains(&shape.len()) {
        return Err(format!(
            "a region of the coded grid has 2 or 3 axes, not the {} of {shape:?}",
            shape.len()
        ));
    }
    let b = parse_box(s, shape)?;
    let mut r: Region = [(0, 1); 3];
    r[3 - shape.len()..].copy_from_slice(&b);
    Ok(r)
}

/// Parses one start:end per axis of `shape` (1 to 4 axes), as
/// `parse_region` does.
pub fn parse_box(s: &str, shape: &[usize]) -> Result<Vec<(usize, usize)>, String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() != shape.len() {
        let eg: Vec<String> = shape.iter().map(|&n| format!("0:{}", n.min(64))).collect();
        return Err(format!(
            "region '{s}' has {} ranges for a {}-D field of shape {shape:?}; give one start:end per axis, e.g. {}",
            parts.len(),
            shape.len(),
            eg.join(",")
        ));
    }
    let mut r = Vec::with_capacity(shape.len());
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
        r.push((b0, b1));
    }
    Ok(r)
}

/// The box of the coded grid that holds the box `b` of a field of user
/// shape `axes` (see `coded_shape`), and whether it holds exactly that
/// box: a 4-D box that takes part of the second axis over several steps
/// of the first also holds the planes between (`box_planes` picks them).
pub fn coded_box(b: &[(usize, usize)], axes: &[usize]) -> (Region, bool) {
    match (b, axes) {
        ([x], _) => ([(0, 1), (0, 1), *x], true),
        ([y, x], _) => ([(0, 1), *y, *x], true),
        ([z, y, x], _) => ([*z, *y, *x], true),
        ([(a0, a1), (b0, b1), y, x], [_, nb, ..]) => (
            [(a0 * nb + b0, (a1 - 1) * nb + b1), *y, *x],
            a1 - a0 == 1 || (*b0, *b1) == (0, *nb),
        ),
        _ => (full_region([1, 1, 1]), false),
    }
}

/// The planes (indices along the coded box's first axis) of the 4-D box
/// `b` of a field of shape `axes`, in order, within `coded_box`'s.
pub fn box_planes(b: &[(usize, usize)], axes: &[usize]) -> Vec<usize> {
    match (b, axes) {
        ([(a0, a1), (b0, b1), ..], [_, nb, _, _]) => {
            let first = a0 * nb + b0;
            (*a0..*a1)
                .flat_map(|i| (*b0..*b1).map(move |j| i * nb + j - first))
                .collect()
        }
        _ => Vec::new(),
    }
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
    pub(super) ptr: *mut U,
    pub(super) region: Region,
    pub(super) dims: [usize; 3],
    pub(super) grid: &'a BrickGrid,
    pub(super) placed: Vec<std::sync::atomic::AtomicBool>,
    pub(super) _out: std::marker::PhantomData<&'a mut [U]>,
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

impl<U: Sample> RegionOut<'_, U> {
    /// Places a lossless brick `k`'s values by their bits (exact where
    /// the output is the stored type; converted where it is not).
    pub fn place_bits(&self, k: usize, bits: &[u64], dtype: DType) -> bool {
        use std::sync::atomic::Ordering;
        if k >= self.grid.len() {
            return false;
        }
        let (s, ext) = self.grid.bounds(k);
        if bits.len() != ext.iter().product::<usize>()
            || self.placed[k].swap(true, Ordering::AcqRel)
        {
            return false;
        }
        let (r, d) = (self.region, self.dims);
        let lo = [0, 1, 2].map(|a| s[a].max(r[a].0));
        let hi = [0, 1, 2].map(|a| (s[a] + ext[a]).min(r[a].1));
        if (0..3).any(|a| lo[a] >= hi[a]) {
            return true;
        }
        for z in lo[0]..hi[0] {
            for yy in lo[1]..hi[1] {
                let src = ((z - s[0]) * ext[1] + (yy - s[1])) * ext[2] + lo[2] - s[2];
                let len = hi[2] - lo[2];
                let at = ((z - r[0].0) * d[1] + yy - r[1].0) * d[2] + lo[2] - r[2].0;
                // SAFETY: the row lies in brick k's box within the region
                // (inside `out`), which only this call writes.
                let row = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), len) };
                for (o, &b) in row.iter_mut().zip(&bits[src..src + len]) {
                    *o = U::of_bits64(b, dtype);
                }
            }
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
            if h.is_lossless() {
                o.place_bits(k, &sc.bits, h.dtype);
            } else {
                o.place(k, &sc.r, &[], 0.0, h.dtype);
            }
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
            Ok::<(), CodecError>(())
        })
    })
}
