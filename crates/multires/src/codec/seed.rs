//! The seed's experiment (Kessler, Table 3): the Haar transform of a grey
//! image, details below a per-level threshold zeroed (T on the finest
//! level, T/2 on the next, ...), the survivors packed as (Morton key,
//! value) pairs sorted by key, and the inverse from the packed pairs.

use super::{lifting, morton, Lifting};
use rayon::prelude::*;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct SeedRun {
    pub values: usize,
    pub survivors: usize,
    /// Values over survivors, the seed's "compression".
    pub ratio: f64,
    pub forward_s: f64,
    pub inverse_s: f64,
    /// The image rebuilt from the survivors.
    pub rebuilt: Vec<f64>,
    pub max_error: f64,
    pub psnr: f64,
}

/// Runs the experiment on a ny x nx image (grey levels) with threshold `t`.
pub fn run(img: &[f64], ny: usize, nx: usize, t: f64) -> SeedRun {
    let dims = [1, ny, nx];
    let levels = lifting::levels_for(dims, 32);
    let t0 = Instant::now();
    let mut c = img.to_vec();
    lifting::forward(Lifting::Haar, false, &mut c, dims, levels);
    // Threshold per level and pack the survivors by Morton key.
    let mut pairs: Vec<(u64, f64)> = c
        .par_iter()
        .enumerate()
        .filter_map(|(i, &v)| {
            let (y, x) = (i / nx, i % nx);
            let lv = lifting::detail_level([0, y, x], dims, levels);
            let keep = lv == levels || v.abs() >= t / (1u64 << lv.min(62)) as f64;
            keep.then(|| (morton::key(0, y, x, false), v))
        })
        .collect();
    pairs.par_sort_unstable_by_key(|p| p.0);
    let forward_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let mut d = vec![0.0; ny * nx];
    for &(k, v) in &pairs {
        let (y, x) = morton::decode2(k);
        d[y * nx + x] = v;
    }
    lifting::inverse(Lifting::Haar, false, &mut d, dims, levels);
    let inverse_s = t1.elapsed().as_secs_f64();
    let (mut maxe, mut sse) = (0f64, 0f64);
    for (a, b) in img.iter().zip(&d) {
        maxe = maxe.max((a - b).abs());
        sse += (a - b).powi(2);
    }
    SeedRun {
        values: img.len(),
        survivors: pairs.len(),
        ratio: img.len() as f64 / pairs.len().max(1) as f64,
        forward_s,
        inverse_s,
        rebuilt: d,
        max_error: maxe,
        psnr: super::psnr(255.0, sse, img.len()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn zero_threshold_keeps_everything_and_rebuilds_exactly() {
        let (ny, nx) = (37, 50);
        let img: Vec<f64> = (0..ny * nx).map(|i| ((i * 7919) % 256) as f64).collect();
        let r = super::run(&img, ny, nx, 0.0);
        assert_eq!(r.survivors, ny * nx);
        assert!(r.max_error < 1e-9, "{}", r.max_error);
    }

    #[test]
    fn smooth_images_compress_and_thresholds_bound_nothing_wild() {
        let (ny, nx) = (128, 128);
        let img: Vec<f64> = (0..ny * nx)
            .map(|i| {
                let (y, x) = ((i / nx) as f64, (i % nx) as f64);
                127.0 + 100.0 * ((x / 20.0).sin() * (y / 30.0).cos())
            })
            .collect();
        let r = super::run(&img, ny, nx, 10.0);
        assert!(r.ratio > 5.0, "ratio {}", r.ratio);
        assert!(r.max_error < 40.0, "max error {}", r.max_error);
        let harsh = super::run(&img, ny, nx, 100.0);
        assert!(harsh.ratio > r.ratio);
    }
}
