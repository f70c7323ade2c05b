//! Fields that stay on the GPUs: one device (`compress_resident`,
//! `decompress_resident`) or slabs over several (`SlabField`).

use super::*;

/// Compresses a field that is already on `gpu`: the range, the bricks'
/// gathering and all the coding on the device; the .mrz bytes come back
/// (byte-identical to `compress` of the same values).
pub fn compress_resident(
    f: &DeviceField,
    opts: &CodecOptions,
    gpu: &Arc<Gpu>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    if opts.transform == lifting::Lifting::Lorenzo {
        use cudarc::driver::DevicePtr;
        let range = finite_span(gpu, &f.data, f.info.len())?;
        let (at, _sync) = f.data.device_ptr(&gpu.stream);
        let r = fast::compress_at(gpu, at, f.info, opts, range);
        if let Ok((parts, _, _)) = &r {
            progress(parts.payloads.len());
        }
        return r;
    }
    super::gpu_codable(opts)?;
    let t_plan = std::time::Instant::now();
    if tracing() {
        take_head_marks();
    }
    let range = device_range(gpu, &f.data, f.info.len(), 0)?;
    let plan = codec::plan_range(range, f.info.dims, opts)?;
    prof_host("plan", t_plan);
    trace_stages(
        "resident plan",
        t_plan,
        &[("planned", std::time::Instant::now())],
    );
    let grid = plan.2;
    let run = run_compress(
        f.info,
        opts,
        plan,
        std::slice::from_ref(gpu),
        (
            None,
            RESIDENT_BATCH,
            RESIDENT_SLOTS,
            tuning().resident_shares,
        ),
        progress,
        &|slot, b| {
            use cudarc::driver::DevicePtr;
            let stream = slot.stream.clone();
            let (at, _sync) = f.data.device_ptr(&stream);
            slot.gather_from((at, true), &f.info, &grid, b, opts.transform)
        },
    );
    if tracing() {
        StageMarks(Mutex::new(take_head_marks())).trace("resident head", t_plan);
    }
    run
}

/// Decodes a float32 .mrz into a field on `gpu`: entropy decoding,
/// inverse transform, outliers and placement on the device (the payloads
/// go up; a brick the device finds inconsistent is decoded by the CPU).
/// Values equal `decompress`'s.
pub fn decompress_resident(
    r: &mut codec::MrzReader,
    gpu: &Arc<Gpu>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<DeviceField, CudaError> {
    let (_, info) = device_field_of(r)?;
    if r.header().transform == lifting::Lifting::Lorenzo {
        let mut data = gpu
            .stream
            .alloc_zeros::<f32>(info.len().max(1))
            .during(|| "allocating the decoded field".into())?;
        fast::decompress_into(r, gpu, &mut data)?;
        return Ok(DeviceField { data, info });
    }
    let (data, ()) = allocated_while(gpu, info.len(), "the decoded field", &|at| {
        decode_into(r, std::slice::from_ref(gpu), at, 4 * info.len(), progress)
    })?;
    print_profile("decompress_resident");
    Ok(DeviceField { data, info })
}

/// `len` float32 values allocated on `gpu` (`what`) on a thread of their
/// own while `work` starts, `work` given their address: a decode's
/// batches need the field only to place their first values (mapping 4
/// GiB took 5 ms, and 3-9 ms for a 2 GiB slab on each of two GPUs, all
/// on a decode's critical path). Not zeroed: the bricks tile the field
/// and every one is placed, or the decode fails and the field is
/// dropped.
pub(super) fn allocated_while<T: Send>(
    gpu: &Arc<Gpu>,
    len: usize,
    what: &str,
    work: &(dyn Fn(FieldAddress<'_>) -> Result<T, CudaError> + Sync),
) -> Result<(CudaSlice<f32>, T), CudaError> {
    use cudarc::driver::DevicePtrMut;
    let cell = FieldAt::default();
    let (data, done) = std::thread::scope(|sc| {
        let alloc = sc.spawn(|| {
            struct Unset<'a>(&'a FieldAt);
            impl Drop for Unset<'_> {
                fn drop(&mut self) {
                    self.0.answer(Err("the allocation stopped".into()));
                }
            }
            let _unset = Unset(&cell);
            let t_field = std::time::Instant::now();
            let made = (|| -> Result<(CudaSlice<f32>, u64), CudaError> {
                gpu.ctx
                    .bind_to_thread()
                    .during(|| "binding the GPU".into())?;
                gpu.hold_pool()?;
                let t_alloc = std::time::Instant::now();
                // SAFETY: f32 has no invalid bit patterns, and the caller
                // writes every value before it reads one.
                let mut data = unsafe { gpu.stream.alloc::<f32>(len.max(1)) }
                    .during(|| format!("allocating {what}"))?;
                let t_sync = std::time::Instant::now();
                gpu.stream
                    .synchronize()
                    .during(|| format!("allocating {what}"))?;
                if tracing() {
                    let ms =
                        |a: std::time::Instant, b: std::time::Instant| 1e3 * (b - a).as_secs_f64();
                    let now = std::time::Instant::now();
                    eprintln!(
                        "trace field gpu {}: bound {:.2} ms, alloc {:.2} ms, sync {:.2} ms",
                        gpu.ctx.ordinal(),
                        ms(t_field, t_alloc),
                        ms(t_alloc, t_sync),
                        ms(t_sync, now)
                    );
                }
                let at = data.device_ptr_mut(&gpu.stream).0;
                Ok((data, at))
            })();
            prof_host("d_field", t_field);
            cell.answer(made.as_ref().map(|m| m.1).map_err(|e| e.to_string()));
            made.map(|m| m.0)
        });
        let done = work(&|| cell.get());
        let data = alloc
            .join()
            .map_err(|_| CudaError::Unsupported("the allocating thread panicked".into()));
        (data, done)
    });
    let data = data??;
    Ok((data, done?))
}

/// A float32 field cut into slabs of whole brick layers along its first
/// axis, one in each GPU's memory: how a simulation spread over GPUs holds
/// its domain. `compress_slabs` codes every slab where it lies, all GPUs
/// at once, into the bytes `compress` gives for the whole field; nothing
/// crosses PCIe but the coded bricks.
pub struct SlabField {
    pub info: FieldInfo,
    /// Each GPU with its planes [z0, z1) and their values.
    pub slabs: Vec<DeviceSlab>,
}

/// One GPU's part of a `SlabField`: planes [z0, z1), their values first
/// in `data` (which holds one value at least: a GPU may have no planes).
pub struct DeviceSlab {
    pub gpu: Arc<Gpu>,
    pub planes: (usize, usize),
    pub data: CudaSlice<f32>,
}

impl DeviceSlab {
    /// Values of the slab's planes.
    pub(super) fn values(&self, plane: usize) -> usize {
        (self.planes.1.saturating_sub(self.planes.0)) * plane
    }
}

impl SlabField {
    /// `values` of `shape` cut into slabs of whole layers of `brick`
    /// (the codec's brick shape, `CodecOptions::grid`'s) and copied to
    /// `gpus`, a slab each, in order.
    pub fn upload(
        gpus: &[Arc<Gpu>],
        shape: &[usize],
        values: &[f32],
        brick: [usize; 3],
    ) -> Result<Self, CudaError> {
        let info = FieldInfo::new(shape, DType::F32)?;
        if info.len() != values.len() {
            return Err(CudaError::Unsupported(format!(
                "shape {shape:?} does not match {} values",
                values.len()
            )));
        }
        if gpus.is_empty() {
            return Err(CudaError::NoDevice("no GPU was given".into()));
        }
        let grid = codec::BrickGrid {
            dims: info.dims,
            brick: brick.map(|b| b.max(1)),
        };
        let plane = info.dims[1] * info.dims[2];
        let parts = slabs(&grid, gpus.len());
        let slabs = on_every_gpu(gpus, &|i, g| {
            let (z0, z1) = (parts[i].0, parts[i].1);
            // SAFETY: f32 has no invalid bit patterns; the slab's values
            // are copied in below (the one value of an empty slab is never
            // read).
            let mut data = unsafe { g.stream.alloc::<f32>(((z1 - z0) * plane).max(1)) }
                .during(|| "allocating a slab".into())?;
            if z1 > z0 {
                crate::transfer::upload_into(
                    g,
                    &g.stream,
                    &values[z0 * plane..z1 * plane],
                    &mut data,
                    0,
                )?;
            }
            Ok(DeviceSlab {
                gpu: g.clone(),
                planes: (z0, z1),
                data,
            })
        })?;
        Ok(SlabField { info, slabs })
    }

    /// The values, copied back to the host through each GPU's transfer
    /// ring, all GPUs at once.
    pub fn download(&self) -> Result<Vec<f32>, CudaError> {
        let mut out = multires::memory::zeroed_vec::<f32>(self.info.len());
        self.download_into(&mut out)?;
        Ok(out)
    }

    /// The values into `out` (the field's length), each slab's part from
    /// its GPU on a thread of its own.
    pub fn download_into(&self, out: &mut [f32]) -> Result<(), CudaError> {
        let plane = self.info.dims[1] * self.info.dims[2];
        if out.len() != self.info.len() {
            return Err(CudaError::Unsupported(format!(
                "{} values asked into room for {}",
                self.info.len(),
                out.len()
            )));
        }
        let mut parts = Vec::with_capacity(self.slabs.len());
        let mut rest = out;
        for s in &self.slabs {
            let (part, tail) = rest.split_at_mut(s.values(plane).min(rest.len()));
            parts.push((s, part));
            rest = tail;
        }
        std::thread::scope(|sc| {
            let copies: Vec<_> = parts
                .into_iter()
                .map(|(s, part)| {
                    sc.spawn(move || -> Result<(), CudaError> {
                        if part.is_empty() {
                            return Ok(());
                        }
                        s.gpu
                            .ctx
                            .bind_to_thread()
                            .during(|| "binding the GPU".into())?;
                        crate::transfer::download_into(&s.gpu, &s.gpu.stream, &s.data, 0, part)
                    })
                })
                .collect();
            copies.into_iter().try_for_each(|c| {
                c.join()
                    .map_err(|_| CudaError::Unsupported("a copying thread panicked".into()))?
            })
        })
    }

    pub(super) fn gpus(&self) -> Vec<Arc<Gpu>> {
        self.slabs.iter().map(|s| s.gpu.clone()).collect()
    }
}

/// Compresses a field whose slabs lie in the memory of several GPUs: each
/// GPU takes its slab's range, and once the plan is known codes its
/// bricks where they are, like `compress_resident`; bytes equal
/// `compress`'s. The slabs must be whole layers of the codec's bricks, in
/// order, covering the field (as `SlabField::upload` cuts them).
pub fn compress_slabs(
    f: &SlabField,
    opts: &CodecOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    super::gpu_codable(opts)?;
    use cudarc::driver::DevicePtr;
    let t_run = std::time::Instant::now();
    let grid = opts.grid(f.info.dims)?;
    let plane = f.info.dims[1] * f.info.dims[2];
    let gpus = f.gpus();
    if gpus.is_empty() {
        return Err(CudaError::NoDevice("no GPU was given".into()));
    }
    let mut next = 0;
    for s in &f.slabs {
        let (z0, z1) = s.planes;
        let whole = |z: usize| z.is_multiple_of(grid.brick[0]) || z == f.info.dims[0];
        if z0 != next || z1 < z0 || !whole(z0) || !whole(z1) || s.data.len() < s.values(plane) {
            return Err(CudaError::Unsupported(format!(
                "slab of planes {z0}..{z1} ({} values): slabs must follow one another from plane 0 in whole layers of {} planes (the bricks' depth), {plane} values a plane",
                s.data.len(),
                grid.brick[0]
            )));
        }
        next = z1;
    }
    if next != f.info.dims[0] {
        return Err(CudaError::Unsupported(format!(
            "the slabs end at plane {next} of {}",
            f.info.dims[0]
        )));
    }
    // Slabs are in field order, and `on_every_gpu` gives the first error
    // in GPU order: a value that is not finite is named as the whole
    // field's first.
    // With several GPUs, each also brings down rows of its slab to judge
    // the field's density by (`slab_shares`), all at once: a field dense
    // in only some slabs is judged on all of them.
    let sample_density = gpus.len() > 1;
    // Trace marks of the plan's steps on each GPU.
    let plan_marks = StageMarks::default();
    if tracing() {
        take_head_marks();
    }
    // One thread a GPU throughout: its range, rows and memory budget,
    // then (all GPUs' ranges joined, each thread the same plan) its
    // slab's coding. Two rounds of threads cost the head 0.1-0.2 ms.
    // Each GPU's range and sample rows; None where its head failed.
    type Head = ((f64, f64), Option<Vec<f32>>);
    let heads: Vec<Mutex<Option<Head>>> = gpus.iter().map(|_| Mutex::new(None)).collect();
    let all_ranged = std::sync::Barrier::new(gpus.len());
    let joined: std::sync::OnceLock<Option<(Planned, usize)>> = std::sync::OnceLock::new();
    let plan_error: Mutex<Option<CudaError>> = Mutex::new(None);
    let done = AtomicUsize::new(0);
    let coded = on_every_gpu(&gpus, &|i, g| {
        plan_marks.mark(["thread 0", "thread 1", "thread >1"][i.min(2)]);
        let s = &f.slabs[i];
        let head = (|| -> Result<(Head, usize), CudaError> {
            let rows = if sample_density {
                slab_sample_rows(s, f.info.dims)
            } else {
                Vec::new()
            };
            let (range, sample) =
                range_and_rows(g, &s.data, s.values(plane), s.planes.0 * plane, &rows)?;
            plan_marks.mark(["ranged 0", "ranged 1", "ranged >1"][i.min(2)]);
            let budget = device_budget(std::slice::from_ref(g))?;
            Ok(((range, sample_density.then_some(sample)), budget))
        })();
        let budget = match head {
            Ok((h, budget)) => {
                if let Ok(mut slot) = heads[i].lock() {
                    *slot = Some(h);
                }
                budget
            }
            Err(e) => {
                // Every thread reaches the barrier, whatever its head did.
                all_ranged.wait();
                // The first error in GPU order is the run's (slabs are in
                // field order: a value that is not finite is named as the
                // whole field's first); the other GPUs return none.
                return Err(e);
            }
        };
        all_ranged.wait();
        if !heads.iter().all(|h| h.lock().is_ok_and(|h| h.is_some())) {
            // Another GPU's error is the run's.
            return Ok(None);
        }
        let planned = joined.get_or_init(|| {
            plan_marks.mark("joined");
            // The range stays (threads still past the barrier check that
            // every head is there); only the sample rows move.
            let ranged: Vec<Head> = heads
                .iter()
                .filter_map(|h| {
                    let mut h = h.lock().ok()?;
                    h.as_mut().map(|(r, rows)| (*r, rows.take()))
                })
                .collect();
            let (lo, hi) = ranged
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), (r, _)| {
                    (l.min(r.0), h.max(r.1))
                });
            let planned = codec::plan_range((lo, hi), f.info.dims, opts)
                .map_err(CudaError::from)
                .and_then(|plan| {
                    prof_host("plan", t_run);
                    plan_marks.mark("planned");
                    // The coder cannot know its bytes a value before
                    // coding: it samples every slab, rows of each in equal
                    // number.
                    let shares = slab_shares(gpus.len(), || {
                        let samples = ranged.iter().filter_map(|(_, rows)| rows.as_deref());
                        Ok(finest_dense(samples, f.info.dims[2], plan.1))
                    })?;
                    plan_marks.mark("shares");
                    Ok((plan, shares))
                });
            match planned {
                Ok(p) => Some(p),
                Err(e) => {
                    if let Ok(mut pe) = plan_error.lock() {
                        *pe = Some(e);
                    }
                    None
                }
            }
        });
        let Some((plan, shares)) = planned else {
            // One thread returns the plan's error, the others none.
            return match plan_error.lock().ok().and_then(|mut e| e.take()) {
                Some(e) => Err(e),
                None => Ok(None),
            };
        };
        head_mark(["coding 0", "coding 1", "coding >1"][i.min(2)]);
        let (z0, z1) = s.planes;
        let dims = f.info.dims;
        let bricks = codec::bricks_in(&grid, &[(z0, z1), (0, dims[1]), (0, dims[2])]);
        if bricks.is_empty() {
            return Ok(None);
        }
        // GATHER addresses the whole field: the slab stands where its
        // first plane would be.
        let base = {
            let (at, _sync) = s.data.device_ptr(&g.stream);
            at.wrapping_sub(4 * (z0 * plane) as u64)
        };
        code_bricks(
            f.info,
            opts,
            (plan, &bricks),
            std::slice::from_ref(g),
            (Some(budget), RESIDENT_BATCH, RESIDENT_SLOTS, *shares),
            (&done, progress),
            &|slot, b| slot.gather_from((base, true), &f.info, &plan.2, b, opts.transform),
        )
        .map(Some)
    })?;
    if tracing() {
        plan_marks.extend(take_head_marks());
    }
    plan_marks.trace("slabs plan", t_run);
    let Some(Some((plan, _))) = joined.get() else {
        return Err(CudaError::Unsupported("the slabs' plan is missing".into()));
    };
    assemble_slabs(f.info, opts, plan, coded, gpus.len(), t_run)
}

/// Share of a field's finest details above the bound at which it counts
/// as dense (`finest_dense`): 0.96 on the turbulent 256^3 field at 1e-3
/// (0.60 at 1e-2), none on the smooth one at any bound.
pub(super) const DENSE_DETAILS: f64 = 0.05;

/// Whether samples of rows of `width` values (back to back) look dense to
/// the coder: the share of their odd points whose cubic prediction from
/// the even ones along the row (the interpolation's finest pass) misses by
/// more than `e`. Rows too short for the cubic have none.
pub(super) fn finest_dense<'a>(
    samples: impl IntoIterator<Item = &'a [f32]>,
    width: usize,
    e: f64,
) -> bool {
    if width < 7 {
        return false;
    }
    let rows: Vec<&[f32]> = samples
        .into_iter()
        .flat_map(|s| s.chunks_exact(width))
        .collect();
    // Points a row: odd ones from 3 to width - 4.
    let all = rows.len() * (width - 5) / 2;
    // Dense once this many miss (the head waits on it: a dense field's
    // answer comes after a twentieth of the rows).
    let enough = (DENSE_DETAILS * all as f64).ceil() as usize;
    let mut over = 0usize;
    for r in rows {
        for w in r.windows(7).step_by(2) {
            let x = |i: usize| w[i] as f64;
            let p = (9.0 * (x(2) + x(4)) - (x(0) + x(6))) / 16.0;
            over += ((x(3) - p).abs() > e) as usize;
        }
        if over >= enough {
            break;
        }
    }
    all > 0 && over >= enough
}

/// Where (value offset, length) eight rows at each of eight planes of a
/// slab lie, spread through it (a few hundred kilobytes down at most), for
/// `finest_dense`; none in a slab shorter than its planes say.
pub(super) fn slab_sample_rows(s: &DeviceSlab, dims: [usize; 3]) -> Vec<(usize, usize)> {
    let (w, planes) = (dims[2], s.planes.1.saturating_sub(s.planes.0));
    if planes == 0 || dims[1] == 0 || s.data.len() < planes * dims[1] * w {
        return Vec::new();
    }
    let rows = dims[1].min(8);
    (0..8)
        .map(|k| {
            let z = k * planes / 8;
            let y = (k * 37) % (dims[1] - rows + 1);
            ((z * dims[1] + y) * w, rows * w)
        })
        .collect()
}

/// Decodes a float32 .mrz into slabs of whole brick layers on `gpus`, a
/// slab each, all GPUs at once (each reads only its bricks' payloads);
/// values equal `decompress`'s.
pub fn decompress_slabs(
    r: &mut codec::MrzReader,
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<SlabField, CudaError> {
    if gpus.is_empty() {
        return Err(CudaError::NoDevice("no GPU was given".into()));
    }
    let t_run = std::time::Instant::now();
    let (h, info) = device_field_of(r)?;
    gpu_decodable(r)?;
    let grid = r.grid();
    let plane = h.dims[1] * h.dims[2];
    let parts = slabs(&grid, gpus.len());
    // Dense files: the turbulent field's 0.56 bytes a value at 1e-3,
    // against the smooth one's 0.0002.
    let shares = slab_shares(gpus.len(), || {
        Ok(r.file_len() as f64 >= DENSE_FILE_BYTES_PER_VALUE * info.len() as f64)
    })?;
    let mut plans = Vec::with_capacity(gpus.len());
    for (g, part) in gpus.iter().zip(&parts) {
        plans.push(if part.2.is_empty() {
            None
        } else {
            Some(payload_batches(
                r,
                &[[(part.0, part.1), (0, h.dims[1]), (0, h.dims[2])]],
                std::slice::from_ref(g),
                (RESIDENT_BATCH, SLAB_DECODE_SLOTS, shares),
                4 * (part.1 - part.0) * plane,
            )?)
        });
    }
    let marks = StageMarks::default();
    marks.mark("planned");
    let done = AtomicUsize::new(0);
    let reader: &codec::MrzReader = r;
    let slabs = on_every_gpu(gpus, &|i, g| {
        let (z0, z1) = (parts[i].0, parts[i].1);
        let (data, ()) = allocated_while(g, (z1 - z0) * plane, "a decoded slab", &|at| {
            let Some(plan) = &plans[i] else {
                return Ok(());
            };
            // The slab stands where its first plane would be in the field.
            let base = || at().map(|a| a.wrapping_sub(4 * (z0 * plane) as u64));
            let at: Placement = (&base, &|_| (), None, true);
            decode_plan(reader, plan, std::slice::from_ref(g), at, (&done, progress))
        })?;
        marks.mark(["decoded 0", "decoded 1", "decoded >1"][i.min(2)]);
        Ok(DeviceSlab {
            gpu: g.clone(),
            planes: (z0, z1),
            data,
        })
    })?;
    marks.trace("decompress_slabs", t_run);
    print_profile("decompress_slabs");
    Ok(SlabField { info, slabs })
}
