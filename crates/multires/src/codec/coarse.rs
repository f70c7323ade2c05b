//! Coarse views: a field at 2^-level resolution per axis, the values of
//! each brick at stride 2^level (its points 0, 2^level, 2 * 2^level, ...
//! counted from the brick's origin). The interpolation stores its passes
//! coarsest first, so an `interp` brick's view is read and decoded from
//! the front of its stream (and its outliers) only: time and bytes read
//! grow with the view, not the field. The values equal the whole
//! decode's at those points, so each is within the file's bound of the
//! original there (the original decimated to the view's positions).

use super::bricks::correct;
use super::*;

/// The deepest level a view may ask for (2^16 points between kept ones).
pub const MAX_COARSE_LEVEL: usize = 16;

/// The positions a coarse view keeps in `range` of an axis cut into
/// bricks of `brick` points: each brick's 0, 2^level, ... from its origin.
pub fn coarse_positions(brick: usize, level: usize, range: (usize, usize)) -> Vec<usize> {
    let st = 1usize << level;
    let brick = brick.max(1);
    let mut v = Vec::with_capacity(
        coarse_below(range.1, brick, level) - coarse_below(range.0, brick, level),
    );
    let mut b0 = range.0 / brick * brick;
    while b0 < range.1 {
        let end = (b0 + brick).min(range.1);
        v.extend((b0..end).step_by(st).filter(|&p| p >= range.0));
        b0 += brick;
    }
    v
}

/// How many kept positions lie below `p` on such an axis.
fn coarse_below(p: usize, brick: usize, level: usize) -> usize {
    let st = 1usize << level;
    let per = (brick - 1) / st + 1;
    (p / brick) * per + (p % brick).div_ceil(st)
}

/// A brick's coarse view: values (rounded as placed) or, lossless, bits.
enum CoarseBrick {
    Values(Vec<f64>),
    Bits(Vec<u64>),
}

/// Brick `k`'s values at stride 2^level (`interp::coarse_dims` of them,
/// row order). An `interp` brick of the pass order reads its step, its
/// stream's header, the chunks holding the coarse passes and its
/// outliers; other bricks are read and decoded whole, then subsampled.
fn coarse_brick(
    r: &MrzReader,
    k: usize,
    level: usize,
    sc: &mut BrickScratch,
) -> Result<CoarseBrick, CodecError> {
    let (h, grid) = (r.header(), r.grid());
    let (_, ext) = grid.bounds(k);
    let n: usize = ext.iter().product();
    let bad = |what: String| CodecError::CorruptBrick {
        path: r.path().to_string(),
        brick: k,
        place: grid.describe(k),
        what,
    };
    let o = interp::Order::of_version(h.version);
    let cd = interp::coarse_dims(ext, level);
    let m: usize = cd.iter().product();
    if level > 0 && !h.is_lossless() && h.transform == Lifting::Interp && o == interp::Order::Passes
    {
        let words = |b: &[u8]| -> Vec<u32> {
            b.get(8..)
                .unwrap_or_default()
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect()
        };
        let (head, len) = r.read_brick_part(k, 0..16)?;
        if head.len() < 16 || !len.is_multiple_of(4) {
            return Err(bad(format!(
                "{len} bytes, not a brick (a step and whole words)"
            )));
        }
        let q = f64::from_le_bytes(head[0..8].try_into().map_err(|_| bad("step".into()))?);
        if !(q.is_finite() && q > 0.0) {
            return Err(bad(format!(
                "quantization step {q} is not a positive number"
            )));
        }
        let total = (len as usize - 8) / 4;
        let w = words(&head);
        let need = rans::header_len(w[0], w[1], n).min(total);
        let (hb, _) = r.read_brick_part(k, 0..(8 + 4 * need) as u64)?;
        let rh = rans::read_header_of(&words(&hb), total, n).map_err(bad)?;
        let upto = rans::prefix_words(&rh, n, m);
        let (pb, _) = r.read_brick_part(k, 0..(8 + 4 * upto) as u64)?;
        let classes = interp::classes(ext, o);
        let used = rans::decode_prefix_into((&words(&pb), total), n, m, &classes, &mut sc.zz)
            .map_err(bad)?;
        interp::inverse_coarse(&sc.zz, ext, q, level, &mut sc.r);
        let (rest, _) = r.read_brick_part(k, (8 + 4 * used) as u64..len)?;
        correct(&mut sc.r, &rest, h.abs_bound, h.dtype).map_err(bad)?;
    } else {
        let p = r.read_brick(k)?;
        decode_brick_with(&p, ext, h, sc).map_err(bad)?;
    }
    let st = 1usize << level;
    let at = |z: usize, y: usize, x: usize| ((z * st) * ext[1] + y * st) * ext[2] + x * st;
    let mut idx = Vec::with_capacity(m);
    for z in 0..cd[0] {
        for y in 0..cd[1] {
            idx.extend((0..cd[2]).map(|x| at(z, y, x)));
        }
    }
    Ok(if h.is_lossless() {
        CoarseBrick::Bits(idx.iter().map(|&i| sc.bits[i]).collect())
    } else {
        CoarseBrick::Values(idx.iter().map(|&i| sc.r[i]).collect())
    })
}

/// The coarse view at `level` of the bricks of an open .mrz that meet
/// `region` (of the coded grid; all when None): the values at the kept
/// positions inside it (`coarse_positions`), with those positions per
/// axis [z, y, x].
pub fn decompress_coarse(
    r: &mut MrzReader,
    region: Option<Region>,
    level: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(Volume, [Vec<usize>; 3]), CodecError> {
    if level > MAX_COARSE_LEVEL {
        return Err(CodecError::Invalid(format!(
            "level {level}: a coarse view keeps every 2^level-th point, for levels 0 to {MAX_COARSE_LEVEL}"
        )));
    }
    let h = r.header().clone();
    let grid = r.grid();
    let region = region.unwrap_or(full_region(h.dims));
    if (0..3).any(|a| region[a].0 >= region[a].1 || region[a].1 > h.dims[a]) {
        return Err(CodecError::Invalid(format!(
            "region {region:?} is not inside the field {:?}",
            h.dims
        )));
    }
    let pos = [0, 1, 2].map(|a| coarse_positions(grid.brick[a], level, region[a]));
    let od = pos.clone().map(|p| p.len());
    if od.contains(&0) {
        return Err(CodecError::Invalid(format!(
            "region {region:?} holds none of the points the level {level} view keeps \
             (every {}th of each brick of {:?}, from its origin); take a larger region or a lower level",
            1usize << level,
            grid.brick
        )));
    }
    let base = [0, 1, 2].map(|a| coarse_below(region[a].0, grid.brick[a], level));
    let wanted = bricks_in(&grid, &region);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let scratch = ScratchPool::default();
    let views: Vec<(usize, CoarseBrick)> = wanted
        .par_iter()
        .map(|&k| {
            let c = scratch.with(|sc| coarse_brick(r, k, level, sc))?;
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
            Ok((k, c))
        })
        .collect::<Result<_, CodecError>>()?;
    let mut out = Values::zeros(h.dtype, od.iter().product());
    with_values!(&mut out, o => {
        for (k, c) in &views {
            place_coarse(o, (&grid, *k, level), (region, base, od), c, h.dtype);
        }
    });
    Volume::of(&od[3 - h.ndim..], out).map(|v| (v, pos))
}

/// Places brick `k`'s view `c` at its points inside `region` of the
/// output (`od` points per axis, the first kept position of the region
/// at `base`).
fn place_coarse<U: Sample>(
    o: &mut [U],
    (grid, k, level): (&BrickGrid, usize, usize),
    (region, base, od): (Region, [usize; 3], [usize; 3]),
    c: &CoarseBrick,
    dtype: DType,
) {
    let (s, ext) = grid.bounds(k);
    let cd = interp::coarse_dims(ext, level);
    let st = 1usize << level;
    let out_at = |a: usize, i: usize| -> Option<usize> {
        let p = s[a] + i * st;
        (region[a].0..region[a].1)
            .contains(&p)
            .then(|| coarse_below(p, grid.brick[a], level) - base[a])
    };
    let mut j = 0;
    for z in 0..cd[0] {
        let oz = out_at(0, z);
        for y in 0..cd[1] {
            let oy = out_at(1, y);
            for x in 0..cd[2] {
                if let (Some(oz), Some(oy), Some(ox)) = (oz, oy, out_at(2, x)) {
                    let at = (oz * od[1] + oy) * od[2] + ox;
                    o[at] = match c {
                        CoarseBrick::Values(v) => U::of_f64(v[j]),
                        CoarseBrick::Bits(b) => U::of_bits64(b[j], dtype),
                    };
                }
                j += 1;
            }
        }
    }
}
