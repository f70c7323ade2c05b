//! Large copies between ordinary (pageable) host memory and the device at
//! the link's rate. A copy from or to pageable memory makes the driver
//! stage it through its own small pinned buffer on one thread: on the H200
//! machine 2 GB of CWT coefficients came down at about 3 GB/s (726 ms for
//! cwt-1m against 40 ms at the link's 54 GB/s). Here the bytes go through
//! a ring of page-locked chunks kept for the process: the copy engine
//! fills (or drains) one chunk while the host's threads move the previous
//! one into (or out of) the caller's buffer, so the link and the host copy
//! overlap and the caller's array is written in place, in its own type.

use crate::device::{Gpu, Registered};
use crate::error::{Context, CudaError};
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

/// Bytes a chunk of the ring holds: large enough that a chunk's DMA
/// (0.6 ms at 55 GB/s) dwarfs the per-chunk event wait and thread
/// dispatch, small enough that the first and last chunks, which do not
/// overlap, cost little. On the H200 machine 32 MiB chunks in a ring of
/// four, copied by the host in 1 MiB pieces, gave cwt-1m 1.19x its PCIe
/// time and dwt-64m 1.2-1.3x; 8 MiB chunks in a ring of eight, in 256 KiB
/// pieces, measured no better (1.8x and 3.4x in a noisier run).
const CHUNK: usize = 32 << 20;
/// Chunks in the ring: the copy engine runs up to three ahead of the host.
const SLOTS: usize = 4;
/// Below this a copy goes straight from or to the caller's memory: the
/// driver's own staging is as fast for it as taking the ring.
const DIRECT_BELOW: usize = 256 << 10;
/// The host's threads copy a chunk in pieces of this size.
const PIECE: usize = 1 << 20;

/// The ring of page-locked chunks and the event recorded after each
/// chunk's last copy.
struct Ring {
    chunks: Vec<Registered<u8>>,
    done: Vec<CudaEvent>,
}

impl Ring {
    fn new(gpu: &Gpu) -> Result<Self, CudaError> {
        let mut chunks = Vec::with_capacity(SLOTS);
        let mut done = Vec::with_capacity(SLOTS);
        for _ in 0..SLOTS {
            chunks.push(Registered::<u8>::zeroed(&gpu.ctx, CHUNK, 0)?);
            done.push(
                gpu.ctx
                    .new_event(None)
                    .during(|| "creating a staging event".into())?,
            );
        }
        Ok(Ring { chunks, done })
    }

    /// Every chunk free: the copies of an earlier call (maybe on another
    /// stream) have finished.
    fn settle(&self) -> Result<(), CudaError> {
        for e in &self.done {
            e.synchronize()
                .during(|| "waiting for an earlier staged copy".into())?;
        }
        Ok(())
    }
}

/// The process's ring for `gpu`, made on first use (128 MiB page-locked).
fn ring(gpu: &Gpu) -> Result<Arc<Mutex<Ring>>, CudaError> {
    gpu.table("transfer ring", || Ok(Mutex::new(Ring::new(gpu)?)))
}

fn copy_parallel(dst: &mut [u8], src: &[u8]) {
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Copies `src` to device address `dst`, queued on `stream` behind its
/// earlier work; returns when the bytes are on the device.
///
/// # Safety
/// `dst` must be device memory of at least `src.len()` bytes in `gpu`'s
/// context, not freed before the stream has run the copies.
pub unsafe fn to_device_bytes(
    gpu: &Gpu,
    stream: &CudaStream,
    dst: u64,
    src: &[u8],
) -> Result<(), CudaError> {
    if src.is_empty() {
        return Ok(());
    }
    let len = src.len();
    let what = move || format!("copying {len} bytes to the GPU");
    if src.len() < DIRECT_BELOW {
        // From pageable memory the driver has taken the bytes on return,
        // as cudarc's own copies rely on.
        return cudarc::driver::result::memcpy_htod_async(dst, src, stream.cu_stream())
            .during(what);
    }
    let ring = ring(gpu)?;
    let mut r = ring.lock().unwrap_or_else(|p| p.into_inner());
    r.settle()?;
    let Ring { chunks, done } = &mut *r;
    for (i, part) in src.chunks(CHUNK).enumerate() {
        let slot = i % SLOTS;
        // The chunk's previous copy up must have left it.
        done[slot].synchronize().during(what)?;
        let stage = &mut chunks[slot][..part.len()];
        copy_parallel(stage, part);
        cudarc::driver::result::memcpy_htod_async(
            dst + (i * CHUNK) as u64,
            stage,
            stream.cu_stream(),
        )
        .during(what)?;
        done[slot].record(stream).during(what)?;
    }
    // On the device when this returns, as the driver's own copies from
    // pageable memory are for kernels on other streams: the wait is the
    // last chunk's.
    stream.synchronize().during(what)
}

/// Copies `dst.len()` bytes from device address `src` into `dst`, after
/// the earlier work queued on `stream`; returns when `dst` holds them.
///
/// # Safety
/// `src` must be device memory of at least `dst.len()` bytes in `gpu`'s
/// context, valid until this returns.
pub unsafe fn to_host_bytes(
    gpu: &Gpu,
    stream: &CudaStream,
    src: u64,
    dst: &mut [u8],
) -> Result<(), CudaError> {
    if dst.is_empty() {
        return Ok(());
    }
    let len = dst.len();
    let what = move || format!("copying {len} bytes to the host");
    if dst.len() < DIRECT_BELOW {
        cudarc::driver::result::memcpy_dtoh_async(dst, src, stream.cu_stream()).during(what)?;
        return stream.synchronize().during(what);
    }
    let ring = ring(gpu)?;
    let mut r = ring.lock().unwrap_or_else(|p| p.into_inner());
    r.settle()?;
    let Ring { chunks, done } = &mut *r;
    let mut queued: std::collections::VecDeque<(usize, &mut [u8])> =
        std::collections::VecDeque::with_capacity(SLOTS);
    let drain = |chunks: &[Registered<u8>], (slot, part): (usize, &mut [u8])| {
        done[slot].synchronize().during(what)?;
        copy_parallel(part, &chunks[slot][..part.len()]);
        Ok::<(), CudaError>(())
    };
    // Chunk i is queued once chunk i - SLOTS has been drained into place;
    // the engine copies the queued ones while the host drains.
    for (i, part) in dst.chunks_mut(CHUNK).enumerate() {
        if queued.len() == SLOTS {
            if let Some(q) = queued.pop_front() {
                drain(chunks, q)?;
            }
        }
        let slot = i % SLOTS;
        cudarc::driver::result::memcpy_dtoh_async(
            &mut chunks[slot][..part.len()],
            src + (i * CHUNK) as u64,
            stream.cu_stream(),
        )
        .during(what)?;
        done[slot].record(stream).during(what)?;
        queued.push_back((slot, part));
    }
    while let Some(q) = queued.pop_front() {
        drain(chunks, q)?;
    }
    Ok(())
}

/// `src` in a new device buffer (one value for an empty `src`, as kernels
/// take an address either way), through the ring; queued on `stream`.
pub fn upload<T: DeviceRepr + cudarc::driver::ValidAsZeroBits + bytemuck::Pod>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    src: &[T],
) -> Result<CudaSlice<T>, CudaError> {
    if src.is_empty() {
        // A zeroed placeholder, as before the ring: kernels take an address either way.
        return stream
            .alloc_zeros::<T>(1)
            .during(|| "allocating a placeholder".into());
    }
    // SAFETY: every value is written by the copy below before any use.
    let mut d = unsafe { stream.alloc::<T>(src.len()) }
        .during(|| format!("allocating {} values on the GPU", src.len()))?;
    upload_into(gpu, stream, src, &mut d, 0)?;
    Ok(d)
}

/// `src` into `dst` from element `at` on, through the ring.
pub fn upload_into<T: DeviceRepr + bytemuck::Pod>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    src: &[T],
    dst: &mut CudaSlice<T>,
    at: usize,
) -> Result<(), CudaError> {
    if at + src.len() > dst.len() {
        return Err(CudaError::Unsupported(format!(
            "{} values do not fit a device buffer of {} from {at}",
            src.len(),
            dst.len()
        )));
    }
    let (p, _sync) = dst.device_ptr_mut(stream);
    let p = p + (at * std::mem::size_of::<T>()) as u64;
    // SAFETY: the range was checked against the buffer, which outlives the
    // queued copies (the caller's stream orders its later use and drop).
    unsafe { to_device_bytes(gpu, stream, p, bytemuck::cast_slice(src)) }
}

/// The first `dst.len()` values of `src` (from element `at`) into `dst`,
/// after the stream's earlier work.
pub fn download_into<T: DeviceRepr + bytemuck::Pod>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    src: &CudaSlice<T>,
    at: usize,
    dst: &mut [T],
) -> Result<(), CudaError> {
    if at + dst.len() > src.len() {
        return Err(CudaError::Unsupported(format!(
            "{} values asked of a device buffer of {} from {at}",
            dst.len(),
            src.len()
        )));
    }
    let (p, _sync) = src.device_ptr(stream);
    let p = p + (at * std::mem::size_of::<T>()) as u64;
    // SAFETY: the range was checked against the buffer, borrowed until the
    // copies have completed (this returns after them).
    unsafe { to_host_bytes(gpu, stream, p, bytemuck::cast_slice_mut(dst)) }
}

/// The link's page-locked rates, host to device and back, in bytes/s: the
/// best of three copies of 256 MiB each way through the ring's chunks
/// (what the staged copies above can reach at most).
pub fn link_rates(gpu: &Gpu) -> Result<(f64, f64), CudaError> {
    let ring = ring(gpu)?;
    let mut r = ring.lock().unwrap_or_else(|p| p.into_inner());
    r.settle()?;
    let s = &gpu.stream;
    let reps = (256 << 20) / CHUNK;
    let what = || "timing the link".to_string();
    let mut dev = unsafe { s.alloc::<u8>(CHUNK * reps) }.during(what)?;
    let (d, sync) = dev.device_ptr_mut(s);
    let mut rates = [0.0; 2];
    for (up, rate) in [true, false].into_iter().zip(rates.iter_mut()) {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            s.synchronize().during(what)?;
            let t = std::time::Instant::now();
            for i in 0..reps {
                let c = r.chunks[i % SLOTS].as_mut_ptr();
                let at = d + (i * CHUNK) as u64;
                // SAFETY: both ranges are CHUNK bytes of buffers held here.
                unsafe {
                    if up {
                        cudarc::driver::sys::cuMemcpyHtoDAsync_v2(
                            at,
                            c as *const _,
                            CHUNK,
                            s.cu_stream(),
                        )
                    } else {
                        cudarc::driver::sys::cuMemcpyDtoHAsync_v2(
                            c as *mut _,
                            at,
                            CHUNK,
                            s.cu_stream(),
                        )
                    }
                }
                .result()
                .during(what)?;
            }
            s.synchronize().during(what)?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        *rate = (CHUNK * reps) as f64 / best;
    }
    drop(sync);
    Ok((rates[0], rates[1]))
}
