//! Seed 000 III-A: all masks in one packed array, concatenated in increasing
//! order of length, with a length array and its exclusive scan (the offsets).
//! Every element is computed independently from its global index, as one GPU
//! thread per element would.

use super::{CwtError, CwtOptions, Normalization};
use crate::scales::Scale;
use num_complex::Complex64;
use rayon::prelude::*;

#[derive(Debug, Clone)]
pub struct PackedMasks {
    /// m_s[k] for k = -h..=h of every mask, shortest mask first.
    pub values: Vec<Complex64>,
    /// Length 2h + 1 of each packed mask.
    pub lengths: Vec<usize>,
    /// Exclusive scan of `lengths`: where each mask starts in `values`.
    pub offsets: Vec<usize>,
    /// The user's scale index of each packed mask.
    pub scale_index: Vec<usize>,
    /// The packed position of each user scale.
    pub packed_of: Vec<usize>,
}

/// h = ceil(B s), guarding against B s landing a rounding error above an integer.
pub fn half_length(half_support: f64, scale: Scale) -> f64 {
    let x = half_support * scale.numerator / scale.denominator;
    let r = x.round();
    if (x - r).abs() <= 1e-9 * x.max(1.0) {
        r
    } else {
        x.ceil()
    }
}

impl PackedMasks {
    /// `scales` are the scales the masks are sampled at (after oversampling).
    pub fn generate(
        options: &CwtOptions,
        scales: &[Scale],
        memory_limit: u64,
    ) -> Result<Self, CwtError> {
        let b = options.wavelet.half_support();
        let mut halves = Vec::with_capacity(scales.len());
        let mut total: u128 = 0;
        for s in scales {
            let h = half_length(b, *s);
            // 2h+1 taps of 16 bytes each; refuse before allocating.
            let taps = 2.0 * h + 1.0;
            if taps * 16.0 > memory_limit as f64 {
                return Err(CwtError::TooLarge {
                    what: format!("the mask for scale {}", s.value()),
                    need: (taps * 16.0) as u128,
                    limit: memory_limit,
                });
            }
            halves.push(h as usize);
            total += 2 * h as u128 + 1;
        }
        if total * 16 > memory_limit as u128 {
            return Err(CwtError::TooLarge {
                what: format!("the packed masks ({total} taps)"),
                need: total * 16,
                limit: memory_limit,
            });
        }
        let mut scale_index: Vec<usize> = (0..scales.len()).collect();
        scale_index.sort_by_key(|&i| (halves[i], i));
        let mut packed_of = vec![0; scales.len()];
        for (p, &i) in scale_index.iter().enumerate() {
            packed_of[i] = p;
        }
        let lengths: Vec<usize> = scale_index.iter().map(|&i| 2 * halves[i] + 1).collect();
        let mut offsets = Vec::with_capacity(lengths.len());
        let mut acc = 0usize;
        for &l in &lengths {
            offsets.push(acc);
            acc += l;
        }
        let mut values = vec![Complex64::new(0.0, 0.0); acc];
        let wavelet = &options.wavelet;
        values.par_iter_mut().enumerate().for_each(|(gid, v)| {
            // Which mask holds element gid: the last offset <= gid.
            let p = offsets.partition_point(|&o| o <= gid) - 1;
            let i = scale_index[p];
            let s = scales[i];
            let h = (lengths[p] / 2) as f64;
            let k = (gid - offsets[p]) as f64 - h;
            let sv = s.value();
            let skew = options
                .timing_skew
                .as_ref()
                .map_or(0.0, |f| f.eval(i, options.scales[i].value()));
            let offset = options
                .timing_offset
                .as_ref()
                .map_or(0.0, |f| f.eval(i, options.scales[i].value()));
            let gain = options
                .amplitude_gain
                .as_ref()
                .map_or(1.0, |f| f.eval(i, options.scales[i].value()));
            // Division as late as possible: (k(1+ε)+δ) * den / num.
            let t = (k * (1.0 + skew) + offset * (sv / options.scales[i].value())) * s.denominator
                / s.numerator;
            let norm = match options.normalization {
                Normalization::L2 => (s.denominator / s.numerator).sqrt(),
                Normalization::L1 => s.denominator / s.numerator,
            };
            *v = wavelet.psi(t) * (gain * norm);
        });
        Ok(PackedMasks {
            values,
            lengths,
            offsets,
            scale_index,
            packed_of,
        })
    }

    /// The mask of user scale `i`, k = -h..=h.
    pub fn mask(&self, i: usize) -> &[Complex64] {
        let p = self.packed_of[i];
        &self.values[self.offsets[p]..self.offsets[p] + self.lengths[p]]
    }

    pub fn half(&self, i: usize) -> usize {
        self.lengths[self.packed_of[i]] / 2
    }
}
