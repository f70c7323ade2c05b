//! A slab of a larger field coded on a GPU for one MPI rank: the payloads
//! of its bricks, planned from the whole field's bound (crates/multires-mpi
//! writes them into the file with every other rank's).

use super::*;

/// One brick of a slab as coded: its payload (with its CRC-32), largest
/// error, sum of squared errors and outliers stored.
pub type SlabBrick = (BatchBytes, f64, f64, usize);

impl BatchBytes {
    /// The payload's CRC-32 (computed on the device with the payload).
    pub fn crc(&self) -> u32 {
        self.crc
    }
}

/// Codes every brick of `v` (a slab of whole brick layers of a larger
/// field, in host memory) cut into bricks of `brick` within the absolute
/// bound `e` that the whole field's range planned (`range`), on `gpus`,
/// in brick order. The payloads equal `multires::codec::code_bricks`' of
/// the same slab, so they are that field's payloads for those bricks.
pub fn code_slab(
    v: &Volume,
    opts: &CodecOptions,
    (range, e, brick): ((f64, f64), f64, [usize; 3]),
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<SlabBrick>, CudaError> {
    super::gpu_codable(opts)?;
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
    let grid = codec::BrickGrid {
        dims: v.dims,
        brick,
    };
    let plan = (range, e, grid);
    let all: Vec<usize> = (0..grid.len()).collect();
    let done = AtomicUsize::new(0);
    let (coded, _) = code_bricks(
        v.info(),
        opts,
        (&plan, &all),
        gpus,
        (None, DEFAULT_BATCH, HOST_SLOTS, HOST_SLOTS),
        (&done, progress),
        &|slot, b| {
            slot.upload(v, &grid, b, opts.transform)?;
            slot.stream
                .synchronize()
                .during(|| "copying bricks up".into())
        },
    )?;
    in_brick_order(coded, grid.len())
}

/// `code_slab` for a slab already on `gpu` (float32): nothing crosses
/// PCIe but the payloads. `finite_range` gives the slab's range for the
/// reduction over ranks that plans `e`.
pub fn code_slab_resident(
    f: &DeviceField,
    opts: &CodecOptions,
    (range, e, brick): ((f64, f64), f64, [usize; 3]),
    gpu: &Arc<Gpu>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<SlabBrick>, CudaError> {
    super::gpu_codable(opts)?;
    let grid = codec::BrickGrid {
        dims: f.info.dims,
        brick,
    };
    let plan = (range, e, grid);
    let all: Vec<usize> = (0..grid.len()).collect();
    let done = AtomicUsize::new(0);
    let (coded, _) = code_bricks(
        f.info,
        opts,
        (&plan, &all),
        std::slice::from_ref(gpu),
        (
            None,
            RESIDENT_BATCH,
            RESIDENT_SLOTS,
            tuning().resident_shares,
        ),
        (&done, progress),
        &|slot, b| {
            use cudarc::driver::DevicePtr;
            let stream = slot.stream.clone();
            let (at, _sync) = f.data.device_ptr(&stream);
            slot.gather_from((at, true), &f.info, &grid, b, opts.transform)
        },
    )?;
    in_brick_order(coded, grid.len())
}

/// The least and greatest values of a field on `gpu`, computed there; a
/// NaN or an infinity is refused (`CodecError::NonFinite`), as the GPU
/// codes finite fields only.
pub fn finite_range(f: &DeviceField, gpu: &Gpu) -> Result<(f64, f64), CudaError> {
    device_range(gpu, &f.data, f.info.len(), 0)
}

fn in_brick_order(
    coded: Vec<(usize, GpuCoded)>,
    bricks: usize,
) -> Result<Vec<SlabBrick>, CudaError> {
    let mut by_brick: Vec<Option<SlabBrick>> = vec![None; bricks];
    for (k, c) in coded {
        if let Some(slot) = by_brick.get_mut(k) {
            *slot = Some(c);
        }
    }
    by_brick
        .into_iter()
        .enumerate()
        .map(|(k, c)| c.ok_or_else(|| CudaError::Unsupported(format!("brick {k} was not coded"))))
        .collect()
}
