//! Spreading a field over GPUs: slabs of brick layers, the pieces and rows
//! they cross PCIe in, and one thread a GPU.

use super::*;

/// The bricks of `grid` in `parts` slabs of whole brick layers along the
/// first axis: (first plane, end plane, bricks). A slab is one span of
/// memory, so it crosses PCIe in one copy.
pub(super) fn slabs(grid: &codec::BrickGrid, parts: usize) -> Vec<(usize, usize, Vec<usize>)> {
    let layers = grid.counts()[0];
    let parts = parts.max(1);
    (0..parts)
        .map(|g| {
            let plane = |l: usize| (l * grid.brick[0]).min(grid.dims[0]);
            let (z0, z1) = (plane(g * layers / parts), plane((g + 1) * layers / parts));
            let bricks = (0..grid.len())
                .filter(|&k| (z0..z1).contains(&grid.bounds(k).0[0]))
                .collect();
            (z0, z1, bricks)
        })
        .collect()
}

/// Whether a slab of `len` floats goes to `g`'s memory (at most half of
/// what is free, so the batches keep room), unless the tuning keeps
/// every slab on the host.
pub(super) fn slab_fits(len: usize, g: &Gpu) -> Result<bool, CudaError> {
    if tuning().slabs_on_host {
        return Ok(false);
    }
    Ok(2 * 4 * len < g.free_mem()?)
}

/// Work for one GPU (its index and itself) on a thread of its own.
pub(super) type GpuWork<'a, T> = dyn Fn(usize, &Arc<Gpu>) -> Result<T, CudaError> + Sync + 'a;

/// Runs `work(i, gpu)` for every GPU on a thread of its own (its context
/// bound) and returns the results in GPU order. The threads start their
/// work together, once all are bound: on two H200s the second thread
/// started 0.6-1.5 ms late in some runs (its start waiting on the first
/// one's copies), and the run's head with it. The threads are kept from
/// run to run (`crate::workers`, as the slots' are): two threads spawned
/// for each run began their work 0.3 ms after the call (two H100s), a
/// run's fixed cost that one GPU's resident path
/// does not pay.
pub(super) fn on_every_gpu<T: Send>(
    gpus: &[Arc<Gpu>],
    work: &GpuWork<'_, T>,
) -> Result<Vec<T>, CudaError> {
    let bound_all = std::sync::Barrier::new(gpus.len());
    let bound_all = &bound_all;
    let on = move |i: usize, g: &Arc<Gpu>| -> Result<T, CudaError> {
        let bound = g.ctx.bind_to_thread().during(|| "binding the GPU".into());
        // Every thread reaches the barrier, bound or not.
        bound_all.wait();
        bound?;
        work(i, g)
    };
    use crate::workers::JobError;
    let ordinals: Vec<usize> = gpus.iter().map(|g| g.ctx.ordinal()).collect();
    // One job a GPU, each on its own thread, all at once (the barrier).
    crate::workers::run_all(&ordinals, 1, &|i, _| on(i, &gpus[i]))
        .into_iter()
        .map(|r| {
            r.map_err(|e| {
                CudaError::Unsupported(match e {
                    JobError::Panicked(m) => format!("a GPU thread panicked: {m}"),
                    JobError::NoThread(why) => format!("could not start a GPU thread: {why}"),
                })
            })?
        })
        .collect()
}

/// How the GPU paths cut their work. The defaults are the measured best;
/// the GPU tests set others (`set_tuning`) so that every path is
/// exercised. The output never depends on them.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// Groups of brick layers a slab crosses PCIe in, at most (1: the
    /// whole slab, then the coding): the coder's batches start as their
    /// layers arrive.
    pub upload_groups: usize,
    /// Groups of brick layers the decoder copies down as each is placed
    /// (at most a layer each). One plan covers them all and its batches
    /// start together (`PINNED_DECODE_SLOTS`), so the rANS chains, whose
    /// length does not depend on a batch's size, cost one round (a plan a
    /// group cost a round a group: 4 groups took 166 ms where one took
    /// 130 ms); the inverse transforms then run in batch order
    /// (`InOrder`), and each group goes down while the next is placed.
    pub decode_groups: usize,
    /// Unfinished batches before one that may start its entropy decoding,
    /// and its inverse transform, in the pinned decoder (8 and 4: about
    /// two brick layers of rANS chains at once).
    pub decode_ahead: (usize, usize),
    /// Whether slabs go up (and come down) in rows of bricks rather than
    /// in whole layers.
    pub rows_up: bool,
    pub rows_down: bool,
    /// Every slab stays in host memory, as for fields larger than the
    /// GPUs (how that path is tested on small fields).
    pub slabs_on_host: bool,
    /// Batches a field on one device is cut into (`RESIDENT_SHARES`);
    /// one makes batches as large as `RESIDENT_BATCH` and memory allow.
    pub resident_shares: usize,
}

impl Tuning {
    pub const DEFAULT: Tuning = Tuning {
        upload_groups: 16,
        decode_groups: 16,
        decode_ahead: (8, 4),
        rows_up: true,
        rows_down: false,
        slabs_on_host: false,
        resident_shares: RESIDENT_SHARES,
    };
}

pub(super) static TUNING: Mutex<Tuning> = Mutex::new(Tuning::DEFAULT);

/// Sets how the GPU paths cut their work (tests only).
#[doc(hidden)]
pub fn set_tuning(t: Tuning) {
    *TUNING.lock().unwrap_or_else(|e| e.into_inner()) = t;
}

pub(super) fn tuning() -> Tuning {
    *TUNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Slots a GPU for the pinned decoder: every batch of a 1024^3 field in
/// brick layers (4 shapes a layer) at once, memory permitting.
pub(super) const PINNED_DECODE_SLOTS: usize = 32;

/// A slab's planes [z0, z1) as at most `most` groups of whole brick
/// layers, in order: each group's planes [a, b).
pub(super) fn layer_groups(
    grid: &codec::BrickGrid,
    (z0, z1): (usize, usize),
    most: usize,
) -> Vec<(usize, usize)> {
    let bz = grid.brick[0].max(1);
    let layers = (z1 - z0).div_ceil(bz);
    let n = layers.min(most.max(1));
    (0..n)
        .map(|g| {
            let a = z0 + g * layers / n * bz;
            (a, (z0 + (g + 1) * layers / n * bz).min(z1))
        })
        .collect()
}

/// A part of a slab that crosses PCIe in one copy: planes [z0, z1) and,
/// of each, rows [y0, y1) (all of them, or whole brick rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Piece {
    pub(super) z: (usize, usize),
    pub(super) y: (usize, usize),
}

impl Piece {
    /// Whether the brick starting at `start` is in this piece (pieces
    /// are cut at brick edges, so a brick is in exactly one).
    pub(super) fn holds(&self, start: [usize; 3]) -> bool {
        (self.z.0..self.z.1).contains(&start[0]) && (self.y.0..self.y.1).contains(&start[1])
    }

    /// Where the piece starts in a slab whose first plane is `z_base`
    /// (floats), and its rows there.
    pub(super) fn rows(&self, dims: [usize; 3], z_base: usize) -> (usize, Rows) {
        let plane = dims[1] * dims[2];
        let at = (self.z.0 - z_base) * plane + self.y.0 * dims[2];
        let width = (self.y.1 - self.y.0) * dims[2];
        let planes = self.z.1 - self.z.0;
        if width == plane {
            (at, Rows::span(plane * planes))
        } else {
            (
                at,
                Rows {
                    width,
                    rows: planes,
                    pitch: plane,
                },
            )
        }
    }
}

/// A slab's planes [z0, z1) as about `most` pieces, in order: groups of
/// whole brick layers where the slab has that many layers, else each
/// layer cut into runs of brick rows, so that the first piece arrives
/// (or, decoding, the last one leaves) sooner. A 1024^3 field on two
/// GPUs has 4 layers a slab: whole layers, the coder waited 13 ms for its
/// first one and finished 14 ms after the last (with rows: 3 ms and
/// 10 ms). `rows` false keeps whole layers.
pub(super) fn slab_pieces(
    grid: &codec::BrickGrid,
    (z0, z1): (usize, usize),
    most: usize,
    rows: bool,
) -> Vec<Piece> {
    let layers = layer_groups(grid, (z0, z1), most);
    let ny = grid.counts()[1].max(1);
    let by = grid.brick[1].max(1);
    let split = match rows {
        false => 1,
        true => (most.max(1) / layers.len().max(1)).clamp(1, ny),
    };
    let dy = grid.dims[1];
    layers
        .iter()
        .flat_map(|&z| {
            (0..split).map(move |j| Piece {
                z,
                y: (
                    (j * ny / split * by).min(dy),
                    ((j + 1) * ny / split * by).min(dy),
                ),
            })
        })
        .collect()
}

/// Where `r`'s rows from float `at` on end, if they fit in `len` floats.
pub(super) fn rows_end(at: usize, r: Rows, len: usize) -> Result<usize, CudaError> {
    let end = at + (r.rows.max(1) - 1) * r.pitch + r.width;
    if end > len || r.width > r.pitch {
        return Err(CudaError::Unsupported(format!(
            "rows {r:?} from {at} fall outside a slab of {len} values"
        )));
    }
    Ok(end)
}

/// A 2-D copy of `r`'s rows between page-locked `host` and device address
/// `dev` on `s` (`up`: host to device), the same layout on both sides.
///
/// SAFETY: both sides hold every row, the host side is page-locked, and
/// neither is freed before the stream's work is done.
pub(super) unsafe fn copy_rows_2d(
    s: &CudaStream,
    up: bool,
    host: *mut std::ffi::c_void,
    dev: u64,
    r: Rows,
) -> Result<(), CudaError> {
    use cudarc::driver::sys;
    let (host_type, dev_type) = (
        sys::CUmemorytype::CU_MEMORYTYPE_HOST,
        sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
    );
    let c = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: if up { host_type } else { dev_type },
        srcHost: if up { host } else { std::ptr::null_mut() },
        srcDevice: if up { 0 } else { dev },
        srcArray: std::ptr::null_mut(),
        srcPitch: 4 * r.pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: if up { dev_type } else { host_type },
        dstHost: if up { std::ptr::null_mut() } else { host },
        dstDevice: if up { dev } else { 0 },
        dstArray: std::ptr::null_mut(),
        dstPitch: 4 * r.pitch,
        WidthInBytes: 4 * r.width,
        Height: r.rows,
    };
    sys::cuMemcpy2DAsync_v2(&c, s.cu_stream())
        .result()
        .during(|| format!("copying rows of a slab {}", if up { "up" } else { "down" }))
}

/// Copies `r`'s rows of `host`, from float `at` on, to the same place of
/// `dev` (a slab and its device copy, of one layout) on `s`: one span, or
/// a 2-D copy (a span may be longer than a 2-D copy's pitch allows).
pub(super) fn copy_rows_up(
    s: &Arc<CudaStream>,
    host: &[f32],
    dev: &mut CudaSlice<f32>,
    at: usize,
    r: Rows,
) -> Result<(), CudaError> {
    use cudarc::driver::DevicePtrMut;
    let end = rows_end(at, r, host.len().min(dev.len()))?;
    if r.rows <= 1 {
        return s
            .memcpy_htod(&host[at..end], &mut dev.slice_mut(at..end))
            .during(|| "copying a slab of the field up".into());
    }
    let (d, _sync) = dev.device_ptr_mut(s);
    // SAFETY: the rows fit both sides (`rows_end`); the caller's host
    // memory is page-locked, and it synchronizes the stream before either
    // side is dropped. The device never writes the host side here.
    unsafe { copy_rows_2d(s, true, host[at..].as_ptr() as *mut _, d + 4 * at as u64, r) }
}

/// Copies `r`'s rows of `dev`, from float `at` on, down to the same place
/// of `host` on `s`.
pub(super) fn copy_rows_down(
    s: &Arc<CudaStream>,
    dev: &CudaSlice<f32>,
    host: &mut [f32],
    at: usize,
    r: Rows,
) -> Result<(), CudaError> {
    use cudarc::driver::DevicePtr;
    let end = rows_end(at, r, host.len().min(dev.len()))?;
    if r.rows <= 1 {
        return s
            .memcpy_dtoh(&dev.slice(at..end), &mut host[at..end])
            .during(|| "copying decoded layers down".into());
    }
    let (d, _sync) = dev.device_ptr(s);
    // SAFETY: as in `copy_rows_up`.
    unsafe {
        copy_rows_2d(
            s,
            false,
            host[at..].as_mut_ptr().cast(),
            d + 4 * at as u64,
            r,
        )
    }
}

/// The least and greatest finite value of a span, and the first index of
/// one that is not finite.
pub(super) type Range32 = (f32, f32, Option<usize>);

/// The groups of a slab that have reached the device (each with its
/// range), and whether the copying stopped early (an error, or a value
/// that is not finite): the coder waits here for each batch's group.
pub(super) struct Arrivals {
    pub(super) state: Mutex<(Vec<Option<Range32>>, bool)>,
    pub(super) cv: Condvar,
}

impl Arrivals {
    pub(super) fn new(groups: usize) -> Self {
        Arrivals {
            state: Mutex::new((vec![None; groups], false)),
            cv: Condvar::new(),
        }
    }

    pub(super) fn arrive(&self, g: usize, r: Range32) {
        if let Ok(mut st) = self.state.lock() {
            st.0[g] = Some(r);
        }
        self.cv.notify_all();
    }

    pub(super) fn stop(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.1 = true;
        }
        self.cv.notify_all();
    }

    /// Until group `g` is on the device and it and every group before it
    /// (they arrive in order) hold finite values; an error when the
    /// copying stopped before (the run reports why).
    pub(super) fn wait(&self, g: usize) -> Result<(), CudaError> {
        let stopped = || CudaError::Unsupported("the copy of the field stopped".into());
        let mut st = self.state.lock().map_err(|_| stopped())?;
        loop {
            if st.0.iter().take(g + 1).flatten().any(|r| r.2.is_some()) {
                return Err(stopped());
            }
            match st.0.get(g) {
                Some(Some(_)) => return Ok(()),
                None => return Err(stopped()),
                Some(None) if st.1 => return Err(stopped()),
                Some(None) => st = self.cv.wait(st).map_err(|_| stopped())?,
            }
        }
    }

    pub(super) fn ranges(&self) -> Vec<Option<Range32>> {
        self.state.lock().map(|st| st.0.clone()).unwrap_or_default()
    }
}

/// Stops the arrivals however the copier ends, so no coder waits forever.
pub(super) struct StopOnDrop<'a>(pub(super) &'a Arrivals);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Copies a slab's pieces (`pieces`: where each starts in the slab, and
/// its rows) up, and announces each with its range. Every copy is queued
/// at once on a stream of their own, so the copy engine never waits for
/// the host between pieces (a range read back before the next copy was
/// queued cost about a millisecond a piece); the ranges run on a second
/// stream, each after its piece's copy. Every piece is ranged, also after
/// a value that is not finite: pieces of rows are not in field order, and
/// the error names the first such value of the field.
pub(super) fn upload_groups(
    g: &Arc<Gpu>,
    host: &[f32],
    dev: &mut CudaSlice<f32>,
    pieces: &[(usize, Rows)],
    arrivals: &Arrivals,
) -> Result<(), CudaError> {
    use cudarc::driver::DevicePtr;
    let _stop = StopOnDrop(arrivals);
    g.ctx.bind_to_thread().during(|| "binding the GPU".into())?;
    let cs = g.ctx.new_stream().during(|| "creating a stream".into())?;
    let rs = g.ctx.new_stream().during(|| "creating a stream".into())?;
    // However this ends, the copies finish before the slab can be freed.
    struct Drain<'a>(&'a CudaStream);
    impl Drop for Drain<'_> {
        fn drop(&mut self) {
            let _ = self.0.synchronize();
        }
    }
    let _drain = Drain(&cs);
    let mut copied = Vec::with_capacity(pieces.len());
    for &(at, r) in pieces {
        copy_rows_up(&cs, host, dev, at, r)?;
        copied.push(cs.record_event(None).during(|| "recording a copy".into())?);
    }
    let base = {
        let (base, _sync) = dev.device_ptr(&rs);
        base
    };
    for (gi, (&(at, r), ev)) in pieces.iter().zip(&copied).enumerate() {
        rs.wait(ev).during(|| "waiting for a copy".into())?;
        let got = range_rows(g, &rs, base + 4 * at as u64, r)?;
        if tracing() {
            eprintln!(
                "trace gpu {} group {gi} arrived@{:.1}",
                g.ctx.ordinal(),
                trace_ms(std::time::Instant::now())
            );
        }
        arrivals.arrive(gi, (got.0, got.1, got.2.map(|j| at + j)));
    }
    Ok(())
}

/// A GPU's coded bricks and how its run went.
pub(super) type Coded = (Vec<(usize, GpuCoded)>, GpuRun);

/// The file of the bricks every GPU coded of its slab (`coded`, a GPU
/// each, None where a slab had no bricks), and how the GPUs ran together.
pub(super) fn assemble_slabs(
    info: FieldInfo,
    opts: &CodecOptions,
    plan: &Planned,
    coded: Vec<Option<Coded>>,
    gpus: usize,
    t_run: std::time::Instant,
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    let mut run = GpuRun {
        gpus,
        slots: 0,
        batches: 0,
        max_bricks_per_batch: 0,
        fill_s: 0.0,
        code_s: 0.0,
    };
    let mut all = Vec::with_capacity(plan.2.len());
    for (c, r) in coded.into_iter().flatten() {
        all.extend(c);
        run.slots = run.slots.max(r.slots);
        run.batches += r.batches;
        run.max_bricks_per_batch = run.max_bricks_per_batch.max(r.max_bricks_per_batch);
        run.fill_s += r.fill_s;
        run.code_s += r.code_s;
    }
    let (bytes, stats) = assemble_coded(info, opts, plan, all, t_run)?;
    Ok((bytes, stats, run))
}

/// A GPU's slab for `compress_pinned`: where GATHER finds the field, the
/// slab's device copy (when it has one), its groups' ranges, and its
/// bricks when they were coded as they arrived.
pub(super) struct Staged {
    pub(super) at: u64,
    pub(super) _dev: Option<CudaSlice<f32>>,
    pub(super) ranges: Vec<Option<Range32>>,
    pub(super) coded: Option<Coded>,
}
