//! The rANS coder's device side: kernel sizes, packed uploads of streams
//! and tables, the plans made on the device (RPLAN), and the batch checks.

use super::*;

/// The device memory the codec may take on each of `gpus`: 80% of the
/// least free, counting what idle slots hold (a run reuses or frees them)
/// and what the memory pool keeps in reserve.
pub(super) fn device_budget(gpus: &[Arc<Gpu>]) -> Result<usize, CudaError> {
    let free = gpus
        .iter()
        .map(|g| Ok::<_, CudaError>(g.free_mem()? + pooled_bytes(g) + g.pool_idle()?))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .min()
        .unwrap_or(0);
    Ok(free / 10 * 8)
}

/// A tile: 32 rows (chunks) of 33 words.
pub(super) const RANS_TILE: u32 = 32 * 33 * 4;
/// RDEC's two tiles (values, level classes).
pub(super) const RANS_TILES: u32 = 2 * RANS_TILE;
/// Threads of an RENC block (the kernel's R_ENC_WARPS warps): one warp
/// runs the states of 32 chunks, seven prepare its next tile.
pub(super) const RENC_THREADS: u32 = 256;
/// Shared memory of an RENC block: cumulative starts as u16 (the kernel's
/// R_CU16_WORDS) and scales, a division multiplier per context and
/// symbol, the chunks' starts and lengths (512 bytes), and two stages of
/// four words per value of a tile: 65.2 KiB, three blocks an SM.
pub(super) const RENC_SMEM: u32 = (rans::NCTX * (rans::NSYM + 1)).div_ceil(2) as u32 * 4
    + (rans::NCTX * 4) as u32
    + (rans::NCTX * rans::NSYM * 4) as u32
    + 512
    + 2 * 4 * RANS_TILE;
// An H100 SM has 228 KiB of shared memory and reserves 1 KiB a block:
// three blocks an SM run a 1024^3 field's 1,024 RENC blocks in three
// waves; two an SM took four. (Two words a value, the table entries
// looked up by the state warp, fit four blocks an SM but coded 12% slower.)
const _: () = assert!(3 * (RENC_SMEM + 1024) <= 228 * 1024);
/// Warps of an RDEC block: enough for every chunk of the launch's
/// largest brick, up to `RDEC_MAX_WARPS`, so a brick's chunks share one
/// copy of its tables. A smooth 129^3 brick has 33 chunks: two warps a
/// block (49.5 KiB, four blocks an SM) hold a 1024^3 field's 512 bricks at
/// once, where a block of one warp for each 32 chunks (the 33rd alone in a
/// second block, 45 KiB each) needed two waves. End to end this measured
/// no faster: the chains share the SMs with the other batches' kernels.
/// A turbulent brick has 525 chunks of 2^12: blocks of six warps (108
/// KiB, two an SM) give an SM twelve chains of 32 lanes, eight warps
/// (one block an SM) only eight.
pub(super) fn rdec_warps(most_chunks: usize) -> u32 {
    most_chunks.div_ceil(32).clamp(1, RDEC_MAX_WARPS as usize) as u32
}
pub(super) const RDEC_MAX_WARPS: u32 = 6;
const _: () = assert!(2 * (rdec_smem(RDEC_MAX_WARPS) + 1024) <= 228 * 1024);
/// Words of a lane's window on its stream in RDEC: the kernel's R_WIN
/// (13 loads of 4 words, and one more).
pub(super) const RDEC_WINDOW_WORDS: u32 = 53;
/// RDEC's: per context its scale and packed information (two words), the
/// cumulative starts as u16 (the kernel's R_CU16_WORDS), 256 starting
/// symbols (bytes) per context, and per warp its tiles and each lane's
/// window on its words.
pub(super) const fn rdec_smem(warps: u32) -> u32 {
    (rans::NCTX * 2 * 4) as u32
        + (rans::NCTX * (rans::NSYM + 1)).div_ceil(2) as u32 * 4
        + (rans::NCTX * 256) as u32
        + warps * (RANS_TILES + 32 * RDEC_WINDOW_WORDS * 4)
}
/// Zero bytes after the last rANS stream of a batch: RDEC's windows read
/// up to 208 bytes past a lane's position.
pub(super) const RDEC_PAD: usize = 256;

/// The output buffer `out`, at least `total` bytes and zeroed there (the
/// writing kernels OR bits in and leave padding alone).
pub(super) fn clear_out(
    s: &Arc<CudaStream>,
    out: &mut CudaSlice<u8>,
    total: usize,
) -> Result<(), CudaError> {
    if out.len() < total.max(1) {
        *out = s
            .alloc_zeros::<u8>(total.next_power_of_two())
            .during(|| format!("allocating {total} bytes of output"))?;
    } else {
        s.memset_zeros(&mut out.slice_mut(0..total.max(1)))
            .during(|| "clearing the output".into())?;
    }
    Ok(())
}

/// Where a batch's packed lists go up from.
pub(super) enum PackedFrom<'a> {
    /// The slot's pinned buffer, by a copy engine: the decoder's payloads
    /// (megabytes) ride with their lists.
    Pinned(&'a mut Option<Registered<u8>>),
    /// The slot's stage, by a kernel: small lists, which must not queue
    /// behind other streams' copies on the engines.
    Stage(&'a mut Stage),
}

/// `first` bytes that `fill` writes, then `lists` at 16-byte boundaries,
/// up in one copy: the device buffer (to keep until the stream has used
/// it), its address, and each list's. Pageable copies of a batch's small
/// lists stalled for up to 20 ms behind the other slots' copies.
pub(super) fn upload_packed(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    from: PackedFrom<'_>,
    first: usize,
    fill: impl FnOnce(&mut [u8]),
    lists: &[&[u8]],
) -> Result<(CudaSlice<u8>, u64, Vec<u64>), CudaError> {
    let (offs, all) = packed_layout(first, &lists.iter().map(|l| l.len()).collect::<Vec<_>>());
    let write = |pin: &mut [u8]| {
        fill(&mut pin[..first]);
        for (l, &o) in lists.iter().zip(&offs) {
            pin[o..o + l.len()].copy_from_slice(l);
        }
    };
    let up = match from {
        PackedFrom::Pinned(pbytes) => {
            let pin = pinned_bytes(gpu, pbytes, all)?;
            trace("up_pinned");
            write(pin);
            trace("up_written");
            let mut up = unsafe { s.alloc::<u8>(all.max(1)) }.during(|| "alloc".into())?;
            trace("up_alloc");
            s.memcpy_htod(&pin[..all.max(1)], &mut up)
                .during(|| "copying a batch's lists to the GPU".into())?;
            trace("up_copied");
            up
        }
        PackedFrom::Stage(stage) => stage.up_bytes(gpu, s, all, write)?,
    };
    let base = {
        use cudarc::driver::DevicePtr;
        up.device_ptr(s).0
    };
    let addr = offs.iter().map(|&o| base + o as u64).collect();
    Ok((up, base, addr))
}

/// Where lists of `lens` bytes go after `first` bytes, each at a 16-byte
/// boundary, for one copy up; and the bytes in all.
pub(super) fn packed_layout(first: usize, lens: &[usize]) -> (Vec<usize>, usize) {
    let mut at = first.next_multiple_of(16);
    let offs = lens
        .iter()
        .map(|&l| {
            let o = at;
            at = (at + l).next_multiple_of(16);
            o
        })
        .collect();
    (offs, at)
}

/// A batch's rANS data of one brick: its index in the batch, its bytes in
/// the brick's payload, and its chunks in the batch's offsets list.
pub(super) type Part = (usize, std::ops::Range<usize>, std::ops::Range<usize>);

/// Streams lying at most this many bytes apart in host memory go up in
/// one copy, the bytes between them too: a copy call costs about what
/// this many bytes take across PCIe.
pub(super) const SPAN_GAP: usize = 64 << 10;

/// Where streams copied up from where they lie go: `copies` (host bytes,
/// their offset up) cover every stream, each stream's bytes start at
/// `at` up, `total` bytes in all.
pub(super) struct StreamSpans<'a> {
    pub(super) copies: Vec<(&'a [u8], usize)>,
    pub(super) at: Vec<usize>,
    pub(super) total: usize,
}

/// `streams`, each with the address range of the host buffer it lies in,
/// laid out for the copy up: a stream that starts at most `SPAN_GAP`
/// bytes after the one before it ends, in the same buffer, extends that
/// one's copy to its own end.
pub(super) fn stream_spans<'a>(
    streams: impl IntoIterator<Item = (&'a [u8], std::ops::Range<usize>)>,
) -> StreamSpans<'a> {
    let mut sp = StreamSpans {
        copies: Vec::new(),
        at: Vec::new(),
        total: 0,
    };
    // The open copy: its bytes, its offset up, and its buffer.
    let mut open: Option<(&'a [u8], usize, std::ops::Range<usize>)> = None;
    for (st, buf) in streams {
        let (p, end) = (st.as_ptr() as usize, st.as_ptr() as usize + st.len());
        debug_assert!(
            buf.start <= p && end <= buf.end,
            "a stream outside its buffer"
        );
        if let Some((from, at, fbuf)) = open.take() {
            let (a, z) = (from.as_ptr() as usize, from.as_ptr() as usize + from.len());
            if fbuf == buf && p >= z && p - z <= SPAN_GAP {
                // SAFETY: `a..end` lies within one live buffer (`buf`, the
                // range of the host allocation both streams are slices
                // of: `from` starts in it and `st` ends in it), which the
                // streams' borrows keep alive.
                let span = unsafe { std::slice::from_raw_parts(from.as_ptr(), end - a) };
                sp.at.push(at + (p - a));
                sp.total = at + span.len();
                open = Some((span, at, fbuf));
                continue;
            }
            sp.copies.push((from, at));
        }
        let at = sp.total;
        sp.at.push(at);
        sp.total += st.len();
        open = Some((st, at, buf));
    }
    if let Some((from, at, _)) = open {
        sp.copies.push((from, at));
    }
    sp
}

/// Streams above this many bytes are gathered on every core; below, the
/// slot's own thread copies them (the rayon pool is shared by the slots).
pub(super) const GATHER_PARALLEL_BYTES: usize = 4 << 20;

/// The least a slot's pinned buffer holds, so that small batches never
/// page-lock memory while others' kernels run (one such registration
/// waited 44 ms).
pub(super) const PINNED_MIN_BYTES: usize = 8 << 20;

/// `buf` grown to at least `len` bytes (a power of two, kept by the slot).
pub(super) fn pinned_bytes<'a>(
    gpu: &Gpu,
    buf: &'a mut Option<Registered<u8>>,
    len: usize,
) -> Result<&'a mut Registered<u8>, CudaError> {
    if buf.as_ref().is_none_or(|p| p.len() < len) {
        *buf = None;
        let cap = len.max(PINNED_MIN_BYTES).next_power_of_two();
        *buf = Some(Registered::zeroed(&gpu.ctx, cap, 0)?);
    }
    buf.as_mut()
        .ok_or_else(|| CudaError::Unsupported("no pinned buffer".into()))
}

/// The first `total` bytes of `out`, copied down through pinned memory
/// (pageable copies ran at about 3 GB/s).
pub(super) fn download<'a>(
    s: &Arc<CudaStream>,
    gpu: &Gpu,
    buf: &'a mut Option<Registered<u8>>,
    out: &CudaSlice<u8>,
    total: usize,
) -> Result<&'a [u8], CudaError> {
    let pin = pinned_bytes(gpu, buf, total)?;
    let n = total.max(1).min(out.len());
    s.memcpy_dtoh(&out.slice(0..n), &mut pin[..n])
        .during(|| "copying payloads to the host".into())?;
    s.synchronize()
        .during(|| "waiting for a batch of bricks".into())?;
    Ok(&pin[..total])
}

/// RHIST's blocks a brick: about 1,024 in all, each of at least 16K values
/// (a block's flush of its shared counts costs up to a global atomic a
/// bin: at 16K values a block, those were most of a dense field's time).
pub(super) fn rhist_blocks(n: usize, bricks: usize) -> u32 {
    let most = n.div_ceil(256 * 64).clamp(1, 1024);
    n.div_ceil(256 * 1024)
        .max(1024usize.div_ceil(bricks.max(1)))
        .clamp(1, most) as u32
}

/// A launch's grid over `count` items of each of `bricks` bricks, 256
/// threads a block.
pub(super) fn block_grid(count: usize, bricks: usize) -> (u32, u32) {
    ((count.div_ceil(256)).min(4096) as u32, bricks as u32)
}

/// RPLAN (a brick's tables, chunk length and split, a block a brick) then
/// RPIECES (the chunk lists) on `s`, from the bricks' histograms `hist`
/// and their shape's class blocks (`rans::class_blocks`, `nblk` of them).
pub(super) fn queue_rplan(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    hist: CudaSlice<u32>,
    (blocks, nblk): (&CudaSlice<u32>, usize),
    n: usize,
    nbk: usize,
    most_log: u32,
) -> Result<DevicePlans, CudaError> {
    let k = rans::plan_knobs(most_log);
    let lg = gpu.table("codec rans log2", || {
        s.clone_htod(rans::log2_table())
            .during(|| "copying the log2 table".into())
    })?;
    let table = rans::NCTX * rans::NSYM;
    let maxp = rans::piece_bound(n, &k);
    let alloc = || "alloc".to_string();
    let mut scr = unsafe { s.alloc::<f64>(nbk * (2 * table + nblk)) }.during(alloc)?;
    let mut cum = unsafe { s.alloc::<u32>(nbk * rans::NCTX * (rans::NSYM + 1)) }.during(alloc)?;
    let mut scale = unsafe { s.alloc::<u32>(nbk * rans::NCTX) }.during(alloc)?;
    let mut meta = s.alloc_zeros::<u32>(nbk * RPLAN_META).during(alloc)?;
    let mut cfirst = unsafe { s.alloc::<u32>(nbk + 1) }.during(alloc)?;
    let mut cstart = unsafe { s.alloc::<u64>(nbk * maxp) }.during(alloc)?;
    let mut clen = unsafe { s.alloc::<u32>(nbk * maxp) }.during(alloc)?;
    let (nblk64, n64, nbk64) = (nblk as i64, n as i64, nbk as i64);
    let (most_pieces, wide) = (k.most_pieces as i64, k.wide as i64);
    let f = gpu.function(Kernel::Codec, "RPLAN(kernel)", 0)?;
    let mut l = s.launch_builder(&f);
    l.arg(&hist)
        .arg(blocks)
        .arg(&nblk64)
        .arg(&n64)
        .arg(lg.as_ref())
        .arg(&k.most)
        .arg(&k.floor)
        .arg(&k.dense)
        .arg(&most_pieces)
        .arg(&k.long_chain)
        .arg(&wide)
        .arg(&mut scr)
        .arg(&mut cum)
        .arg(&mut scale)
        .arg(&mut meta);
    unsafe { l.launch(cfg((1, nbk as u32), 32, 0)) }.during(|| "launching RPLAN".into())?;
    let f = gpu.function(Kernel::Codec, "RPIECES(kernel)", 0)?;
    let mut l = s.launch_builder(&f);
    l.arg(&mut meta)
        .arg(&nbk64)
        .arg(&n64)
        .arg(&mut cfirst)
        .arg(&mut cstart)
        .arg(&mut clen);
    unsafe { l.launch(cfg((1, nbk as u32), 1, 0)) }.during(|| "launching RPIECES".into())?;
    Ok(DevicePlans {
        hist,
        scr,
        cum,
        scale,
        meta,
        cfirst,
        cstart,
        clen,
        words: None,
    })
}

/// RWORDS: the bricks' table words (`queue_rplan`'s plans), one brick's
/// after another's in `p.words`.
pub(super) fn queue_rwords(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    p: &mut DevicePlans,
    nblk: usize,
    nbk: usize,
) -> Result<(), CudaError> {
    let mut words = s
        .alloc_zeros::<u32>(nbk * RPLAN_WORDS)
        .during(|| "alloc".into())?;
    let nblk64 = nblk as i64;
    let f = gpu.function(Kernel::Codec, "RWORDS(kernel)", 0)?;
    let mut l = s.launch_builder(&f);
    l.arg(&p.hist)
        .arg(&p.scr)
        .arg(&nblk64)
        .arg(&p.scale)
        .arg(&p.meta)
        .arg(&mut words);
    unsafe { l.launch(cfg((1, nbk as u32), 32, 0)) }.during(|| "launching RWORDS".into())?;
    p.words = Some(words);
    Ok(())
}

/// A brick's plan as the device made it (`plans_on_device`).
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevicePlan {
    pub cum: Vec<u32>,
    pub scale: Vec<u32>,
    pub chunk_log: u32,
    pub split: rans::Split,
    pub words: Vec<u32>,
    /// Its chunks (first value, values), as `rans::pieces` lists them.
    pub pieces: Vec<(usize, usize)>,
}

/// `rans::plan` of bricks of `n` values (histograms `hists` one after
/// another, shape `blocks`) made by RPLAN, RPIECES and RWORDS, for tests
/// that the device plans as the host does.
#[doc(hidden)]
pub fn plans_on_device(
    gpu: &Arc<Gpu>,
    hists: &[u32],
    blocks: &[[u32; rans::LEVELS]],
    n: usize,
    most_log: u32,
) -> Result<Vec<DevicePlan>, CudaError> {
    let s = gpu.ctx.new_stream().during(|| "a stream".into())?;
    let table = rans::NCTX * rans::NSYM;
    let nbk = hists.len() / table;
    let up = || "copying histograms".to_string();
    let hist = s.clone_htod(hists).during(up)?;
    let flat: Vec<u32> = blocks.iter().flatten().copied().collect();
    let blocks_d = s.clone_htod(&flat).during(up)?;
    let mut p = queue_rplan(gpu, &s, hist, (&blocks_d, blocks.len()), n, nbk, most_log)?;
    queue_rwords(gpu, &s, &mut p, blocks.len(), nbk)?;
    let down = || "copying plans".to_string();
    let meta = s.clone_dtoh(&p.meta).during(down)?;
    let cum = s.clone_dtoh(&p.cum).during(down)?;
    let scale = s.clone_dtoh(&p.scale).during(down)?;
    let cfirst = s.clone_dtoh(&p.cfirst).during(down)?;
    let cstart = s.clone_dtoh(&p.cstart).during(down)?;
    let clen = s.clone_dtoh(&p.clen).during(down)?;
    let words = match &p.words {
        Some(w) => s.clone_dtoh(w).during(down)?,
        None => Vec::new(),
    };
    s.synchronize().during(down)?;
    let cw = rans::NCTX * (rans::NSYM + 1);
    (0..nbk)
        .map(|b| {
            let m = &meta[b * RPLAN_META..(b + 1) * RPLAN_META];
            let (c0, c1) = (cfirst[b] as usize, cfirst[b + 1] as usize);
            let (w0, nw) = (m[6] as usize, m[4] as usize);
            if c1 < c0 || c1 > cstart.len() || w0 + nw > words.len() {
                return Err(CudaError::Unsupported(format!("brick {b}: meta {m:?}")));
            }
            Ok(DevicePlan {
                cum: cum[b * cw..(b + 1) * cw].to_vec(),
                scale: scale[b * rans::NCTX..(b + 1) * rans::NCTX].to_vec(),
                chunk_log: m[0],
                split: rans::Split {
                    chunks: m[1],
                    log: m[2],
                },
                words: words[w0..w0 + nw].to_vec(),
                pieces: (c0..c1)
                    .map(|c| (cstart[c] as usize, clen[c] as usize))
                    .collect(),
            })
        })
        .collect()
}

/// Words a brick's entry of RPLAN's `meta` holds (the kernel's R_META):
/// chunk log, split chunks, split log, pieces, table words, first piece,
/// first table word.
pub(super) const RPLAN_META: usize = 8;
/// Table words RWORDS has room for, a brick: at most 5,718 bits a context
/// (its count, scale, 168 symbols' gaps, the largest's rank, 167
/// frequencies of up to 31 bits), 5,718 words for 32 contexts.
pub(super) const RPLAN_WORDS: usize = 8192;

/// A brick's plan, as its payload's layout needs it.
pub(super) struct BrickPlan {
    pub(super) chunk_log: u32,
    pub(super) split: rans::Split,
    pub(super) words: Vec<u32>,
}

/// RENC's outputs: each chunk's words and final state.
pub(super) struct RencOut {
    pub(super) sizes: CudaSlice<u32>,
    pub(super) states: CudaSlice<u32>,
}

/// A batch's plans on the device (RPLAN, RPIECES, RWORDS) and what their
/// kernels read, kept until the batch's layout is done.
pub(super) struct DevicePlans {
    pub(super) hist: CudaSlice<u32>,
    pub(super) scr: CudaSlice<f64>,
    pub(super) cum: CudaSlice<u32>,
    pub(super) scale: CudaSlice<u32>,
    pub(super) meta: CudaSlice<u32>,
    pub(super) cfirst: CudaSlice<u32>,
    pub(super) cstart: CudaSlice<u64>,
    pub(super) clen: CudaSlice<u32>,
    pub(super) words: Option<CudaSlice<u32>>,
}

/// Bytes of a brick's cumulative starts and of its scales, as RENC and
/// RDEC read them (brick after brick).
pub(super) const CUM_BYTES: usize = rans::NCTX * (rans::NSYM + 1) * 4;
pub(super) const SCALE_BYTES: usize = rans::NCTX * 4;

/// Bytes the bricks' `tables` take as `write_tables` lays them out; an
/// error if one is not of the kernels' size (it would not fit).
pub(super) fn tables_bytes(tables: &[&rans::Tables]) -> Result<usize, CudaError> {
    match tables
        .iter()
        .position(|t| t.cum.len() * 4 != CUM_BYTES || t.scale.len() * 4 != SCALE_BYTES)
    {
        Some(b) => Err(CudaError::Unsupported(format!(
            "brick {b} of the batch: rANS tables of {} and {} words, not {} and {}",
            tables[b].cum.len(),
            tables[b].scale.len(),
            CUM_BYTES / 4,
            SCALE_BYTES / 4
        ))),
        None => Ok(tables.len() * (CUM_BYTES + SCALE_BYTES)),
    }
}

/// The bricks' cumulative starts, then their scales, into `dst` (sized by
/// `tables_bytes`) on the calling thread, once (not into the lists, then
/// into the stage): 22 KB a brick, 0.6-1.3 MB a batch of 28-58 bricks.
/// On the rayon pool, now that the slot threads are kept, the hand-off
/// costs more than the copy: two H200s decoded at 269 GB/s copying here against 264 on the
/// pool, one GPU unchanged (three pairs of processes).
pub(super) fn write_tables(dst: &mut [u8], tables: &[&rans::Tables]) {
    use bytemuck::cast_slice;
    let (cum, rest) = dst.split_at_mut(tables.len() * CUM_BYTES);
    for (d, t) in cum.chunks_exact_mut(CUM_BYTES).zip(tables) {
        d.copy_from_slice(cast_slice(&t.cum));
    }
    for (d, t) in rest.chunks_exact_mut(SCALE_BYTES).zip(tables) {
        d.copy_from_slice(cast_slice(&t.scale));
    }
}

/// Device addresses of the cumulative starts and of the scales of
/// `bricks` bricks' tables copied to `at` as `write_tables` lays them out
/// (every brick's starts, then every brick's scales), which the coder and
/// the decoder both hand to their kernels.
pub(super) fn table_addresses(at: u64, bricks: usize) -> (u64, u64) {
    (at, at + (bricks * CUM_BYTES) as u64)
}

/// The chunks of a batch's rANS streams, as the RENC and RDEC kernels
/// take them: brick b's chunks are `cfirst[b]..cfirst[b + 1]`, chunk c
/// holds values `cstart[c]..` (`clen[c]` of them). The bricks' tables go
/// up apart (`write_tables`).
pub(super) struct RansChunks {
    pub(super) cfirst: Vec<u32>,
    pub(super) cstart: Vec<u64>,
    pub(super) clen: Vec<u32>,
    /// The longest chunk list of a brick.
    pub(super) most: usize,
}

impl Default for RansChunks {
    fn default() -> Self {
        Self::new()
    }
}

impl RansChunks {
    pub(super) fn new() -> Self {
        RansChunks {
            cfirst: vec![0],
            cstart: Vec::new(),
            clen: Vec::new(),
            most: 0,
        }
    }

    /// Empty, keeping the vectors' memory.
    pub(super) fn clear(&mut self) {
        self.cfirst.clear();
        self.cfirst.push(0);
        self.cstart.clear();
        self.clen.clear();
        self.most = 0;
    }

    /// The next brick's pieces (first value, values: `rans::pieces`; none
    /// for a brick without a stream).
    pub(super) fn push_pieces(&mut self, pieces: impl Iterator<Item = (usize, usize)>) {
        let before = self.clen.len();
        for (a, len) in pieces {
            self.cstart.push(a as u64);
            self.clen.push(len as u32);
        }
        self.most = self.most.max(self.clen.len() - before);
        self.cfirst.push(self.clen.len() as u32);
    }

    /// The lists as the kernels take them (cfirst, cstart, clen), as
    /// bytes for `upload_packed`.
    pub(super) fn byte_lists(&self) -> [&[u8]; 3] {
        use bytemuck::cast_slice;
        [
            cast_slice(&self.cfirst),
            cast_slice(&self.cstart),
            cast_slice(&self.clen),
        ]
    }

    /// A row of blocks per brick, a lane per chunk, `warps` warps of
    /// chunks a block.
    pub(super) fn grid(&self, warps: u32) -> (u32, u32) {
        (
            self.most.div_ceil(32 * warps as usize).max(1) as u32,
            (self.cfirst.len() - 1).max(1) as u32,
        )
    }
}

/// What the entropy decoding of a batch leaves for the rest of the
/// decoder: per brick where its outliers start (None: to be redone on the
/// CPU), its step, the device's fault flags, and for Rice streams the
/// nonzero-block totals to check.
pub(super) struct Front {
    pub(super) at: Vec<Option<usize>>,
    pub(super) q: Vec<f64>,
    pub(super) err: CudaSlice<u32>,
    pub(super) check: Option<(CudaSlice<u64>, Vec<usize>)>,
    /// Recorded after the batch's streams were queued up from a file in
    /// page-locked memory (`verify_after_upload`).
    pub(super) up: Option<cudarc::driver::CudaEvent>,
}

pub(super) enum DecodedView<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
}

/// A brick of a batch after the host's checks: the device's
/// reconstruction stands (with these outlier corrections), or the CPU
/// decoded it.
pub(super) enum CheckedBrick {
    Device(Vec<codec::Outlier>),
    Cpu(Vec<f64>),
}

/// The host's part of decoding a batch, on every core: each brick's
/// outlier list where the device's reconstruction stands (`outliers_at`
/// Some), else the CPU's decode; an error names the brick.
pub(super) fn check_batch(
    dims: [usize; 3],
    list: &[Payload],
    outliers_at: &[Option<usize>],
    h: &codec::MrzHeader,
    path: &str,
    grid: &codec::BrickGrid,
) -> Result<Vec<CheckedBrick>, CudaError> {
    use rayon::prelude::*;
    let n: usize = dims.iter().product();
    let one = |((k, p, _), at): (&Payload, &Option<usize>)| {
        let res = match at {
            Some(at) => codec::outliers(&p[*at..], n, h.dtype).map(CheckedBrick::Device),
            None => codec::decode_brick(p, dims, h).map(CheckedBrick::Cpu),
        };
        res.map_err(|what| corrupt_brick(path, grid, *k, what))
    };
    // Bricks the CPU decodes, or many bytes of outliers, on every core.
    let outlier_bytes = list
        .iter()
        .zip(outliers_at)
        .map(|((_, p, _), at)| at.map_or(p.len(), |a| p.len().saturating_sub(a)))
        .sum::<usize>();
    let heavy = outliers_at.iter().any(Option::is_none) || outlier_bytes > GATHER_PARALLEL_BYTES;
    if heavy {
        list.par_iter()
            .zip(outliers_at.par_iter())
            .map(one)
            .collect()
    } else {
        list.iter().zip(outliers_at).map(one).collect()
    }
}
