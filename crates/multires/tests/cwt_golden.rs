//! The committed NumPy golden files (tools/golden/make_cwt_golden.py).
use multires::cwt::{Algorithm, Precision};
use multires::{Boundary, CwtOptions, CwtPlan, Scale, Signal, Wavelet};
use ndarray::{Array1, Array2};
use ndarray_npy::read_npy;
use num_complex::Complex64;
use std::path::PathBuf;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/cwt")
}

#[test]
fn every_golden_case_matches_every_algorithm() {
    let manifest = std::fs::read_to_string(data().join("manifest.txt")).expect("manifest");
    let mut cases = 0;
    for line in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (case, wavelet, boundary, signal, scales) = (f[0], f[1], f[2], f[3], f[4]);
        let x: Array1<f64> = read_npy(data().join(signal)).unwrap();
        let want: Array2<Complex64> = read_npy(data().join(format!("{case}.npy"))).unwrap();
        let scales: Vec<Scale> = scales
            .split(',')
            .map(|s| Scale::new(s.parse().unwrap()))
            .collect();
        for algorithm in [Algorithm::Direct, Algorithm::Fft, Algorithm::Auto] {
            for (precision, tol) in [(Precision::F64, 1e-12), (Precision::F32, 1e-5)] {
                let mut o = CwtOptions::new(Wavelet::from_name(wavelet).unwrap(), scales.clone());
                o.boundary = boundary.parse::<Boundary>().unwrap();
                o.algorithm = algorithm;
                o.precision = precision;
                let got = CwtPlan::new(o, x.len(), false)
                    .unwrap()
                    .execute(&Signal::real(x.to_vec()), None)
                    .unwrap()
                    .values
                    .to_complex64();
                assert_eq!(got.dim(), want.dim(), "{case}");
                let num: f64 = got
                    .iter()
                    .zip(want.iter())
                    .map(|(a, b)| (a - b).norm_sqr())
                    .sum();
                let den: f64 = want.iter().map(|b| b.norm_sqr()).sum();
                let e = (num / den).sqrt();
                assert!(e <= tol, "{case} {algorithm} {precision}: {e:e}");
            }
        }
        cases += 1;
    }
    assert!(cases >= 15, "only {cases} golden cases");
}
