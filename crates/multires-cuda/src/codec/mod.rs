//! The error-bounded codec (multires::codec) on the GPU: the closed-loop
//! interpolation (or lifting, quantization in Morton order and the
//! encoder's decode for each tried step), the outlier check, and the Rice coder's sizes, scans and bits all run on
//! the device; only a few sizes per brick come back before the payload.
//! The kernels repeat the CPU's arithmetic operation for operation (no FMA
//! contraction), so the file is byte-identical to the CPU's.
//!
//! Bricks go through in batches. Every GPU has slots, each with its own
//! stream, device buffers and pinned buffer, driven by its own host
//! thread: for a field on the host two, so that while one slot's batch is
//! copied up and coded, the other's host thread gathers the next batch
//! into its pinned buffer; for a field on the device as many as memory
//! allows, so that the serial rANS kernels of every batch run side by
//! side. A memory limit only shrinks the batches; bricks are coded alike
//! whatever batch, slot or GPU they land in, so the output never depends
//! on any of them.

use crate::device::{Gpu, Registered};
use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use crate::stage::Stage;
use crate::GpuReal;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchConfig, PushKernelArg,
};
use multires::codec::{
    self, interp, lifting, morton, rans, rice, CodecOptions, CodecStats, DType, FieldInfo,
    FieldView, Values, ValuesRef, Volume,
};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

mod batches;
mod decode;
mod encode;
mod entropy;
mod fast;
mod fields;
mod host;
mod payloads;
mod pieces;
mod pinned;
mod ranks;
mod resident;
mod slots;
#[cfg(test)]
mod tests;
mod trace;
mod transform;

use batches::*;
use decode::*;
pub use entropy::*;
pub use fast::last_fast_decode_seconds;
pub use fields::*;
pub use host::*;
pub use payloads::*;
pub use pieces::*;
pub use pinned::*;
pub use ranks::*;
pub use resident::*;
pub use slots::*;
use trace::*;
use transform::*;

const TRIALS: usize = 3;
/// The largest brick the device codes (its significance map is built in
/// shared memory).
pub const MAX_BRICK_VALUES: usize = 1 << 22;

/// What a slot's buffers are sized for. A decoder needs the details and
/// the decoded values; the interpolation's coder adds its input, its
/// reconstruction and RENC's scratch; the lifting transforms' coder keeps
/// the quantized values and corrections of every tried step. A slot
/// serves its own use and every lesser one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Use {
    Decode,
    EncodeInterp,
    EncodeLifting,
}

impl Use {
    fn of(encode: bool, t: lifting::Lifting) -> Use {
        match (encode, t == lifting::Lifting::Interp) {
            (false, _) => Use::Decode,
            (true, true) => Use::EncodeInterp,
            (true, false) => Use::EncodeLifting,
        }
    }

    /// Quantized values (and RENC's scratch) and corrections per value of
    /// a slot's capacity.
    fn ints_corr(self) -> (usize, usize) {
        match self {
            Use::Decode => (1, 0),
            Use::EncodeInterp => (TRIALS, 1),
            Use::EncodeLifting => (TRIALS, TRIALS),
        }
    }

    /// Whether the slot holds, besides `y`, the lifting coder's arrays of
    /// doubles: its input `x` and coefficients `c` (the interpolation
    /// reads its input as stored and writes its details as integers in
    /// coding order; a decoder's inverse works in `y` alone).
    fn doubles(self) -> bool {
        self == Use::EncodeLifting
    }

    /// Device bytes a slot holds per value of its capacity (`ints_corr`,
    /// the doubles, the stored-type buffer and the per-block arrays).
    fn held_per_value(self, dtype: DType) -> usize {
        let (i, c) = self.ints_corr();
        8 * (1 + 2 * self.doubles() as usize) + 4 * (i + c) + dtype.size() + 1
    }

    /// `held_per_value` and room for a batch's payloads and tables.
    fn per_value(self, dtype: DType) -> usize {
        self.held_per_value(dtype) + dtype.size() + 2
    }
}
/// Bricks per batch when memory does not limit it: the rANS kernels run a
/// thread per chunk (a few dozen a brick) through its chunk in sequence,
/// so a batch needs many bricks to fill the device (16 a batch took 2.6
/// times as long as 64 on the smooth field). On two H200s, 128 a batch and
/// batches cut to balance the slots both measured slower than 64.
const DEFAULT_BATCH: usize = 64;

/// Bricks per batch for a field already on the device: nothing on the
/// host to overlap, so more chunks in flight win (1024^3 smooth on the
/// H100: 13 to 17 GB/s against 11 to 12 with 64).
const RESIDENT_BATCH: usize = 128;

/// Values a batch holds at most: a bound on a slot's memory (about 30
/// bytes a value), not on correctness. An encoder of an earlier format
/// wrote streams the decoders refused above about 240M values a batch;
/// today's writes the CPU's bytes for batches of 369M values (one H200,
/// 1024^3 smooth and turbulent at rel 1e-3, one slot, batches of up to
/// 172 bricks) and the GPU tests code batches of 275M
/// (`a_batch_above_240m_values_writes_the_cpus_bytes`).
const MAX_BATCH_VALUES: usize = 1 << 30;

/// How a GPU run went (for the CLI and the benchmarks).
#[derive(Debug, Clone)]
pub struct GpuRun {
    pub gpus: usize,
    /// Slots a GPU (batches in flight at once).
    pub slots: usize,
    pub batches: usize,
    pub max_bricks_per_batch: usize,
    /// Seconds the slots spent putting bricks on the device (gathering
    /// them into pinned memory and copying them up, or gathering them
    /// from a field already there) and coding them (summed over slots).
    pub fill_s: f64,
    pub code_s: f64,
}

/// One batch: bricks of one shape.
struct Batch {
    dims: [usize; 3],
    bricks: Vec<usize>,
}

/// The device side of one slot: buffers sized for `cap` values.
struct Slot {
    gpu: Arc<Gpu>,
    stream: Arc<CudaStream>,
    /// The long entropy kernels' stream (RENC, RDEC), of lower priority
    /// than `stream` where priorities are on (`priorities`).
    bulk: Arc<CudaStream>,
    cap: usize,
    dtype: DType,
    usage: Use,
    pin32: Option<Registered<f32>>,
    pin64: Option<Registered<f64>>,
    in32: Option<CudaSlice<f32>>,
    in64: Option<CudaSlice<f64>>,
    x: CudaSlice<f64>,
    c: CudaSlice<f64>,
    y: CudaSlice<f64>,
    ints: CudaSlice<i32>,
    corr: CudaSlice<i32>,
    nzf: CudaSlice<u8>,
    mode: CudaSlice<u32>,
    sizes: CudaSlice<u32>,
    cnt: CudaSlice<u32>,
    out: CudaSlice<u8>,
    /// Pinned bytes for payloads going down (coder) or up (decoder).
    pbytes: Option<Registered<u8>>,
    /// The decoder's streams copied up from a page-locked file.
    up_streams: Option<CudaSlice<u8>>,
    /// Its small copies, made without the copy engines.
    stage: Stage,
    /// The gathered batch's brick peaks (GATHER takes them on its way),
    /// for the next `encode` in place of BPEAK's.
    gathered_peak: Option<CudaSlice<u64>>,
    /// The field the next `encode`'s interpolation reads in place, where
    /// `gather_from` took only the peaks.
    field_in: Option<FieldIn>,
    /// Coding orders per brick shape: Morton (lifting) or interp's.
    orders: CodingOrders,
    /// The rANS level classes of interp's coding order, per brick shape.
    classes: BTreeMap<([usize; 3], interp::Order), Arc<LevelClasses>>,
    /// The decoder's chunk lists, kept from batch to batch: built afresh,
    /// a turbulent batch's (1-2 MB) took 1-3 ms of growing and faulting
    /// in pages while every other slot did the same.
    dec_lists: DecodeLists,
    /// The coder's piece lists and layout offsets, kept likewise (built
    /// afresh into cold pages they took 0.37 ms a batch on the
    /// development machine against 23-26 us into warm ones; on the
    /// device's hosts no change either way).
    enc_lists: EncodeLists,
}

/// A coding batch's lists, kept from batch to batch: the chunk lists
/// RENC reads, and per chunk its place in the payloads and in the
/// scratch (RCOPY's offsets).
#[derive(Default)]
struct EncodeLists {
    chunks: RansChunks,
    offs: Vec<u64>,
    spos: Vec<u64>,
}

/// A decode batch's chunk lists: per piece its data's byte offset and
/// words, and the pieces and tables as RDEC reads them.
#[derive(Default)]
struct DecodeLists {
    doff: Vec<u64>,
    dlen: Vec<u32>,
    /// Per brick, its context's restart less one (`rans::Header::reset`).
    rmask: Vec<u32>,
    chunks: RansChunks,
}

/// Per tile of 32 values (the last may be shorter), bit c set where level
/// class c occurs in it, classes from 7 up counting as 7 (as the rANS
/// contexts do).
fn tile_classes(classes: &[u8]) -> Vec<u8> {
    classes
        .chunks(32)
        .map(|w| w.iter().fold(0u8, |m, &c| m | 1 << c.min(7)))
        .collect()
}

/// A brick shape's rANS level classes on the device: a byte a value, and
/// for RDEC a byte a tile of 32 values with bit c set where class c
/// (clamped to 7, as the contexts do) occurs in it.
struct LevelClasses {
    values: CudaSlice<u8>,
    tiles: CudaSlice<u8>,
    /// Per `rans::RESET` block, its values of each class (for `rans::plan`).
    blocks: Vec<[u32; rans::LEVELS]>,
}

/// A coding order on the device and its inverse (each grid point's place
/// in the order, so DEQUANT gathers with scattered 4-byte reads instead
/// of scattering 8-byte writes).
struct CodingOrder {
    order: CudaSlice<u32>,
    inverse: CudaSlice<u32>,
}

type CodingOrders = BTreeMap<OrderKey, Arc<CodingOrder>>;

/// A coding order: the brick shape, and the interpolation's order (None:
/// the lifting transforms' Morton order).
type OrderKey = ([usize; 3], Option<interp::Order>);

/// Lossless coding runs on the CPU: the kernels code quantized residuals
/// within a bound above zero, not ordered-integer images.
pub(crate) fn gpu_codable(opts: &multires::codec::CodecOptions) -> Result<(), CudaError> {
    if opts.bound == multires::codec::ErrorBound::Lossless {
        return Err(CudaError::Unsupported(
            "lossless coding runs on the CPU (device cpu)".into(),
        ));
    }
    if opts.transform == multires::codec::Lifting::Lorenzo {
        return Err(CudaError::Unsupported(
            "the fast profile (lorenzo) codes a float32 field on one GPU, from host or device memory; slabs over several GPUs or ranks code on the CPU (device cpu)".into(),
        ));
    }
    Ok(())
}
