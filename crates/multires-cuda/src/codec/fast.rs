//! The fast profile (`Lifting::Lorenzo`, `multires::codec::lorenzo`) on
//! one GPU: the whole field in a few kernels (`codec_fast.cu`) instead of
//! batches of bricks through the transform and rANS slots. Coding is one
//! pass: tiles of 256 blocks, a thread a block, code their blocks, find
//! their place by a decoupled look-back over the tiles before them and
//! write from registers; the host reads the bricks' lengths back for the
//! index, and the checksums are taken on the device. Decoding reads the
//! heads, scans, unpacks, and checks the checksums of a file held in
//! memory on the device (one in page-locked memory goes up from where it
//! lies). Float32 fields; the bytes equal the CPU coder's.

use super::*;
use multires::codec::{container::Unverified, lorenzo};

/// The device seconds of the last fast-profile decode (payloads on the
/// device to the field decoded there), for benchmarks that time the
/// device's part alone.
static LAST_DECODE_S: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The device seconds of this process's last fast-profile decode.
pub fn last_fast_decode_seconds() -> f64 {
    f64::from_bits(LAST_DECODE_S.load(Ordering::Relaxed))
}

/// Threads of a thread block in the fast kernels, a thread a block of
/// values (a multiple of the warp: the kernels reduce by warps).
const THREADS: usize = 128;

/// LZ_CODE's tile of blocks, a thread each (LZ_TILE in codec_fast.cu).
const TILE: usize = 256;

/// The blocks of the field's bricks: a full brick's count (the kernels
/// number blocks `maxb` a brick) and each brick's own.
struct Blocks {
    maxb: usize,
    nblk: Vec<usize>,
}

fn blocks_of(grid: &codec::BrickGrid) -> Blocks {
    let count = |ext: [usize; 3]| {
        let b = lorenzo::block_extent(ext);
        (0..3).map(|a| ext[a].div_ceil(b[a])).product::<usize>()
    };
    let nblk: Vec<usize> = (0..grid.len()).map(|k| count(grid.bounds(k).1)).collect();
    let maxb = nblk
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(count(grid.brick));
    Blocks { maxb, nblk }
}

/// The kernels' block numbers (`maxb` a brick), which they hold in 32 bits.
fn block_count(nbk: usize, maxb: usize) -> Result<usize, CudaError> {
    nbk.checked_mul(maxb)
        .filter(|&n| n < 1 << 32)
        .ok_or_else(|| {
            CudaError::Unsupported(format!(
                "{nbk} bricks of {maxb} blocks: the fast profile's kernels number at most 2^32 blocks (256 G values); code on the CPU (device cpu)"
            ))
        })
}

/// A grid of thread blocks for a thread-a-block kernel over `n` blocks
/// (the kernels loop over the rest).
fn thread_grid(n: usize) -> (u32, u32) {
    (n.div_ceil(THREADS).clamp(1, 1 << 20) as u32, 1)
}

/// The device's copy of the field's and bricks' extents, as the kernels
/// take them.
fn dims_on(s: &Arc<CudaStream>, grid: &codec::BrickGrid) -> Result<CudaSlice<i64>, CudaError> {
    let d: Vec<i64> = grid
        .dims
        .iter()
        .chain(&grid.brick)
        .map(|&v| v as i64)
        .collect();
    s.clone_htod(&d).during(|| "copying the extents up".into())
}

/// Each brick's payload start in a buffer of payloads one after another.
fn bases(lens: &[usize]) -> (Vec<u64>, usize) {
    let mut at = 0usize;
    let b = lens
        .iter()
        .map(|&l| {
            let b = at as u64;
            at += l;
            b
        })
        .collect();
    (b, at)
}

/// The CRC-32 of each payload (`at`, `len`: whole 4-byte words) of `out`.
fn checksums(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    out: &CudaSlice<u8>,
    at: &[u64],
    len: &[usize],
) -> Result<CudaSlice<u32>, CudaError> {
    let mut pfirst = vec![0u32];
    for &l in len {
        let last = pfirst[pfirst.len() - 1];
        pfirst.push(last + l.div_ceil(CRC_PIECE).max(1) as u32);
    }
    let pieces = pfirst[at.len()] as usize;
    let up = || "copying the layout up".to_string();
    let at_d = s.clone_htod(at).during(up)?;
    let lens: Vec<u64> = len.iter().map(|&l| l as u64).collect();
    let len_d = s.clone_htod(&lens).during(up)?;
    let pfirst_d = s.clone_htod(&pfirst).during(up)?;
    payload_crcs(
        gpu,
        s,
        out,
        &at_d.slice(..),
        &len_d.slice(..),
        &pfirst_d.slice(..),
        pieces,
    )
}

/// Each brick's exclusive scan of its `maxb` block sizes into `offs` (a
/// block of 1024 threads a brick, LZ_SCAN), and the bricks' totals, read
/// back for the layout.
fn scan_sizes(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    sizes: &CudaSlice<u32>,
    maxb: i64,
    nbk: usize,
    offs: &mut CudaSlice<u32>,
) -> Result<Vec<u64>, CudaError> {
    let mut tot = s
        .alloc_zeros::<u64>(nbk.max(1))
        .during(|| "allocating the bricks' lengths".into())?;
    let f = gpu.function(Kernel::Codec, "LZ_SCAN(kernel)", 0)?;
    let mut l = s.launch_builder(&f);
    l.arg(sizes).arg(&maxb).arg(offs).arg(&mut tot);
    unsafe { l.launch(cfg((nbk.max(1) as u32, 1), 1024, 0)) }
        .during(|| "launching LZ_SCAN".into())?;
    s.clone_dtoh(&tot)
        .during(|| "reading the bricks' lengths".into())
}

/// Codes the float32 field at device address `at` (device memory, or
/// page-locked host memory the GPU maps) whose finite values span
/// `range`. The run's `code_s` is the device's part (until the payloads
/// and their checksums are in its memory); the rest is the copy down.
pub(super) fn compress_at(
    gpu: &Arc<Gpu>,
    at: u64,
    info: FieldInfo,
    opts: &CodecOptions,
    range: (f64, f64),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    if info.dtype != DType::F32 {
        return Err(CudaError::Unsupported(
            "the fast profile codes float32 fields on the GPU; float64 ones on the CPU (device cpu)"
                .into(),
        ));
    }
    let t0 = std::time::Instant::now();
    let (range, e, grid) = codec::plan_range(range, info.dims, opts)?;
    let s = &gpu.stream;
    let bl = blocks_of(&grid);
    let nbk = grid.len();
    // The kernels number blocks brick by brick in 32 bits.
    block_count(nbk, bl.maxb)?;
    let dims_d = dims_on(s, &grid)?;
    let tpb = bl.maxb.div_ceil(TILE);
    let ntiles = nbk * tpb;
    // What a brick's payload can take: heads, bodies no longer than the
    // raw values (a whole block's planes and corner take at most 252 of
    // its 256 bytes; a clipped block's at most 35 more than its values),
    // and the padding.
    let worst: usize = (0..nbk)
        .map(|k| {
            let n: usize = grid.bounds(k).1.iter().product();
            let clipped = n != bl.nblk[k] * 64;
            bl.nblk[k] * if clipped { 36 } else { 1 } + 4 * n + 3
        })
        .sum();
    // Coded into the worst case where the memory allows, else into half
    // the free memory and again into the length the first run found.
    let free = gpu.free_mem()?;
    let mut cap = worst.min(free.saturating_sub(1 << 28) / 2).max(4);
    let alloc = || "allocating the fast profile's tiles".to_string();
    let (maxb, tpb64) = (bl.maxb as i64, tpb as i64);
    let mut maxe = s.alloc_zeros::<u64>(nbk.max(1)).during(alloc)?;
    let mut sse = s.alloc_zeros::<f64>(nbk.max(1)).during(alloc)?;
    let mut raw = s.alloc_zeros::<u64>(nbk.max(1)).during(alloc)?;
    let mut status = s.alloc_zeros::<u64>(ntiles.max(1)).during(alloc)?;
    let mut ticket = s.alloc_zeros::<u32>(1).during(alloc)?;
    let mut bbase = s.alloc_zeros::<u64>(nbk.max(1)).during(alloc)?;
    let mut blen = s.alloc_zeros::<u64>(nbk.max(1)).during(alloc)?;
    let f = gpu.function(Kernel::Codec, "LZ_CODE(kernel)", 0)?;
    let (out, lens, base, total) = loop {
        // SAFETY: LZ_CODE writes every byte of the payloads it places
        // (heads, bodies, padding); only those bytes are read after.
        let mut out = unsafe { s.alloc::<u8>(cap) }
            .during(|| format!("allocating {cap} bytes for the payloads"))?;
        let cap64 = cap as u64;
        let mut l = s.launch_builder(&f);
        l.arg(&at).arg(&dims_d).arg(&maxb).arg(&tpb64).arg(&e);
        l.arg(&mut status)
            .arg(&mut ticket)
            .arg(&mut bbase)
            .arg(&mut blen);
        l.arg(&cap64).arg(&mut out);
        l.arg(&mut maxe).arg(&mut sse).arg(&mut raw);
        unsafe { l.launch(cfg((ntiles.max(1) as u32, 1), TILE as u32, 0)) }
            .during(|| "launching LZ_CODE".into())?;
        let lens: Vec<usize> = s
            .clone_dtoh(&blen)
            .during(|| "reading the bricks' lengths".into())?
            .into_iter()
            .map(|l| l as usize)
            .collect();
        let (base, total) = bases(&lens);
        if total <= cap {
            break (out, lens, base, total);
        }
        cap = total;
        let zero = || "clearing the fast profile's tiles".to_string();
        for v in [&mut maxe, &mut raw, &mut status, &mut bbase, &mut blen] {
            s.memset_zeros(v).during(zero)?;
        }
        s.memset_zeros(&mut sse).during(zero)?;
        s.memset_zeros(&mut ticket).during(zero)?;
    };
    let crc_d = checksums(gpu, s, &out, &base, &lens)?;
    s.synchronize().during(|| "coding on the GPU".into())?;
    let code_s = t0.elapsed().as_secs_f64();
    let mut buf = take_payload_buffer(gpu, total.max(4))?;
    s.memcpy_dtoh(&out.slice(0..total.max(4)), &mut buf[..total.max(4)])
        .during(|| "copying payloads to the host".into())?;
    let crcs = s
        .clone_dtoh(&crc_d)
        .during(|| "reading the checksums".into())?;
    let maxe_h = s.clone_dtoh(&maxe).during(|| "reading the errors".into())?;
    let sse_h = s.clone_dtoh(&sse).during(|| "reading the errors".into())?;
    let raw_h = s.clone_dtoh(&raw).during(|| "reading the errors".into())?;
    let buf = Arc::new(BatchBuf::Pinned(Some(buf)));
    let payloads: Vec<BatchBytes> = (0..nbk)
        .map(|k| BatchBytes {
            buf: buf.clone(),
            at: base[k] as usize..base[k] as usize + lens[k],
            crc: crcs[k],
        })
        .collect();
    let stats = (0..nbk).map(|k| (f64::from_bits(maxe_h[k]), sse_h[k], raw_h[k] as usize));
    let crcs = payloads.iter().map(|p| p.crc).collect();
    let (parts, stats) =
        codec::assemble_parts(info, opts, range, e, grid, (payloads, Some(crcs)), stats);
    let run = GpuRun {
        gpus: 1,
        slots: 1,
        batches: 1,
        max_bricks_per_batch: nbk,
        fill_s: 0.0,
        code_s,
    };
    Ok((parts, stats, run))
}

/// Decodes the fast-profile float32 file of `r` into `y` (the field's
/// values on `gpu`): the payloads go up, the kernels decode. Returns the
/// seconds from the payloads on the device to the field decoded.
pub(super) fn decompress_into(
    r: &codec::MrzReader,
    gpu: &Arc<Gpu>,
    y: &mut CudaSlice<f32>,
) -> Result<f64, CudaError> {
    use rayon::prelude::*;
    let h = r.header();
    if h.dtype != DType::F32 || h.transform != lifting::Lifting::Lorenzo {
        return Err(CudaError::Unsupported(format!(
            "{}: not a float32 fast-profile file",
            r.path()
        )));
    }
    let grid = r.grid();
    let nbk = grid.len();
    let all: Vec<usize> = (0..nbk).collect();
    let payloads = r.brick_slices_unverified(&all)?;
    let lens: Vec<usize> = payloads.iter().map(|p| p.0.len()).collect();
    let s = &gpu.stream;
    let (base, inp) = match locked_span(&payloads, &lens) {
        // A file in page-locked memory: the span of its payloads goes up
        // from where it lies, in one copy.
        Some((start, span)) => {
            let base: Vec<u64> = payloads
                .iter()
                .map(|p| (p.0.as_ptr() as usize - start) as u64)
                .collect();
            (base, upload(s, span)?)
        }
        None => {
            let (base, total) = bases(&lens);
            let mut host = take_payload_buffer(gpu, total.max(4))?;
            // Each payload into its place, on every core.
            let mut rest = &mut host[..total];
            let mut parts = Vec::with_capacity(nbk);
            for &l in &lens {
                let (a, b) = rest.split_at_mut(l);
                parts.push(a);
                rest = b;
            }
            parts
                .into_par_iter()
                .zip(payloads.par_iter())
                .for_each(|(d, p)| d.copy_from_slice(&p.0));
            let inp = upload(s, &host[..total])?;
            return_payload_buffer(host);
            (base, inp)
        }
    };
    let t0 = std::time::Instant::now();
    let bl = blocks_of(&grid);
    let nblocks = block_count(nbk, bl.maxb)?;
    let dims_d = dims_on(s, &grid)?;
    let base_d = s
        .clone_htod(&base)
        .during(|| "copying the layout up".into())?;
    let (maxb, nb64) = (bl.maxb as i64, nblocks as i64);
    let alloc = || "allocating the fast profile's block lists".to_string();
    let mut sizes = s.alloc_zeros::<u32>(nblocks.max(1)).during(alloc)?;
    let mut offs = s.alloc_zeros::<u32>(nblocks.max(1)).during(alloc)?;
    let mut bad = s.alloc_zeros::<u32>(nbk.max(1)).during(alloc)?;
    // A payload shorter than its heads: the kernels must not read them.
    if let Some(k) = (0..nbk).find(|&k| lens[k] < bl.nblk[k]) {
        let what = format!(
            "{} bytes, fewer than its {} block heads",
            lens[k], bl.nblk[k]
        );
        return Err(corrupt(r, k, what));
    }
    let f = gpu.function(Kernel::Codec, "LZ_SIZES(kernel)", 0)?;
    let mut l = s.launch_builder(&f);
    l.arg(&inp).arg(&base_d).arg(&dims_d).arg(&maxb).arg(&nb64);
    l.arg(&mut sizes).arg(&mut bad);
    unsafe {
        l.launch(cfg(
            (nblocks.div_ceil(256).clamp(1, 1 << 20) as u32, 1),
            256,
            0,
        ))
    }
    .during(|| "launching LZ_SIZES".into())?;
    let tot_h = scan_sizes(gpu, s, &sizes, maxb, nbk, &mut offs)?;
    let bad_h = s
        .clone_dtoh(&bad)
        .during(|| "reading the bricks' heads".into())?;
    for k in 0..nbk {
        let want = (bl.nblk[k] + tot_h[k] as usize).next_multiple_of(4);
        if bad_h[k] != 0 || want != lens[k] {
            return Err(corrupt(
                r,
                k,
                format!("its heads say {want} bytes, the payload has {}", lens[k]),
            ));
        }
    }
    let e = h.abs_bound;
    let f = gpu.function(Kernel::Codec, "LZ_UNPACK(kernel)", 0)?;
    let mut l = s.launch_builder(&f);
    l.arg(&inp)
        .arg(&base_d)
        .arg(&dims_d)
        .arg(&maxb)
        .arg(&nb64)
        .arg(&e);
    l.arg(&offs).arg(y);
    unsafe { l.launch(cfg(thread_grid(nblocks), THREADS as u32, 0)) }
        .during(|| "launching LZ_UNPACK".into())?;
    s.synchronize().during(|| "decoding on the GPU".into())?;
    let secs = t0.elapsed().as_secs_f64();
    LAST_DECODE_S.store(secs.to_bits(), Ordering::Relaxed);
    verify(r, gpu, &inp, &base, &payloads)?;
    Ok(secs)
}

/// Copies `bytes` into a new device buffer of whole words (the kernels
/// read the aligned words that hold their bytes).
fn upload(s: &Arc<CudaStream>, bytes: &[u8]) -> Result<CudaSlice<u8>, CudaError> {
    let n = bytes.len();
    let mut inp = s
        .alloc_zeros::<u8>(n.next_multiple_of(4).max(4))
        .during(|| format!("allocating {n} bytes of payloads"))?;
    if n > 0 {
        s.memcpy_htod(bytes, &mut inp.slice_mut(0..n))
            .during(|| "copying payloads to the GPU".into())?;
    }
    s.synchronize()
        .during(|| "copying payloads to the GPU".into())?;
    Ok(inp)
}

/// The address where the payloads' span starts and the span, when all of
/// them lie in one page-locked buffer close together (the index and heads
/// between them at most an eighth more).
fn locked_span<'a>(payloads: &'a [Unverified<'_>], lens: &[usize]) -> Option<(usize, &'a [u8])> {
    let start = payloads.iter().map(|p| p.0.as_ptr() as usize).min()?;
    let end = payloads
        .iter()
        .map(|p| p.0.as_ptr() as usize + p.0.len())
        .max()?;
    let sum: usize = lens.iter().sum();
    let first = payloads.iter().find(|p| p.0.as_ptr() as usize == start)?;
    if end - start > sum + sum / 8 + (1 << 20) || payloads.iter().any(|p| p.1.is_none()) {
        return None;
    }
    // The span lies in the buffer that holds its first payload.
    let buf = page_locked(&first.0)?;
    if end > buf.end {
        return None;
    }
    // SAFETY: start..end lies in one live page-locked buffer (`page_locked`),
    // which the reader's bytes (borrowed by `payloads`) keep alive.
    Some((start, unsafe {
        std::slice::from_raw_parts(start as *const u8, end - start)
    }))
}

/// The payloads' checksums against the file's index, taken on the device
/// (whole words at word offsets, as the fast coder writes them) or else
/// on the host; the first payload that differs is named.
fn verify(
    r: &codec::MrzReader,
    gpu: &Gpu,
    inp: &CudaSlice<u8>,
    base: &[u64],
    payloads: &[Unverified<'_>],
) -> Result<(), CudaError> {
    use rayon::prelude::*;
    let lens: Vec<usize> = payloads.iter().map(|p| p.0.len()).collect();
    let words = base.iter().all(|b| b % 4 == 0) && lens.iter().all(|l| l % 4 == 0);
    if words && payloads.iter().any(|p| p.1.is_some()) {
        let s = &gpu.stream;
        let crc = checksums(gpu, s, inp, base, &lens)?;
        let crc = s
            .clone_dtoh(&crc)
            .during(|| "reading the payloads' checksums".into())?;
        for (k, p) in payloads.iter().enumerate() {
            if p.1.is_some_and(|c| c != crc[k]) {
                // The host names the fault as its own decoder would.
                r.verify_brick(k, &p.0, p.1.unwrap_or_default())?;
                return Err(corrupt(r, k, "its checksum differs on the GPU".into()));
            }
        }
        return Ok(());
    }
    payloads
        .par_iter()
        .enumerate()
        .try_for_each(|(k, p)| match p.1 {
            Some(c) => r.verify_brick(k, &p.0, c),
            None => Ok(()),
        })?;
    Ok(())
}

fn corrupt(r: &codec::MrzReader, k: usize, what: String) -> CudaError {
    codec::CodecError::CorruptBrick {
        path: r.path().to_string(),
        brick: k,
        place: r.grid().describe(k),
        what,
    }
    .into()
}

/// A fast-profile file decoded on `gpu` into host memory (the whole
/// field: a region decodes on the CPU).
pub(super) fn decompress_host(
    r: &codec::MrzReader,
    region: Option<codec::Region>,
    gpu: &Arc<Gpu>,
) -> Result<Volume, CudaError> {
    let h = r.header();
    if region.is_some_and(|g| g != codec::full_region(h.dims)) {
        return Err(CudaError::Unsupported(
            "a region of a fast-profile file decodes on the CPU (device cpu)".into(),
        ));
    }
    let n: usize = h.dims.iter().product();
    let mut y = gpu
        .stream
        .alloc_zeros::<f32>(n.max(1))
        .during(|| "allocating the decoded field".into())?;
    decompress_into(r, gpu, &mut y)?;
    let mut v = gpu
        .stream
        .clone_dtoh(&y)
        .during(|| "copying the field from the GPU".into())?;
    v.truncate(n);
    Ok(Volume::of(&h.coded_shape(), Values::F32(v))?)
}
