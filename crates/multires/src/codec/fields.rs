//! The synthetic fields of DESIGN.md's codec-3d configuration, seeded, so
//! anyone can rebuild the benchmark inputs: a smooth field (a few broad
//! Gaussian blobs and waves) and a turbulent one (random phases under a
//! k^-5/3 energy spectrum, the inertial range of Kolmogorov turbulence).

use rayon::prelude::*;
use rustfft::{num_complex::Complex64, FftPlanner};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Smooth,
    Turbulent,
}

impl FromStr for FieldKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "smooth" => Ok(FieldKind::Smooth),
            "turbulent" => Ok(FieldKind::Turbulent),
            _ => Err(format!("unknown field '{s}': use smooth or turbulent")),
        }
    }
}

/// An n^3 field (or n^2 when `three_d` is false), row-major, float32.
pub fn make(kind: FieldKind, n: usize, three_d: bool, seed: u64) -> Vec<f32> {
    match kind {
        FieldKind::Smooth => smooth(n, three_d, seed),
        FieldKind::Turbulent => turbulent(n, three_d, seed),
    }
}

fn smooth(n: usize, three_d: bool, seed: u64) -> Vec<f32> {
    let nz = if three_d { n } else { 1 };
    let r = crate::signal::noise(40, seed);
    // Eight blobs: centre (3), width, amplitude.
    let blobs: Vec<[f64; 5]> = (0..8)
        .map(|i| {
            let p = &r[5 * i..5 * i + 5];
            [
                0.5 + 0.4 * p[0],
                0.5 + 0.4 * p[1],
                0.5 + 0.4 * p[2],
                0.15 + 0.08 * p[3],
                p[4],
            ]
        })
        .collect();
    let h = 1.0 / n as f64;
    (0..nz * n * n)
        .into_par_iter()
        .map(|i| {
            let (z, y, x) = (
                (i / (n * n)) as f64 * h,
                ((i / n) % n) as f64 * h,
                (i % n) as f64 * h,
            );
            let z = if three_d { z } else { 0.5 };
            let mut v = (2.0 * std::f64::consts::PI * x).sin() * (std::f64::consts::PI * y).cos()
                + 0.5 * (3.0 * z + x * y).cos();
            for b in &blobs {
                let d2 = (x - b[0]).powi(2) + (y - b[1]).powi(2) + (z - b[2]).powi(2);
                v += b[4] * (-d2 / (2.0 * b[3] * b[3])).exp();
            }
            v as f32
        })
        .collect()
}

fn turbulent(n: usize, three_d: bool, seed: u64) -> Vec<f32> {
    let nz = if three_d { n } else { 1 };
    let total = nz * n * n;
    let phases = crate::signal::noise(total, seed ^ 0x5eed);
    let amps = crate::signal::noise(total, seed ^ 0xa5a5);
    let d = if three_d { 3.0 } else { 2.0 };
    // |u(k)|^2 ~ E(k) / k^(d-1) with E(k) ~ k^(-5/3).
    let expo = -(5.0 / 3.0 + d - 1.0) / 2.0;
    let freq = |i: usize| -> f64 {
        if i <= n / 2 {
            i as f64
        } else {
            i as f64 - n as f64
        }
    };
    let mut spec: Vec<Complex64> = (0..total)
        .into_par_iter()
        .map(|i| {
            let (kz, ky, kx) = (freq(i / (n * n)), freq((i / n) % n), freq(i % n));
            let kz = if three_d { kz } else { 0.0 };
            let k = (kx * kx + ky * ky + kz * kz).sqrt();
            if k < 0.5 {
                return Complex64::new(0.0, 0.0);
            }
            // Rayleigh-ish amplitude spread, uniform phase.
            let a = k.powf(expo) * (1.0 + 0.3 * amps[i]);
            Complex64::from_polar(a, std::f64::consts::PI * phases[i])
        })
        .collect();
    let fft = FftPlanner::<f64>::new().plan_fft_inverse(n);
    let dims = [nz, n, n];
    for axis in (0..3).rev() {
        if dims[axis] < 2 {
            continue;
        }
        fft_axis(&mut spec, dims, axis, &*fft);
    }
    let re: Vec<f64> = spec.par_iter().map(|c| c.re).collect();
    let mean = re.iter().sum::<f64>() / total as f64;
    let sd = (re.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / total as f64).sqrt();
    re.par_iter()
        .map(|v| ((v - mean) / sd.max(1e-300)) as f32)
        .collect()
}

/// In-place FFT along `axis` of a [z, y, x] array, on every core. Lines
/// along a strided axis are gathered a few at a time (whole cache lines of
/// the array) into a buffer of back-to-back lines; along the first axis the
/// work is split by y, so that one plane-sized chunk does not leave the
/// axis to one core.
fn fft_axis(a: &mut [Complex64], dims: [usize; 3], axis: usize, fft: &dyn rustfft::Fft<f64>) {
    use ndarray::{ArrayViewMut2, ArrayViewMut3, Axis};
    let n = dims[axis];
    if axis == 2 {
        a.par_chunks_mut(n).for_each(|row| fft.process(row));
        return;
    }
    // Lines a gather: 8 complex values are two 64-byte cache lines.
    const LINES: usize = 8;
    let lines_of = |mut m: ArrayViewMut2<Complex64>| {
        // m is [along the axis, across it]: its columns are the lines.
        let mut buf = vec![Complex64::new(0.0, 0.0); LINES * n];
        let across = m.ncols();
        for c0 in (0..across).step_by(LINES) {
            let k = LINES.min(across - c0);
            for (z, row) in m.rows().into_iter().enumerate() {
                for j in 0..k {
                    buf[j * n + z] = row[c0 + j];
                }
            }
            fft.process(&mut buf[..k * n]);
            for (z, mut row) in m.rows_mut().into_iter().enumerate() {
                for j in 0..k {
                    row[c0 + j] = buf[j * n + z];
                }
            }
        }
    };
    let mut v = ArrayViewMut3::from_shape(dims, a).expect("the spectrum holds dims' values");
    if axis == 1 {
        // Each z plane is [y, x]: its columns run along y.
        v.axis_iter_mut(Axis(0)).into_par_iter().for_each(lines_of);
    } else {
        // Each y slice is [z, x]: its columns run along z.
        v.axis_iter_mut(Axis(1)).into_par_iter().for_each(lines_of);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_axis_transforms_every_line_as_one_fft_would() {
        // Extents that are not multiples of the lines gathered at once.
        let dims = [5, 6, 11];
        let n: usize = dims.iter().product();
        let x: Vec<Complex64> = (0..n)
            .map(|i| Complex64::new((i as f64 * 0.7).sin(), (i as f64 * 1.3).cos()))
            .collect();
        let mut planner = FftPlanner::<f64>::new();
        for axis in 0..3 {
            let fft = planner.plan_fft_inverse(dims[axis]);
            let mut got = x.clone();
            fft_axis(&mut got, dims, axis, &*fft);
            let stride = [dims[1] * dims[2], dims[2], 1][axis];
            let mut want = x.clone();
            for start in (0..n).filter(|i| (i / stride) % dims[axis] == 0) {
                let mut line: Vec<_> = (0..dims[axis]).map(|k| x[start + k * stride]).collect();
                fft.process(&mut line);
                for (k, v) in line.into_iter().enumerate() {
                    want[start + k * stride] = v;
                }
            }
            assert_eq!(got, want, "axis {axis}");
        }
    }

    #[test]
    fn fields_are_seeded_finite_and_of_the_asked_size() {
        for kind in [FieldKind::Smooth, FieldKind::Turbulent] {
            let a = make(kind, 16, true, 1);
            assert_eq!(a.len(), 16 * 16 * 16);
            assert!(a.iter().all(|v| v.is_finite()));
            assert_eq!(a, make(kind, 16, true, 1));
            assert_ne!(a, make(kind, 16, true, 2));
            assert_eq!(make(kind, 32, false, 1).len(), 32 * 32);
        }
    }

    #[test]
    fn turbulence_is_rougher_than_the_smooth_field() {
        // Mean squared neighbour difference over variance: small for smooth.
        let rough = |v: &[f32]| {
            let m = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
            let var = v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>();
            let d: f64 = v
                .windows(2)
                .map(|w| (w[1] as f64 - w[0] as f64).powi(2))
                .sum();
            d / var
        };
        let s = rough(&make(FieldKind::Smooth, 32, true, 3));
        let t = rough(&make(FieldKind::Turbulent, 32, true, 3));
        assert!(t > 5.0 * s, "turbulent {t}, smooth {s}");
    }
}
