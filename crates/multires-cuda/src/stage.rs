//! A codec slot's small copies (lists of offsets, rANS tables, histograms,
//! fault flags) made by a kernel through mapped page-locked memory, not by
//! a copy engine. The engines serve the copies of all streams in order of
//! arrival, so a slot's 2 KB list waited behind a 541 MB copy of the field
//! (up to 11 ms, several times a batch).

use crate::device::{Gpu, Registered};
use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// The least a stage holds: a batch's lists fit, so it rarely grows.
const STAGE_MIN_BYTES: usize = 4 << 20;

/// Mapped page-locked bytes handed out in order; the place of each copy
/// up stays untouched until the stream is next synchronized (a kernel
/// queued behind others reads it later), then all of it is free again.
#[derive(Default)]
pub struct Stage {
    host: Option<Registered<u128>>,
    /// Its address for kernels.
    at: u64,
    /// Bytes given out since the stream was last synchronized.
    used: usize,
}

impl Stage {
    fn bytes(&mut self) -> &mut [u8] {
        match &mut self.host {
            Some(h) => bytemuck::cast_slice_mut(&mut h[..]),
            None => &mut [],
        }
    }

    fn bytes_ref(&self) -> &[u8] {
        match &self.host {
            Some(h) => bytemuck::cast_slice(&h[..]),
            None => &[],
        }
    }

    /// The offset of `len` free bytes (16-byte aligned), waiting for the
    /// stream or growing when they do not fit.
    fn reserve(&mut self, gpu: &Gpu, s: &CudaStream, len: usize) -> Result<usize, CudaError> {
        let at = self.used.next_multiple_of(16);
        let cap = self.bytes().len();
        if at + len <= cap {
            self.used = at + len;
            return Ok(at);
        }
        s.synchronize()
            .during(|| "waiting for a slot's small copies".into())?;
        self.used = 0;
        if len > cap {
            self.host = None;
            let words = len.max(STAGE_MIN_BYTES).next_power_of_two() / 16;
            use cudarc::driver::sys::CU_MEMHOSTREGISTER_DEVICEMAP;
            let host = Registered::<u128>::zeroed(&gpu.ctx, words, CU_MEMHOSTREGISTER_DEVICEMAP)?;
            self.at = crate::device::mapped_at(host.as_ptr() as *mut std::ffi::c_void)?;
            self.host = Some(host);
        }
        self.used = len;
        Ok(0)
    }

    /// The slot's stream was synchronized (by a copy down elsewhere): every
    /// byte is free again.
    pub fn synchronized(&mut self) {
        self.used = 0;
    }

    /// `len` bytes written by `fill` and copied up into a new buffer.
    pub fn up_bytes(
        &mut self,
        gpu: &Gpu,
        s: &Arc<CudaStream>,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<CudaSlice<u8>, CudaError> {
        let at = self.reserve(gpu, s, len)?;
        fill(&mut self.bytes()[at..at + len]);
        self.copy_up(gpu, s, at, len)
    }

    /// `src` copied up into a new buffer of its length (one value for an
    /// empty `src`, as kernels take an address either way).
    pub fn up<T: DeviceRepr + bytemuck::Pod>(
        &mut self,
        gpu: &Gpu,
        s: &Arc<CudaStream>,
        src: &[T],
    ) -> Result<CudaSlice<T>, CudaError> {
        let len = std::mem::size_of_val(src);
        let at = self.reserve(gpu, s, len)?;
        self.bytes()[at..at + len].copy_from_slice(bytemuck::cast_slice(src));
        self.copy_up(gpu, s, at, src.len())
    }

    /// `count` values at `at` of the stage copied up into a new buffer.
    fn copy_up<T: DeviceRepr + bytemuck::Pod>(
        &mut self,
        gpu: &Gpu,
        s: &Arc<CudaStream>,
        at: usize,
        count: usize,
    ) -> Result<CudaSlice<T>, CudaError> {
        let len = count * std::mem::size_of::<T>();
        let mut dst = unsafe { s.alloc::<T>(count.max(1)) }.during(|| "alloc".into())?;
        if len > 0 {
            let d = dst.device_ptr_mut(s).0;
            copy_kernel(gpu, s, self.at + at as u64, d, len)?;
        }
        Ok(dst)
    }

    /// `src` copied down, after the stream's earlier work (it waits).
    pub fn down<T, S>(
        &mut self,
        gpu: &Gpu,
        s: &Arc<CudaStream>,
        src: &S,
    ) -> Result<Vec<T>, CudaError>
    where
        T: DeviceRepr + bytemuck::Pod,
        S: DevicePtr<T> + DeviceSlice<T>,
    {
        let q = self.queue_down(gpu, s, src)?;
        self.wait(s)?;
        Ok(self.read(&q))
    }

    /// `src`'s copy down queued behind the stream's earlier work; `wait`
    /// then `read` it. Several copies queued before one wait cost one
    /// round trip: under other slots' kernels each wait took 1-11 ms.
    pub fn queue_down<T, S>(
        &mut self,
        gpu: &Gpu,
        s: &Arc<CudaStream>,
        src: &S,
    ) -> Result<Queued<T>, CudaError>
    where
        T: DeviceRepr + bytemuck::Pod,
        S: DevicePtr<T> + DeviceSlice<T>,
    {
        let len = src.len() * std::mem::size_of::<T>();
        let at = self.reserve(gpu, s, len)?;
        if len > 0 {
            let d = src.device_ptr(s).0;
            copy_kernel(gpu, s, d, self.at + at as u64, len)?;
        }
        Ok(Queued {
            at,
            len,
            _t: std::marker::PhantomData,
        })
    }

    /// Waits for the stream: the queued copies down are then readable,
    /// until the next copy is queued.
    pub fn wait(&mut self, s: &Arc<CudaStream>) -> Result<(), CudaError> {
        s.synchronize()
            .during(|| "waiting for a slot's list".into())?;
        self.used = 0;
        Ok(())
    }

    /// A copy down queued and waited for.
    pub fn read<T: bytemuck::Pod>(&self, q: &Queued<T>) -> Vec<T> {
        bytemuck::cast_slice(&self.bytes_ref()[q.at..q.at + q.len]).to_vec()
    }
}

/// Where a queued copy down lands in the stage.
pub struct Queued<T> {
    at: usize,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

/// STAGE: `len` bytes from `src` to `dst` (device or mapped host addresses).
fn copy_kernel(gpu: &Gpu, s: &CudaStream, src: u64, dst: u64, len: usize) -> Result<(), CudaError> {
    let f = gpu.function(Kernel::Codec, "STAGE(kernel)", 0)?;
    let n = len as i64;
    let blocks = len.div_ceil(16 * 256).clamp(1, 1024) as u32;
    let mut l = s.launch_builder(&f);
    l.arg(&src).arg(&dst).arg(&n);
    unsafe {
        l.launch(LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        })
    }
    .during(|| "launching STAGE".into())?;
    Ok(())
}
