//! The FIR bank against a naive numpy.convolve-style evaluation.
use multires::fir::{
    fir, output_range, FilterBank, FirAlgorithm, FirMode, FirOptions, FirPost, FirValues,
};
use multires::signal::noise;
use multires::Signal;
use ndarray::Array2;
use num_complex::Complex64;

fn naive(x: &[Complex64], h: &[Complex64]) -> Vec<Complex64> {
    let mut y = vec![Complex64::new(0.0, 0.0); x.len() + h.len() - 1];
    for (i, &xv) in x.iter().enumerate() {
        for (k, &hv) in h.iter().enumerate() {
            y[i + k] += xv * hv;
        }
    }
    y
}

fn as_complex(v: &FirValues) -> Array2<Complex64> {
    match v {
        FirValues::Real(a) => a.mapv(|x| Complex64::new(x, 0.0)),
        FirValues::Complex(a) => a.clone(),
    }
}

#[test]
fn all_modes_algorithms_and_posts_match_numpy_semantics() {
    for &(n, m, complex) in &[
        (1, 1, false),
        (2, 5, false),
        (7, 3, true),
        (100, 17, false),
        (31, 64, true),
        (1000, 129, false),
    ] {
        let x: Vec<Complex64> = noise(n, 3)
            .iter()
            .zip(noise(n, 4))
            .map(|(&a, b)| Complex64::new(a, if complex { b } else { 0.0 }))
            .collect();
        let signal = if complex {
            Signal::complex(x.clone())
        } else {
            Signal::real(x.iter().map(|c| c.re).collect())
        };
        let f = 3;
        let taps: Vec<f64> = noise(f * m, 5);
        let bank = FilterBank::Real(Array2::from_shape_vec((f, m), taps.clone()).unwrap());
        for mode in [FirMode::Full, FirMode::Same, FirMode::Valid] {
            let (start, len) = output_range(n, m, mode);
            for post in [
                FirPost::None,
                FirPost::Power,
                FirPost::Magnitude,
                FirPost::Derivative,
            ] {
                for algorithm in [
                    FirAlgorithm::Direct,
                    FirAlgorithm::OverlapSave,
                    FirAlgorithm::Auto,
                ] {
                    let opts = FirOptions {
                        mode,
                        post,
                        algorithm,
                        ..Default::default()
                    };
                    let (got, _) = fir(&signal, &bank, &opts).unwrap();
                    let got = as_complex(&got);
                    assert_eq!(got.dim(), (f, len), "n={n} m={m} {mode}");
                    for fi in 0..f {
                        let h: Vec<Complex64> = taps[fi * m..(fi + 1) * m]
                            .iter()
                            .map(|&v| Complex64::new(v, 0.0))
                            .collect();
                        let y = &naive(&x, &h)[start..start + len];
                        let want: Vec<Complex64> = match post {
                            FirPost::None => y.to_vec(),
                            FirPost::Power => y
                                .iter()
                                .map(|c| Complex64::new(c.norm_sqr(), 0.0))
                                .collect(),
                            FirPost::Magnitude => {
                                y.iter().map(|c| Complex64::new(c.norm(), 0.0)).collect()
                            }
                            FirPost::Derivative => (0..len)
                                .map(|i| {
                                    if len < 2 {
                                        Complex64::new(0.0, 0.0)
                                    } else if i == 0 {
                                        y[1] - y[0]
                                    } else if i == len - 1 {
                                        y[i] - y[i - 1]
                                    } else {
                                        (y[i + 1] - y[i - 1]) * 0.5
                                    }
                                })
                                .collect(),
                        };
                        let scale: f64 = want
                            .iter()
                            .map(|c| c.norm_sqr())
                            .sum::<f64>()
                            .sqrt()
                            .max(1e-300);
                        let err: f64 = want
                            .iter()
                            .enumerate()
                            .map(|(i, w)| (got[[fi, i]] - w).norm_sqr())
                            .sum::<f64>()
                            .sqrt();
                        assert!(
                            err / scale < 1e-12,
                            "n={n} m={m} {mode} {post} {algorithm}: {}",
                            err / scale
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn complex_filters_and_errors() {
    let x = Signal::real(noise(50, 1));
    let h = Array2::from_shape_fn((2, 9), |(i, j)| {
        Complex64::new(i as f64 + 0.1 * j as f64, 0.3 * j as f64 - 1.0)
    });
    let (d, _) = fir(
        &x,
        &FilterBank::Complex(h.clone()),
        &FirOptions {
            algorithm: FirAlgorithm::Direct,
            ..Default::default()
        },
    )
    .unwrap();
    let (o, _) = fir(
        &x,
        &FilterBank::Complex(h),
        &FirOptions {
            algorithm: FirAlgorithm::OverlapSave,
            ..Default::default()
        },
    )
    .unwrap();
    let (d, o) = (as_complex(&d), as_complex(&o));
    assert!(d.iter().zip(o.iter()).all(|(a, b)| (a - b).norm() < 1e-12));
    assert!(fir(
        &Signal::real(vec![]),
        &FilterBank::Real(Array2::zeros((1, 3))),
        &FirOptions::default()
    )
    .is_err());
    assert!(fir(
        &x,
        &FilterBank::Real(Array2::zeros((0, 3))),
        &FirOptions::default()
    )
    .is_err());
    assert!(fir(
        &Signal::real(vec![1.0, f64::INFINITY]),
        &FilterBank::Real(Array2::zeros((1, 3))),
        &FirOptions::default()
    )
    .is_err());
}
