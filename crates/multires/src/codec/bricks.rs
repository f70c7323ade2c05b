//! One brick: the grid that cuts a field into bricks, gathering a brick's
//! values, coding it (quantization, the closed loop, the bound's
//! corrections) and decoding it, and the outliers stored whole.

use super::*;

/// The bricks of a volume: extents of the grid and each brick's box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrickGrid {
    pub dims: [usize; 3],
    pub brick: [usize; 3],
}

impl BrickGrid {
    pub fn counts(&self) -> [usize; 3] {
        [0, 1, 2].map(|a| self.dims[a].div_ceil(self.brick[a]))
    }
    pub fn len(&self) -> usize {
        self.counts().iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Start and extent of brick `k` (z-major over the grid).
    pub fn bounds(&self, k: usize) -> ([usize; 3], [usize; 3]) {
        let c = self.counts();
        let idx = [k / (c[1] * c[2]), (k / c[2]) % c[1], k % c[2]];
        let start = [0, 1, 2].map(|a| idx[a] * self.brick[a]);
        let ext = [0, 1, 2].map(|a| self.brick[a].min(self.dims[a] - start[a]));
        (start, ext)
    }
    pub fn describe(&self, k: usize) -> String {
        let (s, e) = self.bounds(k);
        format!(
            "z {}..{}, y {}..{}, x {}..{}",
            s[0],
            s[0] + e[0],
            s[1],
            s[1] + e[1],
            s[2],
            s[2] + e[2]
        )
    }
}

/// Default brick. Open-loop transforms: 128^3 (3-D), 256^2 (2-D); each
/// brick's faces are extended symmetrically, which costs detail
/// coefficients along them (on smooth 3-D fields 128^3 bricks code to half
/// the bytes of 64^3 ones). The interpolating wavelet: 129^3 and 257^2,
/// 2^k + 1 points, so every point inside a brick is interpolated and none
/// extrapolated (smooth 3-D fields code 2.7 times smaller than in 128^3
/// bricks). Clipped to the field.
pub fn default_brick(dims: [usize; 3], t: Lifting) -> [usize; 3] {
    let odd = (t == Lifting::Interp) as usize;
    if dims[0] > 1 {
        [128 + odd; 3]
    } else {
        [1, 256 + odd, 256 + odd]
    }
}

/// Brick values, row-major, copied out of the volume as f64.
pub fn gather(v: &Volume, start: [usize; 3], ext: [usize; 3]) -> Vec<f64> {
    let mut out = Vec::new();
    gather_into(v, start, ext, &mut out);
    out
}

/// `gather` into a buffer reused from brick to brick.
pub fn gather_into(v: &Volume, start: [usize; 3], ext: [usize; 3], out: &mut Vec<f64>) {
    gather_view(v.view(), start, ext, out)
}

/// `gather_into` from a field over borrowed values.
pub fn gather_view(v: FieldView, start: [usize; 3], ext: [usize; 3], out: &mut Vec<f64>) {
    out.clear();
    out.reserve(ext.iter().product());
    with_values_ref!(v.data, d => brick_rows(d, v.dims, start, ext)
        .for_each(|r| out.extend(r.iter().map(|x| x.to_f64()))));
}

/// A coding thread's buffers of brick size, reused from brick to brick:
/// fresh ones cost a page fault and a cleared page every 4 KiB, which
/// was a quarter of a one-thread compression and half a decompression.
#[derive(Default)]
pub struct BrickScratch {
    /// The brick's values (compression).
    pub x: Vec<f64>,
    /// Its reconstruction (compression and decompression).
    pub r: Vec<f64>,
    /// Zigzag codes in coding order.
    pub zz: Vec<u32>,
    /// The rANS coder's entries and words (compression).
    pub rans: rans::EncodeScratch,
    /// A lossless brick's bits (float32's in the low half).
    pub bits: Vec<u64>,
}

/// Scratch buffers lent to one call's bricks: a brick takes the buffers a
/// finished brick gave back, so each thread faults in their pages (tens
/// of megabytes a 129^3 brick) once a call. rayon's `map_init` makes
/// fresh ones for every piece it splits the work into, and this VM
/// clears fresh pages slowly (a third of a one-core smooth decode's
/// profile was the kernel zeroing pages). Freed when the call ends.
#[derive(Default)]
pub(super) struct ScratchPool(pub(super) std::sync::Mutex<Vec<BrickScratch>>);

impl ScratchPool {
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut BrickScratch) -> R) -> R {
        let mut sc = self
            .0
            .lock()
            .ok()
            .and_then(|mut free| free.pop())
            .unwrap_or_default();
        let r = f(&mut sc);
        if let Ok(mut free) = self.0.lock() {
            free.push(sc);
        }
        r
    }
}

/// The x rows of the box at `start` of extent `ext` of a field of `dims`
/// held in `data`, in row-major order (what `gather` copies; the GPU
/// copies them into pinned memory).
pub fn brick_rows<T>(
    data: &[T],
    dims: [usize; 3],
    start: [usize; 3],
    ext: [usize; 3],
) -> impl Iterator<Item = &[T]> + '_ {
    (0..ext[0]).flat_map(move |z| {
        (0..ext[1]).map(move |y| {
            let o = ((start[0] + z) * dims[1] + start[1] + y) * dims[2] + start[2];
            &data[o..o + ext[2]]
        })
    })
}

/// A coefficient's quantized value: round half away from zero, clamped to
/// +-2^30 (what the clamp spoils becomes an outlier). The GPU kernel
/// computes the same.
pub(crate) fn quantize(c: f64, q: f64) -> i32 {
    // `round` (half away from zero) without its libm call or a branch, so
    // that rows of it vectorize: clamped to just past the clamp below (NaN
    // stays NaN and converts to 0), the truncation is exact and so is the
    // fraction left.
    let most = rice::MAX_INT;
    let v = (c / q).clamp(-most - 1.0, most + 1.0);
    let t = v as i32;
    let f = v - t as f64;
    let r = t + (f >= 0.5) as i32 - (f <= -0.5) as i32;
    r.clamp(-(most as i32), most as i32)
}

/// The brick's values as decoded from quantized coefficients (Morton
/// order) with step `q`: the one reconstruction both the encoder's check
/// and the decoder use.
pub(super) fn reconstruct(
    ints: &[i32],
    q: f64,
    (t, o): (Lifting, interp::Order),
    dims: [usize; 3],
    dtype: DType,
) -> Vec<f64> {
    if t == Lifting::Interp {
        // The details of order `o` put in the pass order the inverse
        // reads (the decoder takes files of the current order, already
        // in it, another way: versions 3 and 4 come here).
        let mut grid = vec![0u32; ints.len()];
        for (&i, &k) in ints.iter().zip(interp::order(dims, o).iter()) {
            grid[k as usize] = rice::zigzag(i);
        }
        let zz: Vec<u32> = interp::order(dims, interp::Order::Passes)
            .iter()
            .map(|&k| grid[k as usize])
            .collect();
        let mut c = Vec::new();
        interp::inverse(&zz, dims, q, &mut c);
        c.iter_mut().for_each(|v| *v = dtype.round(*v));
        return c;
    }
    let levels = lifting::levels_for(dims, MAX_LEVELS);
    let order = morton::order(dims);
    let mut c = vec![0.0; ints.len()];
    for (&i, &k) in ints.iter().zip(order.iter()) {
        c[k as usize] = i as f64 * q;
    }
    lifting::inverse(t, true, &mut c, dims, levels);
    c.iter_mut().for_each(|v| *v = dtype.round(*v));
    c
}

/// The steps of 2e that bring `got` within `e` of `want` after rounding to
/// the stored type, if any (None: the exact value must be stored).
pub(super) fn correction(want: f64, got: f64, e: f64, dtype: DType) -> Option<i32> {
    if !(e > 0.0 && got.is_finite() && want.is_finite()) {
        return None;
    }
    let k = ((want - got) / (2.0 * e)).round();
    if k == 0.0 || k.abs() > i32::MAX as f64 {
        return None;
    }
    let k = k as i32;
    ((want - apply(got, k, e, dtype)).abs() <= e).then_some(k)
}

/// `got` moved by k steps of 2e, as the decoder computes it.
pub(super) fn apply(got: f64, k: i32, e: f64, dtype: DType) -> f64 {
    dtype.round(got + k as f64 * 2.0 * e)
}

/// The interpolation's zero-bound step for float64, relative to the
/// brick's peak: a power of two, so that the peak is exactly 2^20 steps
/// and a constant brick's anchors come back exactly (at `peak * 1e-6`
/// every value of a constant float64 field of ones was an outlier: ratio
/// 0.5 against 11,500 now). The lifting transforms keep `steps`': their
/// unit-gain coefficients are not exact either way.
pub const ZERO_BOUND_STEP: f64 = 1.0 / (1u64 << 20) as f64;

/// A float32 field's zero-bound step for the interpolation, relative to
/// the peak: a sixteenth of float32's epsilon, so that a reconstruction
/// within half a step of a value in the top four binades rounds back to
/// it (smooth 64^3 at `abs:0`: ratio 1.32 against 0.34 at `peak * 1e-6`).
/// A detail (at most 4.5 peaks, in steps divided by up to 1.5) stays
/// under the codes' clamp of 2^30 steps.
pub const ZERO_BOUND_STEP_F32: f64 = f32::EPSILON as f64 / 16.0;

/// The step of the closed-loop interpolation (`interp`): twice the bound,
/// less a margin for rounding the reconstruction to the stored type (an
/// ulp at the brick's largest magnitude `peak`), so few values need
/// outlier corrections. The brick's own peak, not the volume's, so a brick
/// can be coded before the rest of the volume has been read (streaming
/// under an absolute bound); each payload stores its step.
pub fn interp_step(e: f64, peak: f64, dtype: DType) -> f64 {
    let (ulp, z) = interp_step_factors(dtype);
    if e > 0.0 {
        2.0 * (e - peak * ulp).max(0.5 * e)
    } else {
        (peak * z).max(f64::MIN_POSITIVE)
    }
}

/// `interp_step`'s factors of the peak for `dtype`: the stored type's ulp
/// (a positive bound's margin) and the zero-bound step. The GPU's ISTEP
/// takes them from here, so the two cannot drift.
pub fn interp_step_factors(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F32 => (f32::EPSILON as f64, ZERO_BOUND_STEP_F32),
        DType::F64 => (f64::EPSILON, ZERO_BOUND_STEP),
    }
}

/// Encodes one brick (row-major values `x` of extent `dims`) under the
/// absolute bound `e`, with a thread's reused buffers (`s.x` is not
/// touched: `x` may be taken from it). The interpolating wavelet codes
/// once, at its step; the open-loop transforms try each candidate step
/// and keep the smallest output.
pub(crate) fn encode_brick_with(
    x: &[f64],
    dims: [usize; 3],
    t: Lifting,
    dtype: DType,
    (e, chunk_log): (f64, u32),
    s: &mut BrickScratch,
) -> Result<CodedBrick, CodecError> {
    if t == Lifting::Lorenzo {
        // Its blocks with NaN, infinities or values past the bound are raw.
        return Ok(lorenzo::encode(x, dims, dtype, e));
    }
    if x.iter().all(|v| v.is_finite()) {
        return encode_finite_brick(x, x, dims, t, dtype, (e, chunk_log), s);
    }
    // NaN and infinities are coded as the mean of the brick's finite
    // values (a value every predictor takes in its stride) and stored
    // exactly among the outliers, so that the decoder needs nothing new
    // and the bound holds on every finite value.
    let (sum, count) = x
        .iter()
        .filter(|v| v.is_finite())
        .fold((0.0, 0usize), |(s, c), &v| (s + v, c + 1));
    let fill = dtype.round(if count > 0 { sum / count as f64 } else { 0.0 });
    let filled: Vec<f64> = x
        .iter()
        .map(|&v| if v.is_finite() { v } else { fill })
        .collect();
    encode_finite_brick(x, &filled, dims, t, dtype, (e, chunk_log), s)
}

/// `encode_brick_with` of the brick `x` coded as `xc`: equal to it but
/// where `x` is not finite (those values become exact outliers).
fn encode_finite_brick(
    x: &[f64],
    xc: &[f64],
    dims: [usize; 3],
    t: Lifting,
    dtype: DType,
    (e, chunk_log): (f64, u32),
    s: &mut BrickScratch,
) -> Result<CodedBrick, CodecError> {
    let peak = xc.iter().fold(0f64, |m, v| m.max(v.abs()));
    if t == Lifting::Interp {
        let q = interp_step(e, peak, dtype);
        let mut ck = match dtype {
            DType::F32 => interp::forward::<f32>(xc, dims, (q, e), (&mut s.zz, &mut s.r)),
            DType::F64 => interp::forward::<f64>(xc, dims, (q, e), (&mut s.zz, &mut s.r)),
        };
        if !std::ptr::eq(x, xc) {
            let special = x.iter().enumerate().filter(|(_, v)| !v.is_finite());
            ck.bad.extend(special.map(|(k, _)| k as u32));
        }
        let cl = interp::classes(dims, interp::Order::CURRENT);
        return Ok(finish_brick(
            (x, &s.r),
            ck,
            &s.zz,
            (q, e, dtype),
            Some((&cl, chunk_log, &mut s.rans)),
        ));
    }
    let levels = lifting::levels_for(dims, MAX_LEVELS);
    let mut c = xc.to_vec();
    lifting::forward(t, true, &mut c, dims, levels);
    let order = morton::order(dims);
    // The candidate steps run side by side (a field may have fewer bricks
    // than the machine has cores); the smallest output wins, the first on
    // ties, so the choice does not depend on scheduling.
    let tries: Vec<CodedBrick> = steps(e, peak)
        .par_iter()
        .map(|&q| {
            let ints: Vec<i32> = order.iter().map(|&k| quantize(c[k as usize], q)).collect();
            let y = reconstruct(&ints, q, (t, interp::Order::CURRENT), dims, dtype);
            let zz: Vec<u32> = ints.iter().map(|&i| rice::zigzag(i)).collect();
            let mut ck = Check::default();
            for (k, (&a, &b)) in x.iter().zip(&y).enumerate() {
                ck.value(k, a, b, e);
            }
            finish_brick((x, &y), ck, &zz, (q, e, dtype), None)
        })
        .collect();
    tries
        .into_iter()
        .reduce(|a, b| if b.0.len() < a.0.len() { b } else { a })
        .ok_or_else(|| CodecError::Invalid("no quantization step was tried".into()))
}

/// A brick's payload from its quantized values (zigzag codes, coding
/// order), the values `x` and their reconstruction `y` (as the decoder
/// computes it, before rounding to the stored type) and the bound's check
/// of them: the step, the coefficient stream (rANS with the level
/// `classes` of the interpolation, Rice for the lifting transforms), then
/// the outliers: every value off by more than `e` gets a correction of
/// whole steps of 2e (within e once applied) or, where rounding to the
/// stored type defeats that, 0 and its exact value.
pub(super) fn finish_brick(
    (x, y): (&[f64], &[f64]),
    ck: Check,
    zz: &[u32],
    (q, e, dtype): (f64, f64, DType),
    classes: Option<(&[u8], u32, &mut rans::EncodeScratch)>,
) -> CodedBrick {
    let Check {
        mut maxe,
        mut sse,
        mut bad,
    } = ck;
    // The outliers in index order (the interpolation meets them in its
    // coding order).
    bad.sort_unstable();
    bad.dedup();
    let (mut steps, mut raw) = (Vec::with_capacity(bad.len()), Vec::new());
    for &k in &bad {
        let (a, b) = (x[k as usize], dtype.round(y[k as usize]));
        let fixed = correction(a, b, e, dtype);
        steps.push(fixed.unwrap_or(0));
        let v = match fixed {
            Some(s) => apply(b, s, e, dtype),
            None => {
                raw.push(a);
                a
            }
        };
        // A NaN or infinity is stored as it is: no error to count.
        if a.is_finite() {
            let d = (a - v).abs();
            maxe = maxe.max(d);
            sse += d * d;
        }
    }
    let idx = bad;
    let words = match classes {
        Some((cl, most, scratch)) => rans::encode_with(zz, cl, most, scratch),
        None => rice::encode(zz),
    };
    let mut out =
        Vec::with_capacity(16 + 4 * words.len() + 8 * idx.len() + raw.len() * dtype.size());
    out.extend_from_slice(&q.to_le_bytes());
    words
        .iter()
        .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    out.extend_from_slice(&(idx.len() as u32).to_le_bytes());
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    idx.iter()
        .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    steps
        .iter()
        .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    for &v in &raw {
        match dtype {
            DType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            DType::F64 => out.extend_from_slice(&v.to_le_bytes()),
        }
    }
    (out, maxe, sse, idx.len())
}

/// A payload's step and the words after it (the coefficient stream and
/// the outliers), checked: the decoders' (CPU and GPU) first step.
pub fn brick_step(payload: &[u8]) -> Result<(f64, Vec<u32>), String> {
    let (q, words, _) = brick_step_prefix(payload, usize::MAX)?;
    Ok((q, words))
}

/// A brick's step and the first `words` words after it (all when fewer),
/// checked as `brick_step` says, and how many words follow the step. The
/// GPU decoder's host reads only headers: converting whole payloads (1 GB
/// for a 1024^3 turbulent field at 1e-4) cost more than decoding them on
/// the device.
pub fn brick_step_prefix(payload: &[u8], words: usize) -> Result<(f64, Vec<u32>, usize), String> {
    if payload.len() < 8 || !payload.len().is_multiple_of(4) {
        return Err(format!(
            "{} bytes, not a brick (a step and whole words)",
            payload.len()
        ));
    }
    let q = f64::from_le_bytes(payload[0..8].try_into().map_err(|_| "header")?);
    if !(q.is_finite() && q > 0.0) {
        return Err(format!("quantization step {q} is not a positive number"));
    }
    let total = (payload.len() - 8) / 4;
    Ok((
        q,
        payload_words(payload, 0..words.min(total)).collect(),
        total,
    ))
}

/// Words `range` after a checked payload's step, as stored (little-endian).
pub(super) fn payload_words(
    payload: &[u8],
    range: std::ops::Range<usize>,
) -> impl Iterator<Item = u32> + '_ {
    payload[8 + 4 * range.start..8 + 4 * range.end]
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// The step and rANS header of an `interp` brick of `n` values, reading
/// only the header's words.
pub fn brick_rans_header(payload: &[u8], n: usize) -> Result<(f64, rans::Header), String> {
    let (q, mut words, total) = brick_step_prefix(payload, 2)?;
    if let [h0, h1] = words[..] {
        // The rest of the header's words, once the first two said how many.
        let need = rans::header_len(h0, h1, n).min(total);
        if need > words.len() {
            words.extend(payload_words(payload, words.len()..need));
        }
    }
    Ok((q, rans::read_header_of(&words, total, n)?))
}

/// Decodes a brick of extent `dims` of the file of header `h` from its
/// payload; errors say what is wrong (the container adds which brick).
pub fn decode_brick(payload: &[u8], dims: [usize; 3], h: &MrzHeader) -> Result<Vec<f64>, String> {
    let mut s = BrickScratch::default();
    decode_brick_with(payload, dims, h, &mut s)?;
    s.r.iter_mut().for_each(|v| *v = h.dtype.round(*v));
    Ok(std::mem::take(&mut s.r))
}

/// `decode_brick` into `s.r`, with a thread's reused buffers, but not yet
/// rounded to the stored type (but for outliers): `RegionOut::place`
/// rounds as it writes, which spares a pass over the brick's doubles
/// (about 2 ms of a 256^3 one-core decompression's 100-130).
pub fn decode_brick_with(
    payload: &[u8],
    dims: [usize; 3],
    h: &MrzHeader,
    s: &mut BrickScratch,
) -> Result<(), String> {
    let n: usize = dims.iter().product();
    if h.is_lossless() {
        lossless::decode(payload, dims, h.dtype, &mut s.bits)?;
        s.r.clear();
        s.r.extend(s.bits.iter().map(|&b| lossless::value_of(b, h.dtype)));
        return Ok(());
    }
    if h.transform == Lifting::Lorenzo {
        return lorenzo::decode(payload, dims, h.dtype, h.abs_bound, &mut s.r);
    }
    let (q, words) = brick_step(payload)?;
    let (t, o) = (h.transform, interp::Order::of_version(h.version));
    let used = if t == Lifting::Interp && o == interp::Order::Passes {
        let used = rans::decode_into(&words, n, &interp::classes(dims, o), &mut s.zz)?;
        interp::inverse(&s.zz, dims, q, &mut s.r);
        used
    } else {
        let (zz, used) = if t == Lifting::Interp {
            rans::decode(&words, n, &interp::classes(dims, o))?
        } else {
            rice::decode(&words, n)?
        };
        let ints: Vec<i32> = zz.into_iter().map(rice::unzigzag).collect();
        s.r = reconstruct(&ints, q, (t, o), dims, h.dtype);
        used
    };
    correct(&mut s.r, &payload[8 + 4 * used..], h.abs_bound, h.dtype)
}

/// One stored correction: the value at `index` of its brick moves by
/// `steps` times twice the bound, or (steps 0) is `exact`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlier {
    pub index: usize,
    pub steps: i32,
    pub exact: f64,
}

/// The outlier section of a brick of `n` values (the bytes after its
/// coefficient stream), checked: indices inside and increasing, the exact
/// values all used.
pub fn outliers(rest: &[u8], n: usize, dtype: DType) -> Result<Vec<Outlier>, String> {
    let word = |i: usize| -> Result<u32, String> {
        rest.get(4 * i..4 * i + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .ok_or_else(|| "the outlier list ends early".to_string())
    };
    let (count, nraw) = (word(0)? as usize, word(1)? as usize);
    if count > n || nraw > count {
        return Err(format!(
            "{count} outliers ({nraw} stored exactly) in {n} values"
        ));
    }
    let sz = dtype.size();
    let expect = 8 + 8 * count + sz * nraw;
    if rest.len() != expect {
        return Err(format!(
            "{} bytes of outliers, {expect} expected for {count} ({nraw} exact)",
            rest.len()
        ));
    }
    let raws = &rest[8 + 8 * count..];
    let (mut prev, mut r) = (None, 0usize);
    let mut list = Vec::with_capacity(count);
    for j in 0..count {
        let k = word(2 + j)? as usize;
        if k >= n || prev.is_some_and(|p| k <= p) {
            return Err(format!(
                "outlier {j} points outside the brick or out of order"
            ));
        }
        prev = Some(k);
        let steps = word(2 + count + j)? as i32;
        let mut exact = 0.0;
        if steps == 0 {
            let v = raws
                .get(r * sz..(r + 1) * sz)
                .ok_or("more exact outliers than stored values")?;
            r += 1;
            exact = match dtype {
                DType::F32 => f32::from_le_bytes([v[0], v[1], v[2], v[3]]) as f64,
                DType::F64 => f64::from_le_bytes(v.try_into().map_err(|_| "outlier")?),
            };
        }
        list.push(Outlier {
            index: k,
            steps,
            exact,
        });
    }
    if r != nraw {
        return Err(format!("{nraw} exact outliers stored, {r} used"));
    }
    Ok(list)
}

/// The outlier section of a brick applied to its reconstruction `y`: the
/// decoder's last step, shared with the GPU decoder.
pub fn apply_outliers(
    mut y: Vec<f64>,
    rest: &[u8],
    e: f64,
    dtype: DType,
) -> Result<Vec<f64>, String> {
    correct(&mut y, rest, e, dtype)?;
    Ok(y)
}

/// `apply_outliers` in place. A correction moves the value rounded to the
/// stored type, as the coder computed it; `y` may be rounded or not.
pub(super) fn correct(y: &mut [f64], rest: &[u8], e: f64, dtype: DType) -> Result<(), String> {
    for o in outliers(rest, y.len(), dtype)? {
        y[o.index] = if o.steps != 0 {
            apply(dtype.round(y[o.index]), o.steps, e, dtype)
        } else {
            o.exact
        };
    }
    Ok(())
}
