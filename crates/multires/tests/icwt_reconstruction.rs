//! The inverse CWT gives back a band-limited signal whose band lies well
//! inside the analysed scales: relative L2 error <= 1e-3 for every wavelet
//! and voice count below (the figures docs/DESIGN.md quotes are what
//! this test prints).
use multires::boundary::Boundary;
use multires::cwt::{CwtOptions, CwtPlan, Normalization};
use multires::scales::Scale;
use multires::signal::Signal;
use multires::timefreq::{icwt, issq_cwt, ssq_cwt, IcwtOptions, SsqOptions};
use multires::wavelets::Wavelet;
use num_complex::Complex64;
use std::f64::consts::PI;

const N: usize = 4096;

/// Tones of whole cycles (periodic over N) between `lo` and `hi` cycles
/// per sample, random amplitudes and phases, mean zero.
fn band_limited() -> Vec<f64> {
    tones(0.02, 0.08)
}

fn tones(lo: f64, hi: f64) -> Vec<f64> {
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let tones: Vec<(f64, f64, f64)> = (0..12)
        .map(|_| {
            let cycles = (lo + (hi - lo) * rnd()) * N as f64;
            (cycles.round() / N as f64, 0.2 + rnd(), 2.0 * PI * rnd())
        })
        .collect();
    (0..N)
        .map(|n| {
            tones
                .iter()
                .map(|&(f, a, p)| a * (2.0 * PI * f * n as f64 + p).cos())
                .sum()
        })
        .collect()
}

/// Geometric scales, `nv` per octave, whose centre frequencies span
/// 0.002 .. 0.4 cycles per sample (0.02..0.08 sits two octaves inside).
fn scales_for(w: &Wavelet, nv: usize) -> Vec<f64> {
    scales_between(w, nv, 0.002, 0.4)
}

fn scales_between(w: &Wavelet, nv: usize, flo: f64, fhi: f64) -> Vec<f64> {
    let cf = w.center_frequency();
    let (lo, hi) = ((cf / fhi).max(resolved_scale(w)), cf / flo);
    let count = (nv as f64 * (hi / lo).log2()).ceil() as usize + 1;
    (0..count)
        .map(|k| lo * 2f64.powf(k as f64 / nv as f64))
        .collect()
}

/// The smallest scale whose mask is not aliased: |ψ̂| below 1e-5 of its
/// peak from Nyquist (ω = π s) to 4π s. Smaller scales fold the wavelet's
/// spectrum back onto the band (what no inverse can undo).
fn resolved_scale(w: &Wavelet) -> f64 {
    let grid: Vec<f64> = (0..400).map(|k| 0.05 * k as f64).collect();
    let peak = w
        .fourier_transform(&grid)
        .iter()
        .map(|c| c.norm())
        .fold(0.0f64, f64::max);
    let mut s = 0.5;
    while s < 64.0 {
        let om: Vec<f64> = (0..60)
            .map(|k| PI * s * (1.0 + 3.0 * k as f64 / 59.0))
            .collect();
        if w.fourier_transform(&om)
            .iter()
            .all(|c| c.norm() <= 1e-5 * peak)
        {
            return s;
        }
        s *= 1.1;
    }
    s
}

fn transform(
    w: &Wavelet,
    scales: &[f64],
    x: &[f64],
    norm: Normalization,
) -> ndarray::Array2<Complex64> {
    let mut o = CwtOptions::new(w.clone(), scales.iter().map(|&s| Scale::new(s)).collect());
    o.boundary = Boundary::Periodic;
    o.normalization = norm;
    let plan = CwtPlan::new(o, x.len(), false).unwrap();
    plan.execute(&Signal::real(x.to_vec()), None)
        .unwrap()
        .values
        .to_complex64()
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(p, q)| (p - q).powi(2)).sum();
    let den: f64 = b.iter().map(|q| q * q).sum();
    (num / den).sqrt()
}

/// Narrow-band wavelets: tones at 0.01..0.04 cycles/sample, scales whose
/// centres span 0.001..0.5. (shanB-C and fbspM-B-C are left out: their
/// sinc, cut at the half support, keeps ripples of 1e-2 in ψ̂ far past
/// Nyquist at every scale, which no inverse can undo.) Broad-band ones (their ψ̂ falls off as a power
/// of u towards 0, or slowly towards ∞) need a band lower still against
/// the smallest scale: tones at 0.002..0.005, centres from 0.00005 up.
/// Scales always start where the masks are not aliased (`resolved_scale`).
#[test]
fn every_wavelet_reconstructs_a_band_inside_its_scales() {
    let narrow = (0.01, 0.04, 0.001, 0.5);
    let broad = (0.0015, 0.004, 0.00005, 0.0);
    // (wavelet, voices per octave, band and scales, the error allowed)
    let cases = [
        ("cmor1.5-1.0", 8, narrow, 1e-4),
        ("cmor1.5-1.0", 16, narrow, 1e-4),
        ("cmor1.5-1.0", 32, narrow, 1e-4),
        ("morse60-3", 8, narrow, 1e-5),
        ("morse60-3", 32, narrow, 1e-7),
        ("morse20-3", 16, narrow, 1e-7),
        ("morl", 16, narrow, 1e-4),
        ("dog4", 16, broad, 1e-3),
        ("morse3-2", 16, (0.0015, 0.004, 0.0002, 0.0), 1e-3),
        ("paul4", 16, broad, 1e-3),
        ("mexh", 16, broad, 1e-3),
        ("gaus2", 16, broad, 1e-3),
        ("cgau2", 16, broad, 1e-3),
    ];
    let mut report = Vec::new();
    let mut failed = Vec::new();
    for (name, nv, (blo, bhi, flo, fhi), tol) in cases {
        let t0 = std::time::Instant::now();
        let w = Wavelet::from_name(name).unwrap();
        let fhi = if fhi > 0.0 { fhi } else { 0.5 };
        let scales = scales_between(&w, nv, flo, fhi);
        let x = tones(blo, bhi);
        // Both normalizations once; L2 (the default) for the rest.
        let norms: &[Normalization] = if report.is_empty() {
            &[Normalization::L2, Normalization::L1]
        } else {
            &[Normalization::L2]
        };
        for &norm in norms {
            let wx = transform(&w, &scales, &x, norm);
            let o = IcwtOptions {
                normalization: norm,
                ..IcwtOptions::default()
            };
            let y: Vec<f64> = icwt(wx.view(), &scales, &w, &o)
                .unwrap()
                .iter()
                .map(|c| c.re)
                .collect();
            let e = rel(&y, &x);
            report.push(format!(
                "{name:>12} nv={nv:<2} {norm:?}: {e:.1e} ({} scales from {:.2}, {:.1} s)",
                scales.len(),
                scales[0],
                t0.elapsed().as_secs_f64()
            ));
            if e > tol {
                failed.push(format!("{name} nv={nv} {norm:?}: {e:e}"));
            }
        }
    }
    println!("{}", report.join("\n"));
    assert!(failed.is_empty(), "{failed:?}");
}

/// Band selection: the scales of one tone give back that tone alone.
#[test]
fn a_band_of_scales_gives_back_its_band() {
    let n = N;
    let lo: Vec<f64> = (0..n)
        .map(|k| (2.0 * PI * 100.0 * k as f64 / n as f64).cos())
        .collect();
    let hi: Vec<f64> = (0..n)
        .map(|k| 0.5 * (2.0 * PI * 800.0 * k as f64 / n as f64).sin())
        .collect();
    let x: Vec<f64> = lo.iter().zip(&hi).map(|(a, b)| a + b).collect();
    let w = Wavelet::from_name("morse60-3").unwrap();
    let scales = scales_for(&w, 16);
    let wx = transform(&w, &scales, &x, Normalization::L2);
    // The tone at 100/N = 0.0244 cycles/sample: scales within ±1 octave.
    let s0 = w.center_frequency() / (100.0 / n as f64);
    let o = IcwtOptions {
        band: Some((s0 / 2.0, s0 * 2.0)),
        ..IcwtOptions::default()
    };
    let y: Vec<f64> = icwt(wx.view(), &scales, &w, &o)
        .unwrap()
        .iter()
        .map(|c| c.re)
        .collect();
    let e = rel(&y, &lo);
    assert!(e < 1e-3, "band error {e:e}");
    let o = IcwtOptions {
        band: Some((1e6, 2e6)),
        ..IcwtOptions::default()
    };
    assert!(icwt(wx.view(), &scales, &w, &o).is_err());
}

/// The mean comes back only when given; issq_cwt inverts the squeezed plane
/// as well as icwt inverts the CWT (gamma drops almost nothing).
#[test]
fn the_mean_and_the_squeezed_inverse() {
    let x = band_limited();
    let w = Wavelet::from_name("cmor1.5-1.0").unwrap();
    let scales = scales_for(&w, 16);
    let shifted: Vec<f64> = x.iter().map(|v| v + 3.0).collect();
    let wx = transform(&w, &scales, &shifted, Normalization::L2);
    let o = IcwtOptions {
        mean: 3.0,
        ..IcwtOptions::default()
    };
    let y: Vec<f64> = icwt(wx.view(), &scales, &w, &o)
        .unwrap()
        .iter()
        .map(|c| c.re)
        .collect();
    assert!(rel(&y, &shifted) < 1e-3);
    let mut o = CwtOptions::new(w.clone(), scales.iter().map(|&s| Scale::new(s)).collect());
    o.boundary = Boundary::Periodic;
    let s = ssq_cwt(&Signal::real(x.clone()), &o, &SsqOptions::default()).unwrap();
    let y = issq_cwt(s.tx.view(), &s.freqs, &w, None, 0.0).unwrap();
    let e = rel(&y, &x);
    println!("issq_cwt error {e:.1e}");
    assert!(e < 1e-3, "{e:e}");
}
