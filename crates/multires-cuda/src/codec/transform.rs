//! The transforms on the device: the interpolation's passes (forward with
//! the bound's check, and inverse) and the lifting steps, with the coding
//! orders they write in.

use super::*;

/// The coding order that `Slot::order` uploaded for `dims` under `t` (a
/// function of the map alone, so the slot's other buffers stay free to
/// borrow).
pub(super) fn coding_order(
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
pub(super) fn dequantize_and_lift(
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
pub(super) struct InterpCheck<'a> {
    pub(super) ints: &'a mut CudaSlice<i32>,
    pub(super) inverse: Option<&'a CudaSlice<u32>>,
    pub(super) corr: &'a mut CudaSlice<i32>,
    pub(super) omask: &'a mut CudaSlice<u32>,
    pub(super) e: f64,
    pub(super) f32: i32,
    pub(super) counts: &'a mut CudaSlice<u64>,
    pub(super) maxe: &'a mut CudaSlice<u64>,
    pub(super) sse: &'a mut CudaSlice<f64>,
    /// With the input read in place (`Input::Field`): the brick origins,
    /// the field's rows a plane and values a row, and the address where
    /// the exact outliers' values go (the batch's input buffer, where
    /// OWRITE_MASK reads them; on the slot's stream).
    pub(super) field: Option<(&'a CudaSlice<i64>, i64, i64, u64)>,
}

/// Which way `interp_passes` runs.
pub(super) enum InterpPass<'a> {
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
pub(super) type FieldPlace<'a> = (FieldAddress<'a>, &'a CudaSlice<i64>, i64, i64);

/// Where the inverse interpolation also puts its values, rounded to
/// float32: what a pass of SCATTER or TO_DTYPE over the batch's doubles
/// did after it (12 bytes a value read and written, against 4 written).
pub(super) enum Place<'a> {
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
pub(super) fn interp_passes(
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
pub(super) enum Input<'a> {
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
pub(super) struct FieldIn {
    pub(super) at: u64,
    pub(super) org: CudaSlice<i64>,
    pub(super) rows: i64,
    pub(super) cols: i64,
}

/// The CUDA type of a stored dtype, as the kernels' instances name it.
pub(super) fn cuda_type(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => <f32 as GpuReal>::CUDA,
        DType::F64 => <f64 as GpuReal>::CUDA,
    }
}

/// The null device pointer for the kernels' unused buffer arguments.
pub(super) static NO_BUFFER: u64 = 0;

/// Where a batch's outlier corrections are: `corr` of each brick's chosen
/// lifting trial, a value each, or the interpolation's, only at the
/// values its bitmap marks.
#[derive(Clone, Copy)]
pub(super) enum Corrections<'a> {
    Trial(&'a CudaSlice<i32>),
    Marked(&'a CudaSlice<u32>),
}

impl<'a> Input<'a> {
    /// The interpolation's input: the slot's values as stored.
    pub(super) fn stored(
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
    pub(super) fn push(self, l: &mut cudarc::driver::LaunchArgs<'a>) {
        match self {
            Input::F64(v) => l.arg(v).arg(&NO_BUFFER),
            Input::F32(v) => l.arg(&NO_BUFFER).arg(v),
            Input::Field(at) => l.arg(&NO_BUFFER).arg(at),
        };
    }

    /// BPEAK's instance for this input.
    pub(super) fn peak_kernel(self) -> &'static str {
        match self {
            Input::F64(_) => "BPEAK(kernel, double)",
            Input::F32(_) | Input::Field(_) => "BPEAK(kernel, float)",
        }
    }
}

/// Points an INTERP thread takes in turn: its step, the block's check
/// totals and the launch cost each thread once (with one point a thread
/// they were a third of the pass's 500 instructions a point).
pub(super) const INTERP_PER_THREAD: usize = 8;

/// The multiplier and shift that divide every t below `below` by `d`
/// in INTERP: (t * m) >> sh == t / d. With 2^sh >= below * d, the
/// rounded-up multiplier's error stays under 1/d, which no quotient's
/// fraction reaches; for below <= 2^31 the product fits 64 bits.
pub(super) fn interp_divisor(d: usize, below: usize) -> (u64, i32) {
    let bits = |v: usize| usize::BITS - v.max(1).saturating_sub(1).leading_zeros();
    let d = d.max(1);
    let sh = bits(below) + bits(d);
    let m = (1u64 << sh).div_ceil(d as u64);
    (m, sh as i32)
}

/// The key of the coding order of `dims` under `t` (`o`: the
/// interpolation's order, if `t` is the interpolation).
pub(super) fn order_key(dims: [usize; 3], t: lifting::Lifting, o: interp::Order) -> OrderKey {
    (dims, (t == lifting::Lifting::Interp).then_some(o))
}

/// Whether the kernels read the coding order's table: the lifting
/// transforms' Morton order and the interpolation's order of versions 3
/// and 4 do; INTERP walks the pass order (version 5) itself.
pub(super) fn order_table_read(t: lifting::Lifting, io: interp::Order) -> bool {
    t != lifting::Lifting::Interp || io == interp::Order::LazyMorton
}

/// One multilevel lifting of every brick of a batch (`bricks` of `dims`,
/// one after another in `data`), in place, on `stream`.
pub(super) fn lift(
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
