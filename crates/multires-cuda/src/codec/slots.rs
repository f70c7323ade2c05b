//! The slots' pool (kept from run to run) and their streams.

use super::*;

/// Slots kept between calls: pinned and device allocations cost more than
/// coding a small volume. `release_slots` frees them.
pub(super) static POOL: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

/// A pooled slot of `gpu` that serves `usage` for batches of `cap` values
/// (the smallest such), or a new one. Before allocating, every idle slot
/// of `gpu` is freed: the run's budget counted their memory as free
/// (`device_budget`).
pub(super) fn take_slot(
    gpu: &Arc<Gpu>,
    cap: usize,
    dtype: DType,
    usage: Use,
) -> Result<Slot, CudaError> {
    gpu.hold_pool()?;
    let serves = |s: &Slot| s.dtype == dtype && s.usage >= usage && s.cap >= cap;
    let mut freed = Vec::new();
    if let Ok(mut pool) = POOL.lock() {
        let best = (0..pool.len())
            .filter(|&i| Arc::ptr_eq(&pool[i].gpu, gpu) && serves(&pool[i]))
            .min_by_key(|&i| pool[i].cap);
        if let Some(i) = best {
            return Ok(pool.swap_remove(i));
        }
        // The idle slots' memory goes back to the pool once their
        // streams reach the frees: only those streams are waited for. A
        // wait for the whole device held the slot that grows behind every
        // other slot's kernels (165 ms in a trial of the pinned coder with
        // batches of mixed sizes).
        let (idle, keep): (Vec<Slot>, Vec<Slot>) =
            pool.drain(..).partition(|s| Arc::ptr_eq(&s.gpu, gpu));
        *pool = keep;
        freed = idle.iter().map(|s| s.stream.clone()).collect();
    }
    for s in &freed {
        s.synchronize()
            .during(|| "freeing idle codec buffers".into())?;
    }
    Slot::new(gpu.clone(), cap, dtype, usage)
}

/// Device bytes held by the idle slots of `gpu` (the next run may reuse or
/// free them).
pub(super) fn pooled_bytes(gpu: &Arc<Gpu>) -> usize {
    POOL.lock().map_or(0, |pool| {
        pool.iter()
            .filter(|s| Arc::ptr_eq(&s.gpu, gpu))
            .map(|s| s.cap * s.usage.held_per_value(s.dtype))
            .sum()
    })
}

/// Frees the device and pinned memory that earlier compressions kept (and
/// the page-locked buffers of their dropped files), and
/// returns the memory pools' reserve (`Gpu::trim_pool`) to the devices.
pub fn release_slots() {
    if let Ok(mut pool) = PAYLOAD_POOL.lock() {
        pool.clear();
    }
    let gpus: Vec<Arc<Gpu>> = match POOL.lock() {
        Ok(mut pool) => pool.drain(..).map(|s| s.gpu.clone()).collect(),
        Err(_) => return,
    };
    let mut seen: Vec<&Arc<Gpu>> = Vec::new();
    for g in &gpus {
        if !seen.iter().any(|s| Arc::ptr_eq(s, g)) {
            seen.push(g);
            // Best effort: the memory is free for the pool's own use anyway.
            let _ = g.trim_pool();
        }
    }
}

/// A slot's stream and its bulk stream: the first at the device's
/// greatest priority, the second at its least (one stream when
/// priorities are off or the device has one level).
pub(super) fn slot_streams(gpu: &Gpu) -> Result<(Arc<CudaStream>, Arc<CudaStream>), CudaError> {
    let new = || "creating a stream".to_string();
    gpu.ctx.bind_to_thread().during(new)?;
    let (least, greatest) = cudarc::driver::result::stream::get_priority_range().during(new)?;
    if least != greatest {
        let stream = gpu.ctx.new_stream_with_priority(greatest).during(new)?;
        let bulk = gpu.ctx.new_stream_with_priority(least).during(new)?;
        return Ok((stream, bulk));
    }
    let stream = gpu.ctx.new_stream().during(new)?;
    Ok((stream.clone(), stream))
}

/// The stream for a slot's long entropy kernel, after the slot's earlier
/// work on `s`; `bulk_end` makes the slot's later work wait for it.
pub(super) fn bulk_begin(
    s: &Arc<CudaStream>,
    bulk: &Arc<CudaStream>,
) -> Result<Arc<CudaStream>, CudaError> {
    if !Arc::ptr_eq(bulk, s) {
        bulk.join(s).during(|| "ordering the streams".into())?;
    }
    Ok(bulk.clone())
}

pub(super) fn bulk_end(s: &Arc<CudaStream>, bulk: &Arc<CudaStream>) -> Result<(), CudaError> {
    if !Arc::ptr_eq(bulk, s) {
        s.join(bulk).during(|| "ordering the streams".into())?;
    }
    Ok(())
}

pub(super) fn cfg(grid: (u32, u32), block: u32, smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.0.max(1), grid.1.max(1), 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: smem,
    }
}
