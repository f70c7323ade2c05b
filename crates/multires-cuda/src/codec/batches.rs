//! How bricks are planned into batches and batches into slots, per GPU.

use super::*;

/// Slots a GPU at most: `default`; one while profiling, so that each
/// phase is the device's own time.
pub(super) fn max_slots(default: usize) -> usize {
    if profiling() {
        1
    } else {
        default
    }
}

/// Slots a GPU for a field read from the host: two, so one batch's host
/// work (gathering into pinned memory, copies) overlaps the other's kernels.
pub(super) const HOST_SLOTS: usize = 2;
/// Slots a GPU for a field on the device: as many batches at once as
/// memory allows. The rANS kernels last one chunk's chain however few
/// bricks a launch holds (about 15 ms on a smooth field), so batches one
/// after another cost a chain each; side by side on their own streams
/// they cost about one.
pub(super) const RESIDENT_SLOTS: usize = 16;
/// A field on the device is cut into about this many batches (more where
/// brick shapes differ), so the host work of one overlaps the kernels of
/// the others.
pub(super) const RESIDENT_SHARES: usize = 8;

/// Batches for each GPU's slab of a field split over `gpus` (`dense` is
/// asked only for several GPUs): eight (one
/// GPU's whole field) for a dense field on several GPUs, whose many
/// payload bytes a batch keep its host stages on the tail; otherwise
/// batches of the size one GPU's whole field is cut into (at least two a
/// slab), since a sparse batch's host work and its kernels' chains cost
/// the same however few values it holds. On two H100s at 1024^3
/// the smooth field coded at 191-211 GB/s and decoded at
/// 234-242 with four a slab, against 172-198 and 202-226 with eight; the
/// turbulent one coded at 169 GB/s with four and 202 with eight.
pub(super) fn slab_shares(
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
/// other. At 1024^3 no GPU has more than 13.
pub(super) const SLAB_DECODE_SLOTS: usize = 32;

/// Bytes a value above which a file decodes in `RESIDENT_SHARES`
/// batches a slab (`decompress_slabs`).
pub(super) const DENSE_FILE_BYTES_PER_VALUE: f64 = 0.05;

/// How a run's bricks go through the slots.
pub(super) struct Plan<T> {
    /// Batches of bricks of one shape: a group's after the group before,
    /// the largest first within a group.
    pub(super) batches: Vec<([usize; 3], Vec<T>)>,
    /// The group of each batch.
    pub(super) group: Vec<usize>,
    /// Slots a GPU.
    pub(super) slots: usize,
}

impl<T> Plan<T> {
    /// Values of each batch.
    pub(super) fn caps(&self) -> Vec<usize> {
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
pub(super) fn plan_batches<T>(
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
/// (a 1.9 M batch 1.7 ms), so halving every late batch (a taper) lost
/// on two GPUs. GPU 0's slab of 1024^3 ends in a 56 M batch
/// and a 7.6 M one, GPU 1's thin layer in small ones: with the cut, two
/// H100s coded at 219-222 GB/s against 215-218.
pub(super) fn halve_last_large<T>(plan: &mut Plan<T>) {
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
pub(super) const RAMP: [usize; 4] = [8, 4, 2, 1];

/// Where a decode's batches all start at once, the device gets its first
/// values when the smallest batch's slot has read its rANS headers (50-70
/// us a brick on the host) and its rANS chain has run. The whole 1024^3
/// field and GPU 1's slab have small batches (their thin brick layer's
/// shapes, 16-22 bricks in batches of at most eight) that are done by 2.5-4
/// ms, while their large batches' headers are still being read; GPU 0's
/// slab has four bricks in them, and ended about 1 ms after GPU 1's
/// (28 of 30 runs, either card). This cuts batches of 8, 4, 2
/// and 1 bricks off the end of the first (largest) batch, the batches kept
/// largest first, where a one-group plan runs every batch at once, its
/// batches of at most eight bricks hold fewer than the ramp's 15 bricks,
/// and the first batch holds more; a slot is added for each, within
/// `slots` and `budget`. Two H100s then decoded 0.5-0.9 ms faster in every
/// pair, where the single lead brick (two million
/// values against GPU 1's 35 million in small batches) did not show.
pub(super) fn ramp_batches<T>(plan: &mut Plan<T>, slots: usize, budget: usize, per_value: usize) {
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
