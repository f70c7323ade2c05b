//! multires across MPI ranks (rsmpi over the system's MPI): a field held
//! in slabs of whole brick layers, one slab a rank, compressed into one
//! .mrz that all ranks write together with collective MPI-IO, byte for
//! byte the file one process writes of the whole field; and each rank's
//! slab (or any region) decoded from such a file.
//!
//! ```text
//! file    header | payloads of rank 0's bricks | rank 1's | ... | index
//! ```
//!
//! The value range (for relative bounds) comes from an allreduce, each
//! rank's offset from an exclusive scan of the payload bytes, and rank 0
//! writes the header and the index from every rank's lengths and CRC-32s
//! (gathered). A rank that fails is named to every rank, and the file,
//! written under a temporary name, is removed.

mod file;

use mpi::collective::SystemOperation;
use mpi::traits::*;
use multires::codec::{self, CodecError, CodecOptions, CodecStats, FieldInfo, FieldView};
use std::path::{Path, PathBuf};

pub use file::MpiFile;

#[derive(Debug, thiserror::Error)]
pub enum MpiError {
    #[error(transparent)]
    Codec(#[from] CodecError),
    #[error("rank {rank} of {size} failed: {why}")]
    Rank { rank: i32, size: i32, why: String },
    /// What the other ranks get when rank `rank` failed (it says why).
    #[error("rank {rank} of {size} failed (its message gives the reason)")]
    Elsewhere { rank: i32, size: i32 },
    #[error("MPI-IO on {path}: {what} failed (MPI error {code})")]
    Io {
        path: String,
        what: String,
        code: i32,
    },
    #[error("{0}")]
    Invalid(String),
}

/// The axis of the coded field [z, y, x] that ranks split: z, or y for a
/// 2-D field (whose z is 1). Bricks are numbered z-major, so a slab of
/// whole brick layers along it is a run of the file's bricks.
pub fn split_axis(dims: [usize; 3]) -> usize {
    if dims[0] > 1 {
        0
    } else {
        1
    }
}

/// How many brick layers along `split_axis` a field of `dims` has.
pub fn layers(dims: [usize; 3], brick: [usize; 3]) -> usize {
    let a = split_axis(dims);
    dims[a].div_ceil(brick[a].max(1))
}

/// The planes [p0, p1) along `split_axis` that rank `rank` of `size`
/// holds of a field of `dims` cut into bricks of `brick`: whole brick
/// layers, as even as they split.
pub fn slab_of(dims: [usize; 3], brick: [usize; 3], rank: usize, size: usize) -> (usize, usize) {
    let a = split_axis(dims);
    let n = layers(dims, brick);
    let size = size.max(1);
    let first = |r: usize| (n * r / size * brick[a]).min(dims[a]);
    (first(rank), first(rank + 1))
}

/// The bricks the plan of a field of `dims` (of `dtype`) under `opts`
/// uses: the same on every rank, so that each can cut its slab before
/// any value is read.
pub fn brick_of(dims: [usize; 3], opts: &CodecOptions) -> Result<[usize; 3], MpiError> {
    Ok(opts.grid(dims)?.brick)
}

/// Agrees across `world` on whether every rank got this far: Ok on all
/// ranks when all are Ok, else on every rank the error of the first rank
/// that failed (its own message there; a line naming it elsewhere).
pub fn agree<C: Communicator, T>(world: &C, r: Result<T, MpiError>) -> Result<T, MpiError> {
    let (rank, size) = (world.rank(), world.size());
    let mine = if r.is_ok() { i32::MAX } else { rank };
    let mut first = i32::MAX;
    world.all_reduce_into(&mine, &mut first, SystemOperation::min());
    match r {
        Err(e) if first == rank => Err(MpiError::Rank {
            rank,
            size,
            why: e.to_string(),
        }),
        _ if first != i32::MAX => Err(MpiError::Elsewhere { rank: first, size }),
        r => r,
    }
}

/// What [`compress_slab`] did: the whole file's statistics (on every rank)
/// and this rank's share.
#[derive(Debug, Clone)]
pub struct SlabRun {
    pub stats: CodecStats,
    pub bricks: usize,
    pub payload_bytes: u64,
    pub code_s: f64,
    pub write_s: f64,
}

/// Compresses the global field of `shape` (2 or 3 axes, values of
/// `slab.data`'s type) whose planes [z0, z0 + slab's planes) along
/// `split_axis` this rank holds in `slab` (of the same number of axes),
/// with every other rank of `world` calling it with its own slab
/// ([`slab_of`]), into the .mrz at `path`, written together, coding on
/// this rank's CPU cores. The file equals `multires::codec::compress` of
/// the whole field.
pub fn compress_slab<C: Communicator>(
    world: &C,
    slab: FieldView,
    z0: usize,
    shape: &[usize],
    opts: &CodecOptions,
    path: &Path,
) -> Result<SlabRun, MpiError> {
    let slab_shape = slab.info().shape();
    let held = Slab {
        shape: &slab_shape,
        dtype: slab.data.dtype(),
        range: local_range(slab),
        z0,
    };
    compress_slab_with(world, held, shape, opts, path, |_range, e, brick| {
        Ok(codec::code_bricks(slab, opts, e, brick, &|_| {})?)
    })
}

/// A rank's slab as [`compress_slab_with`] sees it: its shape (the
/// field's, cut along `split_axis`), its values' type, the least and
/// greatest of its finite values (+inf, -inf when it has none), and its
/// first plane in the field.
#[derive(Debug, Clone, Copy)]
pub struct Slab<'a> {
    pub shape: &'a [usize],
    pub dtype: codec::DType,
    pub range: (f64, f64),
    pub z0: usize,
}

/// One brick as a coder gives it: payload, largest error, sum of squared
/// errors, outliers stored.
pub type CodedPayload<P> = (P, f64, f64, usize);

/// [`compress_slab`] with the coding of this rank's bricks left to `code`
/// (for slabs on a GPU, or coded there): called with the whole field's
/// range, the absolute bound it planned and the bricks' extent, it
/// returns the payloads of the slab's bricks in brick order, which must
/// be those `multires::codec::code_bricks` gives for the same values.
pub fn compress_slab_with<C, P, F>(
    world: &C,
    slab: Slab,
    shape: &[usize],
    opts: &CodecOptions,
    path: &Path,
    code: F,
) -> Result<SlabRun, MpiError>
where
    C: Communicator,
    P: AsRef<[u8]>,
    F: FnOnce((f64, f64), f64, [usize; 3]) -> Result<Vec<CodedPayload<P>>, MpiError>,
{
    let t = std::time::Instant::now();
    let global = FieldInfo::new(shape, slab.dtype)?;
    // The range: each rank's finite values', reduced (NaN and infinities
    // are kept exactly, as one process keeps them).
    let (lo, hi) = slab.range;
    let (mut glo, mut ghi) = (0.0f64, 0.0f64);
    world.all_reduce_into(&lo, &mut glo, SystemOperation::min());
    world.all_reduce_into(&hi, &mut ghi, SystemOperation::max());
    let range = if glo <= ghi { (glo, ghi) } else { (0.0, 0.0) };
    let planned = codec::plan_range(range, global.dims, opts).map_err(MpiError::from);
    let (range, e, grid) = agree(world, planned)?;
    let coded = agree(
        world,
        FieldInfo::new(slab.shape, slab.dtype)
            .map_err(MpiError::from)
            .and_then(|info| check_slab(info.dims, slab.z0, &grid, global))
            .and_then(|()| code(range, e, grid.brick)),
    )?;
    let code_s = t.elapsed().as_secs_f64();
    let t_write = std::time::Instant::now();
    // Lengths and checksums of every brick, in brick order (rank order).
    let mine: Vec<u64> = coded
        .iter()
        .flat_map(|c| {
            let p = c.0.as_ref();
            [p.len() as u64, codec::container::crc32(p) as u64]
        })
        .collect();
    let entries = all_gather(world, &mine);
    let entries: Vec<(u64, u32)> = entries
        .chunks_exact(2)
        .map(|p| (p[0], p[1] as u32))
        .collect();
    if entries.len() != grid.len() {
        return Err(MpiError::Invalid(format!(
            "the ranks coded {} bricks of the field's {}: their slabs must cover it in whole brick layers (slab_of)",
            entries.len(),
            grid.len()
        )));
    }
    let header = codec::header_of(global, opts, range, e, &grid);
    let head_len = codec::container::header_len(header.version) as u64;
    let local: u64 = coded.iter().map(|c| c.0.as_ref().len() as u64).sum();
    let mut before = 0u64;
    world.exclusive_scan_into(&local, &mut before, SystemOperation::sum());
    if world.rank() == 0 {
        before = 0; // MPI leaves rank 0's exclusive scan undefined
    }
    let (head, index) = if world.rank() == 0 {
        codec::container::frame(&header, &entries)
    } else {
        (Vec::new(), Vec::new())
    };
    let total: u64 = head_len + entries.iter().map(|e| e.0).sum::<u64>();
    let mut pieces: Vec<(u64, &[u8])> = Vec::new();
    if world.rank() == 0 {
        pieces.push((0, &head));
        pieces.push((total, &index));
    }
    let mut at = head_len + before;
    for c in &coded {
        pieces.push((at, c.0.as_ref()));
        at += c.0.as_ref().len() as u64;
    }
    write_shared(world, path, &pieces)?;
    // The whole file's statistics.
    let (mut maxe, mut sse, mut outl) = (0.0f64, 0.0f64, 0u64);
    let (lm, ls, lo_) = coded.iter().fold((0.0f64, 0.0f64, 0u64), |(m, s, o), c| {
        (m.max(c.1), s + c.2, o + c.3 as u64)
    });
    world.all_reduce_into(&lm, &mut maxe, SystemOperation::max());
    world.all_reduce_into(&ls, &mut sse, SystemOperation::sum());
    world.all_reduce_into(&lo_, &mut outl, SystemOperation::sum());
    let bytes = head_len as usize
        + entries.iter().map(|e| e.0 as usize).sum::<usize>()
        + entries.len() * codec::container::ENTRY_LEN
        + 4;
    let (psnr, psnr_bound) = codec::psnr_of(range, sse, maxe, global.len());
    let (e_rep, maxe) = if header.elem.is_integer() {
        (e.floor(), maxe.round())
    } else {
        (e, maxe)
    };
    Ok(SlabRun {
        stats: CodecStats {
            abs_bound: e_rep,
            max_error: maxe,
            psnr,
            psnr_bound,
            outliers: outl as usize,
            bytes,
            ratio: header.raw_bytes() as f64 / bytes as f64,
        },
        bricks: coded.len(),
        payload_bytes: local,
        code_s,
        write_s: t_write.elapsed().as_secs_f64(),
    })
}

/// The least and greatest finite values of a slab (+inf, -inf when it
/// has none, so that the reduction ignores it).
pub fn local_range(v: FieldView) -> (f64, f64) {
    codec::finite_span(v.data).unwrap_or((f64::INFINITY, f64::NEG_INFINITY))
}

/// A slab must start on a brick layer and hold whole layers (but at the
/// field's end) along `split_axis`, and all of the other axes.
fn check_slab(
    slab: [usize; 3],
    p0: usize,
    grid: &codec::BrickGrid,
    global: FieldInfo,
) -> Result<(), MpiError> {
    let a = split_axis(global.dims);
    let n = slab[a];
    let (b, end) = (grid.brick[a], global.dims[a]);
    let others = (0..3)
        .filter(|&k| k != a)
        .all(|k| slab[k] == global.dims[k]);
    let whole = (p0 + n).is_multiple_of(b) || p0 + n == end;
    if !others || !p0.is_multiple_of(b) || !whole || p0 + n > end || n == 0 {
        return Err(MpiError::Invalid(format!(
            "a slab of planes {p0}..{} ({:?}) is not whole brick layers of {b} planes of the field {:?} (slab_of gives them)",
            p0 + n,
            slab,
            global.dims
        )));
    }
    Ok(())
}

/// Every rank's `mine`, concatenated in rank order, on every rank.
pub fn all_gather<C: Communicator>(world: &C, mine: &[u64]) -> Vec<u64> {
    let n = mine.len() as i32;
    let mut counts = vec![0i32; world.size() as usize];
    world.all_gather_into(&n, &mut counts[..]);
    let displs: Vec<i32> = counts
        .iter()
        .scan(0i32, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect();
    let total: i32 = counts.iter().sum();
    let mut out = vec![0u64; total as usize];
    {
        let mut part = mpi::datatype::PartitionMut::new(&mut out[..], counts, &displs[..]);
        world.all_gather_varcount_into(mine, &mut part);
    }
    out
}

/// Writes one file at `path` from every rank of `world`, each rank its
/// `pieces` (offset, bytes): under [`part_path`] with collective MPI-IO,
/// renamed into place by rank 0 once every rank wrote. A failure on any
/// rank (the write or the rename) is every rank's error ([`agree`]), and
/// no file is left; on success every rank returns after the rename.
pub fn write_shared<C: Communicator>(
    world: &C,
    path: &Path,
    pieces: &[(u64, &[u8])],
) -> Result<(), MpiError> {
    let part = part_path(path);
    let written = agree(
        world,
        (|| {
            let f = MpiFile::create(world, &part)?;
            f.write_all_at(world, pieces)?;
            f.close()
        })(),
    );
    let rank0 = world.rank() == 0;
    if let Err(e) = written {
        if rank0 {
            let _ = std::fs::remove_file(&part);
        }
        return Err(e);
    }
    let renamed = if rank0 {
        std::fs::rename(&part, path).map_err(|e| {
            let _ = std::fs::remove_file(&part);
            MpiError::Invalid(format!(
                "renaming {} to {}: {e}",
                part.display(),
                path.display()
            ))
        })
    } else {
        Ok(())
    };
    agree(world, renamed)
}

/// Where a file is written before it is whole: beside it, renamed at the end.
pub fn part_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".mpi-part");
    path.with_file_name(name)
}
