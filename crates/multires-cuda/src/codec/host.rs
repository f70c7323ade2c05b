//! The front-ends for fields in host memory: `compress` and `decompress`
//! (whole on the device when the field fits, else streamed in batches),
//! their slots' threads, and the gates that pace each GPU's batches.

use super::*;

/// Compresses `v` on `gpus`; `mem_limit` caps the device memory of each
/// GPU's slots. A float32 field that fits goes up whole (`compress_view`);
/// others stream (`compress_streamed`). Bytes equal
/// `multires::codec::compress`'s.
pub fn compress(
    v: &Volume,
    opts: &CodecOptions,
    gpus: &[Arc<Gpu>],
    mem_limit: Option<usize>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    match compress_whole(v.view(), opts, gpus, mem_limit, progress)? {
        Some(done) => Ok(done),
        None => compress_streamed(v, opts, gpus, mem_limit, progress),
    }
}

/// `compress` of values borrowed from the caller (a numpy array): a
/// float32 field that fits its GPUs goes up from where it lies, with no
/// copy on the host; any other is first copied into a `Volume`.
pub fn compress_view(
    v: FieldView<'_>,
    opts: &CodecOptions,
    gpus: &[Arc<Gpu>],
    mem_limit: Option<usize>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    if let Some(done) = compress_whole(v, opts, gpus, mem_limit, progress)? {
        return Ok(done);
    }
    let values = match v.data {
        ValuesRef::F32(d) => Values::F32(d.to_vec()),
        ValuesRef::F64(d) => Values::F64(d.to_vec()),
    };
    let owned = Volume::of(&v.info().shape(), values)?;
    compress_streamed(&owned, opts, gpus, mem_limit, progress)
}

/// The field sent up whole and coded where it then lies, when it is
/// float32 and `goes_up_whole` (the fast profile always: it codes one GPU's
/// field); None when it must stream.
fn compress_whole(
    v: FieldView<'_>,
    opts: &CodecOptions,
    gpus: &[Arc<Gpu>],
    mem_limit: Option<usize>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Option<(GpuMrz, CodecStats, GpuRun)>, CudaError> {
    let ValuesRef::F32(d) = v.data else {
        return Ok(None);
    };
    let shape = v.info().shape();
    if let (lifting::Lifting::Lorenzo, Some(gpu)) = (opts.transform, gpus.first()) {
        let f = DeviceField::upload(gpu, &shape, d)?;
        return compress_resident(&f, opts, gpu, progress).map(Some);
    }
    super::gpu_codable(opts)?;
    let grid = opts.grid(v.dims)?;
    if !goes_up_whole(gpus, &grid, mem_limit)? {
        return Ok(None);
    }
    if let [gpu] = gpus {
        let f = DeviceField::upload(gpu, &shape, d)?;
        return compress_resident(&f, opts, gpu, progress).map(Some);
    }
    let f = SlabField::upload(gpus, &shape, d, grid.brick)?;
    compress_slabs(&f, opts, progress).map(Some)
}

/// Whether a float32 field goes up to `gpus` whole (a slab of brick
/// layers each, as `slabs` cuts them) and is coded where it then lies,
/// rather than gathered into batches by the host's threads: when each
/// slab takes at most half of its GPU's free memory (the coder's batches
/// fit beside it) and no memory cap was asked for. The link then carries
/// each value once, through the transfer ring, and the range is taken on
/// the device; a 4.3 GB field streamed in gathered batches coded at
/// 10-11 GB/s on the H200 machine.
fn goes_up_whole(
    gpus: &[Arc<Gpu>],
    grid: &codec::BrickGrid,
    mem_limit: Option<usize>,
) -> Result<bool, CudaError> {
    if mem_limit.is_some() || gpus.is_empty() {
        return Ok(false);
    }
    let plane = grid.dims[1] * grid.dims[2];
    for (g, (z0, z1, _)) in gpus.iter().zip(slabs(grid, gpus.len())) {
        if 4 * (z1 - z0) * plane > g.free_mem()? / 2 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `compress` with the field kept in host memory: batches of bricks
/// gathered by the host's threads into page-locked buffers and streamed
/// to the slots (what `compress` does for float64 fields, fields near the
/// devices' size and runs under a memory cap). Bytes equal `compress`'s.
pub fn compress_streamed(
    v: &Volume,
    opts: &CodecOptions,
    gpus: &[Arc<Gpu>],
    mem_limit: Option<usize>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    super::gpu_codable(opts)?;
    let t_plan = std::time::Instant::now();
    // The GPU codes finite fields (the CPU keeps NaN and infinities
    // exactly): refused by the first, whatever the bound, in the range's pass.
    let (lo, hi, nan) = multires::with_values!(&v.data, d => codec::scan(d));
    if nan || !lo.is_finite() || !hi.is_finite() {
        use codec::Sample;
        use rayon::prelude::*;
        let (index, value) = multires::with_values!(&v.data, d => d
            .par_iter()
            .position_first(|x| !x.to_f64().is_finite())
            .map_or((0, f64::NAN), |i| (i, d[i].to_f64())));
        return Err(codec::CodecError::NonFinite { index, value }.into());
    }
    let (range, e, grid) = codec::plan_range((lo, hi), v.dims, opts)?;
    prof_host("plan", t_plan);
    run_compress(
        v.info(),
        opts,
        (range, e, grid),
        gpus,
        (mem_limit, DEFAULT_BATCH, HOST_SLOTS, HOST_SLOTS),
        progress,
        &|slot, b| {
            slot.upload(v, &grid, b, opts.transform)?;
            slot.stream
                .synchronize()
                .during(|| "copying bricks up".into())
        },
    )
}

/// The batches of bricks of a planned compression (`plan`: range, bound,
/// bricks) through every GPU's slots; `fill` puts a batch's values into a
/// slot (as stored for the interpolation, as doubles in `x` for the
/// lifting transforms).
pub(super) fn run_compress(
    v: FieldInfo,
    opts: &CodecOptions,
    plan: Planned,
    gpus: &[Arc<Gpu>],
    settings: (Option<usize>, usize, usize, usize),
    progress: &(dyn Fn(usize) + Sync),
    fill: &(dyn Fn(&mut Slot, &Batch) -> Result<(), CudaError> + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    let t_run = std::time::Instant::now();
    let all: Vec<usize> = (0..plan.2.len()).collect();
    let done = AtomicUsize::new(0);
    let (coded, run) = code_bricks(
        v,
        opts,
        (&plan, &all),
        gpus,
        settings,
        (&done, progress),
        fill,
    )?;
    let (bytes, stats) = assemble_coded(v, opts, &plan, coded, t_run)?;
    Ok((bytes, stats, run))
}

/// A planned compression: range, absolute bound, bricks.
pub(super) type Planned = ((f64, f64), f64, codec::BrickGrid);

/// The .mrz bytes from every brick coded (any order, each once).
pub(super) fn assemble_coded(
    v: FieldInfo,
    opts: &CodecOptions,
    (range, e, grid): &Planned,
    coded: Vec<(usize, GpuCoded)>,
    t_run: std::time::Instant,
) -> Result<(GpuMrz, CodecStats), CudaError> {
    let mut by_brick: Vec<Option<GpuCoded>> = vec![None; grid.len()];
    for (k, c) in coded {
        if let Some(slot) = by_brick.get_mut(k) {
            *slot = Some(c);
        }
    }
    let coded: Vec<GpuCoded> = by_brick
        .into_iter()
        .enumerate()
        .map(|(k, c)| c.ok_or_else(|| CudaError::Unsupported(format!("brick {k} was not coded"))))
        .collect::<Result<_, _>>()?;
    let t_assemble = std::time::Instant::now();
    let stats = coded.iter().map(|c| (c.1, c.2, c.3)).collect::<Vec<_>>();
    let crcs = coded.iter().map(|c| c.0.crc).collect();
    let payloads = coded.into_iter().map(|c| c.0).collect();
    let (bytes, stats) = codec::assemble_parts(
        v,
        opts,
        *range,
        *e,
        *grid,
        (payloads, Some(crcs)),
        stats.into_iter(),
    );
    prof_host("assemble", t_assemble);
    let t_end = std::time::Instant::now();
    trace_stages(
        "compress",
        t_run,
        &[
            ("collected", t_assemble),
            ("assembled", t_end),
            ("freed", std::time::Instant::now()),
        ],
    );
    print_profile("compress");
    Ok((bytes, stats))
}

/// Codes `bricks` of a planned compression in batches through the slots
/// of `gpus`; `done` counts the bricks coded for `progress`, which may be
/// shared with other calls.
pub(super) fn code_bricks(
    v: FieldInfo,
    opts: &CodecOptions,
    (plan, bricks): (&Planned, &[usize]),
    gpus: &[Arc<Gpu>],
    (mem_limit, batch, slots, shares): (Option<usize>, usize, usize, usize),
    (done, progress): (&AtomicUsize, &(dyn Fn(usize) + Sync)),
    fill: &(dyn Fn(&mut Slot, &Batch) -> Result<(), CudaError> + Sync),
) -> Result<(Vec<(usize, GpuCoded)>, GpuRun), CudaError> {
    let (_, e, grid) = plan;
    if gpus.is_empty() {
        return Err(CudaError::NoDevice("no GPU was given".into()));
    }
    let chunk_log = opts.rans_chunk_log()?;
    let n_max: usize = grid.brick.iter().product();
    if n_max > MAX_BRICK_VALUES {
        return Err(CudaError::Unsupported(format!(
            "bricks of {:?} ({n_max} values): the GPU codec takes bricks of at most {MAX_BRICK_VALUES} values (e.g. --brick 128,128,128)",
            grid.brick
        )));
    }
    // Bricks of a shape, in grid order, cut into batches.
    let usage = Use::of(true, opts.transform);
    let budget = match mem_limit {
        Some(l) => l,
        None => device_budget(gpus)?,
    };
    head_mark("budget");
    let mut shapes: BTreeMap<[usize; 3], Vec<usize>> = BTreeMap::new();
    for &k in bricks {
        shapes.entry(grid.bounds(k).1).or_default().push(k);
    }
    let mut plan = plan_batches(
        vec![shapes],
        budget,
        usage.per_value(v.dtype),
        (max_slots(slots), shares * gpus.len(), batch),
    )?;
    halve_last_large(&mut plan);
    head_mark("batches");
    let caps = plan.caps();
    let slots_per_gpu = plan.slots;
    let batches: Vec<Batch> = plan
        .batches
        .into_iter()
        .map(|(dims, bricks)| Batch { dims, bricks })
        .collect();
    let results: Mutex<Vec<(usize, GpuCoded)>> = Mutex::new(Vec::with_capacity(bricks.len()));
    let timing = Mutex::new((0f64, 0f64));
    let max_per = batches.iter().map(|b| b.bricks.len()).max().unwrap_or(0);
    let gates: Vec<Gate> = gpus.iter().map(|_| Gate::new(FRONT_PERMITS)).collect();
    run_slots(gpus, slots_per_gpu, (&caps, v.dtype, usage), &|slot, i| {
        let b = &batches[i];
        let k = gpus.iter().position(|g| Arc::ptr_eq(g, &slot.gpu));
        let gate = k.and_then(|k| gates.get(k));
        let permit = gate.map(Gate::enter);
        let t0 = std::time::Instant::now();
        fill(slot, b)?;
        let t1 = std::time::Instant::now();
        let coded = slot.encode(b, v.dtype, opts.transform, (*e, chunk_log), permit)?;
        if let Ok(mut tm) = timing.lock() {
            tm.0 += (t1 - t0).as_secs_f64();
            tm.1 += t1.elapsed().as_secs_f64();
        }
        results
            .lock()
            .map_err(|_| CudaError::Unsupported("a slot panicked".into()))?
            .extend(b.bricks.iter().copied().zip(coded));
        progress(done.fetch_add(b.bricks.len(), Ordering::Relaxed) + b.bricks.len());
        Ok(())
    })?;
    let coded = results
        .into_inner()
        .map_err(|_| CudaError::Unsupported("a slot panicked".into()))?;
    let tm = timing.into_inner().unwrap_or_default();
    Ok((
        coded,
        GpuRun {
            gpus: gpus.len(),
            slots: slots_per_gpu,
            batches: batches.len(),
            max_bricks_per_batch: max_per,
            fill_s: tm.0,
            code_s: tm.1,
        },
    ))
}

/// Runs `work(slot, i)` for the batches (of `caps[i]` values, the largest
/// first) on `per_gpu` slots of every GPU, a host thread each, which take
/// the batches in turn; the slots go back to the pool afterwards.
pub(super) fn run_slots(
    gpus: &[Arc<Gpu>],
    per_gpu: usize,
    (caps, dtype, usage): (&[usize], DType, Use),
    work: &(dyn Fn(&mut Slot, usize) -> Result<(), CudaError> + Sync),
) -> Result<(), CudaError> {
    let count = caps.len();
    let next = AtomicUsize::new(0);
    // A slot's thread: it takes the next batch until none is left.
    let slot_thread = |g: &Arc<Gpu>| -> Result<(), CudaError> {
        head_mark("slot thread");
        PROF_LAST.with(|l| l.set(None));
        g.ctx.bind_to_thread().during(|| "binding the GPU".into())?;
        let mut slot: Option<Slot> = None;
        TRACE_GPU.with(|c| c.set(g.ctx.ordinal()));
        SLOTS_A_GPU.with(|c| c.set(per_gpu));
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            TRACE_BATCH.with(|c| c.set(i));
            trace("start");
            // The largest batches come first: a slot grows only
            // when another GPU took them. The small one goes
            // back to the pool, which `take_slot` frees.
            if slot.as_ref().is_none_or(|s| s.cap < caps[i]) {
                if let (Some(old), Ok(mut pool)) = (slot.take(), POOL.lock()) {
                    pool.push(old);
                }
                slot = Some(take_slot(g, caps[i], dtype, usage)?);
            }
            trace("slot");
            if let Some(s) = slot.as_mut() {
                work(s, i)?;
            }
            trace("end");
        }
        if let (Some(s), Ok(mut pool)) = (slot, POOL.lock()) {
            pool.push(s);
        }
        Ok(())
    };
    use crate::workers::JobError;
    let failed = |e: JobError| {
        CudaError::Unsupported(match e {
            JobError::Panicked(m) => format!("a GPU slot's thread panicked: {m}"),
            JobError::NoThread(why) => format!("could not start a GPU slot's thread: {why}"),
        })
    };
    let ordinals: Vec<usize> = gpus.iter().map(|g| g.ctx.ordinal()).collect();
    let run = crate::workers::run_all(&ordinals, per_gpu, &|gi, _| slot_thread(&gpus[gi]))
        .into_iter()
        .try_for_each(|r| r.map_err(failed)?);
    print_trace(caps, &ordinals);
    run
}

/// Two also on each GPU of a slab run: three measured no better on two
/// H200s at 1024^3 (turbulent 2-GPU compression 195-197 GB/s
/// with three, 194-208 with two).
pub(super) const FRONT_PERMITS: usize = 2;

/// A counting semaphore: batches in their transform on one GPU.
pub(super) struct Gate {
    pub(super) free: Mutex<usize>,
    pub(super) open: std::sync::Condvar,
}

/// A batch's place in its GPU's `Gate`, given back when dropped.
pub(super) struct Permit<'g>(pub(super) &'g Gate);

impl Gate {
    pub(super) fn new(permits: usize) -> Self {
        Gate {
            free: Mutex::new(permits.max(1)),
            open: std::sync::Condvar::new(),
        }
    }

    pub(super) fn enter(&self) -> Permit<'_> {
        let mut f = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *f == 0 {
            f = self.open.wait(f).unwrap_or_else(|p| p.into_inner());
        }
        *f -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut f = self.0.free.lock().unwrap_or_else(|p| p.into_inner());
        *f += 1;
        self.0.open.notify_one();
    }
}

/// A brick's payload checked and cut into sections (word offsets from the
/// payload's start, as the CPU decoder reads them); None when anything is
/// off, and the CPU decoder then names the fault.
pub(super) struct Sections {
    pub(super) q: f64,
    pub(super) nnz: usize,
    /// map, k, count, low, unary: (word offset, words).
    pub(super) sec: [(usize, usize); 5],
    pub(super) outliers_at: usize,
}

pub(super) fn sections(p: &[u8], n: usize) -> Option<Sections> {
    let (q, words, total) = codec::brick_step_prefix(p, rice::StreamHeader::WORDS).ok()?;
    let h = rice::StreamHeader::read_of(&words, total, n).ok()?;
    if h.words[0] < 1 {
        return None;
    }
    let offsets = h.offsets();
    Some(Sections {
        q,
        nnz: h.nnz,
        sec: [0, 1, 2, 3, 4].map(|i| (2 + offsets[i], h.words[i])),
        outliers_at: 8 + 4 * h.total()?,
    })
}

/// A brick to decode: its index, its payload, and the index's checksum
/// of it where that is still to verify (`verify_payloads`).
pub(super) type Payload<'a> = (usize, Cow<'a, [u8]>, Option<u32>);

/// The checksums of `list` still to verify: the first mismatch as an
/// error naming its brick. A decode's batches verify theirs while their
/// kernels run, so on the slot's own thread when its GPU runs many slots
/// (`MANY_SLOTS`), on every core otherwise.
pub(super) fn verify_payloads(r: &codec::MrzReader, list: &[Payload]) -> Result<(), CudaError> {
    use rayon::prelude::*;
    let one = |(k, p, crc): &Payload| match crc {
        Some(c) => r.verify_brick(*k, p, *c).map_err(CudaError::from),
        None => Ok(()),
    };
    let few_slots = SLOTS_A_GPU.with(|c| c.get()) < MANY_SLOTS;
    if payload_bytes(list) > GATHER_PARALLEL_BYTES && few_slots {
        list.par_iter().try_for_each(one)
    } else {
        list.iter().try_for_each(one)
    }
}

/// The bytes of a batch's payloads. Below `GATHER_PARALLEL_BYTES` the
/// slot's own thread checks them: on a smooth field (a few hundred bytes
/// a brick) each batch's handing of its bricks to the rayon pool, 32
/// slot threads at once on two GPUs, cost more than the checks.
pub(super) fn payload_bytes(list: &[Payload]) -> usize {
    list.iter().map(|(_, p, _)| p.len()).sum()
}

/// The payloads of the bricks of `r` that meet each of `regions` (a
/// group each, in their order), read and checked, in batches of one shape
/// for the slots of `gpus` (`plan`: bricks a batch at most, slots a GPU at
/// most, shares of the whole).
pub(super) fn payload_batches<'r>(
    r: &'r codec::MrzReader,
    regions: &[codec::Region],
    gpus: &[Arc<Gpu>],
    (batch, slots, shares): (usize, usize, usize),
    reserve: usize,
) -> Result<Plan<Payload<'r>>, CudaError> {
    let h = r.header().clone();
    let grid = r.grid();
    if gpus.is_empty() {
        return Err(CudaError::NoDevice("no GPU was given".into()));
    }
    let t_read = std::time::Instant::now();
    let mut groups = Vec::with_capacity(regions.len());
    for region in regions {
        let wanted = codec::bricks_in(&grid, region);
        let mut shapes: BTreeMap<[usize; 3], Vec<Payload>> = BTreeMap::new();
        for (&k, (p, crc)) in wanted.iter().zip(r.brick_slices_unverified(&wanted)?) {
            shapes
                .entry(grid.bounds(k).1)
                .or_default()
                .push((k, p, crc));
        }
        if let Some(dims) = shapes
            .keys()
            .find(|d| d.iter().product::<usize>() > MAX_BRICK_VALUES)
        {
            return Err(CudaError::Unsupported(format!(
                "bricks of {dims:?}: the GPU decoder takes at most {MAX_BRICK_VALUES} values a brick; use the CPU"
            )));
        }
        groups.push(shapes);
    }
    prof_host("d_read", t_read);
    let budget = device_budget(gpus)?.saturating_sub(reserve);
    let per_value = Use::Decode.per_value(h.dtype);
    let mut plan = plan_batches(
        groups,
        budget,
        per_value,
        (max_slots(slots), shares * gpus.len(), batch),
    )?;
    ramp_batches(&mut plan, max_slots(slots), budget, per_value);
    Ok(plan)
}

/// Decodes the bricks of `r` that meet `region` (all when None) on `gpus`:
/// a whole float32 field that fits is decoded on the device and comes down
/// in one pass (`decompress_into`), others batch by batch
/// (`decompress_streamed`). Values equal `multires::codec::decompress`'s; a
/// brick the device finds inconsistent goes through the CPU decoder, whose
/// error names the fault.
pub fn decompress(
    r: &mut codec::MrzReader,
    region: Option<codec::Region>,
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Volume, CudaError> {
    if let (lifting::Lifting::Lorenzo, DType::F32, Some(gpu)) =
        (r.header().transform, r.header().dtype, gpus.first())
    {
        let v = fast::decompress_host(r, region, gpu)?;
        progress(r.grid().len());
        return Ok(v);
    }
    super::decode::gpu_decodable(r)?;
    let h = r.header().clone();
    if region.is_none() && h.dtype == DType::F32 && goes_up_whole(gpus, &r.grid(), None)? {
        let shape = h.dims[3 - h.ndim..].to_vec();
        let mut out = multires::memory::zeroed_vec::<f32>(h.dims.iter().product());
        decode_whole(r, gpus, &mut out, progress)?;
        return Ok(Volume::of(&shape, Values::F32(out))?);
    }
    decompress_streamed(r, region, gpus, progress)
}

/// Decodes every value of the float32 file `r` into `out` (the field's
/// length, row-major): a caller's array that is reused skips the page
/// faults of a new one, which on the H200 machine's host cost more than
/// the copy (16 threads first touched fresh memory at 5-24 GB/s and
/// copied into touched memory at 51 GB/s). A field that fits its GPUs is
/// decoded there whole and comes down through the transfer ring; others
/// batch by batch.
pub fn decompress_into(
    r: &mut codec::MrzReader,
    out: &mut [f32],
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(), CudaError> {
    let h = r.header().clone();
    let n: usize = h.dims.iter().product();
    if h.dtype != DType::F32 || out.len() != n {
        return Err(CudaError::Unsupported(format!(
            "{}: {n} {} values do not decode into room for {} float32 values",
            r.path(),
            if h.dtype == DType::F32 {
                "float32"
            } else {
                "float64"
            },
            out.len()
        )));
    }
    let lorenzo = h.transform == lifting::Lifting::Lorenzo;
    if !lorenzo && goes_up_whole(gpus, &r.grid(), None)? {
        return decode_whole(r, gpus, out, progress);
    }
    let v = decompress(r, None, gpus, progress)?;
    match v.data {
        Values::F32(d) => out.copy_from_slice(&d),
        Values::F64(_) => {
            return Err(CudaError::Unsupported(
                "a float32 file decoded to float64".into(),
            ))
        }
    }
    Ok(())
}

/// The float32 file `r` decoded on `gpus` (one, or a slab each) and copied
/// down into `out`.
fn decode_whole(
    r: &mut codec::MrzReader,
    gpus: &[Arc<Gpu>],
    out: &mut [f32],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(), CudaError> {
    if let [gpu] = gpus {
        let f = decompress_resident(r, gpu, progress)?;
        crate::transfer::download_into(gpu, &gpu.stream, &f.data, 0, out)
    } else {
        decompress_slabs(r, gpus, progress)?.download_into(out)
    }
}

/// `decompress` into host memory batch by batch: each slot downloads its
/// decoded bricks and the host's threads place them (what `decompress`
/// does for regions, float64 files and fields near the devices' size).
/// Values equal `decompress`'s.
pub fn decompress_streamed(
    r: &mut codec::MrzReader,
    region: Option<codec::Region>,
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Volume, CudaError> {
    super::decode::gpu_decodable(r)?;
    let h = r.header().clone();
    let region = region.unwrap_or(codec::full_region(h.dims));
    let grid = r.grid();
    let plan = payload_batches(
        r,
        std::slice::from_ref(&region),
        gpus,
        (DEFAULT_BATCH, HOST_SLOTS, HOST_SLOTS),
        0,
    )?;
    let caps = plan.caps();
    let batches = plan.batches;
    let out_dims = region.map(|(a, b)| b - a);
    let mut out = Values::zeros(h.dtype, out_dims.iter().product());
    let done = AtomicUsize::new(0);
    let path = r.path().to_string();
    multires::with_values!(&mut out, o => {
        let o = codec::RegionOut::new(o, region, &grid).ok_or_else(|| {
            CudaError::Unsupported(format!("region {region:?} is not inside the field"))
        })?;
        // Slots place their decoded bricks on the host, side by side and
        // while others' batches are on the device.
        run_slots(
            gpus,
            plan.slots,
            (&caps, h.dtype, Use::Decode),
            &|slot, i| {
                let (dims, list) = &batches[i];
                let (grid, h, path) = (&grid, &h, &path);
                let outliers_at = slot.decode(*dims, list, r)?;
                let view = slot.decoded()?;
                prof(&slot.stream, "d_host_after")?;
                let n: usize = dims.iter().product();
                // Bricks the device decoded are placed from where they were
                // downloaded and corrected there; the others are decoded
                // by the CPU.
                let checked = check_batch(*dims, list, &outliers_at, h, path, grid)?;
                use rayon::prelude::*;
                let placed = list
                    .par_iter()
                    .zip(&checked)
                    .enumerate()
                    .map(|(bi, ((k, _, _), c))| match (c, &view) {
                        (CheckedBrick::Cpu(y), _) => o.place(*k, y.as_slice(), &[], 0.0, h.dtype),
                        (CheckedBrick::Device(fix), DecodedView::F32(v)) => {
                            o.place(*k, &v[bi * n..(bi + 1) * n], fix.as_slice(), h.abs_bound, h.dtype)
                        }
                        (CheckedBrick::Device(fix), DecodedView::F64(v)) => {
                            o.place(*k, &v[bi * n..(bi + 1) * n], fix.as_slice(), h.abs_bound, h.dtype)
                        }
                    })
                    .reduce(|| true, |a, b| a & b);
                if !placed {
                    return Err(CudaError::Unsupported(format!(
                        "a batch of bricks of {dims:?} did not fit the output"
                    )));
                }
                prof(&slot.stream, "d_host_finish")?;
                progress(done.fetch_add(list.len(), Ordering::Relaxed) + list.len());
                Ok(())
            },
        )
    })?;
    print_profile("decompress");
    let shape: Vec<usize> = out_dims[3 - h.ndim..].to_vec();
    Ok(Volume::of(&shape, out)?)
}
