//! The planner's recipe: per scale, direct summation or overlap-save FFT, and
//! for FFT scales the segment (FFT) size. A plain value that can be unit
//! tested and printed with `--explain`, like rustfft's planner designs a
//! recipe before it builds anything.

use super::Algorithm;
use std::fmt;

/// Relative cost constants (nanoseconds per output sample, roughly, measured
/// on a 2-core x86-64 with AVX2; only their ratios matter to the choice).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Per mask tap of a direct sum (real signal; doubled for complex).
    pub direct_per_tap: f64,
    /// Per output and per log2(P) of one complex FFT of size P.
    pub fft_per_log: f64,
    /// Per output: spectrum product and the store.
    pub fft_fixed: f64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            direct_per_tap: 0.25,
            fft_per_log: 0.45,
            fft_fixed: 1.5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleAlgorithm {
    Direct,
    /// Overlap-save in FFT group `group`.
    Fft {
        group: usize,
    },
}

/// Scales sharing one FFT size: the input segments' spectra are computed once
/// per group and reused by every scale in it.
#[derive(Debug, Clone, PartialEq)]
pub struct FftGroup {
    pub size: usize,
    /// Largest half-length h in the group; every kernel is centred in 2 hmax + 1.
    pub half: usize,
    /// Outputs per segment: size - 2 half.
    pub valid: usize,
    /// User scale indices.
    pub scales: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    pub per_scale: Vec<ScaleAlgorithm>,
    pub groups: Vec<FftGroup>,
    /// Length of the (oversampled) signal the recipe is for.
    pub signal_len: usize,
    pub halves: Vec<usize>,
    pub algorithm: Algorithm,
}

/// The length a stream's recipe is designed for: longer than any FFT size
/// the search considers, so the recipe is the one of every long signal.
pub(crate) const STREAM_DESIGN_LEN: usize = 1 << 40;

/// Largest FFT size the search considers, as a multiple of the smallest one
/// that holds the mask: the cost per output rises again well before it.
const SEARCH_SPAN: usize = 64;

/// The FFT size with the least cost per output for a mask of length `len` on
/// a signal of `n` samples, among powers of two. The cost per output,
/// size / valid outputs, does not depend on `n`, and `n` only caps the
/// search; so every signal longer than the chosen size gets the same size,
/// and a stream (which does not know its length) can use the same recipe
/// as the whole transform and give the same bits.
pub fn best_fft_size(len: usize, n: usize, cost: &CostModel) -> (usize, f64) {
    let mut p = (len + 1).next_power_of_two().max(16);
    let cap = (n + len)
        .next_power_of_two()
        .min(p.saturating_mul(SEARCH_SPAN))
        .max(p);
    let mut best = (p, f64::INFINITY);
    while p <= cap {
        let valid = p - len + 1;
        let c = p as f64 * (cost.fft_per_log * (p as f64).log2() + cost.fft_fixed) / valid as f64;
        if c < best.1 {
            best = (p, c);
        }
        p *= 2;
    }
    best
}

pub fn direct_cost(len: usize, complex_signal: bool, cost: &CostModel) -> f64 {
    len as f64 * cost.direct_per_tap * if complex_signal { 2.0 } else { 1.0 }
}

impl Recipe {
    pub fn design(
        halves: &[usize],
        n: usize,
        algorithm: Algorithm,
        complex_signal: bool,
        cost: &CostModel,
    ) -> Recipe {
        let mut per_scale = Vec::with_capacity(halves.len());
        let mut sizes: Vec<(usize, usize)> = Vec::new(); // (size, scale)
        for (i, &h) in halves.iter().enumerate() {
            let len = 2 * h + 1;
            let (p, fft) = best_fft_size(len, n, cost);
            let direct = direct_cost(len, complex_signal, cost);
            let use_fft = match algorithm {
                Algorithm::Direct => false,
                Algorithm::Fft => true,
                Algorithm::Auto => fft < direct,
            };
            if use_fft {
                sizes.push((p, i));
                per_scale.push(ScaleAlgorithm::Fft { group: usize::MAX });
            } else {
                per_scale.push(ScaleAlgorithm::Direct);
            }
        }
        sizes.sort();
        let mut groups: Vec<FftGroup> = Vec::new();
        for (p, i) in sizes {
            if groups.last().map(|g| g.size) != Some(p) {
                groups.push(FftGroup {
                    size: p,
                    half: 0,
                    valid: 0,
                    scales: Vec::new(),
                });
            }
            let gi = groups.len() - 1;
            let g = &mut groups[gi];
            g.half = g.half.max(halves[i]);
            g.valid = p - 2 * g.half;
            g.scales.push(i);
            per_scale[i] = ScaleAlgorithm::Fft { group: gi };
        }
        Recipe {
            per_scale,
            groups,
            signal_len: n,
            halves: halves.to_vec(),
            algorithm,
        }
    }

    pub fn direct_count(&self) -> usize {
        self.per_scale
            .iter()
            .filter(|a| **a == ScaleAlgorithm::Direct)
            .count()
    }
}

impl fmt::Display for Recipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stream = self.signal_len >= STREAM_DESIGN_LEN;
        if stream {
            writeln!(
                f,
                "recipe for {} scales on a stream (every signal past the largest FFT size; algorithm {}):",
                self.per_scale.len(),
                self.algorithm
            )?;
        } else {
            writeln!(
                f,
                "recipe for {} scales on {} samples (algorithm {}):",
                self.per_scale.len(),
                self.signal_len,
                self.algorithm
            )?;
        }
        let direct: Vec<usize> = (0..self.per_scale.len())
            .filter(|&i| self.per_scale[i] == ScaleAlgorithm::Direct)
            .collect();
        if !direct.is_empty() {
            let lens: Vec<usize> = direct.iter().map(|&i| 2 * self.halves[i] + 1).collect();
            writeln!(
                f,
                "  direct sum: {} scales, mask lengths {}..={}",
                direct.len(),
                lens.iter().min().unwrap_or(&0),
                lens.iter().max().unwrap_or(&0)
            )?;
        }
        for g in &self.groups {
            let lens: Vec<usize> = g.scales.iter().map(|&i| 2 * self.halves[i] + 1).collect();
            write!(
                f,
                "  overlap-save FFT size {:>7}: {:>4} scales, mask lengths {}..={}, {} outputs per segment",
                g.size,
                g.scales.len(),
                lens.iter().min().unwrap_or(&0),
                lens.iter().max().unwrap_or(&0),
                g.valid,
            )?;
            if stream {
                writeln!(f)?;
            } else {
                writeln!(f, ", {} segments", self.signal_len.div_ceil(g.valid))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_masks_go_direct_long_masks_fft() {
        let halves = vec![1, 8, 1600];
        let r = Recipe::design(
            &halves,
            100_000,
            Algorithm::Auto,
            false,
            &CostModel::default(),
        );
        assert_eq!(r.per_scale[0], ScaleAlgorithm::Direct);
        assert!(matches!(r.per_scale[2], ScaleAlgorithm::Fft { .. }));
        let g = &r.groups[0];
        assert!(g.size >= 3201 && g.valid == g.size - 3200);
    }

    #[test]
    fn forced_algorithms_are_obeyed() {
        let halves = vec![1, 500];
        let r = Recipe::design(
            &halves,
            1000,
            Algorithm::Direct,
            false,
            &CostModel::default(),
        );
        assert_eq!(r.direct_count(), 2);
        let r = Recipe::design(&halves, 1000, Algorithm::Fft, false, &CostModel::default());
        assert_eq!(r.direct_count(), 0);
        assert_eq!(r.groups.iter().map(|g| g.scales.len()).sum::<usize>(), 2);
    }

    #[test]
    fn long_signals_share_one_recipe() {
        // What streaming relies on: past the largest FFT size, the length
        // no longer changes the recipe.
        let halves = vec![3, 40, 700, 5000];
        let cost = CostModel::default();
        let far = Recipe::design(&halves, 1 << 40, Algorithm::Auto, false, &cost);
        let top = far.groups.iter().map(|g| g.size).max().unwrap_or(0);
        for n in [top, top + 1, 3 * top + 17, 1 << 30] {
            let r = Recipe::design(&halves, n, Algorithm::Auto, false, &cost);
            assert_eq!(
                (r.per_scale, r.groups),
                (far.per_scale.clone(), far.groups.clone())
            );
        }
    }

    #[test]
    fn fft_size_never_exceeds_what_the_signal_needs() {
        let (p, _) = best_fft_size(33, 5, &CostModel::default());
        assert_eq!(p, 64);
    }
}
