//! Seed 000 III-A: all masks in one packed array, concatenated in increasing
//! order of length, with a length array and its exclusive scan (the offsets).
//! Every element is computed independently from its global index, as one GPU
//! thread per element would.

use super::{CwtError, CwtOptions, Normalization};
use crate::scales::Scale;
use num_complex::Complex64;
use rayon::prelude::*;

/// How one mask is sampled from the mother wavelet.
#[derive(Debug, Clone, Copy)]
pub struct MaskSampling {
    pub numerator: f64,
    pub denominator: f64,
    pub skew: f64,
    pub shift: f64,
    pub amplitude: f64,
}

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
        Ok(Self::layout(options, scales, memory_limit)?.with_values(options, scales))
    }

    /// Lengths, order and offsets only (`values` left empty): all a GPU needs
    /// to generate the masks itself, one thread per element.
    pub fn layout(
        options: &CwtOptions,
        scales: &[Scale],
        memory_limit: u64,
    ) -> Result<Self, CwtError> {
        Self::layout_capped(options, scales, memory_limit, usize::MAX)
    }

    /// `layout` with every half-length at most `cap` (the taps beyond it
    /// only ever meet zeros: see `CwtPlan`).
    pub fn layout_capped(
        options: &CwtOptions,
        scales: &[Scale],
        memory_limit: u64,
        cap: usize,
    ) -> Result<Self, CwtError> {
        let b = options.wavelet.half_support();
        let mut halves = Vec::with_capacity(scales.len());
        let mut total: u128 = 0;
        for s in scales {
            let h = half_length(b, *s).min(cap as f64);
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
        Ok(PackedMasks {
            values: Vec::new(),
            lengths,
            offsets,
            scale_index,
            packed_of,
        })
    }

    /// Taps of all masks together.
    pub fn total_taps(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0) + self.lengths.last().copied().unwrap_or(0)
    }

    /// Per packed mask (after `layout`): the numbers its samples are made of,
    /// t = (k (1 + skew) + shift) * den / num and m[k] = psi(t) * amplitude.
    pub fn sampling(&self, options: &CwtOptions, scales: &[Scale]) -> Vec<MaskSampling> {
        self.scale_index
            .iter()
            .map(|&i| {
                let s = scales[i];
                let user = options.scales[i].value();
                let skew = options
                    .timing_skew
                    .as_ref()
                    .map_or(0.0, |f| f.eval(i, user));
                let offset = options
                    .timing_offset
                    .as_ref()
                    .map_or(0.0, |f| f.eval(i, user));
                let gain = options
                    .amplitude_gain
                    .as_ref()
                    .map_or(1.0, |f| f.eval(i, user));
                let norm = match options.normalization {
                    Normalization::L2 => (s.denominator / s.numerator).sqrt(),
                    Normalization::L1 => s.denominator / s.numerator,
                };
                MaskSampling {
                    numerator: s.numerator,
                    denominator: s.denominator,
                    skew,
                    shift: offset * (s.value() / user),
                    amplitude: gain * norm,
                }
            })
            .collect()
    }

    /// Fills `values` on the CPU, one independent evaluation per element.
    pub fn with_values(mut self, options: &CwtOptions, scales: &[Scale]) -> Self {
        let acc = self.total_taps();
        let sampling = self.sampling(options, scales);
        let (offsets, lengths) = (&self.offsets, &self.lengths);
        let mut values = vec![Complex64::new(0.0, 0.0); acc];
        let wavelet = &options.wavelet;
        // Families with a whole-grid evaluation (Morse): mask by mask.
        let grid = |p: usize| {
            let m = &sampling[p];
            let h = (lengths[p] / 2) as f64;
            let dt = (1.0 + m.skew) * m.denominator / m.numerator;
            let t0 = (-h * (1.0 + m.skew) + m.shift) * m.denominator / m.numerator;
            wavelet.psi_grid(t0, dt, lengths[p])
        };
        if wavelet.has_psi_grid() {
            let masks: Vec<Vec<Complex64>> = (0..lengths.len())
                .into_par_iter()
                .map(|p| {
                    let m = &sampling[p];
                    match grid(p) {
                        Some(v) => v.into_iter().map(|c| c * m.amplitude).collect(),
                        None => {
                            let h = (lengths[p] / 2) as f64;
                            (0..lengths[p])
                                .map(|i| {
                                    let k = i as f64 - h;
                                    let t = (k * (1.0 + m.skew) + m.shift) * m.denominator
                                        / m.numerator;
                                    wavelet.psi(t) * m.amplitude
                                })
                                .collect()
                        }
                    }
                })
                .collect();
            for (p, m) in masks.into_iter().enumerate() {
                values[offsets[p]..offsets[p] + m.len()].copy_from_slice(&m);
            }
            self.values = values;
            return self;
        }
        values.par_iter_mut().enumerate().for_each(|(gid, v)| {
            // Which mask holds element gid: the last offset <= gid.
            let p = offsets.partition_point(|&o| o <= gid) - 1;
            let m = &sampling[p];
            let h = (lengths[p] / 2) as f64;
            let k = (gid - offsets[p]) as f64 - h;
            // Division as late as possible: (k(1+ε)+δ) * den / num.
            let t = (k * (1.0 + m.skew) + m.shift) * m.denominator / m.numerator;
            *v = wavelet.psi(t) * m.amplitude;
        });
        self.values = values;
        self
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
