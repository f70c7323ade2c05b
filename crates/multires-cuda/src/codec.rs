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
    self, interp, lifting, morton, rans, rice, CodecOptions, CodecStats, DType, FieldInfo, Values,
    Volume,
};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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

/// Values a batch holds at most. Batches of 247M and 369M values (1024^3
/// smooth on the H100, one slot, batches of 128 and 200 bricks) wrote
/// streams the decoders refuse ("the chunk's words end early"); 185M
/// values and below were right. The encoder is at fault (its output first
/// differs inside brick 0's rANS header; the decoders handle such batches)
/// and the cause is not found yet, so batches stay well below that (runs
/// on the H100 and H200 never made batches above 125M values). Session
/// 24 narrowed it (one slot, 129^3 bricks, cap lifted): batches of 240.4M
/// values were right, 246.9M wrong, with either way of copying the slot's
/// lists (stage.rs).
const MAX_BATCH_VALUES: usize = 1 << 27;

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
    /// in pages while every other slot did the same (session 39).
    dec_lists: DecodeLists,
    /// The coder's piece lists and layout offsets, kept likewise (built
    /// afresh into cold pages they took 0.37 ms a batch on the
    /// development machine against 23-26 us into warm ones; on the
    /// device's hosts session 52 saw no change either way).
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

/// The coding order that `Slot::order` uploaded for `dims` under `t` (a
/// function of the map alone, so the slot's other buffers stay free to
/// borrow).
fn coding_order(
    orders: &CodingOrders,
    dims: [usize; 3],
    t: lifting::Lifting,
    o: interp::Order,
) -> Result<&CodingOrder, CudaError> {
    orders
        .get(&order_key(dims, t, o))
        .map(|o| &**o)
        .ok_or_else(|| CudaError::Unsupported("coding order".into()))
}

/// The lifting transforms' reconstruction of a batch (`bricks` of `dims`
/// in a row) into `y`: each brick's integers (coding order) back at their
/// grid points times its step `q[b]` (`inverse`: the order's inverse),
/// then the inverse lifting. The coder's own decode and the decoder run
/// this one reconstruction, as the CPU's `reconstruct` serves both.
#[allow(clippy::too_many_arguments)]
fn dequantize_and_lift(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    ints: &CudaView<i32>,
    inverse: &CudaSlice<u32>,
    q: &CudaSlice<f64>,
    y: &mut CudaSlice<f64>,
    dims: [usize; 3],
    bricks: usize,
    t: lifting::Lifting,
) -> Result<(), CudaError> {
    let n: usize = dims.iter().product();
    let n64 = n as i64;
    let f = gpu.function(Kernel::Codec, "DEQUANT(kernel)", 0)?;
    let mut l = s.launch_builder(&f);
    l.arg(ints).arg(inverse).arg(q).arg(&mut *y).arg(&n64);
    unsafe { l.launch(cfg(block_grid(n, bricks), 256, 0)) }
        .during(|| "launching DEQUANT".into())?;
    lift(gpu, s, y, dims, bricks, t, true)
}

/// Where the forward interpolation puts what it codes: each detail into
/// `ints` at its place in the coding order (`inverse`; None: the pass
/// order, each pass's details in a run), and the encoder's
/// check of its own decode as each value is reconstructed (an outlier's
/// correction into `corr` and its bit into `omask`, the per-brick
/// `counts`, `maxe` and `sse`, against the bound `e`; `f32`: the stored
/// type is float32), so no QUANT or CHECK pass over the batch is needed,
/// and the outlier lists read only the marked corrections.
struct InterpCheck<'a> {
    ints: &'a mut CudaSlice<i32>,
    inverse: Option<&'a CudaSlice<u32>>,
    corr: &'a mut CudaSlice<i32>,
    omask: &'a mut CudaSlice<u32>,
    e: f64,
    f32: i32,
    counts: &'a mut CudaSlice<u64>,
    maxe: &'a mut CudaSlice<u64>,
    sse: &'a mut CudaSlice<f64>,
    /// With the input read in place (`Input::Field`): the brick origins,
    /// the field's rows a plane and values a row, and the address where
    /// the exact outliers' values go (the batch's input buffer, where
    /// OWRITE_MASK reads them; on the slot's stream).
    field: Option<(&'a CudaSlice<i64>, i64, i64, u64)>,
}

/// Which way `interp_passes` runs.
enum InterpPass<'a> {
    Forward(InterpCheck<'a>),
    /// The decoded integers of each brick in coding order, the order's
    /// inverse (None: the pass order), and where each value also goes as
    /// float32, if anywhere.
    Inverse(
        &'a CudaSlice<i32>,
        Option<&'a CudaSlice<u32>>,
        Option<Place<'a>>,
    ),
}

/// A field's place for a batch's decoded values: its device address
/// (asked for once the batch's entropy decoding is queued: the field may
/// still be being allocated), the batch's brick origins on the device, its
/// rows and columns.
type FieldPlace<'a> = (FieldAddress<'a>, &'a CudaSlice<i64>, i64, i64);

/// Where the inverse interpolation also puts its values, rounded to
/// float32: what a pass of SCATTER or TO_DTYPE over the batch's doubles
/// did after it (12 bytes a value read and written, against 4 written).
enum Place<'a> {
    /// The batch's bricks one after another (the slot's stored values).
    Batch(&'a mut CudaSlice<f32>),
    /// A field at a device address: each brick at its origin (`org`, three
    /// per brick), in planes of `rows` rows of `cols` values.
    Field {
        at: u64,
        org: &'a CudaSlice<i64>,
        rows: i64,
        cols: i64,
    },
}

/// The closed-loop interpolation (multires::codec::interp) of every brick
/// of a batch (`bricks` of `dims` in a row), one launch per pass, anchors
/// first. Forward: `x` in, the details as `InterpCheck` says, the
/// reconstruction into `y` where a later pass predicts from it (`c`
/// untouched). Inverse: the reconstruction into `c`, each point's detail
/// read where the decoder put it (`x` and `y` untouched; no
/// dequantization pass). `q` holds each brick's step.
#[allow(clippy::too_many_arguments)]
fn interp_passes(
    gpu: &Gpu,
    stream: &CudaStream,
    x: Input<'_>,
    c: &mut CudaSlice<f64>,
    y: &mut CudaSlice<f64>,
    q: &CudaSlice<f64>,
    dims: [usize; 3],
    bricks: usize,
    mut pass: InterpPass<'_>,
) -> Result<(), CudaError> {
    let inverse = matches!(pass, InterpPass::Inverse(..));
    let f = gpu.function(Kernel::Codec, &format!("INTERP(kernel, {inverse})"), 0)?;
    let null = 0u64;
    let n: usize = dims.iter().product();
    // (axis, stride, lattice per axis, level); axis 3 marks the anchors.
    let mut list = vec![(3i32, 0, interp::anchor_lattice(dims), interp::levels(dims))];
    for p in interp::passes(dims) {
        list.push((p.axis as i32, p.s, [0, 1, 2].map(|a| p.lattice(a)), p.lv));
    }
    let (n64, d) = (n as i64, dims.map(|v| v as i32));
    let last = list.len() - 1;
    // Where each pass's details start in the pass order.
    let mut qbase = 0i64;
    for (k, (axis, s, lat, lv)) in list.into_iter().enumerate() {
        let cnt = interp::lattice_counts(dims, lat);
        let total: usize = cnt.iter().product();
        if total == 0 {
            continue;
        }
        let div = interp::divisor(lv);
        let s64 = s as i64;
        let (o, st, c64) = (
            lat.map(|l| l.0 as i64),
            lat.map(|l| l.1 as i64),
            cnt.map(|v| v as i64),
        );
        let (m2, sh2) = interp_divisor(cnt[2], total);
        let (m1, sh1) = interp_divisor(cnt[1], total / cnt[2]);
        let mut l = stream.launch_builder(&f);
        x.push(&mut l);
        l.arg(&mut *c)
            .arg(&mut *y)
            .arg(q)
            .arg(&div)
            .arg(&n64)
            .arg(&d[0])
            .arg(&d[1])
            .arg(&d[2])
            .arg(&axis)
            .arg(&s64)
            .arg(&o[0])
            .arg(&st[0])
            .arg(&o[1])
            .arg(&st[1])
            .arg(&o[2])
            .arg(&st[2])
            .arg(&c64[0])
            .arg(&c64[1])
            .arg(&c64[2]);
        let (zero_e, zero_i, zero_l) = (0f64, 0i32, 0i64);
        match &mut pass {
            InterpPass::Forward(k) => {
                l.arg(&null).arg(&null).arg(&mut *k.ints);
                match k.inverse {
                    Some(v) => l.arg(v),
                    None => l.arg(&null),
                };
                l.arg(&mut *k.corr)
                    .arg(&k.e)
                    .arg(&k.f32)
                    .arg(&mut *k.counts)
                    .arg(&mut *k.maxe)
                    .arg(&mut *k.sse)
                    .arg(&mut *k.omask);
                match &k.field {
                    Some((org, rows, cols, exact)) => l.arg(exact).arg(*org).arg(rows).arg(cols),
                    None => l.arg(&null).arg(&null).arg(&zero_l).arg(&zero_l),
                }
            }
            InterpPass::Inverse(di, dinv, place) => {
                l.arg(*di);
                match dinv {
                    Some(v) => l.arg(*v),
                    None => l.arg(&null),
                };
                l.arg(&null)
                    .arg(&null)
                    .arg(&null)
                    .arg(&zero_e)
                    .arg(&zero_i)
                    .arg(&null)
                    .arg(&null)
                    .arg(&null)
                    .arg(&null);
                match place {
                    Some(Place::Batch(v)) => l.arg(&mut **v).arg(&null).arg(&zero_l).arg(&zero_l),
                    Some(Place::Field {
                        at,
                        org,
                        rows,
                        cols,
                    }) => l.arg(&*at).arg(*org).arg(&*rows).arg(&*cols),
                    None => l.arg(&null).arg(&null).arg(&zero_l).arg(&zero_l),
                }
            }
        };
        // The encoder's last pass: nothing predicts from its points,
        // and nothing after the passes reads y.
        let keep_y = (inverse || k != last) as i32;
        let at = qbase;
        l.arg(&m2)
            .arg(&sh2)
            .arg(&m1)
            .arg(&sh1)
            .arg(&keep_y)
            .arg(&at);
        qbase += total as i64;
        let blocks = total.div_ceil(256 * INTERP_PER_THREAD).min(4096);
        unsafe { l.launch(cfg((blocks as u32, bricks as u32), 256, 0)) }
            .during(|| "launching INTERP".into())?;
    }
    Ok(())
}

/// A batch's values as the encoder's kernels read them: doubles, or
/// float32 as stored (the interpolation reads its input once a point, so
/// a conversion to doubles first cost a pass of 12 bytes a value).
#[derive(Clone, Copy)]
enum Input<'a> {
    F64(&'a CudaSlice<f64>),
    F32(&'a CudaSlice<f32>),
    /// A float32 field in device memory at this address, read where its
    /// bricks lie (`FieldIn`).
    Field(&'a u64),
}

/// A float32 field in device memory that INTERP reads in place: a
/// gathered copy cost a write and a read of 4 bytes a value (GATHER was
/// 7.7 of some 45 ms of kernels a turbulent 1024^3 compression). Its
/// address, the batch's brick origins, rows a plane and values a row.
struct FieldIn {
    at: u64,
    org: CudaSlice<i64>,
    rows: i64,
    cols: i64,
}

/// The CUDA type of a stored dtype, as the kernels' instances name it.
fn cuda_type(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => <f32 as GpuReal>::CUDA,
        DType::F64 => <f64 as GpuReal>::CUDA,
    }
}

/// The null device pointer for the kernels' unused buffer arguments.
static NO_BUFFER: u64 = 0;

/// Where a batch's outlier corrections are: `corr` of each brick's chosen
/// lifting trial, a value each, or the interpolation's, only at the
/// values its bitmap marks.
#[derive(Clone, Copy)]
enum Corrections<'a> {
    Trial(&'a CudaSlice<i32>),
    Marked(&'a CudaSlice<u32>),
}

impl<'a> Input<'a> {
    /// The interpolation's input: the slot's values as stored.
    fn stored(
        dtype: DType,
        in32: &'a Option<CudaSlice<f32>>,
        in64: &'a Option<CudaSlice<f64>>,
    ) -> Result<Self, CudaError> {
        match (dtype, in32, in64) {
            (DType::F32, Some(v), _) => Ok(Input::F32(v)),
            (DType::F64, _, Some(v)) => Ok(Input::F64(v)),
            _ => Err(CudaError::Unsupported(
                "the batch's input buffer is missing".into(),
            )),
        }
    }

    /// The kernels' (x, x32) pair: this buffer, and null for the other.
    fn push(self, l: &mut cudarc::driver::LaunchArgs<'a>) {
        match self {
            Input::F64(v) => l.arg(v).arg(&NO_BUFFER),
            Input::F32(v) => l.arg(&NO_BUFFER).arg(v),
            Input::Field(at) => l.arg(&NO_BUFFER).arg(at),
        };
    }

    /// BPEAK's instance for this input.
    fn peak_kernel(self) -> &'static str {
        match self {
            Input::F64(_) => "BPEAK(kernel, double)",
            Input::F32(_) | Input::Field(_) => "BPEAK(kernel, float)",
        }
    }
}

/// Points an INTERP thread takes in turn: its step, the block's check
/// totals and the launch cost each thread once (with one point a thread
/// they were a third of the pass's 500 instructions a point).
const INTERP_PER_THREAD: usize = 8;

/// The multiplier and shift that divide every t below `below` by `d`
/// in INTERP: (t * m) >> sh == t / d. With 2^sh >= below * d, the
/// rounded-up multiplier's error stays under 1/d, which no quotient's
/// fraction reaches; for below <= 2^31 the product fits 64 bits.
fn interp_divisor(d: usize, below: usize) -> (u64, i32) {
    let bits = |v: usize| usize::BITS - v.max(1).saturating_sub(1).leading_zeros();
    let d = d.max(1);
    let sh = bits(below) + bits(d);
    let m = (1u64 << sh).div_ceil(d as u64);
    (m, sh as i32)
}

/// The key of the coding order of `dims` under `t` (`o`: the
/// interpolation's order, if `t` is the interpolation).
fn order_key(dims: [usize; 3], t: lifting::Lifting, o: interp::Order) -> OrderKey {
    (dims, (t == lifting::Lifting::Interp).then_some(o))
}

/// Whether the kernels read the coding order's table: the lifting
/// transforms' Morton order and the interpolation's order of versions 3
/// and 4 do; INTERP walks the pass order (version 5) itself.
fn order_table_read(t: lifting::Lifting, io: interp::Order) -> bool {
    t != lifting::Lifting::Interp || io == interp::Order::LazyMorton
}

thread_local! {
    /// When this thread's last `prof` phase ended; cleared when a slot
    /// thread starts a run, since kept threads idle between runs.
    static PROF_LAST: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// Whether MULTIRES_CODEC_PROFILE asks for the time of each phase of the
/// GPU codec (printed after a run; one slot a GPU then).
fn profiling() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("MULTIRES_CODEC_PROFILE").is_some())
}

/// While profiling, the time since the last mark (after
/// synchronizing the stream) is added to `phase`; printed by `compress`.
fn prof(s: &CudaStream, phase: &'static str) -> Result<(), CudaError> {
    trace(phase);
    if !profiling() {
        return Ok(());
    }
    s.synchronize().during(|| "profiling".into())?;
    let now = std::time::Instant::now();
    let last = PROF_LAST.with(|l| l.replace(Some(now)));
    if let Some(t) = last {
        if let Ok(mut m) = PROFILE.lock() {
            *m.entry(phase).or_insert(0.0) += (now - t).as_secs_f64();
        }
    }
    Ok(())
}

/// Slots a GPU at most: `default`; one while profiling, so that each
/// phase is the device's own time.
fn max_slots(default: usize) -> usize {
    if profiling() {
        1
    } else {
        default
    }
}

/// Slots a GPU for a field read from the host: two, so one batch's host
/// work (gathering into pinned memory, copies) overlaps the other's kernels.
const HOST_SLOTS: usize = 2;
/// Slots a GPU for a field on the device: as many batches at once as
/// memory allows. The rANS kernels last one chunk's chain however few
/// bricks a launch holds (about 15 ms on a smooth field), so batches one
/// after another cost a chain each; side by side on their own streams
/// they cost about one.
const RESIDENT_SLOTS: usize = 16;
/// A field on the device is cut into about this many batches (more where
/// brick shapes differ), so the host work of one overlaps the kernels of
/// the others.
const RESIDENT_SHARES: usize = 8;

/// Batches for each GPU's slab of a field split over `gpus` (`dense` is
/// asked only for several GPUs): eight (one
/// GPU's whole field) for a dense field on several GPUs, whose many
/// payload bytes a batch keep its host stages on the tail; otherwise
/// batches of the size one GPU's whole field is cut into (at least two a
/// slab), since a sparse batch's host work and its kernels' chains cost
/// the same however few values it holds. On two H100s at 1024^3
/// (sessions 35-37) the smooth field coded at 191-211 GB/s and decoded at
/// 234-242 with four a slab, against 172-198 and 202-226 with eight; the
/// turbulent one coded at 169 GB/s with four and 202 with eight.
fn slab_shares(
    gpus: usize,
    dense: impl FnOnce() -> Result<bool, CudaError>,
) -> Result<usize, CudaError> {
    Ok(if gpus > 1 && dense()? {
        RESIDENT_SHARES
    } else {
        (RESIDENT_SHARES / gpus.max(1)).max(2)
    })
}

/// Slots a GPU at most for its slab's decode, so that every batch runs at
/// once wherever memory allows: a decode's batches start together and
/// cost about one rANS chain side by side, and those left for a second
/// round cost another. A 1626^3 field's last GPU has 22 batches (its thin
/// brick layer adds shapes); with 16 slots it ended 15-30 ms after the
/// other (sessions 36-37). At 1024^3 no GPU has more than 13.
const SLAB_DECODE_SLOTS: usize = 32;

/// Bytes a value above which a file decodes in `RESIDENT_SHARES`
/// batches a slab (`decompress_slabs`).
const DENSE_FILE_BYTES_PER_VALUE: f64 = 0.05;

/// How a run's bricks go through the slots.
struct Plan<T> {
    /// Batches of bricks of one shape: a group's after the group before,
    /// the largest first within a group.
    batches: Vec<([usize; 3], Vec<T>)>,
    /// The group of each batch.
    group: Vec<usize>,
    /// Slots a GPU.
    slots: usize,
}

impl<T> Plan<T> {
    /// Values of each batch.
    fn caps(&self) -> Vec<usize> {
        self.batches
            .iter()
            .map(|(d, l)| d.iter().product::<usize>() * l.len())
            .collect()
    }
}

/// Cuts the bricks of each group, and within it of each shape (`groups`,
/// in grid order), into batches of about `1 / shares` of the whole (at
/// most `limit` bricks, and what one of `slots` slots can hold in `budget`
/// bytes at `per_value` bytes a value), the largest first within a group
/// and the groups in their order (a slab's brick layers, coded as they
/// arrive or copied down as they are decoded); then as many slots a GPU
/// (up to `slots`) as the largest batches fit side by side in the budget.
fn plan_batches<T>(
    groups: Vec<BTreeMap<[usize; 3], Vec<T>>>,
    budget: usize,
    per_value: usize,
    (slots, shares, limit): (usize, usize, usize),
) -> Result<Plan<T>, CudaError> {
    let cost = |d: &[usize; 3], bricks: usize| {
        bricks * (d.iter().product::<usize>() * per_value + (1 << 20))
    };
    let slots = slots.max(1);
    let shares = shares.max(1);
    let per_group = shares.div_ceil(groups.len().max(1));
    let cap = budget / slots.min(shares);
    let (mut batches, mut group) = (Vec::new(), Vec::new());
    for (g, shapes) in groups.into_iter().enumerate() {
        let total: usize = shapes.iter().map(|(d, l)| cost(d, l.len())).sum();
        let share = total.div_ceil(per_group).min(cap);
        let mut mine = Vec::new();
        for (dims, mut list) in shapes {
            let one = cost(&dims, 1);
            if 2 * one > budget {
                return Err(CudaError::MemoryLimit {
                    need: (2 * one) as u128,
                    limit: budget as u128,
                });
            }
            let per = (share / one)
                .clamp(1, limit.max(1))
                .min(MAX_BATCH_VALUES / dims.iter().product::<usize>().max(1))
                .max(1);
            let size = list.len().div_ceil(list.len().div_ceil(per).max(1)).max(1);
            while !list.is_empty() {
                let rest = list.split_off(list.len().min(size));
                mine.push((dims, std::mem::replace(&mut list, rest)));
            }
        }
        // Stable: batches of equal size keep the grid order.
        mine.sort_by_key(|(d, l)| std::cmp::Reverse(cost(d, l.len())));
        group.extend(std::iter::repeat_n(g, mine.len()));
        batches.extend(mine);
    }
    let mut costs: Vec<usize> = batches.iter().map(|(d, l)| cost(d, l.len())).collect();
    costs.sort_unstable_by(|a, b| b.cmp(a));
    let mut s = slots.min(batches.len()).max(1);
    while s > 1 && costs[..s].iter().sum::<usize>() > budget {
        s -= 1;
    }
    Ok(Plan {
        batches,
        group,
        slots: s,
    })
}

/// Halves the last large batch (at least half the largest's values) of
/// the plan's last group when what codes after it is under a quarter of
/// its values: its chain after the transform (histogram, plans, RENC,
/// copy down: 3.2 ms for 56 M values on an H100) is then its GPU's drain.
/// One cut only: small batches' chains cost about as much as large ones
/// (a 1.9 M batch 1.7 ms), so halving every late batch (a taper, sessions
/// 46-54) lost on two GPUs. GPU 0's slab of 1024^3 ends in a 56 M batch
/// and a 7.6 M one, GPU 1's thin layer in small ones: with the cut, two
/// H100s coded at 219-222 GB/s against 215-218 (session 54).
fn halve_last_large<T>(plan: &mut Plan<T>) {
    let caps = plan.caps();
    let (Some(&largest), Some(&last)) = (caps.iter().max(), plan.group.last()) else {
        return;
    };
    let mut after = 0usize;
    for i in (0..caps.len()).rev() {
        if plan.group[i] != last {
            return;
        }
        if 2 * caps[i] >= largest {
            if plan.batches[i].1.len() > 1 && 4 * after < caps[i] {
                let (dims, mut first) = plan.batches.remove(i);
                let second = first.split_off(first.len().div_ceil(2));
                plan.batches.insert(i, (dims, second));
                plan.batches.insert(i, (dims, first));
                plan.group.insert(i, last);
            }
            return;
        }
        after += caps[i];
    }
}

/// Bricks of the ramp's batches (`ramp_batches`), smallest last.
const RAMP: [usize; 4] = [8, 4, 2, 1];

/// Where a decode's batches all start at once, the device gets its first
/// values when the smallest batch's slot has read its rANS headers (50-70
/// us a brick on the host) and its rANS chain has run. The whole 1024^3
/// field and GPU 1's slab have small batches (their thin brick layer's
/// shapes, 16-22 bricks in batches of at most eight) that are done by 2.5-4
/// ms, while their large batches' headers are still being read; GPU 0's
/// slab has four bricks in them, and ended about 1 ms after GPU 1's
/// (session 65: 28 of 30 runs, either card). This cuts batches of 8, 4, 2
/// and 1 bricks off the end of the first (largest) batch, the batches kept
/// largest first, where a one-group plan runs every batch at once, its
/// batches of at most eight bricks hold fewer than the ramp's 15 bricks,
/// and the first batch holds more; a slot is added for each, within
/// `slots` and `budget`. Two H100s then decoded 0.5-0.9 ms faster in every
/// pair (session 66), where session 64's single lead brick (two million
/// values against GPU 1's 35 million in small batches) did not show.
fn ramp_batches<T>(plan: &mut Plan<T>, slots: usize, budget: usize, per_value: usize) {
    let ramp: usize = RAMP.iter().sum();
    let small: usize = plan
        .batches
        .iter()
        .map(|(_, l)| l.len())
        .filter(|&n| n <= RAMP[0])
        .sum();
    let one_group = plan.group.windows(2).all(|w| w[0] == w[1]);
    let all_at_once = plan.slots == plan.batches.len();
    let Some((dims, first)) = plan.batches.first() else {
        return;
    };
    // `plan_batches`' cost of every batch at once, which the cut keeps.
    let fits = {
        let values: usize = plan.caps().iter().sum();
        let bricks: usize = plan.batches.iter().map(|(_, l)| l.len()).sum();
        let cost = values * per_value + bricks * (1 << 20);
        cost <= budget && plan.batches.len() + RAMP.len() <= slots
    };
    if !one_group || !all_at_once || small >= ramp || first.len() <= ramp || !fits {
        return;
    }
    let dims = *dims;
    let g = plan.group[0];
    for n in RAMP {
        let list = &mut plan.batches[0].1;
        let cut = list.split_off(list.len() - n);
        plan.batches.push((dims, cut));
        plan.group.push(g);
    }
    // Stable, as `plan_batches`' order: the largest first (a slot grows
    // only when it must).
    plan.batches
        .sort_by_key(|(d, l)| std::cmp::Reverse(d.iter().product::<usize>() * l.len()));
    plan.slots = plan.batches.len();
}

/// With MULTIRES_CODEC_TRACE set, when each slot's host thread passed
/// each mark (no synchronization added), printed per batch by `run_slots`:
/// a timeline of how the batches overlap.
static TRACE: Mutex<Vec<(usize, usize, &'static str, std::time::Instant)>> = Mutex::new(Vec::new());
thread_local!(static TRACE_BATCH: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) });
// The GPU (ordinal) of a slot's thread, so that the traces of GPUs
// running at once stay apart.
thread_local!(static TRACE_GPU: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) });
// Slots of its GPU in the run of a slot's thread (`verify_payloads`).
thread_local!(static SLOTS_A_GPU: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
/// Slots a GPU from which a decode's batches verify their own checksums.
const MANY_SLOTS: usize = 4;

/// The instant every trace line counts from, so that lines of GPUs and
/// stages running at once line up.
fn trace_epoch() -> std::time::Instant {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// Milliseconds from the trace's epoch to `t`.
fn trace_ms(t: std::time::Instant) -> f64 {
    t.saturating_duration_since(trace_epoch()).as_secs_f64() * 1e3
}

fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        trace_epoch();
        std::env::var_os("MULTIRES_CODEC_TRACE").is_some()
    })
}

fn trace(mark: &'static str) {
    if tracing() {
        let b = TRACE_BATCH.with(|c| c.get());
        let g = TRACE_GPU.with(|c| c.get());
        if let Ok(mut t) = TRACE.lock() {
            t.push((g, b, mark, std::time::Instant::now()));
        }
    }
}

/// Prints the marks of `trace` on `gpus` (ordinals), a line per batch in
/// milliseconds from the trace's epoch, and clears them (other GPUs'
/// marks stay for their run).
fn print_trace(caps: &[usize], gpus: &[usize]) {
    if !tracing() {
        return;
    }
    if let Ok(mut t) = TRACE.lock() {
        let (marks, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut *t)
            .into_iter()
            .partition(|m| gpus.contains(&m.0));
        *t = rest;
        for (i, cap) in caps.iter().enumerate() {
            let line: Vec<String> = marks
                .iter()
                .filter(|m| m.1 == i)
                .map(|m| format!("{}@{:.1}", m.2, trace_ms(m.3)))
                .collect();
            eprintln!(
                "trace gpu {gpus:?} batch {i} ({cap} values): {}",
                line.join(" ")
            );
        }
    }
}

/// With MULTIRES_CODEC_TRACE, the host stages of a run outside its
/// batches (milliseconds since the run began).
fn trace_stages(what: &str, t0: std::time::Instant, marks: &[(&str, std::time::Instant)]) {
    if tracing() {
        let line: Vec<String> = std::iter::once(("began", &t0))
            .chain(marks.iter().map(|(m, t)| (*m, t)))
            .map(|(m, t)| format!("{m}@{:.1}", trace_ms(*t)))
            .collect();
        eprintln!("trace {what}: {}", line.join(" "));
    }
}

/// Named instants of a run's host stages, marked from any of its threads
/// (only with MULTIRES_CODEC_TRACE) and printed in time order by
/// `trace_stages`.
#[derive(Default)]
struct StageMarks(Mutex<Vec<(&'static str, std::time::Instant)>>);

impl StageMarks {
    fn mark(&self, m: &'static str) {
        if tracing() {
            if let Ok(mut v) = self.0.lock() {
                v.push((m, std::time::Instant::now()));
            }
        }
    }

    /// Marks gathered elsewhere (`take_head_marks`) join these.
    fn extend(&self, marks: Vec<(&'static str, std::time::Instant)>) {
        if let Ok(mut v) = self.0.lock() {
            v.extend(marks);
        }
    }

    fn trace(self, what: &str, t0: std::time::Instant) {
        let mut marks = self.0.into_inner().unwrap_or_default();
        marks.sort_by_key(|m| m.1);
        trace_stages(what, t0, &marks);
    }
}

/// Marks of a run's steps between its plan and its first batch, from any
/// thread (only with MULTIRES_CODEC_TRACE); `compress_slabs` prints them.
static HEAD_MARKS: StageMarks = StageMarks(Mutex::new(Vec::new()));

fn head_mark(m: &'static str) {
    HEAD_MARKS.mark(m);
}

/// The head marks since the last call: taken at a run's start (dropping
/// those of runs that print none, e.g. decodes) and after its batches.
fn take_head_marks() -> Vec<(&'static str, std::time::Instant)> {
    HEAD_MARKS
        .0
        .lock()
        .map(|mut h| std::mem::take(&mut *h))
        .unwrap_or_default()
}

/// Adds the host time since `t0` to `phase` (while profiling).
fn prof_host(phase: &'static str, t0: std::time::Instant) {
    if profiling() {
        if let Ok(mut m) = PROFILE.lock() {
            *m.entry(phase).or_insert(0.0) += t0.elapsed().as_secs_f64();
        }
    }
}

/// Prints and clears the phases gathered by `prof` and `prof_host`.
fn print_profile(what: &str) {
    if let Ok(mut m) = PROFILE.lock() {
        if !m.is_empty() {
            let m = std::mem::take(&mut *m);
            eprintln!("codec profile of {what} (s, summed over slots): {m:?}");
        }
    }
}

/// One multilevel lifting of every brick of a batch (`bricks` of `dims`,
/// one after another in `data`), in place, on `stream`.
fn lift(
    gpu: &Gpu,
    stream: &CudaStream,
    data: &mut CudaSlice<f64>,
    dims: [usize; 3],
    bricks: usize,
    t: lifting::Lifting,
    inverse: bool,
) -> Result<(), CudaError> {
    let levels = lifting::levels_for(dims, codec::MAX_LEVELS);
    let w = lifting::weights(t);
    let (gl, gh) = lifting::gains(t);
    let n: usize = dims.iter().product();
    let f = gpu.function(Kernel::Codec, &format!("LIFT(kernel, {inverse})"), 0)?;
    let tcode = t.code() as i32;
    let lvls: Vec<usize> = if inverse {
        (0..levels).rev().collect()
    } else {
        (0..levels).collect()
    };
    for lv in lvls {
        let e = dims.map(|d| lifting::approx_len(d, lv));
        let axes = if inverse { [0, 1, 2] } else { [2, 1, 0] };
        for axis in axes {
            let len = e[axis];
            if len < 2 {
                continue;
            }
            let lines = e.iter().product::<usize>() / len;
            let lt = (6144 / (len + 1)).clamp(1, 32);
            let smem = lt * (len + 1) * 8;
            let [d0, d1, d2] = dims.map(|d| d as i32);
            let [e0, e1, e2] = e.map(|d| d as i32);
            let (bs, ax, lti) = (n as i64, axis as i32, lt as i32);
            let mut l = stream.launch_builder(&f);
            l.arg(&mut *data)
                .arg(&bs)
                .arg(&d0)
                .arg(&d1)
                .arg(&d2)
                .arg(&e0)
                .arg(&e1)
                .arg(&e2)
                .arg(&ax)
                .arg(&lti)
                .arg(&tcode)
                .arg(&w[0])
                .arg(&w[1])
                .arg(&w[2])
                .arg(&w[3])
                .arg(&gl)
                .arg(&gh);
            unsafe {
                l.launch(cfg(
                    (lines.div_ceil(lt) as u32, bricks as u32),
                    256,
                    smem as u32,
                ))
            }
            .during(|| "launching LIFT".into())?;
        }
    }
    Ok(())
}

/// Slots kept between calls: pinned and device allocations cost more than
/// coding a small volume. `release_slots` frees them.
static POOL: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

/// A pooled slot of `gpu` that serves `usage` for batches of `cap` values
/// (the smallest such), or a new one. Before allocating, every idle slot
/// of `gpu` is freed: the run's budget counted their memory as free
/// (`device_budget`).
fn take_slot(gpu: &Arc<Gpu>, cap: usize, dtype: DType, usage: Use) -> Result<Slot, CudaError> {
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
fn pooled_bytes(gpu: &Arc<Gpu>) -> usize {
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

static PROFILE: Mutex<BTreeMap<&'static str, f64>> = Mutex::new(BTreeMap::new());

/// A slot's stream and its bulk stream: the first at the device's
/// greatest priority, the second at its least (one stream when
/// priorities are off or the device has one level).
fn slot_streams(gpu: &Gpu) -> Result<(Arc<CudaStream>, Arc<CudaStream>), CudaError> {
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
fn bulk_begin(s: &Arc<CudaStream>, bulk: &Arc<CudaStream>) -> Result<Arc<CudaStream>, CudaError> {
    if !Arc::ptr_eq(bulk, s) {
        bulk.join(s).during(|| "ordering the streams".into())?;
    }
    Ok(bulk.clone())
}

fn bulk_end(s: &Arc<CudaStream>, bulk: &Arc<CudaStream>) -> Result<(), CudaError> {
    if !Arc::ptr_eq(bulk, s) {
        s.join(bulk).during(|| "ordering the streams".into())?;
    }
    Ok(())
}

fn cfg(grid: (u32, u32), block: u32, smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.0.max(1), grid.1.max(1), 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: smem,
    }
}

impl Slot {
    fn new(gpu: Arc<Gpu>, cap: usize, dtype: DType, usage: Use) -> Result<Self, CudaError> {
        let (stream, bulk) = slot_streams(&gpu)?;
        let nb = cap.div_ceil(32) + 64;
        macro_rules! dev {
            ($t:ty, $n:expr) => {
                stream
                    .alloc_zeros::<$t>(($n).max(1))
                    .during(|| format!("allocating {} values for a batch of bricks", $n))?
            };
        }
        let (in32, in64) = match dtype {
            DType::F32 => (Some(dev!(f32, cap)), None),
            DType::F64 => (None, Some(dev!(f64, cap))),
        };
        let lifting = usage.doubles();
        let (ints, corr) = usage.ints_corr();
        Ok(Slot {
            x: dev!(f64, if lifting { cap } else { 0 }),
            c: dev!(f64, if lifting { cap } else { 0 }),
            y: dev!(f64, cap),
            ints: dev!(i32, ints * cap),
            corr: dev!(i32, corr * cap),
            nzf: dev!(u8, nb),
            mode: dev!(u32, nb),
            sizes: dev!(u32, 4 * nb),
            cnt: dev!(u32, 2 * nb),
            out: dev!(u8, 1 << 20),
            pbytes: None,
            up_streams: None,
            stage: Stage::default(),
            gathered_peak: None,
            field_in: None,
            orders: BTreeMap::new(),
            classes: BTreeMap::new(),
            dec_lists: DecodeLists::default(),
            enc_lists: EncodeLists::default(),
            pin32: None,
            pin64: None,
            in32,
            in64,
            gpu,
            stream,
            bulk,
            cap,
            dtype,
            usage,
        })
    }

    /// The pinned buffer of `cap` values (as stored), allocated on first
    /// use: a field on the device never needs it.
    fn pin_values(&mut self) -> Result<(), CudaError> {
        let cap = self.cap;
        // The pinned values are written before each copy up and not
        // touched again until the stream is synchronized; cached memory
        // (not write-combined): the decoders read decoded bricks out of it.
        match self.dtype {
            DType::F32 if self.pin32.is_none() => {
                self.pin32 = Some(Registered::zeroed(&self.gpu.ctx, cap, 0)?)
            }
            DType::F64 if self.pin64.is_none() => {
                self.pin64 = Some(Registered::zeroed(&self.gpu.ctx, cap, 0)?)
            }
            _ => {}
        }
        Ok(())
    }

    fn f(&self, inst: &str, smem: usize) -> Result<CudaFunction, CudaError> {
        self.gpu.function(Kernel::Codec, inst, smem)
    }

    /// Gathers the batch's bricks into the pinned buffer (as stored) and
    /// copies them up; for the lifting transforms (`t`), into `x` as
    /// doubles (the interpolation reads them as stored).
    fn upload(
        &mut self,
        v: &Volume,
        grid: &codec::BrickGrid,
        b: &Batch,
        t: lifting::Lifting,
    ) -> Result<(), CudaError> {
        use rayon::prelude::*;
        self.pin_values()?;
        let n: usize = b.dims.iter().product();
        let total = n * b.bricks.len();
        // The lifting transforms' conversion kernel (none for the
        // interpolation).
        let to_f64 = if t == lifting::Lifting::Interp {
            None
        } else {
            Some(self.f(&format!("TO_F64(kernel, {})", cuda_type(v.dtype())), 0)?)
        };
        // The field is held in its stored type, so a brick's rows are plain
        // copies into pinned memory.
        macro_rules! fill {
            ($data:expr, $pin:expr, $dev:expr) => {{
                let pin = $pin
                    .as_mut()
                    .ok_or_else(|| CudaError::Unsupported("no staging".into()))?;
                let host = &mut pin[..];
                let dev = $dev
                    .as_mut()
                    .ok_or_else(|| CudaError::Unsupported("no input".into()))?;
                // A piece of bricks (one a core) goes up while the next is
                // gathered; the pieces' pinned memory is not written again
                // before the stream is synchronized.
                let piece = rayon::current_num_threads().max(1);
                for (j, bricks) in b.bricks.chunks(piece).enumerate() {
                    let at = j * piece * n;
                    let part = &mut host[at..at + bricks.len() * n];
                    part.par_chunks_mut(n)
                        .zip(bricks.par_iter())
                        .for_each(|(dst, &k)| {
                            let (s, e) = grid.bounds(k);
                            for (d, row) in dst
                                .chunks_exact_mut(e[2])
                                .zip(codec::brick_rows($data, v.dims, s, e))
                            {
                                d.copy_from_slice(row);
                            }
                        });
                    self.stream
                        .memcpy_htod(&*part, &mut dev.slice_mut(at..at + part.len()))
                        .during(|| "copying bricks to the GPU".into())?;
                }
                if let Some(f) = &to_f64 {
                    let count = total as i64;
                    let mut l = self.stream.launch_builder(f);
                    l.arg(&*dev).arg(&mut self.x).arg(&count);
                    unsafe { l.launch(cfg(((total.div_ceil(256)).min(65535) as u32, 1), 256, 0)) }
                        .during(|| "launching TO_F64".into())?;
                }
            }};
        }
        match &v.data {
            Values::F32(d) => fill!(d, self.pin32, self.in32),
            Values::F64(d) => fill!(d, self.pin64, self.in64),
        }
        Ok(())
    }

    /// The coding order of `dims` under `t` (`io`: the interpolation's)
    /// and its inverse, uploaded once a device (`Gpu::table`).
    fn order(
        &mut self,
        dims: [usize; 3],
        t: lifting::Lifting,
        io: interp::Order,
    ) -> Result<(), CudaError> {
        let key = order_key(dims, t, io);
        if !self.orders.contains_key(&key) {
            let s = &self.stream;
            let o = self.gpu.table(&format!("codec order {key:?}"), || {
                let o = match key.1 {
                    Some(io) => interp::order(dims, io),
                    None => morton::order(dims),
                };
                let mut inv = vec![0u32; o.len()];
                for (j, &k) in o.iter().enumerate() {
                    inv[k as usize] = j as u32;
                }
                let up = || "copying a coding order".to_string();
                let order = s.clone_htod(o.as_slice()).during(up)?;
                let inverse = s.clone_htod(&inv).during(up)?;
                s.synchronize().during(up)?;
                Ok(CodingOrder { order, inverse })
            })?;
            self.orders.insert(key, o);
        }
        Ok(())
    }

    /// The rANS level classes of `dims` in order `o` (a byte each: they
    /// are 0 to 7), uploaded once a device (`Gpu::table`).
    fn classes(&mut self, dims: [usize; 3], o: interp::Order) -> Result<(), CudaError> {
        if !self.classes.contains_key(&(dims, o)) {
            let s = &self.stream;
            let d = self
                .gpu
                .table(&format!("codec classes {dims:?} {o:?}"), || {
                    let up = || "copying level classes".to_string();
                    let cl = interp::classes(dims, o);
                    let d = LevelClasses {
                        values: s.clone_htod(cl.as_slice()).during(up)?,
                        tiles: s.clone_htod(&tile_classes(&cl)).during(up)?,
                        blocks: rans::class_blocks(&cl),
                    };
                    s.synchronize().during(up)?;
                    Ok(d)
                })?;
            self.classes.insert((dims, o), d);
        }
        Ok(())
    }

    /// Codes the uploaded batch; payloads in the batch's brick order.
    fn encode(
        &mut self,
        b: &Batch,
        dtype: DType,
        t: lifting::Lifting,
        (e, chunk_log): (f64, u32),
        front: Option<Permit<'_>>,
    ) -> Result<Vec<GpuCoded>, CudaError> {
        let dims = b.dims;
        let n: usize = dims.iter().product();
        let nbk = b.bricks.len();
        let nb = n.div_ceil(32);
        let f32i: i32 = (dtype == DType::F32) as i32;
        let sz = dtype.size();
        let closed = t == lifting::Lifting::Interp;
        if order_table_read(t, interp::Order::CURRENT) {
            self.order(dims, t, interp::Order::CURRENT)?;
        }
        let s = &self.stream.clone();
        prof(s, "before")?;
        let mut counts = s
            .alloc_zeros::<u64>(2 * nbk * TRIALS)
            .during(|| "alloc".into())?;
        let mut maxe = s
            .alloc_zeros::<u64>(nbk * TRIALS)
            .during(|| "alloc".into())?;
        let mut sse = s
            .alloc_zeros::<f64>(nbk * TRIALS)
            .during(|| "alloc".into())?;
        // The interpolation codes once, at each brick's step: its details
        // as integers in coding order, the reconstruction into y, each
        // value checked against the bound as it is reconstructed; then its
        // rANS payloads. The lifting transforms lift x into c and try each
        // step below. Each brick's peak: the interpolation's step (its
        // margin for rounding) and a zero bound's step depend on it.
        let field_in = self.field_in.take();
        let (stored, in_place) = match (closed, &field_in) {
            (false, _) => (None, None),
            (true, Some(fi)) => {
                use cudarc::driver::DevicePtr;
                let exact = self.in32.as_ref().ok_or_else(|| {
                    CudaError::Unsupported("a float32 field needs a float32 slot".into())
                })?;
                let (exact, _sync) = exact.device_ptr(s);
                (
                    Some(Input::Field(&fi.at)),
                    Some((&fi.org, fi.rows, fi.cols, exact)),
                )
            }
            (true, None) => (Some(Input::stored(dtype, &self.in32, &self.in64)?), None),
        };
        let gathered = self.gathered_peak.take();
        let pk = if e > 0.0 && !closed {
            None
        } else if let Some(pk) = gathered {
            Some(pk)
        } else {
            let mut pk = s.alloc_zeros::<u64>(nbk).during(|| "alloc".into())?;
            let input = stored.unwrap_or(Input::F64(&self.x));
            let f = self.f(input.peak_kernel(), 0)?;
            let n64 = n as i64;
            let mut l = s.launch_builder(&f);
            match input {
                Input::F64(v) => l.arg(v),
                Input::F32(v) => l.arg(v),
                Input::Field(_) => {
                    return Err(CudaError::Unsupported(
                        "a field read in place without its peaks".into(),
                    ))
                }
            };
            l.arg(&n64).arg(&mut pk);
            // At most 64 blocks a brick, each looping: few atomics.
            let gx = n.div_ceil(256 * 32).clamp(1, 64) as u32;
            unsafe { l.launch(cfg((gx, nbk as u32), 256, 0)) }
                .during(|| "launching BPEAK".into())?;
            Some(pk)
        };
        if let (Some(input), Some(pk)) = (stored, &pk) {
            // The steps on the device (read back with the sizes below).
            let mut qd = s.alloc_zeros::<f64>(nbk).during(|| "alloc".into())?;
            let (ulp, zero_step) = codec::interp_step_factors(dtype);
            let f = self.f("ISTEP(kernel)", 0)?;
            let nbk64 = nbk as i64;
            let mut l = s.launch_builder(&f);
            l.arg(pk).arg(&e).arg(&ulp).arg(&zero_step);
            l.arg(&nbk64).arg(&mut qd);
            unsafe { l.launch(cfg((nbk.div_ceil(256) as u32, 1), 256, 0)) }
                .during(|| "launching ISTEP".into())?;
            let o = interp::Order::CURRENT;
            let inverse = if order_table_read(t, o) {
                Some(&coding_order(&self.orders, dims, t, o)?.inverse)
            } else {
                None
            };
            let mut omask = s
                .alloc_zeros::<u32>(nbk * n.div_ceil(32))
                .during(|| "alloc".into())?;
            let check = InterpCheck {
                ints: &mut self.ints,
                inverse,
                corr: &mut self.corr,
                omask: &mut omask,
                e,
                f32: f32i,
                counts: &mut counts,
                maxe: &mut maxe,
                sse: &mut sse,
                field: in_place,
            };
            interp_passes(
                &self.gpu,
                s,
                input,
                &mut self.c,
                &mut self.y,
                &qd,
                dims,
                nbk,
                InterpPass::Forward(check),
            )?;
            prof(s, "interp")?;
            let (hist, cls) = self.rans_histograms(dims, nbk)?;
            // One wait for the lists (the histograms' only where the host
            // plans).
            let g = &self.gpu.clone();
            let counts_q = self.stage.queue_down(g, s, &counts)?;
            let maxe_q = self.stage.queue_down(g, s, &maxe)?;
            let sse_q = self.stage.queue_down(g, s, &sse)?;
            let iq_q = self.stage.queue_down(g, s, &qd)?;
            let planned = {
                let hist_q = self.stage.queue_down(g, s, &hist)?;
                self.stage.wait(s)?;
                self.stage.read(&hist_q)
            };
            let (counts_h, maxe_h) = (self.stage.read(&counts_q), self.stage.read(&maxe_q));
            let (sse_h, iq) = (self.stage.read(&sse_q), self.stage.read(&iq_q));
            // Every copy through the stage so far has been read.
            self.stage.synchronized();
            prof(s, "r_hist")?;
            // The transform is done (the reads waited for it).
            drop(front);
            return self.encode_rans(
                b,
                &iq,
                (&counts_h, &maxe_h, &sse_h),
                (planned, &cls),
                &omask,
                (f32i, sz, chunk_log),
            );
        }
        s.memcpy_dtod(&self.x.slice(0..nbk * n), &mut self.c.slice_mut(0..nbk * n))
            .during(|| "copying bricks".into())?;
        lift(&self.gpu, s, &mut self.c, dims, nbk, t, false)?;
        prof(s, "fwd_lift")?;
        // Per brick and trial: the steps (from each brick's peak on a zero bound).
        let peaks: Vec<f64> = match &pk {
            Some(pk) => self
                .stage
                .down(&self.gpu, s, pk)?
                .into_iter()
                .map(f64::from_bits)
                .collect(),
            None => vec![0.0; nbk],
        };
        let steps: Vec<[f64; 3]> = peaks.iter().map(|&p| codec::steps(e, p)).collect();
        let CodingOrder { order, inverse } =
            coding_order(&self.orders, dims, t, interp::Order::CURRENT)?;
        let (fq, fc, fs, fm) = (
            self.f("QUANT(kernel)", 0)?,
            self.f("CHECK(kernel)", 0)?,
            self.f("BSTATS(kernel)", 0)?,
            self.f("MAP(kernel)", 0)?,
        );
        let levels = rice::map_levels(nb);
        let map_smem = levels.iter().sum::<usize>() * 4;
        let nlev = levels.len() as i32;
        let (n64, nb64) = (n as i64, nb as i64);
        let mut sums = s
            .alloc_zeros::<u64>(4 * nbk * TRIALS)
            .during(|| "alloc".into())?;
        let mut mapw = s
            .alloc_zeros::<u32>(nbk * TRIALS)
            .during(|| "alloc".into())?;
        let null = 0u64;
        for tr in 0..TRIALS {
            let q: Vec<f64> = steps.iter().map(|s| s[tr]).collect();
            let qd = self.stage.up(&self.gpu, s, &q)?;
            let mut ints = self.ints.slice_mut(tr * nbk * n..(tr + 1) * nbk * n);
            let mut l = s.launch_builder(&fq);
            l.arg(&self.c).arg(order).arg(&qd).arg(&mut ints).arg(&n64);
            unsafe { l.launch(cfg(block_grid(n, nbk), 256, 0)) }
                .during(|| "launching QUANT".into())?;
            let ints = ints.as_view();
            dequantize_and_lift(&self.gpu, s, &ints, inverse, &qd, &mut self.y, dims, nbk, t)?;
            prof(s, "inv_lift")?;
            let mut corr = self.corr.slice_mut(tr * nbk * n..(tr + 1) * nbk * n);
            let mut cn = counts.slice_mut(tr * 2 * nbk..(tr + 1) * 2 * nbk);
            let mut mx = maxe.slice_mut(tr * nbk..(tr + 1) * nbk);
            let mut se = sse.slice_mut(tr * nbk..(tr + 1) * nbk);
            let mut l = s.launch_builder(&fc);
            l.arg(&self.x)
                .arg(&self.y)
                .arg(&mut corr)
                .arg(&n64)
                .arg(&e)
                .arg(&f32i)
                .arg(&mut cn)
                .arg(&mut mx)
                .arg(&mut se);
            // 16 values a thread: a warp's four atomics per brick were
            // the kernel's cost at one value a thread.
            unsafe { l.launch(cfg(block_grid(n.div_ceil(16), nbk), 256, 0)) }
                .during(|| "launching CHECK".into())?;
            prof(s, "check")?;
            let ints = self.ints.slice(tr * nbk * n..(tr + 1) * nbk * n);
            let mut su = sums.slice_mut(tr * 4 * nbk..(tr + 1) * 4 * nbk);
            let zero = 0i64;
            let mut l = s.launch_builder(&fs);
            l.arg(&ints)
                .arg(&null)
                .arg(&zero)
                .arg(&n64)
                .arg(&nb64)
                .arg(&mut self.nzf)
                .arg(&null)
                .arg(&null)
                .arg(&mut su);
            unsafe { l.launch(cfg(block_grid(nb * 32, nbk), 256, 0)) }
                .during(|| "launching BSTATS".into())?;
            prof(s, "bstats_size")?;
            let mut mw = mapw.slice_mut(tr * nbk..(tr + 1) * nbk);
            let mut l = s.launch_builder(&fm);
            l.arg(&self.nzf)
                .arg(&nb64)
                .arg(&nlev)
                .arg(&mut mw)
                .arg(&null)
                .arg(&null);
            unsafe { l.launch(cfg((nbk as u32, 1), 256, map_smem as u32)) }
                .during(|| "launching MAP".into())?;
            prof(s, "map_size")?;
        }
        let g = &self.gpu;
        let counts_q = self.stage.queue_down(g, s, &counts)?;
        let sums_q = self.stage.queue_down(g, s, &sums)?;
        let mapw_q = self.stage.queue_down(g, s, &mapw)?;
        let maxe_q = self.stage.queue_down(g, s, &maxe)?;
        let sse_q = self.stage.queue_down(g, s, &sse)?;
        self.stage.wait(s)?;
        let (counts_h, sums_h) = (self.stage.read(&counts_q), self.stage.read(&sums_q));
        let (mapw_h, maxe_h) = (self.stage.read(&mapw_q), self.stage.read(&maxe_q));
        let sse_h = self.stage.read(&sse_q);
        // Sizes per brick and trial; the smallest wins, the first on ties.
        let size_of = |bi: usize, tr: usize| -> (usize, [usize; 4], usize, usize, usize) {
            let su = &sums_h[(tr * nbk + bi) * 4..(tr * nbk + bi) * 4 + 4];
            let words = [0, 1, 2, 3].map(|i| (su[i] as usize).div_ceil(32));
            let mw = mapw_h[tr * nbk + bi] as usize;
            let (no, nr) = (
                counts_h[(tr * nbk + bi) * 2] as usize,
                counts_h[(tr * nbk + bi) * 2 + 1] as usize,
            );
            let stream = rice::StreamHeader::WORDS + mw + words.iter().sum::<usize>();
            let total = 8 + 4 * stream + 8 + 8 * no + sz * nr;
            (total, words, mw, no, nr)
        };
        let trial: Vec<i32> = (0..nbk)
            .map(|bi| {
                let mut best = 0;
                for tr in 1..TRIALS {
                    if size_of(bi, tr).0 < size_of(bi, best).0 {
                        best = tr;
                    }
                }
                best as i32
            })
            .collect();
        // Layout of each payload.
        let mut base = Vec::with_capacity(nbk);
        let mut total = 0usize;
        for (bi, &tr) in trial.iter().enumerate() {
            base.push(total);
            total += size_of(bi, tr as usize).0;
        }
        let mut sec = Vec::with_capacity(4 * nbk);
        let mut osec = Vec::with_capacity(3 * nbk);
        let mut mofs = Vec::with_capacity(nbk);
        for (bi, &tr) in trial.iter().enumerate() {
            let (_, words, mw, no, _) = size_of(bi, tr as usize);
            let m = base[bi] + 8 + 4 * rice::StreamHeader::WORDS;
            mofs.push(m as u64);
            let mut p = m + 4 * mw;
            for w in words {
                sec.push(p as u64);
                p += 4 * w;
            }
            p += 8;
            osec.push(p as u64);
            osec.push((p + 4 * no) as u64);
            osec.push((p + 8 * no) as u64);
        }
        clear_out(s, &mut self.out, total)?;
        let trial_d = self.stage.up(&self.gpu, s, &trial)?;
        let sec_d = self.stage.up(&self.gpu, s, &sec)?;
        let osec_d = self.stage.up(&self.gpu, s, &osec)?;
        let mofs_d = self.stage.up(&self.gpu, s, &mofs)?;
        let tstride = (nbk * n) as i64;
        // Block modes and sizes of the chosen trials, scanned into offsets.
        let mut l = s.launch_builder(&fs);
        l.arg(&self.ints)
            .arg(&trial_d)
            .arg(&tstride)
            .arg(&n64)
            .arg(&nb64)
            .arg(&mut self.nzf)
            .arg(&mut self.mode)
            .arg(&mut self.sizes)
            .arg(&null);
        unsafe { l.launch(cfg(block_grid(nb * 32, nbk), 256, 0)) }
            .during(|| "launching BSTATS".into())?;
        prof(s, "bstats_write")?;
        let mut tot = s.alloc_zeros::<u64>(6 * nbk).during(|| "alloc".into())?;
        self.count_outliers(
            Corrections::Trial(&trial_d),
            n,
            nbk,
            &mut tot.slice_mut(4 * nbk..6 * nbk),
        )?;
        prof(s, "ocount")?;
        {
            let fscan = self.f("SCAN(kernel)", 0)?;
            let mut t4 = tot.slice_mut(0..4 * nbk);
            let mut l = s.launch_builder(&fscan);
            l.arg(&mut self.sizes).arg(&nb64).arg(&mut t4);
            unsafe { l.launch(cfg((1, 4 * nbk as u32), 1024, 0)) }
                .during(|| "launching SCAN".into())?;
            prof(s, "scans")?;
        }
        let mut mw2 = s.alloc_zeros::<u32>(nbk).during(|| "alloc".into())?;
        let mut l = s.launch_builder(&fm);
        l.arg(&self.nzf)
            .arg(&nb64)
            .arg(&nlev)
            .arg(&mut mw2)
            .arg(&mut self.out)
            .arg(&mofs_d);
        unsafe { l.launch(cfg((nbk as u32, 1), 256, map_smem as u32)) }
            .during(|| "launching MAP".into())?;
        prof(s, "map_write")?;
        let fw = self.f("WRITE(kernel)", 0)?;
        let mut l = s.launch_builder(&fw);
        l.arg(&self.ints)
            .arg(&trial_d)
            .arg(&tstride)
            .arg(&n64)
            .arg(&nb64)
            .arg(&self.mode)
            .arg(&self.sizes)
            .arg(&sec_d)
            .arg(&mut self.out);
        unsafe { l.launch(cfg(block_grid(nb * 32, nbk), 256, 0)) }
            .during(|| "launching WRITE".into())?;
        prof(s, "write")?;
        self.write_outliers(Corrections::Trial(&trial_d), (n, nbk), &osec_d, f32i)?;
        prof(s, "owrite")?;
        let tot_h = self.stage.down(&self.gpu, s, &tot)?;
        let host = download(s, &self.gpu, &mut self.pbytes, &self.out, total)?;
        self.stage.synchronized();
        // The header words: step, section word counts, outlier counts.
        let mut coded = Vec::with_capacity(nbk);
        for (bi, &tr) in trial.iter().enumerate() {
            let tr = tr as usize;
            let (len, words, mw, no, nr) = size_of(bi, tr);
            let scanned = [0, 1, 2, 3].map(|i| (tot_h[bi * 4 + i] as usize).div_ceil(32));
            if scanned != words || tot_h[4 * nbk + 2 * bi] as usize != no {
                return Err(CudaError::Unsupported(format!(
                    "brick {}: the sizing and writing passes disagree ({words:?} vs {scanned:?})",
                    b.bricks[bi]
                )));
            }
            let mut p = host[base[bi]..base[bi] + len].to_vec();
            p[0..8].copy_from_slice(&steps[bi][tr].to_le_bytes());
            let head = rice::StreamHeader {
                nnz: (sums_h[(tr * nbk + bi) * 4] / 5) as usize,
                words: [mw, words[0], words[1], words[2], words[3]],
            };
            for (i, w) in head.to_words().iter().enumerate() {
                p[8 + 4 * i..12 + 4 * i].copy_from_slice(&w.to_le_bytes());
            }
            let oc = 8 + 4 * (rice::StreamHeader::WORDS + mw + words.iter().sum::<usize>());
            p[oc..oc + 4].copy_from_slice(&(no as u32).to_le_bytes());
            p[oc + 4..oc + 8].copy_from_slice(&(nr as u32).to_le_bytes());
            let m = f64::from_bits(maxe_h[tr * nbk + bi]);
            coded.push((BatchBytes::own(p), m, sse_h[tr * nbk + bi], no));
        }
        Ok(coded)
    }
    /// Outliers counted per block of 32 into `cnt` and scanned into
    /// offsets; `tot` gets each brick's totals (outliers, exact ones).
    fn count_outliers(
        &mut self,
        corrections: Corrections<'_>,
        n: usize,
        nbk: usize,
        tot: &mut CudaViewMut<'_, u64>,
    ) -> Result<(), CudaError> {
        let s = &self.stream.clone();
        let nb = n.div_ceil(32);
        let (n64, nb64, tstride) = (n as i64, nb as i64, (nbk * n) as i64);
        // A thread a bitmap word, or a thread a value.
        let (name, threads) = match corrections {
            Corrections::Marked(_) => ("OCOUNT_MASK(kernel)", nb),
            Corrections::Trial(_) => ("OCOUNT(kernel)", nb * 32),
        };
        let f = self.f(name, 0)?;
        let mut l = s.launch_builder(&f);
        l.arg(&self.corr);
        match corrections {
            Corrections::Marked(m) => l.arg(m),
            Corrections::Trial(trial_d) => l.arg(trial_d).arg(&tstride),
        };
        l.arg(&n64).arg(&nb64).arg(&mut self.cnt);
        unsafe { l.launch(cfg(block_grid(threads, nbk), 256, 0)) }
            .during(|| format!("launching {name}"))?;
        let f = self.f("SCAN(kernel)", 0)?;
        let mut l = s.launch_builder(&f);
        l.arg(&mut self.cnt).arg(&nb64).arg(tot);
        unsafe { l.launch(cfg((1, 2 * nbk as u32), 1024, 0)) }
            .during(|| "launching SCAN".into())?;
        Ok(())
    }

    /// The outlier lists (indices, corrections, exact values) at the byte
    /// offsets `osec_d` (three per brick), from `count_outliers`'s scan:
    /// the interpolation's from its marked corrections and its input as
    /// stored, the lifting coder's from its trial and `x`.
    fn write_outliers(
        &mut self,
        corrections: Corrections<'_>,
        (n, nbk): (usize, usize),
        osec_d: &CudaSlice<u64>,
        f32i: i32,
    ) -> Result<(), CudaError> {
        let nb = n.div_ceil(32);
        let (n64, nb64, tstride) = (n as i64, nb as i64, (nbk * n) as i64);
        let (name, threads) = match corrections {
            Corrections::Marked(_) => ("OWRITE_MASK(kernel)", nb),
            Corrections::Trial(_) => ("OWRITE(kernel)", nb * 32),
        };
        let f = self.f(name, 0)?;
        let mut l = self.stream.launch_builder(&f);
        match corrections {
            Corrections::Marked(m) => {
                Input::stored(self.dtype, &self.in32, &self.in64)?.push(&mut l);
                l.arg(&self.corr).arg(m)
            }
            Corrections::Trial(trial_d) => {
                l.arg(&self.x).arg(&self.corr).arg(trial_d).arg(&tstride)
            }
        };
        l.arg(&n64)
            .arg(&nb64)
            .arg(&self.cnt)
            .arg(osec_d)
            .arg(&f32i)
            .arg(&mut self.out);
        unsafe { l.launch(cfg(block_grid(threads, nbk), 256, 0)) }
            .during(|| format!("launching {name}"))?;
        Ok(())
    }

    /// Each brick's rANS histogram (per context and symbol) of its details
    /// in `ints`, and the brick shape's level classes.
    fn rans_histograms(
        &mut self,
        dims: [usize; 3],
        nbk: usize,
    ) -> Result<(CudaSlice<u32>, Arc<LevelClasses>), CudaError> {
        let n: usize = dims.iter().product();
        let s = &self.stream.clone();
        let n64 = n as i64;
        self.classes(dims, interp::Order::CURRENT)?;
        let cls = self
            .classes
            .get(&(dims, interp::Order::CURRENT))
            .cloned()
            .ok_or_else(|| CudaError::Unsupported("level classes".into()))?;
        let table = rans::NCTX * rans::NSYM;
        let mut hist = s
            .alloc_zeros::<u32>(nbk * table)
            .during(|| "alloc".into())?;
        let ints = self.ints.slice(0..nbk * n);
        prof(s, "r_before")?;
        let fh = self.f("RHIST(kernel)", table * 4)?;
        let mut l = s.launch_builder(&fh);
        l.arg(&ints).arg(&cls.values).arg(&n64).arg(&mut hist);
        unsafe {
            l.launch(cfg(
                (rhist_blocks(n, nbk), nbk as u32),
                256,
                (table * 4) as u32,
            ))
        }
        .during(|| "launching RHIST".into())?;
        prof(s, "r_hist_kernel")?;
        Ok((hist, cls))
    }

    /// RENC over a batch's chunk lists (device addresses of cfirst,
    /// cstart, clen, cum, scale), `most` chunks a brick at most and
    /// `nch` in all, on the slot's bulk stream.
    fn launch_renc(
        &mut self,
        cls: &LevelClasses,
        n: usize,
        nbk: usize,
        (most, nch): (usize, usize),
        [cfirst, cstart, clen, cum, scale]: [u64; 5],
    ) -> Result<RencOut, CudaError> {
        let s = &self.stream.clone();
        let n64 = n as i64;
        let ints = self.ints.slice(0..nbk * n);
        let sizes = s.alloc_zeros::<u32>(nch.max(1)).during(|| "alloc".into())?;
        prof(s, "r_upload")?;
        let mut out = RencOut {
            states: s.alloc_zeros::<u32>(nch.max(1)).during(|| "alloc".into())?,
            sizes,
        };
        // The tried steps' quantized values are not needed by the
        // interpolation (one step): their room is RENC's scratch.
        let scratch = self.ints.slice(nbk * n..TRIALS * nbk * n);
        let f = self.f("RENC(kernel)", RENC_SMEM as usize)?;
        if tracing() {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(
                    RENC_THREADS,
                    RENC_SMEM as usize,
                    None,
                );
                eprintln!("trace RENC blocks an SM: {per_sm:?}");
            });
        }
        let bulk = &self.bulk;
        let ls = bulk_begin(s, bulk)?;
        let mut l = ls.launch_builder(&f);
        l.arg(&ints)
            .arg(&cls.values)
            .arg(&n64)
            .arg(&cfirst)
            .arg(&cstart)
            .arg(&clen)
            .arg(&cum)
            .arg(&scale)
            .arg(&mut out.sizes)
            .arg(&mut out.states)
            .arg(&scratch);
        let grid = (most.div_ceil(32).max(1) as u32, nbk.max(1) as u32);
        unsafe { l.launch(cfg(grid, RENC_THREADS, RENC_SMEM)) }
            .during(|| "launching RENC".into())?;
        bulk_end(s, bulk)?;
        prof(s, "r_enc_kernel")?;
        Ok(out)
    }

    /// The batch's plans on the host (`rans::plan` a brick, the CPU's
    /// code), their lists up, RENC, and the chunk sizes down.
    fn host_plans_renc(
        &mut self,
        hist_h: &[u32],
        cls: &LevelClasses,
        n: usize,
        nbk: usize,
        chunk_log: u32,
    ) -> Result<(Vec<BrickPlan>, RencOut, Vec<u32>), CudaError> {
        use rayon::prelude::*;
        let s = &self.stream.clone();
        let table = rans::NCTX * rans::NSYM;
        let plans: Vec<rans::Plan> = hist_h
            .par_chunks(table)
            .map(|h| rans::plan(h, &cls.blocks, n, chunk_log))
            .collect();
        prof(s, "r_plan")?;
        let mut chunks = std::mem::take(&mut self.enc_lists.chunks);
        chunks.clear();
        for p in &plans {
            chunks.push_pieces(rans::pieces(n, p.chunk_log, p.split));
        }
        let nch = chunks.clen.len();
        let tables: Vec<&rans::Tables> = plans.iter().map(|p| &p.tables).collect();
        if tables.len() != nbk {
            return Err(CudaError::Unsupported(format!(
                "{} rANS plans for a batch of {nbk} bricks",
                tables.len()
            )));
        }
        let first = tables_bytes(&tables)?;
        prof(s, "r_chunks")?;
        // One copy of the tables and the three piece lists, kept until
        // RENC has read them; the tables are written straight into the
        // stage, in parallel.
        let [l0, l1, l2] = chunks.byte_lists();
        let (_lists_d, base, addr) = upload_packed(
            &self.gpu,
            s,
            PackedFrom::Stage(&mut self.stage),
            first,
            |pin| write_tables(pin, &tables),
            &[l0, l1, l2],
        )?;
        let [cfirst, cstart, clen] = addr[..] else {
            return Err(CudaError::Unsupported("chunk lists".into()));
        };
        let (cum, scale) = table_addresses(base, tables.len());
        prof(s, "r_lists_up")?;
        let out = self.launch_renc(
            cls,
            n,
            nbk,
            (chunks.most, nch),
            [cfirst, cstart, clen, cum, scale],
        )?;
        // The lists are on the device (copied up through the stage).
        self.enc_lists.chunks = chunks;
        let sizes_h = self.stage.down(&self.gpu, s, &out.sizes)?;
        let plans = plans
            .into_iter()
            .map(|p| BrickPlan {
                chunk_log: p.chunk_log,
                split: p.split,
                words: p.words,
            })
            .collect();
        Ok((plans, out, sizes_h[..nch].to_vec()))
    }

    /// The interpolation's payloads (trial 0 of `ints` and `corr`): rANS
    /// tables from the bricks' histograms (on the host by the CPU's code:
    /// planned on the device, RENC ended no sooner, the SMs being busy with
    /// other batches' work), the chunks' sizes
    /// and words and the outlier lists on the device, the layout on the
    /// host.
    #[allow(clippy::too_many_arguments)]
    fn encode_rans(
        &mut self,
        b: &Batch,
        q: &[f64],
        (counts_h, maxe_h, sse_h): (&[u64], &[u64], &[f64]),
        (hist_h, cls): (Vec<u32>, &LevelClasses),
        omask: &CudaSlice<u32>,
        (f32i, sz, chunk_log): (i32, usize, u32),
    ) -> Result<Vec<GpuCoded>, CudaError> {
        let dims = b.dims;
        let n: usize = dims.iter().product();
        let nbk = b.bricks.len();
        let s = &self.stream.clone();
        let (plans, renc, sizes_h) = self.host_plans_renc(&hist_h, cls, n, nbk, chunk_log)?;
        let RencOut { sizes, states } = renc;
        let nch = sizes_h.len();
        prof(s, "r_encode")?;
        // Layout: per brick the step, the stream (header, tables, chunk
        // lengths, data) and the outliers.
        let mut base = Vec::with_capacity(nbk);
        let mut heads = Vec::with_capacity(nbk);
        let mut stream_words = Vec::with_capacity(nbk);
        // Each payload's bytes, for its range and its checksum.
        let mut lens = Vec::with_capacity(nbk);
        let mut offs = std::mem::take(&mut self.enc_lists.offs);
        offs.clear();
        let mut osec = Vec::with_capacity(3 * nbk);
        let mut total = 0usize;
        let mut ch = 0usize;
        for (bi, p) in plans.iter().enumerate() {
            let nc = rans::piece_count(n, p.chunk_log, p.split);
            let head = rans::header_words(p.chunk_log, p.split, &p.words, &sizes_h[ch..ch + nc]);
            let data0 = total + 8 + 4 * head.len();
            let mut at = 0usize;
            for &len in &sizes_h[ch..ch + nc] {
                offs.push((data0 + 2 * at) as u64);
                at += len as usize;
            }
            ch += nc;
            let words = head.len() + at.div_ceil(2);
            heads.push(head);
            let (no, nr) = (counts_h[2 * bi] as usize, counts_h[2 * bi + 1] as usize);
            let o = total + 8 + 4 * words + 8;
            osec.extend([o, o + 4 * no, o + 8 * no].map(|v| v as u64));
            base.push(total);
            stream_words.push(words);
            lens.push(payload_len(words, no, nr, sz));
            total += lens[bi];
        }
        clear_out(s, &mut self.out, total)?;
        let offs_d = self.stage.up(&self.gpu, s, &offs)?;
        self.enc_lists.offs = offs;
        // Where each chunk's scratch starts, in words (4 a value).
        let mut spos = std::mem::take(&mut self.enc_lists.spos);
        spos.clear();
        spos.extend(plans.iter().enumerate().flat_map(|(bi, p)| {
            rans::pieces(n, p.chunk_log, p.split).map(move |(st, _)| 4 * (bi * n + st) as u64)
        }));
        let spos_d = self.stage.up(&self.gpu, s, &spos)?;
        self.enc_lists.spos = spos;
        let scratch = self.ints.slice(nbk * n..TRIALS * nbk * n);
        let f = self.f("RCOPY(kernel)", 0)?;
        let nch64 = nch as i64;
        let mut l = s.launch_builder(&f);
        l.arg(&scratch)
            .arg(&spos_d)
            .arg(&sizes)
            .arg(&states)
            .arg(&offs_d)
            .arg(&nch64)
            .arg(&mut self.out);
        let gx = nch.clamp(1, 65535) as u32;
        unsafe { l.launch(cfg((gx, nch.div_ceil(65535).max(1) as u32), 256, 0)) }
            .during(|| "launching RCOPY".into())?;
        prof(s, "r_copy")?;
        // The outlier lists, from the values the interpolation marked
        // (none to list in most batches: their totals stay zero).
        let mut tot = s.alloc_zeros::<u64>(2 * nbk).during(|| "alloc".into())?;
        if counts_h[..2 * nbk].iter().any(|&c| c != 0) {
            let marked = Corrections::Marked(omask);
            self.count_outliers(marked, n, nbk, &mut tot.slice_mut(..))?;
            let osec_d = self.stage.up(&self.gpu, s, &osec)?;
            self.write_outliers(marked, (n, nbk), &osec_d, f32i)?;
        }
        let tot_q = self.stage.queue_down(&self.gpu, s, &tot)?;
        prof(s, "r_olists")?;
        // The checksums are taken on the device after the host's parts of
        // each payload are put in beside the coded words.
        let crc_d = self.payload_checksums((&base, &stream_words, &lens, &heads), q, counts_h)?;
        let crc_q = self.stage.queue_down(&self.gpu, s, &crc_d)?;
        prof(s, "r_crc_queued")?;
        // The payloads lie one after another in the buffer they are copied
        // down into, which becomes the file's bytes. One wait for all
        // copies.
        let mut buf = take_payload_buffer(&self.gpu, total)?;
        prof(s, "r_buf")?;
        let n_out = total.max(1).min(self.out.len());
        s.memcpy_dtoh(&self.out.slice(0..n_out), &mut buf[..n_out])
            .during(|| "copying payloads to the host".into())?;
        prof(s, "r_down_queued")?;
        self.stage.wait(s)?;
        let tot_h = self.stage.read(&tot_q);
        let crcs = self.stage.read(&crc_q);
        prof(s, "r_outliers")?;
        let mut ranges = Vec::with_capacity(nbk);
        for bi in 0..nbk {
            let no = counts_h[2 * bi] as usize;
            if tot_h[2 * bi] as usize != no {
                return Err(CudaError::Unsupported(format!(
                    "brick {}: the outlier check and the outlier lists disagree",
                    b.bricks[bi]
                )));
            }
            ranges.push(base[bi]..base[bi] + lens[bi]);
        }
        prof(s, "r_heads")?;
        prof(s, "r_crc_device")?;
        let buf = Arc::new(BatchBuf::Pinned(Some(buf)));
        Ok(ranges
            .into_iter()
            .zip(crcs)
            .enumerate()
            .map(|(bi, (at, crc))| {
                let no = counts_h[2 * bi] as usize;
                let p = BatchBytes {
                    buf: buf.clone(),
                    at,
                    crc,
                };
                (p, f64::from_bits(maxe_h[bi]), sse_h[bi], no)
            })
            .collect())
    }
}

impl Slot {
    /// Each payload's CRC-32, taken on the device: on the host they were
    /// a batch's last stage (crc32fast at 11 GB/s a thread on the device's
    /// Xeon; a turbulent 1024^3 batch's 40 MB), and on two GPUs the last
    /// batches' took 2-4 ms of the run's tail on a busy rayon pool
    /// (session 45). The host's parts of each payload (step, stream
    /// header, outlier counts) go into `out` first (HPUT), so the bytes
    /// that come down are the file's. Payload b lies at `base[b]`, its
    /// `lens[b]` bytes (layout of `encode_rans`).
    fn payload_checksums(
        &mut self,
        (base, stream_words, lens, heads): PayloadLayout<'_>,
        q: &[f64],
        counts_h: &[u64],
    ) -> Result<CudaSlice<u32>, CudaError> {
        let s = &self.stream.clone();
        let nbk = base.len();
        // Segments: the step and header words, then the outlier counts.
        let mut bytes: Vec<u8> = Vec::new();
        let (mut from, mut to, mut seg) = (Vec::new(), Vec::new(), Vec::new());
        let mut pfirst = vec![0u32];
        for bi in 0..nbk {
            let (no, nr) = (counts_h[2 * bi], counts_h[2 * bi + 1]);
            let words = stream_words[bi];
            from.push(bytes.len() as u64);
            to.push(base[bi] as u64);
            bytes.extend(q[bi].to_le_bytes());
            heads[bi].iter().for_each(|w| bytes.extend(w.to_le_bytes()));
            seg.push(8 + 4 * heads[bi].len() as u32);
            from.push(bytes.len() as u64);
            to.push((base[bi] + 8 + 4 * words) as u64);
            bytes.extend((no as u32).to_le_bytes());
            bytes.extend((nr as u32).to_le_bytes());
            seg.push(8);
            let len = lens[bi];
            let last = pfirst[pfirst.len() - 1];
            pfirst.push(last + len.div_ceil(CRC_PIECE) as u32);
        }
        // CRC_PIECES reads whole aligned words (payloads of float32 or
        // float64 values, stream words and u32 counts).
        if lens.iter().any(|v| v % 4 != 0) || base.iter().any(|v| v % 4 != 0) {
            return Err(CudaError::Unsupported(
                "a payload not of whole 4-byte words".into(),
            ));
        }
        let pieces = pfirst[nbk] as usize;
        let mut longs = from;
        longs.extend(to);
        longs.extend(base.iter().map(|&b| b as u64));
        longs.extend(lens.iter().map(|&l| l as u64));
        let mut ints = seg;
        ints.extend(&pfirst);
        let g = &self.gpu;
        prof(s, "c_lists")?;
        let bytes_d = self.stage.up(g, s, &bytes)?;
        let longs_d = self.stage.up(g, s, &longs)?;
        let ints_d = self.stage.up(g, s, &ints)?;
        let nseg = 2 * nbk;
        let (from_d, to_d) = (longs_d.slice(0..nseg), longs_d.slice(nseg..2 * nseg));
        let at_d = longs_d.slice(2 * nseg..2 * nseg + nbk);
        let len_d = longs_d.slice(2 * nseg + nbk..2 * nseg + 2 * nbk);
        let (seg_d, pfirst_d) = (ints_d.slice(0..nseg), ints_d.slice(nseg..nseg + nbk + 1));
        let (nseg64, nbk64) = (nseg as i64, nbk as i64);
        let f = self.f("HPUT(kernel)", 0)?;
        let mut l = s.launch_builder(&f);
        l.arg(&bytes_d)
            .arg(&from_d)
            .arg(&to_d)
            .arg(&seg_d)
            .arg(&nseg64)
            .arg(&mut self.out);
        unsafe { l.launch(cfg((nseg.clamp(1, 65535) as u32, 1), 128, 0)) }
            .during(|| "launching HPUT".into())?;
        prof(s, "c_hput")?;
        let mut crcp = s
            .alloc_zeros::<u32>(pieces.max(1))
            .during(|| "alloc".into())?;
        let f = self.f("CRC_PIECES(kernel)", 0)?;
        let mut l = s.launch_builder(&f);
        l.arg(&self.out)
            .arg(&at_d)
            .arg(&len_d)
            .arg(&pfirst_d)
            .arg(&nbk64)
            .arg(&mut crcp);
        unsafe { l.launch(cfg((pieces.div_ceil(256).max(1) as u32, 1), 256, 0)) }
            .during(|| "launching CRC_PIECES".into())?;
        prof(s, "c_pieces")?;
        let mut crc = s.alloc_zeros::<u32>(nbk).during(|| "alloc".into())?;
        let f = self.f("CRC_FOLD(kernel)", 0)?;
        let xp = CRC_PIECE_SHIFT;
        let mut l = s.launch_builder(&f);
        l.arg(&crcp)
            .arg(&pfirst_d)
            .arg(&nbk64)
            .arg(&xp)
            .arg(&mut crc);
        // A warp a brick.
        unsafe { l.launch(cfg((nbk.div_ceil(8).max(1) as u32, 1), 256, 0)) }
            .during(|| "launching CRC_FOLD".into())?;
        prof(s, "c_fold")?;
        Ok(crc)
    }
}

/// A batch's payloads as `encode_rans` lays them out, per brick: where
/// each begins in the batch's bytes, its stream's words, its bytes, and
/// its stream's header words.
type PayloadLayout<'a> = (&'a [usize], &'a [usize], &'a [usize], &'a [Vec<u32>]);

/// Bytes of an interpolation payload: step, stream of `words`, outlier
/// counts, and `no` outliers of which `nr` exact values of `sz` bytes.
fn payload_len(words: usize, no: usize, nr: usize, sz: usize) -> usize {
    8 + 4 * words + 8 + 8 * no + sz * nr
}

/// Bytes a thread of CRC_PIECES checks at most (the kernel's CRC_PIECE):
/// small, as a lane's steps are in series and set the kernel's time.
const CRC_PIECE: usize = 512;

/// x^(8 CRC_PIECE): appending a whole piece to a CRC (CRC_FOLD's `xp`).
const CRC_PIECE_SHIFT: u32 = crc_x8n(CRC_PIECE as u64);

/// a(x) b(x) modulo the CRC-32 polynomial, bit-reflected (zlib's
/// multmodp; the kernels' crc_multmodp).
const fn crc_multmodp(a: u32, mut b: u32) -> u32 {
    let (mut p, mut i) = (0u32, 32);
    while i > 0 {
        i -= 1;
        if (a >> i) & 1 == 1 {
            p ^= b;
        }
        b = (b >> 1) ^ (0xedb8_8320 & 0u32.wrapping_sub(b & 1));
    }
    p
}

/// x^(8 n) modulo the polynomial: appending n bytes to a CRC-32's message
/// multiplies its CRC by it (zlib's x2nmodp(n, 3); crc32_combine).
const fn crc_x8n(mut n: u64) -> u32 {
    let (mut p, mut x2k) = (1u32 << 31, 1u32 << 30);
    let mut k = 0;
    while k < 3 {
        x2k = crc_multmodp(x2k, x2k);
        k += 1;
    }
    while n != 0 {
        if n & 1 == 1 {
            p = crc_multmodp(x2k, p);
        }
        n >>= 1;
        x2k = crc_multmodp(x2k, x2k);
    }
    p
}

/// A .mrz file coded on GPUs, as its parts: each payload a range of the
/// bytes its batch brought down (`MrzParts::write_to` writes the file).
pub type GpuMrz = codec::MrzParts<BatchBytes>;

/// A brick's payload: its range of its batch's bytes, and its CRC-32.
#[derive(Clone)]
pub struct BatchBytes {
    buf: Arc<BatchBuf>,
    at: std::ops::Range<usize>,
    crc: u32,
}

impl BatchBytes {
    fn own(p: Vec<u8>) -> Self {
        let at = 0..p.len();
        BatchBytes {
            crc: multires::codec::container::crc32(&p),
            buf: Arc::new(BatchBuf::Owned(p)),
            at,
        }
    }
}

impl AsRef<[u8]> for BatchBytes {
    fn as_ref(&self) -> &[u8] {
        &self.buf[self.at.clone()]
    }
}

/// A batch's bytes: its own vector, or the page-locked buffer its payloads
/// were copied down into, which goes back to `PAYLOAD_POOL` when the
/// file's last payload of it is dropped.
enum BatchBuf {
    Owned(Vec<u8>),
    Pinned(Option<Registered<u8>>),
}

impl std::ops::Deref for BatchBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            BatchBuf::Owned(v) => v,
            BatchBuf::Pinned(Some(p)) => p,
            BatchBuf::Pinned(None) => &[],
        }
    }
}

impl Drop for BatchBuf {
    fn drop(&mut self) {
        if let BatchBuf::Pinned(p) = self {
            if let Some(p) = p.take() {
                return_payload_buffer(p);
            }
        }
    }
}

/// Page-locked buffers of coded batches whose files were dropped, for the
/// next compression's batches: a batch copied down into one is its file's
/// bytes, with no copy out of pinned memory (1 GB, about 45 ms on 16 cores
/// at 1e-4 on a turbulent 1024^3 field) and no page-locking after the first
/// file of a size.
static PAYLOAD_POOL: Mutex<Vec<Registered<u8>>> = Mutex::new(Vec::new());

/// The idle payload buffers kept at most, in bytes; more are freed.
const PAYLOAD_POOL_BYTES: usize = 4 << 30;

/// A page-locked buffer of at least `len` bytes on `gpu`'s context: the
/// smallest idle one that holds it, or a new one rounded up to an eighth
/// of its power of two (so batches of about one size share buffers).
fn take_payload_buffer(gpu: &Gpu, len: usize) -> Result<Registered<u8>, CudaError> {
    if let Ok(mut pool) = PAYLOAD_POOL.lock() {
        let best = (0..pool.len())
            .filter(|&i| Arc::ptr_eq(pool[i].context(), &gpu.ctx) && pool[i].len() >= len)
            .min_by_key(|&i| pool[i].len());
        if let Some(i) = best {
            return Ok(pool.swap_remove(i));
        }
    }
    let len = len.max(PINNED_MIN_BYTES);
    let step = (len.next_power_of_two() / 8).max(1);
    Registered::zeroed(&gpu.ctx, len.next_multiple_of(step), 0)
}

fn return_payload_buffer(p: Registered<u8>) {
    if let Ok(mut pool) = PAYLOAD_POOL.lock() {
        let held: usize = pool.iter().map(|b| b.len()).sum();
        if held + p.len() <= PAYLOAD_POOL_BYTES {
            pool.push(p);
        }
    }
}

/// A .mrz file's bytes in page-locked memory (registered for every
/// context): the GPU decoder copies the payloads up from where they lie,
/// where it otherwise gathers them into a slot's pinned buffer first (at
/// 1e-4 on a turbulent 1024^3 field, 1 GB of gathers that the decoding
/// kernels waited for). `MrzReader::from_shared` reads it.
pub struct PinnedBytes {
    buf: Registered<u8>,
    len: usize,
}

impl PinnedBytes {
    /// A page-locked copy of `bytes`.
    pub fn copy_of(gpu: &Gpu, bytes: &[u8]) -> Result<Self, CudaError> {
        use rayon::prelude::*;
        let mut p = Self::zeroed(gpu, bytes.len())?;
        p.buf[..bytes.len()]
            .par_chunks_mut(1 << 20)
            .zip(bytes.par_chunks(1 << 20))
            .for_each(|(d, s)| d.copy_from_slice(s));
        Ok(p)
    }

    /// The file at `path`, read into page-locked memory.
    pub fn read(gpu: &Gpu, path: &std::path::Path) -> Result<Self, CudaError> {
        use std::io::Read;
        let io = |e: std::io::Error| {
            CudaError::Unsupported(format!("cannot read {}: {e}", path.display()))
        };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let len = usize::try_from(len)
            .map_err(|_| CudaError::Unsupported(format!("{}: too large", path.display())))?;
        let mut p = Self::zeroed(gpu, len)?;
        f.read_exact(&mut p.buf[..len]).map_err(io)?;
        Ok(p)
    }

    fn zeroed(gpu: &Gpu, len: usize) -> Result<Self, CudaError> {
        const PORTABLE: u32 = 1;
        let buf = Registered::zeroed(&gpu.ctx, len, PORTABLE)?;
        let start = buf.as_ptr() as usize;
        if let Ok(mut r) = PAGE_LOCKED.lock() {
            r.push(start..start + buf.len());
        }
        Ok(PinnedBytes { buf, len })
    }

    /// As the reader's shared bytes.
    pub fn shared(self) -> codec::SharedBytes {
        Arc::new(self)
    }
}

impl AsRef<[u8]> for PinnedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Drop for PinnedBytes {
    fn drop(&mut self) {
        let start = self.buf.as_ptr() as usize;
        if let Ok(mut r) = PAGE_LOCKED.lock() {
            r.retain(|x| x.start != start);
        }
    }
}

/// The address ranges of the live `PinnedBytes`.
static PAGE_LOCKED: Mutex<Vec<std::ops::Range<usize>>> = Mutex::new(Vec::new());

static DIRECT_BATCHES: AtomicUsize = AtomicUsize::new(0);

/// The batches whose streams went up from a `PinnedBytes` without a
/// gather, since the process started (tests check the path is taken).
pub fn direct_batches() -> usize {
    DIRECT_BATCHES.load(Ordering::Relaxed)
}

/// Whether `p` lies in a live `PinnedBytes` (a copy up from it may then be
/// queued without a pinned buffer between).
fn page_locked(p: &[u8]) -> Option<std::ops::Range<usize>> {
    let (a, z) = (p.as_ptr() as usize, p.as_ptr() as usize + p.len());
    PAGE_LOCKED
        .lock()
        .ok()?
        .iter()
        .find(|x| x.start <= a && z <= x.end)
        .cloned()
}

/// A brick coded on the GPU: payload, largest error, squared error sum,
/// outliers (`multires::codec::CodedBrick` with a shared payload).
type GpuCoded = (BatchBytes, f64, f64, usize);

/// Compresses `v` on `gpus` (two slots each); `mem_limit` caps the device
/// memory of each GPU's slots. Bytes equal `multires::codec::compress`'s.
pub fn compress(
    v: &Volume,
    opts: &CodecOptions,
    gpus: &[Arc<Gpu>],
    mem_limit: Option<usize>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    let t_plan = std::time::Instant::now();
    let (range, e, grid) = codec::plan(v, opts)?;
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
fn run_compress(
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
type Planned = ((f64, f64), f64, codec::BrickGrid);

/// The .mrz bytes from every brick coded (any order, each once).
fn assemble_coded(
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
fn code_bricks(
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
fn run_slots(
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
/// H200s at 1024^3 (session 38: turbulent 2-GPU compression 195-197 GB/s
/// with three, 194-208 with two).
const FRONT_PERMITS: usize = 2;

/// A counting semaphore: batches in their transform on one GPU.
struct Gate {
    free: Mutex<usize>,
    open: std::sync::Condvar,
}

/// A batch's place in its GPU's `Gate`, given back when dropped.
struct Permit<'g>(&'g Gate);

impl Gate {
    fn new(permits: usize) -> Self {
        Gate {
            free: Mutex::new(permits.max(1)),
            open: std::sync::Condvar::new(),
        }
    }

    fn enter(&self) -> Permit<'_> {
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
struct Sections {
    q: f64,
    nnz: usize,
    /// map, k, count, low, unary: (word offset, words).
    sec: [(usize, usize); 5],
    outliers_at: usize,
}

fn sections(p: &[u8], n: usize) -> Option<Sections> {
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
type Payload<'a> = (usize, Cow<'a, [u8]>, Option<u32>);

/// The checksums of `list` still to verify: the first mismatch as an
/// error naming its brick. A decode's batches verify theirs while their
/// kernels run, so on the slot's own thread when its GPU runs many slots
/// (`MANY_SLOTS`), on every core otherwise.
fn verify_payloads(r: &codec::MrzReader, list: &[Payload]) -> Result<(), CudaError> {
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
fn payload_bytes(list: &[Payload]) -> usize {
    list.iter().map(|(_, p, _)| p.len()).sum()
}

/// The payloads of the bricks of `r` that meet each of `regions` (a
/// group each, in their order), read and checked, in batches of one shape
/// for the slots of `gpus` (`plan`: bricks a batch at most, slots a GPU at
/// most, shares of the whole).
fn payload_batches<'r>(
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
/// the Rice streams, dequantization and inverse lifting on the device, the
/// outliers on the host. Values equal `multires::codec::decompress`'s; a
/// brick the device finds inconsistent goes through the CPU decoder, whose
/// error names the fault.
pub fn decompress(
    r: &mut codec::MrzReader,
    region: Option<codec::Region>,
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Volume, CudaError> {
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

impl Slot {
    /// Decodes a batch of bricks of one shape into the pinned buffer
    /// (rounded to the stored type; outliers not applied). Per brick, where
    /// its outlier section starts, or None when the device found it
    /// inconsistent.
    fn decode(
        &mut self,
        dims: [usize; 3],
        list: &[Payload],
        r: &codec::MrzReader,
    ) -> Result<Vec<Option<usize>>, CudaError> {
        Ok(self.decode_to(dims, list, r, (true, None, &|_| ()))?.0)
    }

    /// `decode`, leaving the decoded doubles in the slot's `y` (for
    /// `decode_plan` to round and place) unless `down`; `turn` returns
    /// when each phase may start (`InOrder`). The interpolation's inverse
    /// also places its values as float32 in `field` (at, brick origins,
    /// rows, columns) when given: then the second value returned is true.
    /// The payloads' checksums still to verify are verified while the
    /// batch's kernels run (`r`, the file, names a brick that fails).
    fn decode_to(
        &mut self,
        dims: [usize; 3],
        list: &[Payload],
        r: &codec::MrzReader,
        (down, field, turn): (bool, Option<FieldPlace<'_>>, &dyn Fn(DecodePhase)),
    ) -> Result<(Vec<Option<usize>>, bool), CudaError> {
        let h = r.header();
        let n: usize = dims.iter().product();
        let nbk = list.len();
        let closed = h.transform == lifting::Lifting::Interp;
        if down {
            self.pin_values()?;
        }
        let io = interp::Order::of_version(h.version);
        let table = order_table_read(h.transform, io);
        if table {
            self.order(dims, h.transform, io)?;
        }
        let s = &self.stream.clone();
        turn(DecodePhase::Entropy);
        let Front {
            at,
            q,
            err,
            check,
            up,
        } = if closed {
            self.rans_front(dims, list, io)?
        } else {
            self.rice_front(dims, list)?
        };
        let q_d = self.stage.up(&self.gpu, s, &q)?;
        let inverse = if table {
            Some(&coding_order(&self.orders, dims, h.transform, io)?.inverse)
        } else {
            None
        };
        turn(DecodePhase::Inverse);
        let mut placed = false;
        if closed {
            // The interpolation reads its details (whole numbers) straight
            // from the decoded integers, and rounds its values into the
            // field or the stored values as it makes them.
            let place = match (field, down, h.dtype, &mut self.in32) {
                (Some((at, org, rows, cols)), ..) => Some(Place::Field {
                    at: at()?,
                    org,
                    rows,
                    cols,
                }),
                (None, true, DType::F32, Some(v)) => Some(Place::Batch(v)),
                _ => None,
            };
            placed = place.is_some();
            interp_passes(
                &self.gpu,
                s,
                Input::F64(&self.x),
                &mut self.y,
                &mut self.c,
                &q_d,
                dims,
                nbk,
                InterpPass::Inverse(&self.ints, inverse, place),
            )?;
        } else {
            let inverse = inverse.ok_or_else(|| CudaError::Unsupported("coding order".into()))?;
            let ints = self.ints.slice(0..nbk * n);
            dequantize_and_lift(
                &self.gpu,
                s,
                &ints,
                inverse,
                &q_d,
                &mut self.y,
                dims,
                nbk,
                h.transform,
            )?;
        }
        prof(s, "d_inverse")?;
        if down {
            self.round_down(h.dtype, nbk * n, placed)?;
        }
        prof(s, "d_download")?;
        if let Some(up) = &up {
            up.synchronize()
                .during(|| "waiting for the batch's streams".into())?;
        }
        if let Err(e) = verify_payloads(r, list) {
            // Nothing may free what the queued copies read from (a file
            // in page-locked memory) before they are done.
            let _ = s.synchronize();
            return Err(e);
        }
        trace("d_verified");
        // Each copy down waits for the batch's work queued before it.
        let err_q = self.stage.queue_down(&self.gpu, s, &err)?;
        let tot_q = match &check {
            Some((tot, _)) => Some(self.stage.queue_down(&self.gpu, s, tot)?),
            None => None,
        };
        self.stage.wait(s)?;
        trace("d_waited");
        let err_h = self.stage.read(&err_q);
        let tot_h = tot_q.map(|q| self.stage.read(&q));
        let at = (0..nbk)
            .map(|bi| {
                at[bi].filter(|_| {
                    err_h[bi] == 0
                        && match (&tot_h, &check) {
                            (Some(t), Some((_, nnz))) => t[bi] as usize == nnz[bi],
                            _ => true,
                        }
                })
            })
            .collect();
        Ok((at, placed))
    }

    /// The batch's `total` decoded doubles (`y`) rounded to the stored type
    /// on the device (unless the inverse `placed` them there) and down
    /// into the pinned buffer.
    fn round_down(&mut self, dtype: DType, total: usize, placed: bool) -> Result<(), CudaError> {
        let s = &self.stream.clone();
        let f = if placed {
            None
        } else {
            Some(self.f(&format!("TO_DTYPE(kernel, {})", cuda_type(dtype)), 0)?)
        };
        let count = total as i64;
        let grid = ((total.div_ceil(256)).min(65535) as u32, 1);
        macro_rules! down {
            ($dev:expr, $pin:expr) => {{
                let dev = $dev
                    .as_mut()
                    .ok_or_else(|| CudaError::Unsupported("no buffer".into()))?;
                if let Some(f) = &f {
                    let mut l = s.launch_builder(f);
                    l.arg(&self.y).arg(&mut *dev).arg(&count);
                    unsafe { l.launch(cfg(grid, 256, 0)) }
                        .during(|| "launching TO_DTYPE".into())?;
                }
                let pin = $pin
                    .as_mut()
                    .ok_or_else(|| CudaError::Unsupported("no buffer".into()))?;
                s.memcpy_dtoh(&dev.slice(0..total), &mut pin[..total])
                    .during(|| "copying decoded bricks to the host".into())?;
            }};
        }
        match dtype {
            DType::F32 => down!(self.in32, self.pin32),
            DType::F64 => down!(self.in64, self.pin64),
        }
        Ok(())
    }

    /// The rANS streams of a batch decoded into `ints`, a chunk per
    /// thread: per brick where its outliers start (None: its header does
    /// not read), its step, and the device's fault flags.
    fn rans_front(
        &mut self,
        dims: [usize; 3],
        list: &[Payload],
        io: interp::Order,
    ) -> Result<Front, CudaError> {
        let n: usize = dims.iter().product();
        let nbk = list.len();
        self.classes(dims, io)?;
        let s = &self.stream.clone();
        use rayon::prelude::*;
        trace("d_begin");
        let head = |(_, p, _): &Payload| codec::brick_rans_header(p, n).ok();
        let heads: Vec<Option<(f64, rans::Header)>> = list.iter().map(head).collect();
        trace("d_heads");
        let DecodeLists {
            mut doff,
            mut dlen,
            mut rmask,
            mut chunks,
        } = std::mem::take(&mut self.dec_lists);
        doff.clear();
        dlen.clear();
        rmask.clear();
        chunks.clear();
        let mut at = vec![None; nbk];
        let mut q = vec![1.0f64; nbk];
        // Each stream's data bytes, and its chunks' offsets (from the
        // stream's start until its place in the upload is known).
        let mut parts: Vec<Part> = Vec::new();
        let mut total = 0usize;
        let mut zero_tiles = false;
        // Each brick's tables (zeros where it has no stream), written
        // straight into the upload (`write_tables`), as the coder's are.
        let none = rans::Tables {
            freq: Vec::new(),
            cum: vec![0; CUM_BYTES / 4],
            scale: vec![0; SCALE_BYTES / 4],
        };
        let mut tables: Vec<&rans::Tables> = Vec::with_capacity(nbk);
        for (bi, head) in heads.iter().enumerate() {
            let Some((step, h)) = head else {
                // Decoded to nothing here, then redone on the CPU.
                chunks.push_pieces(std::iter::empty());
                tables.push(&none);
                rmask.push(0);
                continue;
            };
            let range = 8 + 4 * h.data_word..8 + 4 * h.used;
            total += range.len();
            let first = doff.len();
            for w in h.offsets.windows(2) {
                doff.push((2 * w[0]) as u64);
                dlen.push((w[1] - w[0]) as u32);
            }
            parts.push((bi, range, first..doff.len()));
            chunks.push_pieces(rans::pieces(n, h.chunk_log, h.split));
            tables.push(&h.tables);
            rmask.push(h.reset as u32 - 1);
            zero_tiles |= rans::zero_classes(&h.tables) != 0;
            q[bi] = *step;
            at[bi] = Some(8 + 4 * h.used);
        }
        trace("d_chunks");
        let err = s.alloc_zeros::<u32>(nbk).during(|| "alloc".into())?;
        if chunks.clen.is_empty() {
            self.dec_lists = DecodeLists {
                doff,
                dlen,
                rmask,
                chunks,
            };
            return Ok(Front {
                at,
                q,
                err,
                check: None,
                up: None,
            });
        }
        let mut err = err;
        let tables_len = tables_bytes(&tables)?;
        trace("d_lists");
        use bytemuck::cast_slice;
        // Streams in page-locked memory go up from where they lie, in one
        // copy for each run of streams close together in the file (those
        // of consecutive bricks, with the headers and outliers between
        // them), and only the lists through the pinned buffer; the others
        // are gathered, packed, into the pinned buffer.
        let locked: Option<Vec<_>> = parts
            .iter()
            .map(|(bi, r, _)| {
                let st = &list[*bi].1[r.clone()];
                page_locked(st).map(|buf| (st, buf))
            })
            .collect();
        let spans = locked.map(stream_spans);
        // Where each stream starts in the upload: its span's place, or
        // packed one after another.
        let starts: Vec<usize> = match &spans {
            Some(spans) => spans.at.clone(),
            None => parts
                .iter()
                .scan(0, |at, p| {
                    let o = *at;
                    *at += p.1.len();
                    Some(o)
                })
                .collect(),
        };
        for ((_, _, offs), at) in parts.iter().zip(&starts) {
            doff[offs.clone()].iter_mut().for_each(|o| *o += *at as u64);
        }
        // The streams (zero bytes after them: RDEC_PAD) and the chunk lists
        // in the slot's pinned buffer, then up in one copy: six pageable
        // copies a batch stalled behind the other slots' copies.
        let [l0, l1, l2] = chunks.byte_lists();
        let lists = [
            l0,
            l1,
            l2,
            cast_slice(&dlen),
            cast_slice(&doff),
            cast_slice(&rmask),
        ];
        trace("d_concat");
        // Without spans (the only case it runs), `starts` packs the
        // streams back to back: cut from the end, each ends where the next
        // starts.
        let gather = |data: &mut [u8]| {
            let (streams, pad) = data.split_at_mut(total);
            pad.fill(0);
            let mut left = streams;
            let mut dsts: Vec<&mut [u8]> = starts
                .iter()
                .rev()
                .map(|&at| {
                    let (head, d) = std::mem::take(&mut left).split_at_mut(at);
                    left = head;
                    d
                })
                .collect();
            dsts.reverse();
            let copy =
                |(d, (bi, r, _)): (&mut [u8], &Part)| d.copy_from_slice(&list[*bi].1[r.clone()]);
            if total > GATHER_PARALLEL_BYTES {
                dsts.into_par_iter().zip(parts.par_iter()).for_each(copy);
            } else {
                dsts.into_iter().zip(parts.iter()).for_each(copy);
            }
        };
        let mut streams_up = None;
        // The tables go first in the upload, or after the gathered streams.
        let (_up, base, tables_at, addr) = if let Some(spans) = spans {
            let (up, up_base, addr) = upload_packed(
                &self.gpu,
                s,
                PackedFrom::Pinned(&mut self.pbytes),
                tables_len,
                |pin| write_tables(pin, &tables),
                &lists,
            )?;
            // Profile marks: the fault flags' memset and the lists' copy done, the pad's
            // memset done, the streams up; what a batch's streams wait on.
            prof(s, "d_lists_up")?;
            // The slot's own buffer: one allocated a batch waited for the
            // pool to map memory (0.1-6.6 ms on the tail of a 2-GPU
            // decode, session 36).
            let len = spans.total + RDEC_PAD;
            if self.up_streams.as_ref().is_none_or(|b| b.len() < len) {
                self.up_streams = None;
                let cap = len.next_power_of_two();
                self.up_streams =
                    Some(unsafe { s.alloc::<u8>(cap) }.during(|| "allocating streams".into())?);
            }
            let streams = self
                .up_streams
                .as_mut()
                .ok_or_else(|| CudaError::Unsupported("no stream buffer".into()))?;
            s.memset_zeros(&mut streams.slice_mut(spans.total..len))
                .during(|| "zeroing".into())?;
            prof(s, "d_zeroed")?;
            for (from, at) in &spans.copies {
                s.memcpy_htod(*from, &mut streams.slice_mut(*at..*at + from.len()))
                    .during(|| "copying a batch's streams to the GPU".into())?;
            }
            prof(s, "d_streams_up")?;
            {
                use cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
                streams_up = Some(
                    s.record_event(Some(CU_EVENT_DISABLE_TIMING))
                        .during(|| "recording the batch's streams".into())?,
                );
            }
            let base = {
                use cudarc::driver::DevicePtr;
                streams.device_ptr(s).0
            };
            DIRECT_BATCHES.fetch_add(1, Ordering::Relaxed);
            (up, base, up_base, addr)
        } else {
            let at = (total + RDEC_PAD).next_multiple_of(16);
            let (up, base, addr) = upload_packed(
                &self.gpu,
                s,
                PackedFrom::Pinned(&mut self.pbytes),
                at + tables_len,
                |pin| {
                    let (streams, t) = pin.split_at_mut(at);
                    gather(&mut streams[..total + RDEC_PAD]);
                    write_tables(t, &tables);
                },
                &lists,
            )?;
            (up, base, base + at as u64, addr)
        };
        trace("d_gathered");
        let cls = self
            .classes
            .get(&(dims, io))
            .ok_or_else(|| CudaError::Unsupported("level classes".into()))?;
        let n64 = n as i64;
        prof(s, "d_rdec_before")?;
        let f = self.f("RDEC(kernel)", rdec_smem(RDEC_MAX_WARPS) as usize)?;
        trace("d_rdec_fn");
        let mut ints = self.ints.slice_mut(0..nbk * n);
        let [cfirst, cstart, clen, dlen_d, doff_d, rmask_d] = addr[..] else {
            return Err(CudaError::Unsupported("chunk lists".into()));
        };
        let (cum, scale) = table_addresses(tables_at, nbk);
        // Where a brick's tables leave a class only zeros after a zero,
        // RDEC passes over the warps' tiles of such values (on smooth
        // fields nearly every chunk but a brick's first few) and leaves
        // them as zeroed here.
        let tiles = if zero_tiles {
            s.memset_zeros(&mut ints).during(|| "zeroing".into())?;
            Some(&cls.tiles)
        } else {
            None
        };
        let bulk = &self.bulk;
        let ls = bulk_begin(s, bulk)?;
        trace("d_rdec_bulk");
        let mut l = ls.launch_builder(&f);
        l.arg(&base).arg(&doff_d).arg(&dlen_d).arg(&cls.values);
        match tiles {
            Some(t) => l.arg(t),
            None => l.arg(&NO_BUFFER),
        };
        l.arg(&n64)
            .arg(&cfirst)
            .arg(&cstart)
            .arg(&clen)
            .arg(&cum)
            .arg(&scale)
            .arg(&rmask_d)
            .arg(&mut ints)
            .arg(&mut err);
        let warps = rdec_warps(chunks.most);
        unsafe { l.launch(cfg(chunks.grid(warps), 32 * warps, rdec_smem(warps))) }
            .during(|| "launching RDEC".into())?;
        trace("d_rdec_launched");
        bulk_end(s, bulk)?;
        prof(s, "d_decode")?;
        // The lists went up with the batch's copy (from the pinned buffer),
        // which the stream's next wait covers; their vectors are reused.
        self.dec_lists = DecodeLists {
            doff,
            dlen,
            rmask,
            chunks,
        };
        Ok(Front {
            at,
            q,
            err,
            check: None,
            up: streams_up,
        })
    }

    /// The Rice streams of a batch decoded into `ints`: per brick where its
    /// outliers start (None: not a stream), its step, the device's fault
    /// flags, and the nonzero-block totals to check.
    fn rice_front(&mut self, dims: [usize; 3], list: &[Payload]) -> Result<Front, CudaError> {
        let n: usize = dims.iter().product();
        let nb = n.div_ceil(32);
        let nbk = list.len();
        let s = &self.stream.clone();
        // All payloads as words; per brick the sections' offsets and lengths.
        let mut words: Vec<u32> = Vec::new();
        let mut sec = vec![0u64; 5 * nbk];
        let mut secw = vec![0u32; 5 * nbk];
        let mut mapw = vec![0u32; nbk];
        let mut q = vec![1.0f64; nbk];
        let mut at = vec![None; nbk];
        let mut nnz = vec![0usize; nbk];
        let mut stride = 1usize;
        for (bi, (_, p, _)) in list.iter().enumerate() {
            let base = words.len();
            if let Some(x) = sections(p, n) {
                words.extend(
                    p[..x.outliers_at]
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                );
                for i in 0..5 {
                    sec[5 * bi + i] = (base + x.sec[i].0) as u64;
                    secw[5 * bi + i] = x.sec[i].1 as u32;
                }
                mapw[bi] = x.sec[0].1 as u32;
                q[bi] = x.q;
                nnz[bi] = x.nnz;
                stride = stride.max(x.sec[4].1);
                at[bi] = Some(x.outliers_at);
            } else {
                // A dummy brick: an empty map, decoded to nothing, then redone on the CPU.
                words.push(0);
                sec[5 * bi] = base as u64;
                mapw[bi] = 1;
            }
        }
        words.push(0);
        let words_d = s
            .clone_htod(&words)
            .during(|| "copying payloads to the GPU".into())?;
        let sec_d = self.stage.up(&self.gpu, s, &sec)?;
        let secw_d = self.stage.up(&self.gpu, s, &secw)?;
        let mapw_d = self.stage.up(&self.gpu, s, &mapw)?;
        let mut err = s.alloc_zeros::<u32>(nbk).during(|| "alloc".into())?;
        let mut tot = s.alloc_zeros::<u64>(4 * nbk).during(|| "alloc".into())?;
        let mut pc = s
            .alloc_zeros::<u32>(nbk * stride)
            .during(|| "alloc".into())?;
        let levels = rice::map_levels(nb);
        let nlev = levels.len() as i32;
        let smem = (levels.iter().sum::<usize>() * 4) as u32;
        let (n64, nb64, st64) = (n as i64, nb as i64, stride as i64);
        let bnb = nbk * nb;
        let fscan = self.f("SCAN(kernel)", 0)?;
        let fdmode = self.f("DMODE(kernel)", 0)?;
        let fdsize = self.f("DSIZE(kernel)", 0)?;
        let fpopc = self.f("POPC(kernel)", 0)?;
        let fdecode = self.f("DECODE(kernel)", 0)?;
        let (mut a, mut rest) = self.sizes.split_at_mut(bnb);
        let (mut sp, mut rest) = rest.split_at_mut(bnb);
        let mut lo_ones = rest.slice_mut(0..2 * bnb);
        let f = self
            .gpu
            .function(Kernel::Codec, "DMAP(kernel)", smem as usize)?;
        let mut l = s.launch_builder(&f);
        l.arg(&words_d)
            .arg(&sec_d)
            .arg(&mapw_d)
            .arg(&nb64)
            .arg(&nlev)
            .arg(&mut self.nzf)
            .arg(&mut a)
            .arg(&mut err);
        unsafe { l.launch(cfg((nbk as u32, 1), 256, smem)) }.during(|| "launching DMAP".into())?;
        prof(s, "d_map")?;
        let mut t0 = tot.slice_mut(0..nbk);
        let mut l = s.launch_builder(&fscan);
        l.arg(&mut a).arg(&nb64).arg(&mut t0);
        unsafe { l.launch(cfg((1, nbk as u32), 1024, 0)) }.during(|| "launching SCAN".into())?;
        let mut l = s.launch_builder(&fdmode);
        l.arg(&words_d)
            .arg(&sec_d)
            .arg(&secw_d)
            .arg(&nb64)
            .arg(&self.nzf)
            .arg(&mut a)
            .arg(&mut self.mode)
            .arg(&mut sp)
            .arg(&mut err);
        unsafe { l.launch(cfg(block_grid(nb, nbk), 256, 0)) }
            .during(|| "launching DMODE".into())?;
        let mut t1 = tot.slice_mut(nbk..2 * nbk);
        let mut l = s.launch_builder(&fscan);
        l.arg(&mut sp).arg(&nb64).arg(&mut t1);
        unsafe { l.launch(cfg((1, nbk as u32), 1024, 0)) }.during(|| "launching SCAN".into())?;
        {
            let (mut low, mut ones) = lo_ones.split_at_mut(bnb);
            let mut l = s.launch_builder(&fdsize);
            l.arg(&words_d)
                .arg(&sec_d)
                .arg(&secw_d)
                .arg(&nb64)
                .arg(&self.nzf)
                .arg(&self.mode)
                .arg(&mut sp)
                .arg(&mut low)
                .arg(&mut ones)
                .arg(&mut err);
            unsafe { l.launch(cfg(block_grid(nb, nbk), 256, 0)) }
                .during(|| "launching DSIZE".into())?;
        }
        let mut t23 = tot.slice_mut(2 * nbk..4 * nbk);
        let mut l = s.launch_builder(&fscan);
        l.arg(&mut lo_ones).arg(&nb64).arg(&mut t23);
        unsafe { l.launch(cfg((1, 2 * nbk as u32), 1024, 0)) }
            .during(|| "launching SCAN".into())?;
        let mut l = s.launch_builder(&fpopc);
        l.arg(&words_d)
            .arg(&sec_d)
            .arg(&secw_d)
            .arg(&st64)
            .arg(&mut pc);
        unsafe { l.launch(cfg(block_grid(stride, nbk), 256, 0)) }
            .during(|| "launching POPC".into())?;
        let mut tpc = s.alloc_zeros::<u64>(nbk).during(|| "alloc".into())?;
        let mut l = s.launch_builder(&fscan);
        l.arg(&mut pc).arg(&st64).arg(&mut tpc);
        unsafe { l.launch(cfg((1, nbk as u32), 1024, 0)) }.during(|| "launching SCAN".into())?;
        let (mut low, mut ones) = lo_ones.split_at_mut(bnb);
        let mut ints = self.ints.slice_mut(0..nbk * n);
        let mut l = s.launch_builder(&fdecode);
        l.arg(&words_d)
            .arg(&sec_d)
            .arg(&secw_d)
            .arg(&n64)
            .arg(&nb64)
            .arg(&self.nzf)
            .arg(&self.mode)
            .arg(&mut sp)
            .arg(&mut low)
            .arg(&mut ones)
            .arg(&pc)
            .arg(&st64)
            .arg(&mut ints)
            .arg(&mut err);
        unsafe { l.launch(cfg(block_grid(nb, nbk), 256, 0)) }
            .during(|| "launching DECODE".into())?;
        prof(s, "d_decode")?;
        Ok(Front {
            at,
            q,
            err,
            check: Some((tot, nnz)),
            up: None,
        })
    }

    /// The last decoded batch in the pinned buffer, as stored.
    fn decoded(&self) -> Result<DecodedView<'_>, CudaError> {
        Ok(match (&self.pin32, &self.pin64) {
            (Some(p), _) => DecodedView::F32(p),
            (_, Some(p)) => DecodedView::F64(p),
            _ => return Err(CudaError::Unsupported("no pinned buffer".into())),
        })
    }
}

/// The device memory the codec may take on each of `gpus`: 80% of the
/// least free, counting what idle slots hold (a run reuses or frees them)
/// and what the memory pool keeps in reserve.
fn device_budget(gpus: &[Arc<Gpu>]) -> Result<usize, CudaError> {
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
const RANS_TILE: u32 = 32 * 33 * 4;
/// RDEC's two tiles (values, level classes).
const RANS_TILES: u32 = 2 * RANS_TILE;
/// Threads of an RENC block (the kernel's R_ENC_WARPS warps): one warp
/// runs the states of 32 chunks, seven prepare its next tile.
const RENC_THREADS: u32 = 256;
/// Shared memory of an RENC block: cumulative starts as u16 (the kernel's
/// R_CU16_WORDS) and scales, a division multiplier per context and
/// symbol, the chunks' starts and lengths (512 bytes), and two stages of
/// four words per value of a tile: 65.2 KiB, three blocks an SM.
const RENC_SMEM: u32 = (rans::NCTX * (rans::NSYM + 1)).div_ceil(2) as u32 * 4
    + (rans::NCTX * 4) as u32
    + (rans::NCTX * rans::NSYM * 4) as u32
    + 512
    + 2 * 4 * RANS_TILE;
// An H100 SM has 228 KiB of shared memory and reserves 1 KiB a block:
// three blocks an SM run a 1024^3 field's 1,024 RENC blocks in three
// waves; two an SM took four. (Two words a value, the table entries
// looked up by the state warp, fit four blocks an SM but coded 12% slower:
// session 30.)
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
fn rdec_warps(most_chunks: usize) -> u32 {
    most_chunks.div_ceil(32).clamp(1, RDEC_MAX_WARPS as usize) as u32
}
const RDEC_MAX_WARPS: u32 = 6;
const _: () = assert!(2 * (rdec_smem(RDEC_MAX_WARPS) + 1024) <= 228 * 1024);
/// Words of a lane's window on its stream in RDEC: the kernel's R_WIN
/// (13 loads of 4 words, and one more).
const RDEC_WINDOW_WORDS: u32 = 53;
/// RDEC's: per context its scale and packed information (two words), the
/// cumulative starts as u16 (the kernel's R_CU16_WORDS), 256 starting
/// symbols (bytes) per context, and per warp its tiles and each lane's
/// window on its words.
const fn rdec_smem(warps: u32) -> u32 {
    (rans::NCTX * 2 * 4) as u32
        + (rans::NCTX * (rans::NSYM + 1)).div_ceil(2) as u32 * 4
        + (rans::NCTX * 256) as u32
        + warps * (RANS_TILES + 32 * RDEC_WINDOW_WORDS * 4)
}
/// Zero bytes after the last rANS stream of a batch: RDEC's windows read
/// up to 208 bytes past a lane's position.
const RDEC_PAD: usize = 256;

/// The output buffer `out`, at least `total` bytes and zeroed there (the
/// writing kernels OR bits in and leave padding alone).
fn clear_out(s: &Arc<CudaStream>, out: &mut CudaSlice<u8>, total: usize) -> Result<(), CudaError> {
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
enum PackedFrom<'a> {
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
fn upload_packed(
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
fn packed_layout(first: usize, lens: &[usize]) -> (Vec<usize>, usize) {
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
type Part = (usize, std::ops::Range<usize>, std::ops::Range<usize>);

/// Streams lying at most this many bytes apart in host memory go up in
/// one copy, the bytes between them too: a copy call costs about what
/// this many bytes take across PCIe.
const SPAN_GAP: usize = 64 << 10;

/// Where streams copied up from where they lie go: `copies` (host bytes,
/// their offset up) cover every stream, each stream's bytes start at
/// `at` up, `total` bytes in all.
struct StreamSpans<'a> {
    copies: Vec<(&'a [u8], usize)>,
    at: Vec<usize>,
    total: usize,
}

/// `streams`, each with the address range of the host buffer it lies in,
/// laid out for the copy up: a stream that starts at most `SPAN_GAP`
/// bytes after the one before it ends, in the same buffer, extends that
/// one's copy to its own end.
fn stream_spans<'a>(
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
const GATHER_PARALLEL_BYTES: usize = 4 << 20;

/// The least a slot's pinned buffer holds, so that small batches never
/// page-lock memory while others' kernels run (one such registration
/// waited 44 ms).
const PINNED_MIN_BYTES: usize = 8 << 20;

/// `buf` grown to at least `len` bytes (a power of two, kept by the slot).
fn pinned_bytes<'a>(
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
fn download<'a>(
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
fn rhist_blocks(n: usize, bricks: usize) -> u32 {
    let most = n.div_ceil(256 * 64).clamp(1, 1024);
    n.div_ceil(256 * 1024)
        .max(1024usize.div_ceil(bricks.max(1)))
        .clamp(1, most) as u32
}

/// A launch's grid over `count` items of each of `bricks` bricks, 256
/// threads a block.
fn block_grid(count: usize, bricks: usize) -> (u32, u32) {
    ((count.div_ceil(256)).min(4096) as u32, bricks as u32)
}

/// RPLAN (a brick's tables, chunk length and split, a block a brick) then
/// RPIECES (the chunk lists) on `s`, from the bricks' histograms `hist`
/// and their shape's class blocks (`rans::class_blocks`, `nblk` of them).
fn queue_rplan(
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
fn queue_rwords(
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
const RPLAN_META: usize = 8;
/// Table words RWORDS has room for, a brick: at most 5,718 bits a context
/// (its count, scale, 168 symbols' gaps, the largest's rank, 167
/// frequencies of up to 31 bits), 5,718 words for 32 contexts.
const RPLAN_WORDS: usize = 8192;

/// A brick's plan, as its payload's layout needs it.
struct BrickPlan {
    chunk_log: u32,
    split: rans::Split,
    words: Vec<u32>,
}

/// RENC's outputs: each chunk's words and final state.
struct RencOut {
    sizes: CudaSlice<u32>,
    states: CudaSlice<u32>,
}

/// A batch's plans on the device (RPLAN, RPIECES, RWORDS) and what their
/// kernels read, kept until the batch's layout is done.
struct DevicePlans {
    hist: CudaSlice<u32>,
    scr: CudaSlice<f64>,
    cum: CudaSlice<u32>,
    scale: CudaSlice<u32>,
    meta: CudaSlice<u32>,
    cfirst: CudaSlice<u32>,
    cstart: CudaSlice<u64>,
    clen: CudaSlice<u32>,
    words: Option<CudaSlice<u32>>,
}

/// Bytes of a brick's cumulative starts and of its scales, as RENC and
/// RDEC read them (brick after brick).
const CUM_BYTES: usize = rans::NCTX * (rans::NSYM + 1) * 4;
const SCALE_BYTES: usize = rans::NCTX * 4;

/// Bytes the bricks' `tables` take as `write_tables` lays them out; an
/// error if one is not of the kernels' size (it would not fit).
fn tables_bytes(tables: &[&rans::Tables]) -> Result<usize, CudaError> {
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
/// into the stage): 22 KB a brick, 0.6-1.3 MB a batch of 28-58 bricks
/// (session 52). Session 52 split the copy over the rayon pool; since the
/// slot threads are kept (session 59) the hand-off costs more than the
/// copy: two H200s decoded at 269 GB/s copying here against 264 on the
/// pool, one GPU unchanged (session 60, three pairs of processes).
fn write_tables(dst: &mut [u8], tables: &[&rans::Tables]) {
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
fn table_addresses(at: u64, bricks: usize) -> (u64, u64) {
    (at, at + (bricks * CUM_BYTES) as u64)
}

/// The chunks of a batch's rANS streams, as the RENC and RDEC kernels
/// take them: brick b's chunks are `cfirst[b]..cfirst[b + 1]`, chunk c
/// holds values `cstart[c]..` (`clen[c]` of them). The bricks' tables go
/// up apart (`write_tables`).
struct RansChunks {
    cfirst: Vec<u32>,
    cstart: Vec<u64>,
    clen: Vec<u32>,
    /// The longest chunk list of a brick.
    most: usize,
}

impl Default for RansChunks {
    fn default() -> Self {
        Self::new()
    }
}

impl RansChunks {
    fn new() -> Self {
        RansChunks {
            cfirst: vec![0],
            cstart: Vec::new(),
            clen: Vec::new(),
            most: 0,
        }
    }

    /// Empty, keeping the vectors' memory.
    fn clear(&mut self) {
        self.cfirst.clear();
        self.cfirst.push(0);
        self.cstart.clear();
        self.clen.clear();
        self.most = 0;
    }

    /// The next brick's pieces (first value, values: `rans::pieces`; none
    /// for a brick without a stream).
    fn push_pieces(&mut self, pieces: impl Iterator<Item = (usize, usize)>) {
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
    fn byte_lists(&self) -> [&[u8]; 3] {
        use bytemuck::cast_slice;
        [
            cast_slice(&self.cfirst),
            cast_slice(&self.cstart),
            cast_slice(&self.clen),
        ]
    }

    /// A row of blocks per brick, a lane per chunk, `warps` warps of
    /// chunks a block.
    fn grid(&self, warps: u32) -> (u32, u32) {
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
struct Front {
    at: Vec<Option<usize>>,
    q: Vec<f64>,
    err: CudaSlice<u32>,
    check: Option<(CudaSlice<u64>, Vec<usize>)>,
    /// Recorded after the batch's streams were queued up from a file in
    /// page-locked memory (`verify_after_upload`).
    up: Option<cudarc::driver::CudaEvent>,
}

enum DecodedView<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
}

/// A brick of a batch after the host's checks: the device's
/// reconstruction stands (with these outlier corrections), or the CPU
/// decoded it.
enum CheckedBrick {
    Device(Vec<codec::Outlier>),
    Cpu(Vec<f64>),
}

/// The host's part of decoding a batch, on every core: each brick's
/// outlier list where the device's reconstruction stands (`outliers_at`
/// Some), else the CPU's decode; an error names the brick.
fn check_batch(
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

/// A float32 field (2-D or 3-D, row-major) in a GPU's memory: what
/// `compress_resident` reads and `decompress_resident` writes, for
/// pipelines whose data never leaves the device.
pub struct DeviceField {
    pub data: CudaSlice<f32>,
    pub info: FieldInfo,
}

impl DeviceField {
    /// `values` of `shape` copied to `gpu`.
    pub fn upload(gpu: &Gpu, shape: &[usize], values: &[f32]) -> Result<Self, CudaError> {
        let info = FieldInfo::new(shape, DType::F32)?;
        if info.len() != values.len() {
            return Err(CudaError::Unsupported(format!(
                "shape {shape:?} does not match {} values",
                values.len()
            )));
        }
        let data = gpu
            .stream
            .clone_htod(values)
            .during(|| "copying a field to the GPU".into())?;
        gpu.stream
            .synchronize()
            .during(|| "copying a field to the GPU".into())?;
        Ok(DeviceField { data, info })
    }

    /// The values, copied back to the host.
    pub fn download(&self, gpu: &Gpu) -> Result<Vec<f32>, CudaError> {
        gpu.stream
            .clone_dtoh(&self.data)
            .during(|| "copying a field from the GPU".into())
    }
}

/// A float32 field (2-D or 3-D, row-major) in page-locked host memory
/// that every GPU maps: `compress_pinned` reads it and `decompress_pinned`
/// writes it from the kernels, across PCIe. A field in ordinary
/// (pageable) memory must first be copied into pinned buffers by the host,
/// whose memory bandwidth then bounds every GPU together (48 GB/s on 32
/// cores of the two-GPU machine: two GPUs no faster than one).
pub struct PinnedField {
    data: Registered<f32>,
    pub info: FieldInfo,
    /// The values' range (least and greatest finite value, and the first
    /// value that is not finite), taken on the host as the field was
    /// written (the values were in cache then); None once it may have
    /// changed. With it, a relative or PSNR bound is known before the
    /// field crosses PCIe, so `compress_pinned` codes layers as they
    /// arrive, as under an absolute bound.
    range: Option<Range32>,
}

/// The range of `v` (values `first` on), in the form RANGE gives: least
/// and greatest finite value, and the first index that is not finite.
/// The CPU codec's vectorized `scan` first; a value-by-value pass only
/// where something is not finite.
fn host_range(first: usize, v: &[f32]) -> Range32 {
    let (lo, hi, nan) = codec::scan(v);
    if !nan && lo.is_finite() && hi.is_finite() {
        return (lo as f32, hi as f32, None);
    }
    let (mut lo, mut hi, mut bad) = (f32::INFINITY, f32::NEG_INFINITY, None);
    for (i, &x) in v.iter().enumerate() {
        if x.is_finite() {
            lo = lo.min(x);
            hi = hi.max(x);
        } else if bad.is_none() {
            bad = Some(first + i);
        }
    }
    (lo, hi, bad)
}

/// Two ranges as one (the first bad index of either).
fn join_ranges(a: Range32, b: Range32) -> Range32 {
    let bad = match (a.2, b.2) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    (a.0.min(b.0), a.1.max(b.1), bad)
}

/// Writes a piece of a field (values `first` on): `PinnedField::filled`.
pub type Filler<'f, E> = dyn Fn(usize, &mut [f32]) -> Result<(), E> + Sync + 'f;

/// Where a `PinnedField`'s values come from.
enum Source<'a, E> {
    Zeros,
    Values(&'a [f32]),
    With(&'a Filler<'a, E>),
}

/// Why `PinnedField::filled` failed: the page-locked allocation (the
/// caller may fall back to ordinary memory), or the filler's own error.
#[derive(Debug)]
pub enum FillError<E> {
    Cuda(CudaError),
    Fill(E),
}

impl<E> From<CudaError> for FillError<E> {
    fn from(e: CudaError) -> Self {
        FillError::Cuda(e)
    }
}

impl FillError<std::convert::Infallible> {
    fn into_cuda(self) -> CudaError {
        match self {
            FillError::Cuda(e) => e,
            FillError::Fill(never) => match never {},
        }
    }
}

impl PinnedField {
    /// A field of `shape` set to zero.
    pub fn zeros(gpu: &Arc<Gpu>, shape: &[usize]) -> Result<Self, CudaError> {
        Self::page_locked(gpu, shape, Source::Zeros).map_err(FillError::into_cuda)
    }

    /// `values` of `shape` copied into page-locked memory.
    pub fn from_values(gpu: &Arc<Gpu>, shape: &[usize], values: &[f32]) -> Result<Self, CudaError> {
        Self::page_locked(gpu, shape, Source::Values(values)).map_err(FillError::into_cuda)
    }

    /// A field of `shape` whose values `fill(first, piece)` writes, piece
    /// by piece on every core (value `first` on): a file read straight
    /// into page-locked memory, with no copy in ordinary memory first.
    pub fn filled<E: Send>(
        gpu: &Arc<Gpu>,
        shape: &[usize],
        fill: &Filler<'_, E>,
    ) -> Result<Self, FillError<E>> {
        Self::page_locked(gpu, shape, Source::With(fill))
    }

    /// A field of `shape` in ordinary memory on transparent huge pages,
    /// written on every core (zero, from `values`, or by a filler), then
    /// registered with CUDA. `cuMemHostAlloc` of 4 GiB took 2.4 s on the
    /// H100 machine (a million 4 KiB page faults, one thread);
    /// registering memory already touched took 0.18 s.
    fn page_locked<E: Send>(
        gpu: &Arc<Gpu>,
        shape: &[usize],
        values: Source<'_, E>,
    ) -> Result<Self, FillError<E>> {
        use cudarc::driver::sys::{CU_MEMHOSTREGISTER_DEVICEMAP, CU_MEMHOSTREGISTER_PORTABLE};
        use rayon::prelude::*;
        const PIECE: usize = 1 << 18;
        let info = FieldInfo::new(shape, DType::F32).map_err(CudaError::from)?;
        if let Source::Values(v) = values {
            if v.len() != info.len() {
                return Err(FillError::Cuda(CudaError::Unsupported(format!(
                    "shape {shape:?} does not match {} values",
                    v.len()
                ))));
            }
        }
        if info.len().checked_mul(4).is_none() {
            return Err(FillError::Cuda(CudaError::Unsupported(format!(
                "shape {shape:?}: too many values to address"
            ))));
        }
        let none = (f32::INFINITY, f32::NEG_INFINITY, None);
        let (data, range) = match values {
            Source::Zeros => (
                multires::memory::touched_vec::<f32>(info.len()),
                (0.0, 0.0, None),
            ),
            Source::Values(v) => {
                let mut d = multires::memory::zeroed_vec::<f32>(info.len());
                let r = d
                    .par_chunks_mut(PIECE)
                    .zip(v.par_chunks(PIECE))
                    .enumerate()
                    .map(|(i, (d, s))| {
                        d.copy_from_slice(s);
                        host_range(i * PIECE, d)
                    })
                    .reduce(|| none, join_ranges);
                (d, r)
            }
            Source::With(fill) => {
                let mut d = multires::memory::zeroed_vec::<f32>(info.len());
                let r = d
                    .par_chunks_mut(PIECE)
                    .enumerate()
                    .map(|(i, c)| {
                        fill(i * PIECE, c)?;
                        Ok(host_range(i * PIECE, c))
                    })
                    .try_reduce(|| none, |a, b| Ok(join_ranges(a, b)))
                    .map_err(FillError::Fill)?;
                (d, r)
            }
        };
        // Portable: pinned for every GPU's context; device-mapped: the
        // kernels address it.
        let data = Registered::register(
            &gpu.ctx,
            data,
            CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP,
        )
        .map_err(|e| match e {
            CudaError::Driver { what, source } => CudaError::Driver {
                what: format!("{what} (a field of {shape:?})"),
                source,
            },
            e => e,
        })?;
        Ok(PinnedField {
            data,
            info,
            range: Some(range),
        })
    }

    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// The values to change (the range taken when it was written is
    /// forgotten: `compress_pinned` then takes it on the device).
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        self.range = None;
        &mut self.data
    }

    /// Its address for kernels of the context bound to this thread.
    fn device_at(&self) -> Result<u64, CudaError> {
        crate::device::mapped_at(self.data.as_ptr() as *mut std::ffi::c_void)
    }
}

/// The error for brick `k` of the file at `path` that does not decode.
fn corrupt_brick(path: &str, grid: &codec::BrickGrid, k: usize, what: String) -> CudaError {
    CudaError::Codec(codec::CodecError::CorruptBrick {
        path: path.to_string(),
        brick: k,
        place: grid.describe(k),
        what,
    })
}

/// Brick origins of a batch as GATHER and SCATTER take them.
fn origins(grid: &codec::BrickGrid, bricks: impl Iterator<Item = usize>) -> Vec<i64> {
    bricks
        .flat_map(|k| grid.bounds(k).0.map(|v| v as i64))
        .collect()
}

impl Slot {
    /// The batch's bricks gathered from a float32 field at device address
    /// `at` (GPU memory, or page-locked host memory read across PCIe): as
    /// stored for the interpolation, as doubles into `x` for the lifting
    /// transforms (`t`). `in_place`: `at` is GPU memory that stays there
    /// until the batch is coded, so the interpolation reads the field
    /// itself and GATHER takes only the peaks (across PCIe, a point read
    /// at a time would cost a round trip each).
    fn gather_from(
        &mut self,
        (at, in_place): (u64, bool),
        info: &FieldInfo,
        grid: &codec::BrickGrid,
        b: &Batch,
        t: lifting::Lifting,
    ) -> Result<(), CudaError> {
        let s = &self.stream.clone();
        let org = self
            .stage
            .up(&self.gpu, s, &origins(grid, b.bricks.iter().copied()))?;
        let (yy, xx) = (info.dims[1] as i64, info.dims[2] as i64);
        let d = b.dims.map(|v| v as i32);
        let stored = t == lifting::Lifting::Interp;
        let func = self.f(
            if stored {
                "GATHER(kernel, float)"
            } else {
                "GATHER(kernel, double)"
            },
            0,
        )?;
        let mut l = s.launch_builder(&func);
        l.arg(&at)
            .arg(&org)
            .arg(&yy)
            .arg(&xx)
            .arg(&d[0])
            .arg(&d[1])
            .arg(&d[2]);
        let in_place = stored && in_place;
        match (stored, &mut self.in32) {
            (true, None) => {
                return Err(CudaError::Unsupported(
                    "a float32 field needs a float32 slot".into(),
                ))
            }
            _ if in_place => l.arg(&NO_BUFFER),
            (true, Some(v)) => l.arg(v),
            (false, _) => l.arg(&mut self.x),
        };
        let mut peak = s
            .alloc_zeros::<u64>(b.bricks.len())
            .during(|| "alloc".into())?;
        l.arg(&mut peak);
        // A warp a row, about four rows a warp.
        let rows = b.dims[0] * b.dims[1];
        let gx = rows.div_ceil(8 * 4).clamp(1, 4096) as u32;
        unsafe { l.launch(cfg((gx, b.bricks.len() as u32), 256, 0)) }
            .during(|| "launching GATHER".into())?;
        self.gathered_peak = Some(peak);
        self.field_in = in_place.then_some(FieldIn {
            at,
            org,
            rows: yy,
            cols: xx,
        });
        Ok(())
    }
}

/// The least and greatest finite value of `n` floats at device address
/// `at` (GPU memory or mapped host memory), and the first index of a value
/// that is not finite.
fn range_at(gpu: &Gpu, s: &Arc<CudaStream>, at: u64, n: usize) -> Result<Range32, CudaError> {
    range_rows(gpu, s, at, Rows::span(n))
}

/// Rows of floats that start `pitch` floats apart: a piece of a slab (its
/// planes' rows `y0..y1`) as the copy engines move it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rows {
    width: usize,
    rows: usize,
    pitch: usize,
}

impl Rows {
    fn span(n: usize) -> Rows {
        Rows {
            width: n,
            rows: 1,
            pitch: n,
        }
    }
}

/// `range_at` over `r`'s rows; the index of a bad value is
/// `row * pitch + column`.
fn range_rows(gpu: &Gpu, s: &Arc<CudaStream>, at: u64, r: Rows) -> Result<Range32, CudaError> {
    let mut out = unsafe { s.alloc::<f32>(3 * range_blocks(r)) }.during(|| "alloc".into())?;
    launch_range(gpu, s, at, r, &mut out.slice_mut(..))?;
    let res = s.clone_dtoh(&out).during(|| "reading the range".into())?;
    range_of(gpu, s, at, r, &res)
}

/// RANGE's grid over `r`'s rows.
fn range_grid(r: Rows) -> (u32, u32) {
    let gy = r.rows.clamp(1, 1024);
    let gx = r.width.div_ceil(256).clamp(1, (2048 / gy).max(1));
    (gx as u32, gy as u32)
}

/// Blocks of RANGE over `r`'s rows: its results are three floats each.
fn range_blocks(r: Rows) -> usize {
    let (gx, gy) = range_grid(r);
    gx as usize * gy as usize
}

/// RANGE over `r`'s rows at `at`, into the first `3 * range_blocks(r)`
/// floats of `out` (read back together, then `range_of`).
fn launch_range(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    at: u64,
    r: Rows,
    out: &mut cudarc::driver::CudaViewMut<f32>,
) -> Result<(), CudaError> {
    let (w, h, p) = (r.width as i64, r.rows as i64, r.pitch as i64);
    let func = gpu.function(Kernel::Codec, "RANGE(kernel)", 0)?;
    let mut l = s.launch_builder(&func);
    l.arg(&at).arg(&w).arg(&h).arg(&p).arg(out);
    unsafe { l.launch(cfg(range_grid(r), 256, 0)) }.during(|| "launching RANGE".into())?;
    Ok(())
}

/// The range from RANGE's results `res` (least, greatest and not-finite
/// flags, a block each); where a value is not finite, FIRST_BAD finds the
/// first.
fn range_of(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    at: u64,
    r: Rows,
    res: &[f32],
) -> Result<Range32, CudaError> {
    let blocks = range_blocks(r);
    if res.len() < 3 * blocks {
        return Err(CudaError::Unsupported("the range's read-back".into()));
    }
    let lo = res[..blocks].iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let hi = res[blocks..2 * blocks]
        .iter()
        .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    if res[2 * blocks..3 * blocks].iter().all(|&c| c == 0.0) {
        return Ok((lo, hi, None));
    }
    let (w, h, p) = (r.width as i64, r.rows as i64, r.pitch as i64);
    let mut first = s
        .clone_htod(&[u64::MAX])
        .during(|| "copying a flag".into())?;
    let func = gpu.function(Kernel::Codec, "FIRST_BAD(kernel)", 0)?;
    let mut l = s.launch_builder(&func);
    l.arg(&at).arg(&w).arg(&h).arg(&p).arg(&mut first);
    unsafe { l.launch(cfg(range_grid(r), 256, 0)) }.during(|| "launching FIRST_BAD".into())?;
    let i = s.clone_dtoh(&first).during(|| "reading a flag".into())?[0] as usize;
    Ok((lo, hi, Some(i)))
}

/// The least and greatest of the first `n` values of `data` on the GPU (a
/// field, or a slab of one whose first value is the field's `first`); an
/// error names the first value that is not finite by its field index.
fn device_range(
    gpu: &Gpu,
    data: &CudaSlice<f32>,
    n: usize,
    first: usize,
) -> Result<(f64, f64), CudaError> {
    Ok(range_and_rows(gpu, data, n, first, &[])?.0)
}

/// `device_range`, and the values of `data` at each of `rows` (start,
/// length) copied on the device beside the range's results: one read-back
/// for both (a slab's density sample took eight copies down, 0.3-0.4 ms
/// after its range on two H100s; session 45).
fn range_and_rows(
    gpu: &Gpu,
    data: &CudaSlice<f32>,
    n: usize,
    first: usize,
    rows: &[(usize, usize)],
) -> Result<((f64, f64), Vec<f32>), CudaError> {
    use cudarc::driver::DevicePtr;
    let s = &gpu.stream;
    let r = Rows::span(n);
    let res = 3 * range_blocks(r);
    let taken: usize = rows.iter().map(|&(_, len)| len).sum();
    if rows.iter().any(|&(at, len)| at + len > data.len()) {
        return Err(CudaError::Unsupported("sample rows past the data".into()));
    }
    let mut out = unsafe { s.alloc::<f32>(res + taken) }.during(|| "alloc".into())?;
    let (at, _sync) = data.device_ptr(s);
    launch_range(gpu, s, at, r, &mut out.slice_mut(0..res))?;
    let mut to = res;
    for &(from, len) in rows {
        s.memcpy_dtod(
            &data.slice(from..from + len),
            &mut out.slice_mut(to..to + len),
        )
        .during(|| "sampling the field".into())?;
        to += len;
    }
    head_mark("range queued");
    let host = s.clone_dtoh(&out).during(|| "reading the range".into())?;
    head_mark("range read");
    let (lo, hi, bad) = range_of(gpu, s, at, r, &host[..res])?;
    if let Some(i) = bad {
        let value = s
            .clone_dtoh(&data.slice(i..i + 1))
            .during(|| "reading a value".into())?[0];
        return Err(codec::CodecError::NonFinite {
            index: first + i,
            value: value as f64,
        }
        .into());
    }
    Ok(((lo as f64, hi as f64), host[res..].to_vec()))
}

/// Compresses a field that is already on `gpu`: the range, the bricks'
/// gathering and all the coding on the device; the .mrz bytes come back
/// (byte-identical to `compress` of the same values).
pub fn compress_resident(
    f: &DeviceField,
    opts: &CodecOptions,
    gpu: &Arc<Gpu>,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
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
        (None, RESIDENT_BATCH, RESIDENT_SLOTS, RESIDENT_SHARES),
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

/// The bricks of `grid` in `parts` slabs of whole brick layers along the
/// first axis: (first plane, end plane, bricks). A slab is one span of
/// memory, so it crosses PCIe in one copy.
fn slabs(grid: &codec::BrickGrid, parts: usize) -> Vec<(usize, usize, Vec<usize>)> {
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
fn slab_fits(len: usize, g: &Gpu) -> Result<bool, CudaError> {
    if pinned_tuning().slabs_on_host {
        return Ok(false);
    }
    Ok(2 * 4 * len < g.free_mem()?)
}

/// Work for one GPU (its index and itself) on a thread of its own.
type GpuWork<'a, T> = dyn Fn(usize, &Arc<Gpu>) -> Result<T, CudaError> + Sync + 'a;

/// Runs `work(i, gpu)` for every GPU on a thread of its own (its context
/// bound) and returns the results in GPU order. The threads start their
/// work together, once all are bound: on two H200s the second thread
/// started 0.6-1.5 ms late in some runs (its start waiting on the first
/// one's copies), and the run's head with it. The threads are kept from
/// run to run (`crate::workers`, as the slots' are): two threads spawned
/// for each run began their work 0.3 ms after the call (two H100s), a
/// run's fixed cost that one GPU's resident path
/// does not pay.
fn on_every_gpu<T: Send>(gpus: &[Arc<Gpu>], work: &GpuWork<'_, T>) -> Result<Vec<T>, CudaError> {
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

/// How the page-locked paths cut their work. The defaults are the
/// measured best; the GPU tests set others (`set_pinned_tuning`) so that
/// every path is exercised. The output never depends on them.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PinnedTuning {
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
}

impl PinnedTuning {
    pub const DEFAULT: PinnedTuning = PinnedTuning {
        upload_groups: 16,
        decode_groups: 16,
        decode_ahead: (8, 4),
        rows_up: true,
        rows_down: false,
        slabs_on_host: false,
    };
}

static PINNED_TUNING: Mutex<PinnedTuning> = Mutex::new(PinnedTuning::DEFAULT);

/// Sets how the page-locked paths cut their work (tests only).
#[doc(hidden)]
pub fn set_pinned_tuning(t: PinnedTuning) {
    *PINNED_TUNING.lock().unwrap_or_else(|e| e.into_inner()) = t;
}

fn pinned_tuning() -> PinnedTuning {
    *PINNED_TUNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Slots a GPU for the pinned decoder: every batch of a 1024^3 field in
/// brick layers (4 shapes a layer) at once, memory permitting.
const PINNED_DECODE_SLOTS: usize = 32;

/// A slab's planes [z0, z1) as at most `most` groups of whole brick
/// layers, in order: each group's planes [a, b).
fn layer_groups(
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
struct Piece {
    z: (usize, usize),
    y: (usize, usize),
}

impl Piece {
    /// Whether the brick starting at `start` is in this piece (pieces
    /// are cut at brick edges, so a brick is in exactly one).
    fn holds(&self, start: [usize; 3]) -> bool {
        (self.z.0..self.z.1).contains(&start[0]) && (self.y.0..self.y.1).contains(&start[1])
    }

    /// Where the piece starts in a slab whose first plane is `z_base`
    /// (floats), and its rows there.
    fn rows(&self, dims: [usize; 3], z_base: usize) -> (usize, Rows) {
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
fn slab_pieces(
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
fn rows_end(at: usize, r: Rows, len: usize) -> Result<usize, CudaError> {
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
unsafe fn copy_rows_2d(
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
fn copy_rows_up(
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
fn copy_rows_down(
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
type Range32 = (f32, f32, Option<usize>);

/// The groups of a slab that have reached the device (each with its
/// range), and whether the copying stopped early (an error, or a value
/// that is not finite): the coder waits here for each batch's group.
struct Arrivals {
    state: Mutex<(Vec<Option<Range32>>, bool)>,
    cv: Condvar,
}

impl Arrivals {
    fn new(groups: usize) -> Self {
        Arrivals {
            state: Mutex::new((vec![None; groups], false)),
            cv: Condvar::new(),
        }
    }

    fn arrive(&self, g: usize, r: Range32) {
        if let Ok(mut st) = self.state.lock() {
            st.0[g] = Some(r);
        }
        self.cv.notify_all();
    }

    fn stop(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.1 = true;
        }
        self.cv.notify_all();
    }

    /// Until group `g` is on the device and it and every group before it
    /// (they arrive in order) hold finite values; an error when the
    /// copying stopped before (the run reports why).
    fn wait(&self, g: usize) -> Result<(), CudaError> {
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

    fn ranges(&self) -> Vec<Option<Range32>> {
        self.state.lock().map(|st| st.0.clone()).unwrap_or_default()
    }
}

/// Stops the arrivals however the copier ends, so no coder waits forever.
struct StopOnDrop<'a>(&'a Arrivals);

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
fn upload_groups(
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
type Coded = (Vec<(usize, GpuCoded)>, GpuRun);

/// The file of the bricks every GPU coded of its slab (`coded`, a GPU
/// each, None where a slab had no bricks), and how the GPUs ran together.
fn assemble_slabs(
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
struct Staged {
    at: u64,
    _dev: Option<CudaSlice<f32>>,
    ranges: Vec<Option<Range32>>,
    coded: Option<Coded>,
}

/// Compresses a field in page-locked host memory on `gpus`; bytes equal
/// `compress`'s. The field is cut into slabs of whole brick layers, one a
/// GPU, and a slab into groups of layers: each GPU copies its groups up
/// with the copy engines (the link's full rate, no SM waiting on PCIe),
/// taking each group's range there, and codes its bricks from device
/// memory. Under an absolute bound a group is coded as soon as it has
/// arrived, while the next ones cross PCIe (no step depends on the range);
/// a relative or PSNR bound needs the whole field's range first. A slab
/// that does not fit in half the GPU's free memory stays on the host and
/// the kernels read it across PCIe.
pub fn compress_pinned(
    f: &PinnedField,
    opts: &CodecOptions,
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    use cudarc::driver::DevicePtr;
    if gpus.is_empty() {
        return Err(CudaError::NoDevice("no GPU was given".into()));
    }
    let t_run = std::time::Instant::now();
    let grid = opts.grid(f.info.dims)?;
    let plane = f.info.dims[1] * f.info.dims[2];
    let parts = slabs(&grid, gpus.len());
    // The coding plan before the field is on the device: an absolute
    // bound needs no range; a relative or PSNR one needs the range the
    // host took as the field was written, where there is one. (The file's
    // header takes the devices' ranges below, as without it.)
    let early = match (opts.bound, f.range) {
        (_, Some((_, _, Some(index)))) => {
            return Err(codec::CodecError::NonFinite {
                index,
                value: f.as_slice()[index] as f64,
            }
            .into())
        }
        (codec::ErrorBound::Abs(_), _) => Some(codec::plan_range((0.0, 0.0), f.info.dims, opts)?),
        (_, Some((lo, hi, None))) if lo <= hi => Some(codec::plan_range(
            (lo as f64, hi as f64),
            f.info.dims,
            opts,
        )?),
        _ => None,
    };
    // Groups only where a batch can start before the slab is whole.
    let most = if early.is_some() {
        pinned_tuning().upload_groups
    } else {
        1
    };
    let groups: Vec<Vec<Piece>> = parts
        .iter()
        .map(|p| slab_pieces(&grid, (p.0, p.1), most, pinned_tuning().rows_up))
        .collect();
    let done = AtomicUsize::new(0);
    type Wait<'w> = &'w (dyn Fn(usize) -> Result<(), CudaError> + Sync);
    // One plan for the slab's bricks, as for a field on the device (a
    // plan a group of layers cost a round of the rANS chains a group:
    // twice the time); a batch waits for the group of its last brick
    // layer (the groups arrive in order).
    let code = |i: usize, g: &Arc<Gpu>, plan: &Planned, at: (u64, bool), wait: Wait| {
        if parts[i].2.is_empty() {
            return Ok(None);
        }
        let last_group = |b: &Batch| {
            b.bricks
                .iter()
                .filter_map(|&k| {
                    let start = plan.2.bounds(k).0;
                    groups[i].iter().position(|p| p.holds(start))
                })
                .max()
                .unwrap_or(0)
        };
        let fill = |slot: &mut Slot, b: &Batch| {
            wait(last_group(b))?;
            slot.gather_from(at, &f.info, &plan.2, b, opts.transform)
        };
        code_bricks(
            f.info,
            opts,
            (plan, &parts[i].2),
            std::slice::from_ref(g),
            (None, RESIDENT_BATCH, RESIDENT_SLOTS, RESIDENT_SHARES),
            (&done, progress),
            &fill,
        )
        .map(Some)
    };
    let mut staged = on_every_gpu(gpus, &|i, g| -> Result<Staged, CudaError> {
        let base = parts[i].0 * plane;
        let len = (parts[i].1 - parts[i].0) * plane;
        let host = &f.as_slice()[base..base + len];
        if len == 0 || !slab_fits(len, g)? {
            // GATHER and RANGE read the field across PCIe.
            let at = f.device_at()?;
            let r = match len {
                0 => (f32::INFINITY, f32::NEG_INFINITY, None),
                _ => range_at(g, &g.stream, at + 4 * base as u64, len)?,
            };
            let coded = match (&early, r.2) {
                (Some(p), None) => code(i, g, p, (at, false), &|_| Ok(()))?,
                _ => None,
            };
            return Ok(Staged {
                at,
                _dev: None,
                ranges: vec![Some(r)],
                coded,
            });
        }
        let mut dev = unsafe { g.stream.alloc::<f32>(len) }
            .during(|| "allocating a slab of the field".into())?;
        g.stream
            .synchronize()
            .during(|| "allocating a slab of the field".into())?;
        // GATHER addresses the whole field: the slab stands where its
        // first plane would be.
        let at = {
            let (at, _sync) = dev.device_ptr(&g.stream);
            at.wrapping_sub(4 * base as u64)
        };
        let pieces: Vec<(usize, Rows)> = groups[i]
            .iter()
            .map(|p| p.rows(f.info.dims, parts[i].0))
            .collect();
        let arrivals = Arrivals::new(pieces.len());
        let (up, coded) = std::thread::scope(|sc| {
            let up = sc.spawn(|| upload_groups(g, host, &mut dev, &pieces, &arrivals));
            let coded = match &early {
                Some(p) => code(i, g, p, (at, true), &|k| arrivals.wait(k)),
                None => Ok(None),
            };
            (up.join(), coded)
        });
        let up = up.map_err(|_| CudaError::Unsupported("a GPU thread panicked".into()))?;
        let ranges = arrivals.ranges();
        // A value that is not finite is the error, whatever stopped.
        if ranges.iter().flatten().any(|r| r.2.is_some()) {
            return Ok(Staged {
                at,
                _dev: None,
                ranges,
                coded: None,
            });
        }
        up?;
        Ok(Staged {
            at,
            _dev: Some(dev),
            ranges,
            coded: coded?,
        })
    })?;
    // Slabs are in field order (their pieces of rows are not): the first
    // bad value is the least index of the first slab that has one.
    for (i, st) in staged.iter().enumerate() {
        if let Some(j) = st.ranges.iter().flatten().filter_map(|r| r.2).min() {
            let index = parts[i].0 * plane + j;
            return Err(codec::CodecError::NonFinite {
                index,
                value: f.as_slice()[index] as f64,
            }
            .into());
        }
    }
    let (lo, hi) = staged
        .iter()
        .flat_map(|s| s.ranges.iter().flatten())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), r| {
            (l.min(r.0), h.max(r.1))
        });
    let plan = codec::plan_range((lo as f64, hi as f64), f.info.dims, opts)?;
    let t_staged = std::time::Instant::now();
    prof_host("plan", t_run);
    trace_stages(
        "pinned plan",
        t_run,
        &[("staged", t_staged), ("planned", std::time::Instant::now())],
    );
    let coded: Vec<Option<Coded>> = match early {
        Some(_) => staged.iter_mut().map(|s| s.coded.take()).collect(),
        None => on_every_gpu(gpus, &|i, g| {
            let st = &staged[i];
            code(i, g, &plan, (st.at, st._dev.is_some()), &|_| Ok(()))
        })?,
    };
    drop(staged);
    assemble_slabs(f.info, opts, &plan, coded, gpus.len(), t_run)
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
fn allocated_while<T: Send>(
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
    fn values(&self, plane: usize) -> usize {
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
                g.stream
                    .memcpy_htod(
                        &values[z0 * plane..z1 * plane],
                        &mut data.slice_mut(0..(z1 - z0) * plane),
                    )
                    .during(|| "copying a slab to the GPU".into())?;
            }
            g.stream
                .synchronize()
                .during(|| "copying a slab to the GPU".into())?;
            Ok(DeviceSlab {
                gpu: g.clone(),
                planes: (z0, z1),
                data,
            })
        })?;
        Ok(SlabField { info, slabs })
    }

    /// The values, copied back to the host.
    pub fn download(&self) -> Result<Vec<f32>, CudaError> {
        let mut out = Vec::with_capacity(self.info.len());
        for s in &self.slabs {
            s.gpu
                .ctx
                .bind_to_thread()
                .during(|| "binding the GPU".into())?;
            let n = s.values(self.info.dims[1] * self.info.dims[2]);
            if n > 0 {
                out.extend(
                    s.gpu
                        .stream
                        .clone_dtoh(&s.data.slice(0..n))
                        .during(|| "copying a slab from its GPU".into())?,
                );
            }
        }
        Ok(out)
    }

    fn gpus(&self) -> Vec<Arc<Gpu>> {
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
const DENSE_DETAILS: f64 = 0.05;

/// Whether samples of rows of `width` values (back to back) look dense to
/// the coder: the share of their odd points whose cubic prediction from
/// the even ones along the row (the interpolation's finest pass) misses by
/// more than `e`. Rows too short for the cubic have none.
fn finest_dense<'a>(samples: impl IntoIterator<Item = &'a [f32]>, width: usize, e: f64) -> bool {
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
fn slab_sample_rows(s: &DeviceSlab, dims: [usize; 3]) -> Vec<(usize, usize)> {
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

/// Decodes a float32 .mrz on `gpus` into `out`, a field in page-locked
/// host memory of the file's shape; values equal `decompress`'s. Each GPU
/// decodes a slab of whole brick layers into its memory and copies it down
/// with the copy engines in groups of layers (`decode_groups`), each as
/// soon as its batches are placed, while the next ones decode (batches
/// kept in order by `InOrder`). A slab that does not fit in half the
/// GPU's free memory is written by the kernels across PCIe instead.
pub fn decompress_pinned(
    r: &mut codec::MrzReader,
    out: &mut PinnedField,
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(), CudaError> {
    if gpus.is_empty() {
        return Err(CudaError::NoDevice("no GPU was given".into()));
    }
    // The kernels and copies below write the values: the range taken
    // when the field was made no longer holds.
    out.range = None;
    let h = float32_header(r, "decoding into page-locked memory", "use decompress")?;
    if (out.info.dims, out.info.ndim) != (h.dims, h.ndim) {
        return Err(CudaError::Unsupported(format!(
            "{}: a field of {:?}, but the output holds {:?}",
            r.path(),
            &h.dims[3 - h.ndim..],
            &out.info.dims[3 - out.info.ndim..]
        )));
    }
    let grid = r.grid();
    let plane = h.dims[1] * h.dims[2];
    let parts = slabs(&grid, gpus.len());
    // The slabs first, so that the batches share what memory is left.
    let slab_mem = on_every_gpu(gpus, &|i, g| {
        let len = (parts[i].1 - parts[i].0) * plane;
        if len == 0 || !slab_fits(len, g)? {
            return Ok(None);
        }
        let d = unsafe { g.stream.alloc::<f32>(len) }
            .during(|| "allocating a slab of the field".into())?;
        g.stream
            .synchronize()
            .during(|| "allocating a slab of the field".into())?;
        Ok(Some(Mutex::new(d)))
    })?;
    // A piece (layers, or rows of one) a batch group where the slab is on
    // the device; the slab as one group where the kernels write the
    // host's memory.
    let spans: Vec<Vec<Piece>> = parts
        .iter()
        .zip(&slab_mem)
        .map(|(p, m)| match m {
            // Whole layers: pieces of rows made the decoder slower (1024^3
            // turbulent 1e-3 on an H100: 34-37 GB/s against 42-43),
            // since each piece is a batch group and its rANS round.
            Some(_) => slab_pieces(
                &grid,
                (p.0, p.1),
                pinned_tuning().decode_groups,
                pinned_tuning().rows_down,
            ),
            None => vec![Piece {
                z: (p.0, p.1),
                y: (0, h.dims[1]),
            }],
        })
        .collect();
    let mut plans = Vec::with_capacity(gpus.len());
    for ((g, part), zs) in gpus.iter().zip(&parts).zip(&spans) {
        plans.push(if part.2.is_empty() {
            None
        } else {
            let regions: Vec<codec::Region> =
                zs.iter().map(|pc| [pc.z, pc.y, (0, h.dims[2])]).collect();
            Some(payload_batches(
                r,
                &regions,
                std::slice::from_ref(g),
                (RESIDENT_BATCH, PINNED_DECODE_SLOTS, RESIDENT_SHARES),
                0,
            )?)
        });
    }
    let done = AtomicUsize::new(0);
    // Disjoint spans of the output, one a slab.
    let host = out.data.as_mut_ptr() as usize;
    let mut rest = out.as_mut_slice();
    let mut outs = Vec::with_capacity(parts.len());
    for (z0, z1, _) in &parts {
        let (span, tail) = std::mem::take(&mut rest).split_at_mut((z1 - z0) * plane);
        outs.push(Mutex::new(span));
        rest = tail;
    }
    let lock = || CudaError::Unsupported("a GPU thread panicked".into());
    on_every_gpu(gpus, &|i, g| {
        use cudarc::driver::DevicePtrMut;
        let Some(plan) = &plans[i] else {
            return Ok(());
        };
        let gpu = std::slice::from_ref(g);
        let Some(m) = &slab_mem[i] else {
            let mapped = crate::device::mapped_at(host as *mut std::ffi::c_void)?;
            // Across PCIe: SCATTER's whole rows, not the passes' strided
            // values.
            let at: Placement = (&|| Ok(mapped), &|_| (), None, false);
            return decode_plan(r, plan, gpu, at, (&done, progress));
        };
        let mut slab = m.lock().map_err(|_| lock())?;
        let at = {
            let (at, _sync) = slab.device_ptr_mut(&g.stream);
            at.wrapping_sub(4 * (parts[i].0 * plane) as u64)
        };
        let mut span = outs[i].lock().map_err(|_| lock())?;
        // Batches still to place, a group.
        let left: Vec<AtomicUsize> = (0..spans[i].len())
            .map(|k| AtomicUsize::new(plan.group.iter().filter(|&&q| q == k).count()))
            .collect();
        let waiting = left
            .iter()
            .filter(|l| l.load(Ordering::Relaxed) > 0)
            .count();
        let (tx, rx) = std::sync::mpsc::channel::<usize>();
        let (decoded, copied) = std::thread::scope(|sc| {
            let decoder = sc.spawn(|| {
                // The sender goes with this thread: however decoding ends,
                // the copying below stops waiting.
                let tx = tx;
                g.ctx.bind_to_thread().during(|| "binding the GPU".into())?;
                let placed = |k: usize| {
                    if left[k].fetch_sub(1, Ordering::AcqRel) == 1 {
                        let _ = tx.send(k);
                    }
                };
                let order = InOrder::new(plan.batches.len(), pinned_tuning().decode_ahead);
                let at: Placement = (&|| Ok(at), &placed, Some(&order), true);
                decode_plan(r, plan, gpu, at, (&done, progress))
            });
            let copied = (|| -> Result<(), CudaError> {
                let cs = g.ctx.new_stream().during(|| "creating a stream".into())?;
                for _ in 0..waiting {
                    let Ok(k) = rx.recv() else { break };
                    let (at, rows) = spans[i][k].rows(h.dims, parts[i].0);
                    copy_rows_down(&cs, &slab, &mut span[..], at, rows)?;
                }
                cs.synchronize()
                    .during(|| "copying decoded layers down".into())
            })();
            (decoder.join(), copied)
        });
        decoded.map_err(|_| lock())??;
        copied
    })?;
    print_profile("decompress_pinned");
    Ok(())
}

/// The header of a float32 file; a float64 one is an error naming `what`
/// was asked and what to do instead.
fn float32_header(
    r: &codec::MrzReader,
    what: &str,
    instead: &str,
) -> Result<codec::MrzHeader, CudaError> {
    let h = r.header().clone();
    if h.dtype != DType::F32 {
        return Err(CudaError::Unsupported(format!(
            "{}: a float64 file; {what} takes float32 files ({instead})",
            r.path()
        )));
    }
    Ok(h)
}

/// The header of a float32 file to be decoded into GPU memory, and the
/// decoded field's shape.
fn device_field_of(r: &codec::MrzReader) -> Result<(codec::MrzHeader, FieldInfo), CudaError> {
    let h = float32_header(
        r,
        "decoding into GPU memory",
        "decompress it to the host instead",
    )?;
    let info = FieldInfo {
        dims: h.dims,
        ndim: h.ndim,
        dtype: h.dtype,
    };
    Ok((h, info))
}

/// Every brick of the float32 file `r` decoded on `gpus` and placed into
/// the field at device address `at` (GPU memory, or mapped host memory);
/// bricks are disjoint, so slots place theirs side by side.
fn decode_into(
    r: &codec::MrzReader,
    gpus: &[Arc<Gpu>],
    at: FieldAddress,
    reserve: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(), CudaError> {
    let plan = payload_batches(
        r,
        &[codec::full_region(r.header().dims)],
        gpus,
        (RESIDENT_BATCH, RESIDENT_SLOTS, RESIDENT_SHARES),
        reserve,
    )?;
    let done = AtomicUsize::new(0);
    let at: Placement = (at, &|_| (), None, true);
    decode_plan(r, &plan, gpus, at, (&done, progress))
}

/// A field's device address (GPU memory, or mapped host memory), asked
/// for when a batch is placed: it may still be being allocated.
type FieldAddress<'a> = &'a (dyn Fn() -> Result<u64, CudaError> + Sync);

/// Where decoded bricks go, what to tell when a batch of a group is
/// there (its group), and the order batches keep, if any.
type Placement<'a> = (
    FieldAddress<'a>,
    &'a (dyn Fn(usize) + Sync),
    Option<&'a InOrder>,
    bool,
);

/// Where a batch's decoding stands (`InOrder`).
#[derive(Clone, Copy)]
enum DecodePhase {
    Entropy,
    Inverse,
}

/// Batches (by index) that start their entropy decoding, and their
/// inverse transform and placing, only a few unfinished batches behind
/// the earliest: the pinned decoder copies a group of brick layers down
/// once all its batches are placed. With every batch side by side the
/// rANS chains of all shared the SMs, and all groups were done together,
/// late, with nothing copied before. Batches start in index order
/// (`run_slots`), so a batch waits only for batches already under way,
/// and the earliest unfinished one never waits.
struct InOrder {
    finished: Mutex<Vec<bool>>,
    moved: Condvar,
    /// Unfinished batches before one that may start each phase.
    ahead: (usize, usize),
}

/// Batch `.1`'s place in an `InOrder`, finished when dropped (however
/// its decoding ends).
struct Turn<'a>(&'a InOrder, usize);

impl InOrder {
    fn new(batches: usize, (entropy, inverse): (usize, usize)) -> Self {
        InOrder {
            finished: Mutex::new(vec![false; batches]),
            moved: Condvar::new(),
            ahead: (entropy.max(1), inverse.max(1)),
        }
    }

    fn turn(&self, i: usize) -> Turn<'_> {
        Turn(self, i)
    }
}

impl Turn<'_> {
    /// Until fewer batches before this one are unfinished than `phase`
    /// allows.
    fn wait(&self, phase: DecodePhase) {
        let o = self.0;
        let most = match phase {
            DecodePhase::Entropy => o.ahead.0,
            DecodePhase::Inverse => o.ahead.1,
        };
        let mut f = o.finished.lock().unwrap_or_else(|p| p.into_inner());
        while f[..self.1.min(f.len())].iter().filter(|d| !**d).count() >= most {
            f = o.moved.wait(f).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let o = self.0;
        let mut f = o.finished.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = f.get_mut(self.1) {
            *d = true;
        }
        o.moved.notify_all();
    }
}

/// A field's address, or why it could not be allocated, handed from the
/// thread that allocates it to the slots (which wait for it).
#[derive(Default)]
struct FieldAt {
    at: Mutex<Option<Result<u64, String>>>,
    ready: std::sync::Condvar,
}

impl FieldAt {
    /// Hands `at` to the waiting slots; the first answer stands (the
    /// allocating thread's, before its guard's on drop, which keeps slots
    /// from waiting forever on a thread that stopped early).
    fn answer(&self, at: Result<u64, String>) {
        let mut g = self.at.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = Some(at);
            self.ready.notify_all();
        }
    }

    fn get(&self) -> Result<u64, CudaError> {
        let mut g = self.at.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &*g {
                Some(Ok(at)) => return Ok(*at),
                Some(Err(e)) => return Err(CudaError::Unsupported(e.clone())),
                None => g = self.ready.wait(g).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }
}

/// The batches of `plan` decoded on `gpus` and placed into the field at
/// device address `at`, `placed` told of each batch's group once its
/// values are there; `done` counts bricks for `progress`.
fn decode_plan(
    r: &codec::MrzReader,
    plan: &Plan<Payload>,
    gpus: &[Arc<Gpu>],
    (at, placed, order, in_device): Placement,
    (done, progress): (&AtomicUsize, &(dyn Fn(usize) + Sync)),
) -> Result<(), CudaError> {
    let caps = plan.caps();
    let batches = &plan.batches;
    let (h, grid) = (r.header(), &r.grid());
    run_slots(
        gpus,
        plan.slots,
        (&caps, h.dtype, Use::Decode),
        &|slot, i| {
            let (dims, list) = &batches[i];
            let n: usize = dims.iter().product();
            let turn = order.map(|o| o.turn(i));
            let wait = |phase| {
                if let Some(t) = &turn {
                    t.wait(phase);
                }
            };
            let s = &slot.stream.clone();
            let org_h = origins(grid, list.iter().map(|(k, _, _)| *k));
            let org = slot.stage.up(&slot.gpu, s, &org_h)?;
            let (yy, xx) = (h.dims[1] as i64, h.dims[2] as i64);
            // The interpolation's inverse places the values in a field in
            // GPU memory itself.
            let field = if in_device && h.transform == lifting::Lifting::Interp {
                Some((at, &org, yy, xx))
            } else {
                None
            };
            let (outliers_at, fused) = slot.decode_to(*dims, list, r, (false, field, &wait))?;
            prof(&slot.stream, "d_device")?;
            let checked = check_batch(*dims, list, &outliers_at, h, r.path(), grid)?;
            // Brick-local index i of batch brick bi, in the field.
            let field_at = |bi: usize, i: usize| -> u64 {
                let (z, y, x) = (i / (dims[1] * dims[2]), i / dims[2] % dims[1], i % dims[2]);
                let o = &org_h[3 * bi..3 * bi + 3];
                (((o[0] + z as i64) * yy + o[1] + y as i64) * xx + o[2] + x as i64) as u64
            };
            let (mut pos, mut steps, mut exact) = (Vec::new(), Vec::new(), Vec::new());
            for (bi, c) in checked.iter().enumerate() {
                match c {
                    // Its doubles go where the device's decode left the
                    // others', and are rounded and placed with them.
                    CheckedBrick::Cpu(y) => s
                        .memcpy_htod(y.as_slice(), &mut slot.y.slice_mut(bi * n..(bi + 1) * n))
                        .during(|| "copying a brick decoded on the CPU".into())?,
                    CheckedBrick::Device(fix) => {
                        for o in fix {
                            pos.push(field_at(bi, o.index));
                            steps.push(o.steps);
                            exact.push(o.exact as f32);
                        }
                    }
                }
            }
            // Unless the inverse placed them, or a brick was decoded on
            // the CPU: the decoded doubles rounded to float32 and placed in
            // the field in one pass (rounding into a float buffer first,
            // then placing, cost a write and a read of 4 bytes a value
            // more). A brick's values are the same either way.
            let at = at()?;
            let on_cpu = checked.iter().any(|c| matches!(c, CheckedBrick::Cpu(_)));
            if !fused || on_cpu {
                let d = dims.map(|v| v as i32);
                let scatter = slot.f("SCATTER(kernel)", 0)?;
                let mut l = s.launch_builder(&scatter);
                l.arg(&slot.y)
                    .arg(&org)
                    .arg(&yy)
                    .arg(&xx)
                    .arg(&d[0])
                    .arg(&d[1])
                    .arg(&d[2])
                    .arg(&at);
                unsafe { l.launch(cfg(block_grid(n, list.len()), 256, 0)) }
                    .during(|| "launching SCATTER".into())?;
            }
            // Then the outliers' corrections, in the field.
            if !pos.is_empty() {
                let pos_d = slot.stage.up(&slot.gpu, s, &pos)?;
                let steps_d = slot.stage.up(&slot.gpu, s, &steps)?;
                let exact_d = slot.stage.up(&slot.gpu, s, &exact)?;
                let count = pos.len() as i64;
                let outfix = slot.f("OUTFIX(kernel)", 0)?;
                let mut l = s.launch_builder(&outfix);
                l.arg(&at)
                    .arg(&pos_d)
                    .arg(&steps_d)
                    .arg(&exact_d)
                    .arg(&count)
                    .arg(&h.abs_bound);
                unsafe { l.launch(cfg((pos.len().div_ceil(256).min(65535) as u32, 1), 256, 0)) }
                    .during(|| "launching OUTFIX".into())?;
            }
            s.synchronize().during(|| "placing decoded bricks".into())?;
            trace("d_placed");
            prof(s, "d_place")?;
            placed(plan.group[i]);
            drop(turn);
            progress(done.fetch_add(list.len(), Ordering::Relaxed) + list.len());
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of a slab is in exactly one piece, whose rows say where
    /// (as the copies and the range read them), and every brick of the
    /// slab is held by exactly the piece its values are in.
    #[test]
    fn slab_pieces_tile_the_slab_by_bricks() {
        let cases = [
            ([1024, 1024, 1024], [129, 129, 129], (516, 1024), 16),
            ([1024, 1024, 1024], [129, 129, 129], (0, 1024), 16),
            ([300, 70, 33], [32, 16, 16], (0, 300), 16),
            ([300, 70, 33], [32, 16, 16], (128, 288), 64),
            ([9, 5, 7], [4, 4, 4], (0, 9), 3),
            ([9, 5, 7], [4, 4, 4], (8, 9), 1),
        ];
        for (dims, brick, (z0, z1), most) in cases {
            let grid = codec::BrickGrid { dims, brick };
            let pieces = slab_pieces(&grid, (z0, z1), most, true);
            let plane = dims[1] * dims[2];
            let mut seen = vec![0u8; (z1 - z0) * plane];
            for p in &pieces {
                let (at, r) = p.rows(dims, z0);
                assert!(r.width <= r.pitch && r.width > 0, "{p:?}: {r:?}");
                for row in 0..r.rows {
                    for x in 0..r.width {
                        seen[at + row * r.pitch + x] += 1;
                    }
                }
            }
            assert!(
                seen.iter().all(|&c| c == 1),
                "{dims:?} {brick:?} {z0}..{z1}"
            );
            for k in 0..grid.len() {
                let (start, ext) = grid.bounds(k);
                if !(z0..z1).contains(&start[0]) {
                    continue;
                }
                let holders: Vec<&Piece> = pieces.iter().filter(|p| p.holds(start)).collect();
                assert_eq!(holders.len(), 1, "brick {k}");
                let p = holders[0];
                assert!(start[0] + ext[0] <= p.z.1 && start[1] + ext[1] <= p.y.1);
            }
        }
        // Enough layers: whole layers, one copy each.
        let grid = codec::BrickGrid {
            dims: [1024, 1024, 1024],
            brick: [129, 129, 129],
        };
        let whole = slab_pieces(&grid, (0, 1024), 8, true);
        assert_eq!(whole.len(), 8);
        assert!(whole.iter().all(|p| p.y == (0, 1024)));
        assert_eq!(whole[0].rows([1024; 3], 0).1.rows, 1);
        // Two GPUs' slabs of 4 layers: 16 pieces of two brick rows.
        let half = slab_pieces(&grid, (516, 1024), 16, true);
        assert_eq!(half.len(), 16);
        assert_eq!(half[1].y, (258, 516));
    }

    #[test]
    fn host_ranges_join_like_the_devices() {
        let v = [3.0f32, f32::NAN, -2.0, 7.5, f32::INFINITY, 0.25];
        let whole = host_range(0, &v);
        assert_eq!(whole, (-2.0, 7.5, Some(1)));
        // Pieces in any order give the whole range and the first bad index.
        let a = host_range(0, &v[..3]);
        let b = host_range(3, &v[3..]);
        assert_eq!(b, (0.25, 7.5, Some(4)));
        assert_eq!(join_ranges(a, b), whole);
        assert_eq!(join_ranges(b, a), whole);
        let none = (f32::INFINITY, f32::NEG_INFINITY, None);
        assert_eq!(join_ranges(none, b), b);
        assert_eq!(host_range(9, &[]), none);
        // All finite: the vectorized scan's answer, over more than a chunk.
        let w: Vec<f32> = (0..70_000).map(|i| (i as f32 * 0.37).sin() * 4.0).collect();
        let (lo, hi) = w
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &x| {
                (l.min(x), h.max(x))
            });
        assert_eq!(host_range(5, &w), (lo, hi, None));
    }

    #[test]
    fn packed_lists_start_on_16_byte_boundaries_after_the_streams() {
        let (offs, all) = packed_layout(1000 + RDEC_PAD, &[8, 0, 20, 3]);
        assert_eq!(offs, vec![1264, 1280, 1280, 1312]);
        assert_eq!(all, 1328);
        // Each list fits before the next, and the streams' padding stays.
        for (k, &o) in offs.iter().enumerate() {
            assert_eq!(o % 16, 0);
            assert!(o >= 1000 + RDEC_PAD);
            let end = o + [8, 0, 20, 3][k];
            assert!(end <= offs.get(k + 1).copied().unwrap_or(all));
        }
        assert_eq!(packed_layout(0, &[]), (vec![], 0));
    }

    /// Streams copied up in spans land where `at` says, with every
    /// stream's bytes intact, and only streams of one buffer, in order
    /// and close together, share a copy.
    #[test]
    fn stream_spans_copy_every_stream_to_its_place() {
        let file: Vec<u8> = (0..(SPAN_GAP * 3) as u32)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let other: Vec<u8> = (0..64u8).collect();
        let range = |b: &[u8]| b.as_ptr() as usize..b.as_ptr() as usize + b.len();
        let (fr, or) = (range(&file), range(&other));
        let streams: Vec<(&[u8], std::ops::Range<usize>)> = vec![
            (&file[10..20], fr.clone()),
            // 100 bytes on: same copy.
            (&file[120..200], fr.clone()),
            // More than SPAN_GAP on: a copy of its own.
            (&file[SPAN_GAP + 300..SPAN_GAP + 310], fr.clone()),
            // Before the last one: a copy of its own.
            (&file[50..60], fr.clone()),
            // Another buffer: a copy of its own.
            (&other[0..8], or.clone()),
            (&file[70..80], fr.clone()),
        ];
        let sp = stream_spans(streams.clone());
        assert_eq!(sp.copies.len(), 5);
        assert_eq!(sp.at.len(), streams.len());
        let mut up = vec![0u8; sp.total];
        for (from, at) in &sp.copies {
            up[*at..*at + from.len()].copy_from_slice(from);
        }
        for ((st, _), &at) in streams.iter().zip(&sp.at) {
            assert_eq!(&up[at..at + st.len()], *st);
        }
        // The first two share a copy of 190 bytes, gap included.
        assert_eq!(sp.copies[0].0.len(), 190);
        assert_eq!(sp.total, 190 + 10 + 10 + 8 + 10);
        assert_eq!(stream_spans(Vec::new()).total, 0);
    }

    /// A smooth row has no finest detail above a bound of its range's
    /// thousandth; a noisy one has most; rows too short for the cubic
    /// have none.
    #[test]
    fn finest_dense_tells_noise_from_a_smooth_row() {
        let w = 64;
        let smooth: Vec<f32> = (0..4 * w).map(|i| ((i % w) as f32 * 0.05).sin()).collect();
        assert!(!finest_dense([&smooth[..]], w, 1e-3));
        let noise: Vec<f32> = multires::signal::noise(4 * w, 9)
            .into_iter()
            .map(|v| v as f32)
            .collect();
        assert!(finest_dense([&noise[..]], w, 1e-3));
        // Judged on all samples: one dense sample among smooth ones is a
        // third of the rows, above the dense share.
        assert!(finest_dense(
            [&smooth[..], &noise[..], &smooth[..]],
            w,
            1e-3
        ));
        // A bound above every detail.
        assert!(!finest_dense([&noise[..]], w, 10.0));
        assert!(!finest_dense([&noise[..6]], 6, 0.0));
        assert!(!finest_dense([], w, 0.0));
    }

    /// A sparse slab on each of several GPUs is cut into the batches of
    /// one GPU's whole field, never fewer than two; a dense one into as
    /// many as one GPU's whole field.
    #[test]
    fn slabs_are_cut_into_batches_of_one_gpus_size() {
        let shares = |gpus, dense| slab_shares(gpus, || Ok(dense)).ok();
        assert_eq!(shares(1, false), Some(RESIDENT_SHARES));
        assert_eq!(shares(1, true), Some(RESIDENT_SHARES));
        assert_eq!(shares(2, false), Some(RESIDENT_SHARES / 2));
        assert_eq!(shares(2, true), Some(RESIDENT_SHARES));
        assert_eq!(shares(0, false), Some(RESIDENT_SHARES));
        assert_eq!(shares(64, false), Some(2));
        // One GPU never samples the field.
        let asked = slab_shares(1, || Err(CudaError::Unsupported("asked".into())));
        assert_eq!(asked.ok(), Some(RESIDENT_SHARES));
        // `compress_slabs` samples exactly where `slab_shares` asks.
    }

    #[test]
    fn tile_classes_mark_each_class_of_a_tile_once() {
        let mut cl = vec![0u8; 70];
        cl[3] = 2;
        cl[40] = 9;
        cl[41] = 7;
        cl[69] = 5;
        assert_eq!(tile_classes(&cl), vec![0b101, 0b1000_0001, 0b10_0001]);
        // A tile of one class; and the interpolation's own classes, every
        // value's class present in its tile.
        assert_eq!(tile_classes(&[4; 32]), vec![1 << 4]);
        let dims = [9, 17, 33];
        let cl = interp::classes(dims, interp::Order::LazyMorton);
        let t = tile_classes(&cl);
        assert_eq!(t.len(), cl.len().div_ceil(32));
        for (i, &c) in cl.iter().enumerate() {
            assert_ne!(t[i / 32] & 1 << c.min(7), 0, "value {i}");
        }
    }

    #[test]
    fn rdec_blocks_hold_a_bricks_chunks_within_the_shared_memory() {
        // A smooth 129^3 brick (33 chunks) takes two warps; four such
        // blocks fit the H100's 228 KiB of shared memory an SM.
        assert_eq!(rdec_warps(33), 2);
        assert_eq!(rdec_warps(1), 1);
        assert_eq!(rdec_warps(0), 1);
        assert_eq!(rdec_warps(132), 5);
        assert_eq!(rdec_warps(100_000), RDEC_MAX_WARPS);
        assert!(4 * (rdec_smem(2) + 1024) <= 228 * 1024);
        assert!(rdec_smem(RDEC_MAX_WARPS) <= 227 * 1024);
    }

    #[test]
    fn a_field_address_reaches_the_waiting_slots_or_its_error_does() {
        let cell = FieldAt::default();
        std::thread::scope(|sc| {
            let waiter = sc.spawn(|| cell.get());
            std::thread::sleep(std::time::Duration::from_millis(20));
            cell.answer(Ok(4096));
            assert_eq!(waiter.join().ok().and_then(|r| r.ok()), Some(4096));
        });
        // A guard's late error does not replace the address.
        cell.answer(Err("stopped".into()));
        assert_eq!(cell.get().ok(), Some(4096));
        let failed = FieldAt::default();
        failed.answer(Err("no memory".into()));
        let e = failed
            .get()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("no memory"), "{e}");
    }

    #[test]
    fn batches_in_order_wait_only_for_earlier_unfinished_ones() {
        // Entropy decoding at most 2, the inverse at most 1 unfinished
        // batch behind the earliest.
        let order = InOrder::new(4, (2, 1));
        let first = order.turn(0);
        first.wait(DecodePhase::Inverse);
        let second = order.turn(1);
        second.wait(DecodePhase::Entropy);
        let third = order.turn(2);
        let (started, inverse) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|sc| {
            sc.spawn(|| {
                third.wait(DecodePhase::Entropy);
                started.store(1, Ordering::SeqCst);
                third.wait(DecodePhase::Inverse);
                inverse.store(1, Ordering::SeqCst);
            });
            std::thread::sleep(std::time::Duration::from_millis(30));
            assert_eq!(
                started.load(Ordering::SeqCst),
                0,
                "two unfinished before it"
            );
            drop(first);
            // Polled, so a slow machine does not fail it.
            let t0 = std::time::Instant::now();
            while started.load(Ordering::SeqCst) == 0 && t0.elapsed().as_secs() < 10 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            assert_eq!(
                started.load(Ordering::SeqCst),
                1,
                "one unfinished before it"
            );
            std::thread::sleep(std::time::Duration::from_millis(30));
            assert_eq!(
                inverse.load(Ordering::SeqCst),
                0,
                "its inverse waits for batch 1"
            );
            // A batch that ends early (an error) still frees the ones after.
            drop(second);
        });
        assert_eq!(inverse.load(Ordering::SeqCst), 1);
        drop(third);
        order.turn(3).wait(DecodePhase::Inverse);
    }

    #[test]
    fn table_addresses_point_where_write_tables_puts_each_part() {
        // Three bricks' tables, every word telling its brick and part.
        let owned: Vec<rans::Tables> = (0..3u32)
            .map(|b| rans::Tables {
                freq: Vec::new(),
                cum: vec![100 + b; CUM_BYTES / 4],
                scale: vec![200 + b; SCALE_BYTES / 4],
            })
            .collect();
        let tables: Vec<&rans::Tables> = owned.iter().collect();
        let mut dst = vec![0u8; tables_bytes(&tables).unwrap()];
        write_tables(&mut dst, &tables);
        let at = 4096u64;
        let (cum, scale) = table_addresses(at, tables.len());
        let word = |addr: u64| {
            let i = (addr - at) as usize;
            u32::from_le_bytes([dst[i], dst[i + 1], dst[i + 2], dst[i + 3]])
        };
        for b in 0..3u64 {
            assert_eq!(word(cum + b * CUM_BYTES as u64), 100 + b as u32);
            assert_eq!(word(cum + (b + 1) * CUM_BYTES as u64 - 4), 100 + b as u32);
            assert_eq!(word(scale + b * SCALE_BYTES as u64), 200 + b as u32);
        }
        assert_eq!(scale - at + 3 * SCALE_BYTES as u64, dst.len() as u64);
    }

    #[test]
    fn renc_tables_match_the_kernel() {
        // RENC_SMEM's size is checked where it is defined; its layout
        // must be the kernel's.
        let src = include_str!("../kernels/codec.cu");
        assert!(src.contains("#define R_CU16_WORDS ((R_NCTX * (R_NSYM + 1) + 1) / 2)\n"));
    }

    #[test]
    fn the_last_large_batch_is_halved_once_where_little_codes_after_it() {
        let per_value = Use::EncodeInterp.per_value(DType::F32);
        // GPU 0's slab (four full layers): 60 M batches, two of the edge
        // shapes (56 M) and the corners (7.6 M) last.
        let mut plan =
            plan_batches(vec![slab_1024(0)], 120 << 30, per_value, (16, 8, 128)).unwrap();
        let before = plan.caps();
        halve_last_large(&mut plan);
        let after = plan.caps();
        assert_eq!(after.len(), before.len() + 1, "{before:?} -> {after:?}");
        assert_eq!(plan.group.len(), after.len());
        let n = before.len();
        assert_eq!(after[..n - 2], before[..n - 2]);
        assert_eq!(after[n - 2] + after[n - 1], before[n - 2], "{after:?}");
        assert_eq!(after[n], before[n - 1]);
        assert!(after.windows(2).all(|w| w[0] >= w[1]), "{after:?}");
        let mut bricks: Vec<usize> = plan.batches.iter().flat_map(|(_, l)| l.clone()).collect();
        bricks.sort_unstable();
        assert_eq!(bricks, (0..256).collect::<Vec<_>>());
        // Once: the halves have the corners' batch and each other after them.
        halve_last_large(&mut plan);
        assert_eq!(plan.caps(), after);
        // GPU 1's slab ends in its thin layer's small batches: no cut.
        let mut plan =
            plan_batches(vec![slab_1024(1)], 120 << 30, per_value, (16, 8, 128)).unwrap();
        let before = plan.caps();
        halve_last_large(&mut plan);
        assert_eq!(plan.caps(), before);
    }

    #[test]
    fn crc_x8n_joins_checksums_as_crc32fast() {
        // CRC_FOLD joins the pieces' checksums with crc_x8n(CRC_PIECE).
        let bytes: Vec<u8> = (0..3 * CRC_PIECE + 52)
            .map(|i| (i * 37 % 251) as u8)
            .collect();
        let whole = crc32fast::hash(&bytes);
        for cut in [4, CRC_PIECE, bytes.len() - CRC_PIECE, bytes.len() - 4] {
            let (a, b) = bytes.split_at(cut);
            let joined =
                crc_multmodp(crc_x8n(b.len() as u64), crc32fast::hash(a)) ^ crc32fast::hash(b);
            assert_eq!(joined, whole, "cut at {cut}");
        }
        // The kernel's fold: the short head, then whole pieces, each
        // appended by one product with x^(8 CRC_PIECE).
        let head = bytes.len() % CRC_PIECE;
        let xp = crc_x8n(CRC_PIECE as u64);
        assert_eq!(xp, CRC_PIECE_SHIFT);
        let mut c = crc32fast::hash(&bytes[..head]);
        for piece in bytes[head..].chunks(CRC_PIECE) {
            c = crc_multmodp(xp, c) ^ crc32fast::hash(piece);
        }
        assert_eq!(c, whole);
        // CRC_FOLD's warp, lane by lane: runs of k pieces (a power of
        // two) aligned to the end, folded, then joined in five steps.
        for len in [
            4usize,
            512,
            516,
            40 * 512 + 8,
            33 * 512,
            1000 * 512 + 4,
            2500 * 512 + 260,
        ] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 131 % 255) as u8).collect();
            let np = len.div_ceil(CRC_PIECE);
            let head = len - (np - 1) * CRC_PIECE;
            let piece = |q: usize| match q {
                0 => &bytes[..head],
                _ => &bytes[head + (q - 1) * CRC_PIECE..head + q * CRC_PIECE],
            };
            let crcp: Vec<u32> = (0..np).map(|q| crc32fast::hash(piece(q))).collect();
            let (mut k, mut op) = (1usize, xp);
            while 32 * k < np {
                k <<= 1;
                op = crc_multmodp(op, op);
            }
            let mut lanes: Vec<u32> = (0..32)
                .map(|lane| {
                    let hi = np as i64 - (31 - lane) * k as i64;
                    let lo = (hi - k as i64).max(0);
                    (lo..hi).fold(0, |c, p| crc_multmodp(xp, c) ^ crcp[p as usize])
                })
                .collect();
            let mut s = 1;
            while s < 32 {
                let right: Vec<u32> = (0..32)
                    .map(|l| lanes[if l + s < 32 { l + s } else { l }])
                    .collect();
                for l in 0..32 {
                    lanes[l] = crc_multmodp(op, lanes[l]) ^ right[l];
                }
                op = crc_multmodp(op, op);
                s <<= 1;
            }
            assert_eq!(lanes[0], crc32fast::hash(&bytes), "{len} bytes");
        }
    }

    #[test]
    fn rdec_window_matches_the_kernel() {
        // rdec_smem sizes RDEC's shared memory from the window's length;
        // the kernel must index with the same one.
        let src = include_str!("../kernels/codec.cu");
        assert!(
            src.contains(&format!("#define R_WIN {RDEC_WINDOW_WORDS}\n")),
            "codec.cu's R_WIN is not RDEC_WINDOW_WORDS ({RDEC_WINDOW_WORDS})"
        );
        // The host counts each payload's checksum pieces with CRC_PIECE.
        assert!(
            src.contains(&format!("#define CRC_PIECE {CRC_PIECE}\n")),
            "codec.cu's CRC_PIECE is not {CRC_PIECE}"
        );
    }

    /// A 1024^3 field's bricks of 129 (8 shapes), as the grid lists them.
    fn shapes_1024() -> BTreeMap<[usize; 3], Vec<usize>> {
        let ext = |i: usize| if i < 7 { 129 } else { 1024 - 7 * 129 };
        let mut shapes: BTreeMap<[usize; 3], Vec<usize>> = BTreeMap::new();
        for k in 0..512 {
            shapes
                .entry([ext(k / 64), ext(k / 8 % 8), ext(k % 8)])
                .or_default()
                .push(k);
        }
        shapes
    }

    /// Each GPU's bricks of `shapes_1024` on two GPUs, by shape, as the
    /// slab paths cut them.
    fn slab_1024(g: usize) -> BTreeMap<[usize; 3], Vec<usize>> {
        let grid = codec::BrickGrid {
            dims: [1024; 3],
            brick: [129; 3],
        };
        let parts = slabs(&grid, 2);
        shapes_1024()
            .into_iter()
            .map(|(d, l)| {
                let l: Vec<usize> = l.into_iter().filter(|k| parts[g].2.contains(k)).collect();
                (d, l)
            })
            .filter(|(_, l)| !l.is_empty())
            .collect()
    }

    fn cost(d: &[usize; 3], bricks: usize, per_value: usize) -> usize {
        bricks * (d.iter().product::<usize>() * per_value + (1 << 20))
    }

    #[test]
    fn a_ramp_is_cut_only_where_every_batch_runs_at_once_and_few_are_small() {
        let per_value = Use::Decode.per_value(DType::F32);
        let budget = 120usize << 30;
        let plan_of = |bricks| plan_batches(vec![bricks], budget, per_value, (32, 8, 128)).unwrap();
        // GPU 0's slab: ten batches (28 bricks x8 of two shapes, the corners' 4).
        let mut plan = plan_of(slab_1024(0));
        let before = plan.caps();
        assert_eq!((before.len(), plan.slots), (10, 10), "{before:?}");
        let first = plan.batches[0].1.clone();
        ramp_batches(&mut plan, 32, budget, per_value);
        let after = plan.caps();
        assert_eq!((after.len(), plan.slots, plan.group.len()), (14, 14, 14));
        let sizes: Vec<usize> = plan.batches.iter().map(|(_, l)| l.len()).collect();
        assert_eq!(sizes, [28, 28, 28, 28, 28, 28, 28, 28, 13, 8, 4, 4, 2, 1]);
        assert!(after.windows(2).all(|w| w[0] >= w[1]), "{after:?}");
        assert_eq!(after.iter().sum::<usize>(), before.iter().sum::<usize>());
        // The ramp's bricks are the first batch's last ones, the rest of it
        // keeps its order.
        let ramp = |i: usize| plan.batches[i].1.clone();
        let cut = [ramp(9), ramp(10), ramp(12), ramp(13)].concat();
        let want = [
            &first[20..28],
            &first[16..20],
            &first[14..16],
            &first[13..14],
        ];
        assert_eq!(cut, want.concat());
        assert_eq!(plan.batches[8].1, first[..13]);
        let mut bricks: Vec<usize> = plan.batches.iter().flat_map(|(_, l)| l.clone()).collect();
        bricks.sort_unstable();
        assert_eq!(bricks, (0..256).collect::<Vec<_>>());
        // Once: its small batches now hold the ramp's bricks and more.
        ramp_batches(&mut plan, 32, budget, per_value);
        assert_eq!(plan.caps(), after);
        // GPU 1's slab and the whole field have small batches (the thin
        // layer's); a plan that cannot run every batch at once, or one that
        // would need more slots or memory than it has, is left as it is.
        for (bricks, slots, budget) in [
            (slab_1024(1), 32, budget),
            (shapes_1024(), 32, budget),
            (slab_1024(0), 12, budget),
            (slab_1024(0), 32, 4 << 30),
        ] {
            let mut plan = plan_of(bricks);
            let before = (plan.caps(), plan.slots);
            ramp_batches(&mut plan, slots, budget, per_value);
            assert_eq!((plan.caps(), plan.slots), before);
        }
        let mut plan = plan_of(slab_1024(0));
        plan.slots = 8;
        let before = plan.caps();
        ramp_batches(&mut plan, 32, budget, per_value);
        assert_eq!((plan.caps(), plan.slots), (before, 8));
    }

    #[test]
    fn plans_cover_every_brick_once_largest_first_within_the_budget() {
        let per_value = Use::EncodeInterp.per_value(DType::F32);
        for (budget, slots, shares, limit) in [
            (
                52usize << 30,
                RESIDENT_SLOTS,
                RESIDENT_SHARES,
                RESIDENT_BATCH,
            ),
            (52 << 30, HOST_SLOTS, HOST_SLOTS, DEFAULT_BATCH),
            (6 << 30, RESIDENT_SLOTS, RESIDENT_SHARES, RESIDENT_BATCH),
            (1 << 30, 4, 4, 64),
        ] {
            let plan = plan_batches(
                vec![shapes_1024()],
                budget,
                per_value,
                (slots, shares, limit),
            )
            .unwrap();
            let mut seen: Vec<usize> = plan.batches.iter().flat_map(|(_, l)| l.clone()).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..512).collect::<Vec<_>>(), "{budget} {slots}");
            let costs: Vec<usize> = plan
                .batches
                .iter()
                .map(|(d, l)| cost(d, l.len(), per_value))
                .collect();
            assert!(
                costs.windows(2).all(|w| w[0] >= w[1]),
                "not the largest first: {costs:?}"
            );
            assert!(plan
                .batches
                .iter()
                .all(|(_, l)| !l.is_empty() && l.len() <= limit));
            assert!(plan.slots >= 1 && plan.slots <= slots.min(plan.batches.len()));
            assert!(
                costs[..plan.slots].iter().sum::<usize>() <= budget,
                "{budget} {slots}: {costs:?}"
            );
            // Bricks of a batch share a shape and keep the grid order.
            let shapes = shapes_1024();
            for (d, l) in &plan.batches {
                assert!(l.iter().all(|k| shapes[d].contains(k)));
                assert!(l.windows(2).all(|w| w[0] < w[1]));
            }
        }
        // A field on the device with room for all of it (80% of what an
        // H100 has free beside it): every batch at once.
        let plan = plan_batches(
            vec![shapes_1024()],
            60 << 30,
            per_value,
            (RESIDENT_SLOTS, RESIDENT_SHARES, RESIDENT_BATCH),
        )
        .unwrap();
        assert_eq!(plan.slots, plan.batches.len(), "{}", plan.batches.len());
        // One slot, a large budget and a high brick limit (how the bad
        // streams were made): batches stay under MAX_BATCH_VALUES.
        for limit in [128, 200, 4096] {
            let plan =
                plan_batches(vec![shapes_1024()], 120 << 30, per_value, (1, 1, limit)).unwrap();
            let most = plan.caps().into_iter().max().unwrap_or(0);
            assert!(most <= MAX_BATCH_VALUES, "{limit}: {most}");
            let bricks: usize = plan.batches.iter().map(|(_, l)| l.len()).sum();
            assert_eq!(bricks, 512);
        }
    }

    #[test]
    fn groups_of_layers_are_planned_in_order_each_within_itself() {
        // A 1024^3 field's 8 brick layers, a group each (how a slab is
        // coded as it arrives and copied down as it is decoded).
        let per_value = Use::EncodeInterp.per_value(DType::F32);
        let layers: Vec<BTreeMap<[usize; 3], Vec<usize>>> = (0..8)
            .map(|z| {
                let mut m = shapes_1024();
                m.retain(|_, l| {
                    l.retain(|k| k / 64 == z);
                    !l.is_empty()
                });
                m
            })
            .collect();
        let budget = 60usize << 30;
        let plan = plan_batches(
            layers.clone(),
            budget,
            per_value,
            (RESIDENT_SLOTS, RESIDENT_SHARES, RESIDENT_BATCH),
        )
        .unwrap();
        assert_eq!(plan.group.len(), plan.batches.len());
        assert!(
            plan.group.windows(2).all(|w| w[0] <= w[1]),
            "{:?}",
            plan.group
        );
        for (z, want) in layers.iter().enumerate() {
            let mut got: Vec<usize> = plan
                .batches
                .iter()
                .zip(&plan.group)
                .filter(|(_, &g)| g == z)
                .flat_map(|((_, l), _)| l.clone())
                .collect();
            got.sort_unstable();
            let mut all: Vec<usize> = want.values().flatten().copied().collect();
            all.sort_unstable();
            assert_eq!(got, all, "layer {z}");
        }
        // One share a group: a batch a shape of a layer (4 shapes a layer).
        assert_eq!(plan.batches.len(), 32);
        let mut costs: Vec<usize> = plan
            .batches
            .iter()
            .map(|(d, l)| cost(d, l.len(), per_value))
            .collect();
        costs.sort_unstable_by(|a, b| b.cmp(a));
        assert!(plan.slots > 1 && costs[..plan.slots].iter().sum::<usize>() <= budget);
    }

    #[test]
    fn interp_divisors_divide_every_index_of_a_pass() {
        let check = |d: usize, below: usize, t: usize| {
            let (m, sh) = interp_divisor(d, below);
            let q = ((t as u128 * m as u128) >> sh) as usize;
            assert!(t as u128 * (m as u128) < 1u128 << 64, "d {d} below {below}");
            assert_eq!(q, t / d.max(1), "t {t} d {d} below {below}");
        };
        for d in 1..=300 {
            for below in [1, 2, 3, 129, 4096, 16641, 16642] {
                (0..below).for_each(|t| check(d, below, t));
            }
        }
        // Whole bricks (129^3 and larger) and the largest count a pass may have.
        for (d, below) in [
            (129, 2_146_689),
            (16641, 2_146_689),
            (65, 1 << 31),
            (129 * 129, 1 << 31),
        ] {
            let mut t = 0usize;
            while t < below {
                check(d, below, t);
                check(d, below, (t + d - 1).min(below - 1));
                t += 7919 * (1 + t / 100_000);
            }
            check(d, below, below - 1);
        }
    }

    #[test]
    fn a_budget_below_two_bricks_is_refused() {
        let per_value = Use::Decode.per_value(DType::F32);
        let one = cost(&[129, 129, 129], 1, per_value);
        match plan_batches(vec![shapes_1024()], 2 * one - 1, per_value, (2, 2, 64)) {
            Err(CudaError::MemoryLimit { need, limit }) => {
                assert_eq!((need, limit), (2 * one as u128, 2 * one as u128 - 1))
            }
            Err(e) => panic!("wrong error {e}"),
            Ok(_) => panic!("a plan under the limit"),
        }
        let plan = plan_batches(vec![shapes_1024()], 2 * one, per_value, (2, 2, 64)).unwrap();
        assert_eq!(plan.batches.len(), 512);
        assert_eq!(plan.slots, 2);
    }

    #[test]
    fn a_slot_serves_its_own_use_and_every_lesser_one() {
        assert!(Use::EncodeLifting > Use::EncodeInterp && Use::EncodeInterp > Use::Decode);
        for t in [
            lifting::Lifting::Haar,
            lifting::Lifting::Cdf97,
            lifting::Lifting::Interp,
        ] {
            assert_eq!(Use::of(false, t), Use::Decode);
        }
        assert_eq!(Use::of(true, lifting::Lifting::Interp), Use::EncodeInterp);
        assert_eq!(Use::of(true, lifting::Lifting::Cdf53), Use::EncodeLifting);
        for d in [DType::F32, DType::F64] {
            let h =
                [Use::Decode, Use::EncodeInterp, Use::EncodeLifting].map(|u| u.held_per_value(d));
            assert!(h[0] < h[1] && h[1] < h[2], "{h:?}");
        }
    }
}
