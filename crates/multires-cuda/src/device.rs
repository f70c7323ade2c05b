//! The one GPU a process uses: probed once (libraries, device, limits),
//! with its stream and the cache of compiled kernels.

use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Limits read off the device (never hard-coded).
#[derive(Debug, Clone)]
pub struct GpuInfo {
    pub name: String,
    pub compute_capability: (i32, i32),
    pub sms: i32,
    /// Shared memory a block may use after opting in (227 KB on Hopper).
    pub smem_per_block_optin: usize,
    /// Shared memory of one SM (bounds how many blocks stay resident).
    pub smem_per_sm: usize,
    pub l2_bytes: usize,
    pub total_mem: usize,
    /// Memory bus width (bits) and clock (kHz), for the bandwidth floor.
    pub bus_bits: i32,
    pub mem_clock_khz: i32,
}

impl GpuInfo {
    /// Peak DRAM bandwidth in bytes/s from the bus width and memory clock
    /// (double data rate), for the floors printed beside timings.
    pub fn peak_bandwidth(&self) -> f64 {
        2.0 * self.mem_clock_khz as f64 * 1e3 * self.bus_bits as f64 / 8.0
    }
}

pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: GpuInfo,
    /// Compiled kernels by instance, with the dynamic shared memory limit
    /// each was raised to.
    cache: Mutex<HashMap<String, (CudaFunction, usize)>>,
    /// Read-only tables made for a shape (the codec's coding orders and
    /// level classes), uploaded once and read by every stream: when each
    /// of sixteen codec slots uploaded its own (26 MB for a 129^3 brick,
    /// from pageable memory), a 1024^3 decode waited 20 ms for them.
    tables: Mutex<HashMap<String, Arc<dyn Any + Send + Sync>>>,
    /// The device's default memory pool (stream-ordered allocations), as
    /// configured by `pool_setup`.
    pool: Option<Pool>,
    /// Whether the pool keeps all it reserves (`hold_pool`) until
    /// `trim_pool`.
    pool_held: std::sync::atomic::AtomicBool,
}

/// A `CUmemoryPool` handle: the driver's pools are safe to use from any
/// thread.
#[derive(Debug, Clone, Copy)]
struct Pool(cudarc::driver::sys::CUmemoryPool);
// SAFETY: a pool handle is an opaque driver object, thread-safe by the
// driver's contract.
unsafe impl Send for Pool {}
unsafe impl Sync for Pool {}

/// The default pool of `ctx`'s device, set so that
/// - an allocation never waits on another stream: by default the pool
///   hands a stream memory that another stream freed behind its pending
///   work, and makes the stream wait for that work (the codec's slots free
///   small per-batch buffers right after their rANS launch, a chain of
///   ~15 ms, so the other slots' next allocations could wait for it);
/// - up to a quarter of the device's memory stays reserved after it is
///   freed, so a field decoded again (4 GiB for 1024^3 float32) does not
///   map its pages again: allocating and zeroing one took 8.5 ms of a
///   55 ms resident decode. Memory sizing for kernels outside the pool
///   (cuFFT's plans) reads the driver's free memory, which excludes it;
///   the codec, whose buffers all come from the pool, adds it back
///   (`Gpu::pool_idle`), and `Gpu::trim_pool` returns it.
fn pool_setup(ctx: &CudaContext) -> Result<Pool, cudarc::driver::DriverError> {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut no: i32 = 0;
    // SAFETY: the out pointer and the attribute's value (an int, as this
    // attribute takes) outlive the calls.
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()).result()?;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            (&mut no as *mut i32).cast(),
        )
        .result()?;
    }
    set_pool_threshold(Pool(pool), pool_keep(ctx)?)?;
    Ok(Pool(pool))
}

/// The reserve `pool_setup` leaves a pool: a quarter of the device.
fn pool_keep(ctx: &CudaContext) -> Result<u64, cudarc::driver::DriverError> {
    Ok((ctx.total_mem()? / 4) as u64)
}

/// Sets `pool`'s release threshold (bytes it keeps reserved after frees).
fn set_pool_threshold(pool: Pool, mut keep: u64) -> Result<(), cudarc::driver::DriverError> {
    // SAFETY: a valid pool handle; the attribute takes a u64, which
    // outlives the call.
    unsafe {
        cudarc::driver::sys::cuMemPoolSetAttribute(
            pool.0,
            cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut keep as *mut u64).cast(),
        )
        .result()
    }
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).finish()
    }
}

static SHARED: OnceLock<Result<Arc<Gpu>, String>> = OnceLock::new();

/// The process's GPU, probed on first use. A machine without a driver,
/// device or NVRTC gets a typed error, never a panic: cudarc panics when a
/// library is missing, so presence is checked before cudarc is touched.
pub fn gpu() -> Result<Arc<Gpu>, CudaError> {
    let r = SHARED.get_or_init(|| Gpu::probe(0).map(Arc::new).map_err(|e| e.to_string()));
    match r {
        Ok(g) => Ok(g.clone()),
        Err(msg) => Err(CudaError::Unavailable(msg.clone())),
    }
}

/// How many GPUs the driver sees (0 when there is no usable GPU).
pub fn device_count() -> usize {
    if gpu().is_err() {
        return 0;
    }
    CudaContext::device_count().map_or(0, |c| c.max(0) as usize)
}

/// GPU `ordinal` (0 is `gpu()`), probed once, for work spread over GPUs.
pub fn gpu_at(ordinal: usize) -> Result<Arc<Gpu>, CudaError> {
    if ordinal == 0 {
        return gpu();
    }
    static OTHERS: OnceLock<Mutex<HashMap<usize, Arc<Gpu>>>> = OnceLock::new();
    let count = device_count();
    if ordinal >= count {
        return Err(CudaError::NoDevice(format!(
            "GPU {ordinal} was asked for; the driver sees {count}"
        )));
    }
    let mut m = OTHERS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(g) = m.get(&ordinal) {
        return Ok(g.clone());
    }
    let g = Arc::new(Gpu::probe(ordinal)?);
    m.insert(ordinal, g.clone());
    Ok(g)
}

/// Whether a usable GPU is present (for `--device auto` and test skips).
pub fn available() -> Result<(), String> {
    gpu().map(|_| ()).map_err(|e| e.to_string())
}

impl Gpu {
    fn probe(ordinal: usize) -> Result<Gpu, CudaError> {
        // SAFETY: these only try to dlopen the libraries.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(CudaError::NoDriver);
        }
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(CudaError::NoNvrtc);
        }
        let count = CudaContext::device_count()
            .map_err(|e| CudaError::NoDevice(format!("the driver cannot list devices ({e})")))?;
        if count < 1 {
            return Err(CudaError::NoDevice("the driver sees no device".into()));
        }
        let ctx = CudaContext::new(ordinal).during(|| format!("opening device {ordinal}"))?;
        // Threads that wait for the GPU yield their core rather than spin
        // (the driver spins when a process has fewer contexts than cores):
        // the codec's slot threads, up to sixteen, each wait on their own
        // stream while the rayon pool parses, gathers and checks for the
        // others, and spinning waiters held the cores (a batch's 64 brick
        // headers, half a millisecond of work, took 12 to 20 ms to parse).
        // Yielding wakes sooner than sleeping (blocking sync): on two
        // H200s the resident coder ran 2-3% faster on one GPU and 5% on
        // two, the pinned path the same.
        let flag = cudarc::driver::sys::CUctx_flags::CU_CTX_SCHED_YIELD;
        // SAFETY: `new` made the context current on this thread.
        unsafe { cudarc::driver::sys::cuCtxSetFlags(flag as u32) }
            .result()
            .during(|| format!("setting how device {ordinal}'s waiting threads wait"))?;
        // The stream-ordered pool's set-up (see `pool_setup`).
        let pool = Some(
            pool_setup(&ctx).during(|| format!("configuring device {ordinal}'s memory pool"))?,
        );
        // One stream orders all work; cudarc's per-buffer events are not needed.
        // SAFETY: called before any buffer exists.
        unsafe { ctx.disable_event_tracking() };
        let attr = |a: Attr| ctx.attribute(a).during(|| format!("reading {a:?}"));
        let info = GpuInfo {
            name: ctx.name().during(|| "reading the device name".into())?,
            compute_capability: ctx
                .compute_capability()
                .during(|| "reading the compute capability".into())?,
            sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            smem_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
                as usize,
            smem_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?
                as usize,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
            total_mem: ctx
                .total_mem()
                .during(|| "reading the memory size".into())?,
            bus_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
            mem_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
        };
        let stream = ctx.default_stream();
        Ok(Gpu {
            ctx,
            stream,
            info,
            cache: Mutex::new(HashMap::new()),
            tables: Mutex::new(HashMap::new()),
            pool,
            pool_held: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The table named `key`, made by `make` on this device's first
    /// request and kept for the process. `make` must leave it ready for
    /// any stream (its copies synchronized). Requests wait while one
    /// makes it, so it is uploaded once.
    pub fn table<T: Any + Send + Sync>(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<T, CudaError>,
    ) -> Result<Arc<T>, CudaError> {
        let mut tables = self.tables.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = tables.get(key) {
            if let Ok(t) = t.clone().downcast::<T>() {
                return Ok(t);
            }
        }
        let t = Arc::new(make()?);
        tables.insert(key.to_string(), t.clone());
        Ok(t)
    }

    /// `instance` of `kernel` (e.g. "DIRECT(k, float, 0, 1, 0)"), compiled
    /// by NVRTC for this device's architecture on first use and cached, with
    /// its dynamic shared memory limit raised to `smem` bytes.
    pub fn function(
        &self,
        kernel: Kernel,
        instance: &str,
        smem: usize,
    ) -> Result<CudaFunction, CudaError> {
        let key = format!("{}:{instance}", kernel.file());
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if smem > self.info.smem_per_block_optin {
            return Err(CudaError::Unsupported(format!(
                "{instance} needs {smem} bytes of shared memory; this GPU allows {} per block",
                self.info.smem_per_block_optin
            )));
        }
        let (f, raised) = match cache.get_mut(&key) {
            Some(e) => e,
            None => {
                let (f, _) = crate::kernels::compile(
                    &self.ctx,
                    kernel,
                    instance,
                    self.info.compute_capability,
                )?;
                cache.entry(key).or_insert((f, 48 * 1024))
            }
        };
        // Raised once, to the device's limit, before the kernel's first
        // launch: raising it again while launches of it were in flight
        // (once a batch) made the codec's side-by-side streams take turns
        // (its trace showed the rANS launches in waves, a chain each).
        if smem > *raised {
            // The limit counts dynamic shared memory only: the device's
            // per-block limit less what the kernel declares statically.
            let fixed = f
                .shared_size_bytes()
                .during(|| format!("reading the static shared memory of {instance}"))?;
            let limit = self
                .info
                .smem_per_block_optin
                .saturating_sub(fixed.max(0) as usize)
                .max(smem);
            f.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                limit as i32,
            )
            .during(|| format!("raising the shared memory of {instance} to {limit} bytes"))?;
            *raised = limit;
        }
        Ok(f.clone())
    }

    /// Free device memory now.
    pub fn free_mem(&self) -> Result<usize, CudaError> {
        self.ctx
            .mem_get_info()
            .map(|(free, _)| free)
            .during(|| "reading free memory".into())
    }

    /// Bytes the memory pool holds reserved and unused: free for the
    /// pool's own allocations, though not in `free_mem`.
    pub fn pool_idle(&self) -> Result<usize, CudaError> {
        use cudarc::driver::sys::CUmemPool_attribute as A;
        let Some(Pool(pool)) = self.pool else {
            return Ok(0);
        };
        let read = |a: A| -> Result<u64, CudaError> {
            let mut v: u64 = 0;
            // SAFETY: both attributes are u64s; `v` outlives the call.
            unsafe {
                cudarc::driver::sys::cuMemPoolGetAttribute(pool, a, (&mut v as *mut u64).cast())
            }
            .result()
            .during(|| format!("reading the memory pool's {a:?}"))?;
            Ok(v)
        };
        let reserved = read(A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
        let used = read(A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
        Ok(reserved.saturating_sub(used) as usize)
    }

    /// Keeps all the pool reserves until `trim_pool`, for the codec,
    /// whose runs free and allocate the same large buffers again: beyond
    /// the quarter of the device that `pool_setup` keeps, any stream's
    /// synchronization returned a freed 2 GiB slab to the device, and the
    /// next decode's allocation mapped it again (3-9 ms, on two H100s,
    /// with the other allocations of that GPU waiting behind it).
    pub fn hold_pool(&self) -> Result<(), CudaError> {
        use std::sync::atomic::Ordering;
        let Some(pool) = self.pool else {
            return Ok(());
        };
        if !self.pool_held.swap(true, Ordering::AcqRel) {
            set_pool_threshold(pool, u64::MAX)
                .during(|| "keeping the memory pool's reserve".into())?;
        }
        Ok(())
    }

    /// Returns the memory pool's unused reserve to the device, and the
    /// reserve it keeps to a quarter of the device (undoing `hold_pool`).
    pub fn trim_pool(&self) -> Result<(), CudaError> {
        use std::sync::atomic::Ordering;
        let Some(pool) = self.pool else {
            return Ok(());
        };
        if self.pool_held.swap(false, Ordering::AcqRel) {
            let keep = pool_keep(&self.ctx).during(|| "reading the device's memory".into())?;
            set_pool_threshold(pool, keep).during(|| "setting the memory pool's reserve".into())?;
        }
        let Pool(pool) = pool;
        self.synchronize()?;
        // SAFETY: a valid pool handle of this device.
        unsafe { cudarc::driver::sys::cuMemPoolTrimTo(pool, 0) }
            .result()
            .during(|| "returning the memory pool's reserve".into())
    }

    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.stream
            .synchronize()
            .during(|| "waiting for the GPU".into())
    }
}

impl Gpu {
    /// Milliseconds the work `f` queues takes on the GPU, between two CUDA
    /// events (recorded with timing enabled).
    pub fn time_ms(&self, f: impl FnOnce() -> Result<(), CudaError>) -> Result<f32, CudaError> {
        use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;
        let start = self
            .ctx
            .new_event(Some(CU_EVENT_DEFAULT))
            .during(|| "creating a timing event".into())?;
        let end = self
            .ctx
            .new_event(Some(CU_EVENT_DEFAULT))
            .during(|| "creating a timing event".into())?;
        start
            .record(&self.stream)
            .during(|| "recording an event".into())?;
        f()?;
        end.record(&self.stream)
            .during(|| "recording an event".into())?;
        end.synchronize()
            .during(|| "waiting for the timed work".into())?;
        start
            .elapsed_ms(&end)
            .during(|| "reading the event timer".into())
    }
}

/// The address of page-locked host memory (registered with DEVICEMAP)
/// for kernels of the context bound to this thread.
pub(crate) fn mapped_at(ptr: *mut std::ffi::c_void) -> Result<u64, CudaError> {
    let mut at = 0u64;
    unsafe { cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut at, ptr, 0) }
        .result()
        .during(|| "mapping page-locked memory".into())?;
    Ok(at)
}

/// Host memory in an ordinary vector on transparent huge pages, touched on
/// every core and then registered with CUDA (page-locked): copies to and
/// from it run at the link's rate and asynchronously, like
/// `cuMemHostAlloc`'s. That call took 2.4 s for 4 GiB on the H100 machine
/// (a million 4 KiB page faults on one thread) and stalls the slots that
/// grow their buffers; registering memory already touched took 0.18 s.
pub struct Registered<T> {
    data: Vec<T>,
    /// The context it is registered with, current when it is unregistered.
    ctx: Arc<CudaContext>,
}

impl<T: bytemuck::Zeroable + Clone + Send> Registered<T> {
    /// `len` zeroed values registered with `flags` (CU_MEMHOSTREGISTER_*:
    /// PORTABLE for every context, DEVICEMAP for kernels to address it).
    pub fn zeroed(ctx: &Arc<CudaContext>, len: usize, flags: u32) -> Result<Self, CudaError> {
        Self::register(ctx, multires::memory::touched_vec::<T>(len.max(1)), flags)
    }

    /// `data` (its pages already touched) registered with `flags`.
    pub fn register(
        ctx: &Arc<CudaContext>,
        mut data: Vec<T>,
        flags: u32,
    ) -> Result<Self, CudaError> {
        let bytes = std::mem::size_of_val(data.as_slice()).max(1);
        let what = || format!("page-locking {bytes} bytes of host memory");
        if data.is_empty() {
            data.push(T::zeroed());
        }
        ctx.bind_to_thread().during(what)?;
        // SAFETY: the range is the vector's own, and the vector is neither
        // grown nor freed before `Drop` unregisters it.
        unsafe {
            cudarc::driver::sys::cuMemHostRegister_v2(data.as_mut_ptr() as *mut _, bytes, flags)
                .result()
        }
        .during(what)?;
        Ok(Registered {
            data,
            ctx: ctx.clone(),
        })
    }
}

impl<T> Registered<T> {
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn as_ptr(&self) -> *const T {
        self.data.as_ptr()
    }

    /// The context it is registered with.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }
}

impl<T> std::ops::Deref for Registered<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.data
    }
}

impl<T> std::ops::DerefMut for Registered<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.data
    }
}

impl<T> Drop for Registered<T> {
    fn drop(&mut self) {
        // Nothing to report to from a drop; the vector is freed either way.
        if self.ctx.bind_to_thread().is_ok() {
            let _ = unsafe {
                cudarc::driver::sys::cuMemHostUnregister(self.data.as_mut_ptr() as *mut _)
            };
        }
    }
}
