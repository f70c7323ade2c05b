//! Morton (Z-order) indexing (seed, Listing 1): coefficients that are
//! close in space, and the same place in neighbouring subbands, are close
//! in the stream, which the entropy coder rewards.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Spreads the low 21 bits of `v` two zeros apart (3-D keys).
fn expand3(v: u64) -> u64 {
    let mut x = v & 0x1f_ffff;
    x = (x | (x << 32)) & 0x001f_0000_0000_ffff;
    x = (x | (x << 16)) & 0x001f_0000_ff00_00ff;
    x = (x | (x << 8)) & 0x100f_00f0_0f00_f00f;
    x = (x | (x << 4)) & 0x10c3_0c30_c30c_30c3;
    x = (x | (x << 2)) & 0x1249_2492_4924_9249;
    x
}

/// Spreads the low 32 bits of `v` one zero apart (the seed's expand_bits).
fn expand2(v: u64) -> u64 {
    let mut x = v & 0xffff_ffff;
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    x = (x | (x << 1)) & 0x5555_5555_5555_5555;
    x
}

/// The Morton key of (z, y, x); 2-D (z = 0 throughout) uses the seed's
/// 2-D interleave y1 x1 y2 x2 ...
pub fn key(z: usize, y: usize, x: usize, three_d: bool) -> u64 {
    if three_d {
        expand3(x as u64) | (expand3(y as u64) << 1) | (expand3(z as u64) << 2)
    } else {
        expand2(x as u64) | (expand2(y as u64) << 1)
    }
}

/// The row-major indices of a [z, y, x] brick in Morton order, computed
/// once per brick shape (by `visit`: the order the seed's key sort gives).
pub fn order(dims: [usize; 3]) -> Arc<Vec<u32>> {
    static CACHE: OnceLock<PerShape<Arc<Vec<u32>>>> = OnceLock::new();
    cached(&CACHE, dims, || Arc::new(morton_order(dims)))
}

/// Tables kept per brick shape.
pub(crate) type PerShape<V> = Mutex<HashMap<[usize; 3], V>>;

/// The table of `dims` in `cache`, made by `make` the first time.
pub(crate) fn cached<V: Clone>(
    cache: &'static OnceLock<PerShape<V>>,
    dims: [usize; 3],
    make: impl FnOnce() -> V,
) -> V {
    let cache = cache.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(v) = cache.lock().ok().and_then(|c| c.get(&dims).cloned()) {
        return v;
    }
    let v = make();
    if let Ok(mut c) = cache.lock() {
        c.insert(dims, v.clone());
    }
    v
}

fn morton_order(dims: [usize; 3]) -> Vec<u32> {
    let mut out = Vec::with_capacity(dims.iter().product());
    visit(dims, |z, y, x| {
        out.push(((z * dims[1] + y) * dims[2] + x) as u32)
    });
    out
}

/// Cells of a cube of side `TILE` in key order: (z, y, x) offsets, 3-D
/// and 2-D.
const TILE: usize = 8;
fn tile_cells(three_d: bool) -> &'static [[u8; 3]] {
    static T3: OnceLock<Vec<[u8; 3]>> = OnceLock::new();
    static T2: OnceLock<Vec<[u8; 3]>> = OnceLock::new();
    let make = |three_d: bool| {
        let nz = if three_d { TILE } else { 1 };
        let mut cells = vec![[0u8; 3]; nz * TILE * TILE];
        for z in 0..nz {
            for y in 0..TILE {
                for x in 0..TILE {
                    cells[key(z, y, x, three_d) as usize] = [z as u8, y as u8, x as u8];
                }
            }
        }
        cells
    };
    if three_d {
        T3.get_or_init(|| make(true))
    } else {
        T2.get_or_init(|| make(false))
    }
}

/// Calls `f(z, y, x)` for every cell of a [z, y, x] box in Morton order
/// (increasing `key`), by walking the octree (quadtree in 2-D) of the
/// enclosing power-of-two cube and skipping what lies outside: the order
/// a sort of the keys gives, at a fraction of its cost (per brick shape,
/// it was a quarter of a 256^3 compression).
pub fn visit(dims: [usize; 3], mut f: impl FnMut(usize, usize, usize)) {
    if dims.contains(&0) {
        return;
    }
    let three_d = dims[0] > 1;
    let side = dims.iter().copied().max().unwrap_or(1).next_power_of_two();
    walk(dims, three_d, [0, 0, 0], side.max(TILE), &mut f);
}

fn walk(
    dims: [usize; 3],
    three_d: bool,
    at: [usize; 3],
    side: usize,
    f: &mut impl FnMut(usize, usize, usize),
) {
    if (0..3).any(|a| at[a] >= dims[a]) {
        return;
    }
    if side == TILE {
        let inside = (0..3).all(|a| at[a] + if a == 0 && !three_d { 1 } else { TILE } <= dims[a]);
        for c in tile_cells(three_d) {
            let (z, y, x) = (
                at[0] + c[0] as usize,
                at[1] + c[1] as usize,
                at[2] + c[2] as usize,
            );
            if inside || (z < dims[0] && y < dims[1] && x < dims[2]) {
                f(z, y, x);
            }
        }
        return;
    }
    let h = side / 2;
    let children = if three_d { 8 } else { 4 };
    for c in 0..children {
        let (dz, dy, dx) = ((c >> 2) & 1, (c >> 1) & 1, c & 1);
        walk(
            dims,
            three_d,
            [at[0] + dz * h, at[1] + dy * h, at[2] + dx * h],
            h,
            f,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_table_1_4x4_morton_order() {
        // Table 1 of the seed: the Morton index of each cell of a 4 x 4 array.
        let table = [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]];
        for (y, row) in table.iter().enumerate() {
            for (x, &k) in row.iter().enumerate() {
                assert_eq!(key(0, y, x, false), k, "({y}, {x})");
            }
        }
        let o = order([1, 4, 4]);
        // Visiting in Morton order gives row-major cells 0, 1, 4, 5, 2, 3, ...
        assert_eq!(&o[..6], &[0, 1, 4, 5, 2, 3]);
    }

    #[test]
    fn the_tree_walk_gives_the_sorted_keys_order() {
        for dims in [
            [3, 5, 7],
            [1, 1, 1],
            [2, 9, 4],
            [16, 16, 16],
            [1, 37, 129],
            [1, 8, 8],
            [129, 127, 121],
            [9, 1, 17],
            [1, 300, 5],
        ] {
            let three_d = dims[0] > 1;
            let mut pairs = Vec::new();
            for z in 0..dims[0] {
                for y in 0..dims[1] {
                    for x in 0..dims[2] {
                        pairs.push((
                            key(z, y, x, three_d),
                            ((z * dims[1] + y) * dims[2] + x) as u32,
                        ));
                    }
                }
            }
            pairs.sort_unstable_by_key(|p| p.0);
            let want: Vec<u32> = pairs.into_iter().map(|p| p.1).collect();
            assert_eq!(morton_order(dims), want, "{dims:?}");
        }
        assert!(morton_order([0, 4, 4]).is_empty());
    }

    #[test]
    fn order_is_a_permutation_for_awkward_3d_shapes() {
        for dims in [[3, 5, 7], [1, 1, 1], [2, 9, 4], [16, 16, 16]] {
            let o = order(dims);
            let mut seen = vec![false; dims.iter().product()];
            for &i in o.iter() {
                assert!(!seen[i as usize]);
                seen[i as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "{dims:?}");
        }
        // 3-D keys interleave x, y, z bits.
        assert_eq!(key(1, 0, 0, true), 4);
        assert_eq!(key(0, 1, 1, true), 3);
        assert_eq!(key(1, 1, 1, true), 7);
        assert_eq!(key(0, 0, 2, true), 8);
    }
}

/// Inverse of `expand2`: every other bit, packed.
fn compact2(v: u64) -> u64 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x >> 4)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x >> 8)) & 0x0000_ffff_0000_ffff;
    x = (x | (x >> 16)) & 0x0000_0000_ffff_ffff;
    x
}

/// (y, x) of a 2-D Morton key.
pub fn decode2(k: u64) -> (usize, usize) {
    (compact2(k >> 1) as usize, compact2(k) as usize)
}

#[cfg(test)]
mod decode_tests {
    #[test]
    fn decode2_inverts_key() {
        for (y, x) in [(0, 0), (3, 1), (1023, 77), (65535, 1), (123_456, 654_321)] {
            assert_eq!(super::decode2(super::key(0, y, x, false)), (y, x));
        }
    }
}
