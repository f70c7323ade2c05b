//! The fast profile's brick coder (`Lifting::Lorenzo`, `--profile fast`):
//! each value is quantized to whole steps of twice the bound, the
//! integers are predicted by the Lorenzo predictor inside blocks of 64
//! values (4 x 4 x 4, 8 x 8 in a plane, 64 in a line), and a block's
//! residuals are packed at one bit length in bit planes, as cuSZp packs
//! its deltas. There is no entropy coder and no block depends on another,
//! so a GPU thread codes or decodes a block on its own, and the ratio is
//! what fixed-length packing gives (far below the default profile's on
//! smooth fields, the point being speed).
//!
//! A brick's payload: one head byte per block (row-major over the blocks),
//! then the blocks' bodies in that order. A head is `RAW` (the block's
//! values stored as they are) or `corner bytes << 5 | bit length`; the
//! body is then the corner's integer (the block's first value, which the
//! predictor cannot reach: zigzagged, little-endian, in that many bytes),
//! and for a nonzero length a sign plane and the magnitude planes, least
//! significant first, each one bit a value (bit i in byte i / 8). Zero
//! bytes pad the payload to whole 4-byte words (the GPU's checksums read
//! words).
//!
//! Values are quantized as x * (1 / step) rounded to the nearest integer,
//! ties to even (the GPU's magic-number rounding). The bound is checked
//! in closed loop as the decoder reconstructs
//! (`step * q` in float64, rounded to the stored type): a block with any
//! value past it, a NaN, an infinity or an integer past 2^27 is stored
//! raw. The GPU kernels (`codec_fast.cu`) do the same float64 operations,
//! so their bytes equal these.

use super::DType;

/// The head of a block stored as its raw values.
pub const RAW: u8 = 0xFF;
/// Quantized integers past this are stored raw: their residuals, sums of
/// eight of them, then stay below 2^30, in the device's 32-bit integers.
pub const Q_MAX: f64 = (1u64 << 27) as f64;

/// The block of a brick of extent `dims`: 4^3 in a volume, 8^2 in a plane,
/// 64 in a line (the brick's extent decides, so the decoder finds it).
pub fn block_extent(dims: [usize; 3]) -> [usize; 3] {
    if dims[0] > 1 {
        [4, 4, 4]
    } else if dims[1] > 1 {
        [1, 8, 8]
    } else {
        [1, 1, 64]
    }
}

/// The blocks of a brick: their grid per axis and block extent.
fn blocks(dims: [usize; 3]) -> ([usize; 3], [usize; 3]) {
    let b = block_extent(dims);
    ([0, 1, 2].map(|a| dims[a].div_ceil(b[a])), b)
}

/// Block `k` of the grid `g` with extent `b` in a brick of `dims`: its
/// first value's index in the brick and its (clipped) extent.
fn block_at(k: usize, g: [usize; 3], b: [usize; 3], dims: [usize; 3]) -> ([usize; 3], [usize; 3]) {
    let o = [
        k / (g[1] * g[2]) * b[0],
        k / g[2] % g[1] * b[1],
        k % g[2] * b[2],
    ];
    (o, [0, 1, 2].map(|a| b[a].min(dims[a] - o[a])))
}

/// The rows of the block at `o` of extent `ext` in a brick of `dims`:
/// each row's first index in the brick and in the block.
fn block_rows(
    o: [usize; 3],
    ext: [usize; 3],
    dims: [usize; 3],
) -> impl Iterator<Item = (usize, usize)> {
    (0..ext[0] * ext[1]).map(move |r| {
        let (z, y) = (r / ext[1], r % ext[1]);
        (
            ((o[0] + z) * dims[1] + o[1] + y) * dims[2] + o[2],
            r * ext[2],
        )
    })
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(u: u64) -> i64 {
    (u >> 1) as i64 ^ -((u & 1) as i64)
}

/// The step (twice the bound) and the value it reconstructs for `q`.
fn value(q: f64, step: f64, dtype: DType) -> f64 {
    dtype.round(q * step)
}

/// 1.5 * 2^52: v + MAGIC rounds v to an integer, ties to even, for
/// |v| < 2^51 (the sum's unit in the last place is 1).
const MAGIC: f64 = 6_755_399_441_055_744.0;

/// x * inv rounded to the nearest integer, ties to even, by the magic sum
/// as the GPU rounds (`round_ties_even` was a libm call a value, 9% of a
/// compression); past 2^51, where the two differ, both are far past Q_MAX.
fn quantize(x: f64, inv: f64) -> f64 {
    (x * inv + MAGIC) - MAGIC
}

/// The sign plane (`words[0]`) and the `rate` magnitude planes of the
/// residuals `q` (bit i: value i).
fn to_planes(q: &[i64], rate: usize, words: &mut [u64; 32]) {
    for (i, d) in q.iter().enumerate() {
        words[0] |= ((*d < 0) as u64) << i;
    }
    for (i, d) in q.iter().enumerate() {
        let m = d.unsigned_abs();
        for (p, w) in words[1..=rate].iter_mut().enumerate() {
            *w |= (m >> p & 1) << i;
        }
    }
}

/// `to_planes`' inverse: the residuals `q` from the planes.
fn from_planes(words: &[u64; 32], rate: usize, q: &mut [i64]) {
    for (i, d) in q.iter_mut().enumerate() {
        *d = words[1..=rate]
            .iter()
            .enumerate()
            .fold(0i64, |m, (p, w)| m | ((w >> i & 1) as i64) << p);
    }
    for (i, d) in q.iter_mut().enumerate() {
        if words[0] >> i & 1 == 1 {
            *d = -*d;
        }
    }
}

/// The Lorenzo residuals of the block's integers `q` (extent `ext`,
/// row-major) in place: the first difference along x, then y, then z,
/// nothing before the block.
fn predict(q: &mut [i64], ext: [usize; 3]) {
    let [nz, ny, nx] = ext;
    for r in q.chunks_exact_mut(nx) {
        for i in (1..nx).rev() {
            r[i] -= r[i - 1];
        }
    }
    for p in q.chunks_exact_mut(ny * nx) {
        for i in (nx..ny * nx).rev() {
            p[i] -= p[i - nx];
        }
    }
    for i in (ny * nx..nz * ny * nx).rev() {
        q[i] -= q[i - ny * nx];
    }
}

/// `predict`'s inverse: running sums along z, y, x.
fn unpredict(q: &mut [i64], ext: [usize; 3]) {
    let [nz, ny, nx] = ext;
    for i in ny * nx..nz * ny * nx {
        q[i] += q[i - ny * nx];
    }
    for p in q.chunks_exact_mut(ny * nx) {
        for i in nx..ny * nx {
            p[i] += p[i - nx];
        }
    }
    for r in q.chunks_exact_mut(nx) {
        for i in 1..nx {
            r[i] += r[i - 1];
        }
    }
}

/// Codes a brick (row-major values `x` of extent `dims`, already of the
/// stored type) under the absolute bound `e`: the payload, the largest
/// error, the sum of squared errors and the values stored raw.
pub fn encode(x: &[f64], dims: [usize; 3], dtype: DType, e: f64) -> (Vec<u8>, f64, f64, usize) {
    let (g, b) = blocks(dims);
    let nblocks = g.iter().product::<usize>();
    let step = 2.0 * e;
    // A product by the reciprocal, as the device quantizes (a float64
    // division a value cost the GPU more than its memory traffic).
    let inv = 1.0 / step;
    let mut heads = Vec::with_capacity(nblocks);
    let mut body = Vec::with_capacity(x.len());
    let (mut maxe, mut sse, mut raw) = (0f64, 0f64, 0usize);
    let mut v = [0f64; 64];
    let mut q = [0i64; 64];
    for k in 0..nblocks {
        let (o, ext) = block_at(k, g, b, dims);
        let n = ext.iter().product::<usize>();
        for (at, i) in block_rows(o, ext, dims) {
            v[i..i + ext[2]].copy_from_slice(&x[at..at + ext[2]]);
        }
        // Quantize and check as the decoder will reconstruct; every value
        // (no early exit), so the loop has no branch to mispredict.
        let (mut bm, mut bs, mut fits) = (0f64, 0f64, step > 0.0);
        for (qi, &xi) in q[..n].iter_mut().zip(&v[..n]) {
            let qf = quantize(xi, inv);
            let d = (value(qf, step, dtype) - xi).abs();
            // NaN fails both tests.
            let ok = qf.abs() <= Q_MAX && d <= e;
            fits &= ok;
            let d = if ok { d } else { 0.0 };
            (bm, bs) = (bm.max(d), bs + d * d);
            *qi = if ok { qf as i64 } else { 0 };
        }
        if !fits {
            heads.push(RAW);
            raw += n;
            for &xi in &v[..n] {
                match dtype {
                    DType::F32 => body.extend_from_slice(&(xi as f32).to_le_bytes()),
                    DType::F64 => body.extend_from_slice(&xi.to_le_bytes()),
                }
            }
            continue;
        }
        predict(&mut q[..n], ext);
        let corner = zigzag(q[0]);
        q[0] = 0;
        // At most 2^30 (eight integers of at most Q_MAX): 31 bits, which
        // the head's 5-bit length holds.
        let peak = q[..n].iter().fold(0u64, |m, d| m.max(d.unsigned_abs()));
        (maxe, sse) = (maxe.max(bm), sse + bs);
        let rate = 64 - peak.leading_zeros() as usize;
        let kb = (64 - corner.leading_zeros() as usize).div_ceil(8);
        heads.push(((kb << 5) | rate) as u8);
        body.extend_from_slice(&corner.to_le_bytes()[..kb]);
        if rate > 0 {
            let nb = n.div_ceil(8);
            let at = body.len();
            body.resize(at + nb * (1 + rate), 0);
            // Each plane as one 64-bit word (bit i: value i), written as
            // its first nb bytes.
            let mut words = [0u64; 32];
            to_planes(&q[..n], rate, &mut words);
            for (w, plane) in words[..=rate].iter().zip(body[at..].chunks_exact_mut(nb)) {
                plane.copy_from_slice(&w.to_le_bytes()[..nb]);
            }
        }
    }
    heads.extend_from_slice(&body);
    // Whole 4-byte words, for the device's checksums.
    heads.resize(heads.len().next_multiple_of(4), 0);
    (heads, maxe, sse, raw)
}

/// The bytes a block's body takes, from its head (`None`: a bad head).
pub fn body_len(head: u8, n: usize, dtype: DType) -> Option<usize> {
    if head == RAW {
        return Some(n * dtype.size());
    }
    let (kb, rate) = ((head >> 5) as usize, (head & 31) as usize);
    (kb <= 4).then(|| {
        kb + if rate > 0 {
            n.div_ceil(8) * (1 + rate)
        } else {
            0
        }
    })
}

/// Decodes a brick of extent `dims` (bound `e`) into `out` (row-major,
/// the stored type's values); errors say what is wrong with the payload.
pub fn decode(
    payload: &[u8],
    dims: [usize; 3],
    dtype: DType,
    e: f64,
    out: &mut Vec<f64>,
) -> Result<(), String> {
    let (g, b) = blocks(dims);
    let nblocks = g.iter().product::<usize>();
    let heads = payload.get(..nblocks).ok_or_else(|| {
        format!(
            "{} bytes: shorter than the {nblocks} block heads",
            payload.len()
        )
    })?;
    out.clear();
    out.resize(dims.iter().product(), 0.0);
    let step = 2.0 * e;
    let mut at = nblocks;
    let mut q = [0i64; 64];
    let mut v = [0f64; 64];
    for (k, &head) in heads.iter().enumerate() {
        let (o, ext) = block_at(k, g, b, dims);
        let n = ext.iter().product::<usize>();
        let len =
            body_len(head, n, dtype).ok_or_else(|| format!("block {k}: bad head {head:#x}"))?;
        let body = payload
            .get(at..at + len)
            .ok_or_else(|| format!("block {k}: the payload ends early"))?;
        at += len;
        if head == RAW {
            for (i, vi) in v[..n].iter_mut().enumerate() {
                *vi = match dtype {
                    DType::F32 => {
                        f32::from_le_bytes(body[4 * i..4 * i + 4].try_into().unwrap_or_default())
                            as f64
                    }
                    DType::F64 => {
                        f64::from_le_bytes(body[8 * i..8 * i + 8].try_into().unwrap_or_default())
                    }
                };
            }
        } else {
            let (kb, rate) = ((head >> 5) as usize, (head & 31) as usize);
            let mut c = [0u8; 8];
            c[..kb].copy_from_slice(&body[..kb]);
            q[..n].fill(0);
            if rate > 0 {
                let nb = n.div_ceil(8);
                let mut words = [0u64; 32];
                for (w, plane) in words[..=rate].iter_mut().zip(body[kb..].chunks_exact(nb)) {
                    let mut b = [0u8; 8];
                    b[..nb].copy_from_slice(plane);
                    *w = u64::from_le_bytes(b);
                }
                from_planes(&words, rate, &mut q[..n]);
            }
            q[0] = unzigzag(u64::from_le_bytes(c));
            unpredict(&mut q[..n], ext);
            for (vi, &qi) in v[..n].iter_mut().zip(&q[..n]) {
                *vi = value(qi as f64, step, dtype);
            }
        }
        for (to, i) in block_rows(o, ext, dims) {
            out[to..to + ext[2]].copy_from_slice(&v[i..i + ext[2]]);
        }
    }
    let pad = &payload[at..];
    if payload.len() != at.next_multiple_of(4) || pad.iter().any(|&b| b != 0) {
        return Err(format!("{} bytes after the last block", pad.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|i| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((i as f64) * 0.01).sin() * 50.0 + ((s >> 40) as f64 / (1u64 << 24) as f64 - 0.5)
            })
            .collect()
    }

    #[test]
    fn bound_holds_and_decode_inverts_on_uneven_bricks() {
        for dims in [[9, 7, 13], [1, 17, 10], [1, 1, 200], [4, 4, 4], [1, 1, 1]] {
            for dtype in [DType::F32, DType::F64] {
                for e in [1e-4, 1e-2, 0.3, 5.0] {
                    let n = dims.iter().product();
                    let x: Vec<f64> = field(n, n as u64)
                        .into_iter()
                        .map(|v| dtype.round(v))
                        .collect();
                    let (p, maxe, _, raw) = encode(&x, dims, dtype, e);
                    assert!(maxe <= e);
                    let mut y = Vec::new();
                    decode(&p, dims, dtype, e, &mut y).unwrap();
                    for (a, b) in x.iter().zip(&y) {
                        assert!((a - b).abs() <= e, "{dims:?} {dtype:?} {e}: {a} {b}");
                    }
                    assert!(raw < n || e < 1e-3, "{dims:?} {e}: {raw} raw");
                }
            }
        }
    }

    #[test]
    fn special_values_and_huge_ones_are_stored_raw() {
        let dims = [4, 4, 8];
        let mut x = field(128, 3);
        x[0] = f64::NAN;
        x[70] = f64::INFINITY;
        x[71] = -0.0;
        x[100] = 1e300;
        let (p, _, _, raw) = encode(&x, dims, DType::F64, 1e-3);
        assert_eq!(raw, 128, "both blocks hold a special value");
        let mut y = Vec::new();
        decode(&p, dims, DType::F64, 1e-3, &mut y).unwrap();
        let bits = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&x), bits(&y));
    }

    #[test]
    fn a_constant_brick_costs_a_head_and_a_corner_a_block() {
        let dims = [8, 8, 8];
        let x = vec![3.0; 512];
        let (p, maxe, _, _) = encode(&x, dims, DType::F32, 0.5);
        // q = 3, zigzag 6: one corner byte; no planes.
        assert_eq!(p.len(), 8 + 8);
        assert_eq!(maxe, 0.0);
    }

    #[test]
    fn damaged_payloads_are_errors() {
        let dims = [4, 4, 4];
        let (p, ..) = encode(&field(64, 1), dims, DType::F32, 0.01);
        let mut y = Vec::new();
        assert!(decode(&p[..p.len() - 1], dims, DType::F32, 0.01, &mut y).is_err());
        let mut extra = p.clone();
        extra.push(0);
        assert!(decode(&extra, dims, DType::F32, 0.01, &mut y).is_err());
        let mut bad = p.clone();
        bad[0] = 0xE0;
        assert!(decode(&bad, dims, DType::F32, 0.01, &mut y).is_err());
    }

    /// Cases for tools/kernel_emu/fast_check.sh (the device kernels run
    /// on the CPU against this coder): per case the field's extents, the
    /// brick, the bound, the float32 values, each brick's payload and the
    /// decoded values.
    #[test]
    #[ignore]
    fn write_fast_cases() {
        use crate::codec::{code_bricks, decompress, Lifting, MrzReader};
        let Some(path) = std::env::var_os("MULTIRES_FAST_CASES") else {
            return;
        };
        let mut out = Vec::new();
        // Rows of 4 a multiple of 4 apart in the fifth case: the kernels'
        // float4 path; the sixth's 4219 blocks: LZ_SCAN's second round;
        // the last three: bricks of whole blocks of each shape over
        // several of LZ_CODE's tiles (256 blocks); then smooth fields at
        // bounds near their noise and above it: blocks of 0-3 magnitude
        // planes (the kernels' bit-by-bit paths), rate 0 among them.
        let cases: [([usize; 3], [usize; 3], f64); 14] = [
            ([13, 9, 21], [8, 8, 8], 0.01),
            ([1, 37, 50], [1, 16, 16], 0.05),
            ([1, 1, 300], [1, 1, 128], 0.002),
            ([10, 12, 14], [6, 12, 7], 1e-4),
            ([12, 16, 24], [8, 8, 12], 1e-3),
            ([1, 1, 270_000], [1, 1, 270_000], 1e-3),
            ([40, 36, 70], [32, 32, 32], 5e-3),
            ([1, 200, 256], [1, 256, 256], 1e-3),
            ([1, 1, 40_000], [1, 1, 32_768], 1e-2),
            ([16, 16, 64], [16, 16, 64], 0.03),
            ([8, 32, 64], [8, 32, 64], 3.0),
            ([1, 64, 64], [1, 64, 64], 1.5),
            ([1, 1, 8192], [1, 1, 8192], 20.0),
            ([12, 20, 28], [12, 20, 28], 2.0),
        ];
        for (ci, (dims, brick, e)) in cases.into_iter().enumerate() {
            let n: usize = dims.iter().product();
            let mut x: Vec<f32> = if ci < 9 {
                field(n, ci as u64).into_iter().map(|v| v as f32).collect()
            } else {
                // Smooth along every axis, with noise of 0.1.
                let noise = field(n, ci as u64);
                (0..n)
                    .map(|i| {
                        let (z, y, w) =
                            (i / (dims[1] * dims[2]), i / dims[2] % dims[1], i % dims[2]);
                        let v = 20.0 * (0.05 * w as f64).sin() * (0.03 * y as f64).cos()
                            + 5.0 * (0.02 * z as f64).sin()
                            + 0.1 * (noise[i] - ((i as f64) * 0.01).sin() * 50.0);
                        v as f32
                    })
                    .collect()
            };
            x[3] = f32::NAN;
            x[n / 2] = 3e9;
            x[n - 1] = f32::NEG_INFINITY;
            let shape: Vec<usize> = dims.iter().copied().filter(|_| true).collect();
            let shape: Vec<usize> = if dims[0] == 1 {
                shape[1..].to_vec()
            } else {
                shape
            };
            let v = super::super::Volume::of(&shape, super::super::Values::F32(x.clone())).unwrap();
            let mut opts =
                super::super::CodecOptions::new(Lifting::Lorenzo, super::super::ErrorBound::Abs(e));
            opts.brick = Some(brick);
            let coded = code_bricks(v.view(), &opts, e, brick, &|_| {}).unwrap();
            let (bytes, _) = super::super::compress(&v, &opts, &|_| {}).unwrap();
            let mut r = MrzReader::from_bytes(bytes, "case").unwrap();
            let back = decompress(&mut r, None, &|_| {}).unwrap();
            let super::super::Values::F32(y) = back.data else {
                panic!("float32")
            };
            for d in dims.iter().chain(&brick) {
                out.extend((*d as u64).to_le_bytes());
            }
            out.extend(e.to_le_bytes());
            x.iter().for_each(|v| out.extend(v.to_le_bytes()));
            out.extend((coded.len() as u64).to_le_bytes());
            for c in &coded {
                out.extend((c.0.len() as u64).to_le_bytes());
                out.extend(&c.0);
            }
            y.iter().for_each(|v| out.extend(v.to_le_bytes()));
        }
        std::fs::write(path, out).unwrap();
    }
}
