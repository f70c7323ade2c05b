//! Every CWT algorithm against an independent float64 evaluation of the
//! definition, written here from ψ directly (not from the packed masks).

use multires::cwt::{Algorithm, Interpolator, Normalization, OutputKind, Precision, ScaleFunction};
use multires::signal::{doppler, noise};
use multires::{Boundary, CwtOptions, CwtPlan, Scale, Signal, Wavelet};
use num_complex::Complex64;

struct Ref<'a> {
    w: &'a Wavelet,
    boundary: Boundary,
    l1: bool,
    gain: f64,
    offset: f64,
    skew: f64,
}

/// W[s, n] = Σ_{|k| <= ceil(B s)} x[n + k] conj(g s^-p ψ((k(1+ε)+δ)/s)).
fn reference(x: &[Complex64], scales: &[f64], r: &Ref) -> Vec<Vec<Complex64>> {
    reference_with_magnitude(x, scales, r).0
}

/// The reference and, per coefficient, Σ|x||m|: the scale of its round-off.
fn reference_with_magnitude(
    x: &[Complex64],
    scales: &[f64],
    r: &Ref,
) -> (Vec<Vec<Complex64>>, f64) {
    let mut abs2 = 0.0;
    let n = x.len();
    let rows = scales
        .iter()
        .map(|&s| {
            let x_bs = r.w.half_support() * s;
            let h = if (x_bs - x_bs.round()).abs() < 1e-9 {
                x_bs.round()
            } else {
                x_bs.ceil()
            } as i64;
            let norm = if r.l1 { 1.0 / s } else { 1.0 / s.sqrt() };
            (0..n as i64)
                .map(|t| {
                    let mut acc = Complex64::new(0.0, 0.0);
                    let mut mag = 0.0;
                    for k in -h..=h {
                        if let Some(j) = r.boundary.fold(t + k, n) {
                            let m = r.w.psi((k as f64 * (1.0 + r.skew) + r.offset) / s)
                                * (norm * r.gain);
                            acc += x[j] * m.conj();
                            mag += x[j].norm() * m.norm();
                        }
                    }
                    abs2 += mag * mag;
                    acc
                })
                .collect()
        })
        .collect();
    (rows, abs2)
}

/// Relative L2 error. Where the exact sum nearly cancels (an odd wavelet on a
/// constant), the denominator is floored at 1e-3 of ||Σ|x||m| ||, the size of
/// the terms whose round-off any summation order incurs.
fn rel_err_floor(got: &ndarray::Array2<Complex64>, want: &[Vec<Complex64>], abs2: f64) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for (i, row) in want.iter().enumerate() {
        for (j, w) in row.iter().enumerate() {
            num += (got[[i, j]] - w).norm_sqr();
            den += w.norm_sqr();
        }
    }
    let den = den.max(1e-6 * abs2);
    if den == 0.0 {
        num.sqrt() // the exact result is 0: demand (near) 0
    } else {
        (num / den).sqrt()
    }
}

fn rel_err(got: &ndarray::Array2<Complex64>, want: &[Vec<Complex64>]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for (i, row) in want.iter().enumerate() {
        for (j, w) in row.iter().enumerate() {
            num += (got[[i, j]] - w).norm_sqr();
            den += w.norm_sqr();
        }
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

fn run(
    x: &Signal,
    w: &Wavelet,
    scales: &[Scale],
    f: impl Fn(&mut CwtOptions),
) -> ndarray::Array2<Complex64> {
    let mut o = CwtOptions::new(w.clone(), scales.to_vec());
    f(&mut o);
    let plan = CwtPlan::new(o, x.len(), x.is_complex()).expect("plan");
    plan.execute(x, None)
        .expect("execute")
        .values
        .to_complex64()
}

const SIZES: &[usize] = &[1, 2, 3, 7, 31, 97, 256];

fn scales_for_test() -> Vec<Scale> {
    vec![
        Scale::rational(1, 2),
        Scale::new(1.0),
        Scale::rational(3, 2),
        Scale::new(2.0),
        Scale::new(3.7),
        Scale::new(6.0),
        Scale::new(20.0),
    ]
}

fn check_all(wavelet: &str, complex_signal: bool) {
    let w = Wavelet::from_name(wavelet).unwrap();
    let scales = scales_for_test();
    let svals: Vec<f64> = scales.iter().map(|s| s.value()).collect();
    for &n in SIZES {
        let re = noise(n, n as u64 + 11);
        let x = if complex_signal {
            let im = noise(n, n as u64 + 99);
            Signal::complex(
                re.iter()
                    .zip(&im)
                    .map(|(&a, &b)| Complex64::new(a, b))
                    .collect(),
            )
        } else {
            Signal::real(re)
        };
        let xc = x.to_complex();
        for boundary in [
            Boundary::Zero,
            Boundary::Symmetric,
            Boundary::Reflect,
            Boundary::Periodic,
        ] {
            let (want, abs2) = reference_with_magnitude(
                &xc,
                &svals,
                &Ref {
                    w: &w,
                    boundary,
                    l1: false,
                    gain: 1.0,
                    offset: 0.0,
                    skew: 0.0,
                },
            );
            for algorithm in [Algorithm::Direct, Algorithm::Fft, Algorithm::Auto] {
                for (precision, tol) in [(Precision::F64, 1e-12), (Precision::F32, 1e-5)] {
                    let got = run(&x, &w, &scales, |o| {
                        o.boundary = boundary;
                        o.algorithm = algorithm;
                        o.precision = precision;
                    });
                    let e = rel_err_floor(&got, &want, abs2);
                    assert!(
                        e <= tol,
                        "{wavelet} n={n} {boundary} {algorithm} {precision} complex={complex_signal}: rel err {e:e} > {tol:e}"
                    );
                }
            }
        }
    }
}

#[test]
fn morlet_all_algorithms_boundaries_sizes() {
    check_all("morl", false);
}
#[test]
fn complex_morlet_real_and_complex_signals() {
    check_all("cmor1.5-1.0", false);
    check_all("cmor1.5-1.0", true);
}
#[test]
fn real_wavelet_on_complex_signal() {
    check_all("mexh", true);
}
#[test]
fn gaussian_derivatives() {
    check_all("gaus3", false);
    check_all("cgau2", false);
}
#[test]
fn shannon_bspline_paul_dog_morse() {
    for w in ["shan1.5-1.0", "fbsp2-1.0-1.5", "paul4", "dog2", "morse20-3"] {
        let wv = Wavelet::from_name(w).unwrap();
        let scales = vec![Scale::new(1.0), Scale::new(2.5), Scale::new(7.0)];
        let sv: Vec<f64> = scales.iter().map(|s| s.value()).collect();
        let x = Signal::real(noise(97, 5));
        let want = reference(
            &x.to_complex(),
            &sv,
            &Ref {
                w: &wv,
                boundary: Boundary::Zero,
                l1: false,
                gain: 1.0,
                offset: 0.0,
                skew: 0.0,
            },
        );
        for algorithm in [Algorithm::Direct, Algorithm::Fft] {
            let got = run(&x, &wv, &scales, |o| o.algorithm = algorithm);
            let e = rel_err(&got, &want);
            assert!(e < 1e-12, "{w} {algorithm}: {e:e}");
        }
    }
}

#[test]
fn doppler_long_signal_fft_matches_direct() {
    let x = Signal::real(doppler(4099));
    let w = Wavelet::from_name("cmor1.5-1.0").unwrap();
    let scales: Vec<Scale> = (1..=40).map(|s| Scale::new(s as f64 * 1.5)).collect();
    let d = run(&x, &w, &scales, |o| o.algorithm = Algorithm::Direct);
    let f = run(&x, &w, &scales, |o| o.algorithm = Algorithm::Fft);
    let want: Vec<Vec<Complex64>> = d.outer_iter().map(|r| r.to_vec()).collect();
    assert!(rel_err(&f, &want) < 1e-12);
}

/// Large scales are narrow-band: the FFT path skips kernel bins below the
/// precision's rounding. A signal whose energy sits away from those bands
/// (white noise plus a high tone) checks that nothing in band was dropped.
#[test]
fn narrow_band_large_scales_stay_exact_in_both_precisions() {
    let n = 6007;
    let tone: Vec<f64> = (0..n).map(|i| (2.9 * i as f64).sin()).collect();
    let xs: Vec<f64> = noise(n, 11).iter().zip(&tone).map(|(a, b)| a + b).collect();
    let x = Signal::real(xs);
    for wavelet in ["morl", "cmor1.5-1.0"] {
        let w = Wavelet::from_name(wavelet).unwrap();
        let scales: Vec<Scale> = [40.0, 90.0, 150.0, 200.0].map(Scale::new).to_vec();
        let svals: Vec<f64> = scales.iter().map(|s| s.value()).collect();
        let want = reference(
            &x.to_complex(),
            &svals,
            &Ref {
                w: &w,
                boundary: Boundary::Zero,
                l1: false,
                gain: 1.0,
                offset: 0.0,
                skew: 0.0,
            },
        );
        for (precision, tol) in [(Precision::F64, 1e-12), (Precision::F32, 1e-5)] {
            let got = run(&x, &w, &scales, |o| {
                o.algorithm = Algorithm::Fft;
                o.precision = precision;
            });
            let e = rel_err(&got, &want);
            assert!(e < tol, "{wavelet} {precision:?}: {e:e}");
        }
    }
}

/// A stream of signals reuses one output buffer; a buffer of the wrong shape
/// or type is refused, not written.
#[test]
fn execute_into_reuses_the_output_and_checks_it() {
    let w = Wavelet::from_name("morl").unwrap();
    let scales: Vec<Scale> = (1..=30).map(|s| Scale::new(s as f64)).collect();
    let mut o = CwtOptions::new(w, scales);
    o.precision = Precision::F32;
    let plan = CwtPlan::new(o, 777, false).unwrap();
    let a = Signal::real(noise(777, 1));
    let b = Signal::real(doppler(777));
    let mut values = plan.execute(&a, None).unwrap().values;
    plan.execute_into(&b, &mut values, None).unwrap();
    assert_eq!(values, plan.execute(&b, None).unwrap().values);
    let mut wrong = multires::cwt::CwtValues::Complex32(ndarray::Array2::zeros((29, 777)));
    let err = plan.execute_into(&b, &mut wrong, None).unwrap_err();
    assert!(err.to_string().contains("30 x 777 complex64"), "{err}");
    let mut wrong = multires::cwt::CwtValues::Real32(ndarray::Array2::zeros((30, 777)));
    assert!(plan.execute_into(&b, &mut wrong, None).is_err());
}

#[test]
fn l1_normalization_gain_and_timing_compensation() {
    let w = Wavelet::from_name("cmor1.0-0.5").unwrap();
    let scales = vec![Scale::new(1.5), Scale::new(4.0), Scale::new(9.0)];
    let sv: Vec<f64> = scales.iter().map(|s| s.value()).collect();
    let x = Signal::real(noise(131, 9));
    let want = reference(
        &x.to_complex(),
        &sv,
        &Ref {
            w: &w,
            boundary: Boundary::Reflect,
            l1: true,
            gain: 0.8,
            offset: 0.25,
            skew: 0.01,
        },
    );
    for algorithm in [Algorithm::Direct, Algorithm::Fft] {
        let got = run(&x, &w, &scales, |o| {
            o.algorithm = algorithm;
            o.boundary = Boundary::Reflect;
            o.normalization = Normalization::L1;
            o.amplitude_gain = Some(ScaleFunction::Constant(0.8));
            o.timing_offset = Some(ScaleFunction::Polynomial(vec![0.25]));
            o.timing_skew = Some(ScaleFunction::PerScale(vec![0.01; 3]));
        });
        assert!(rel_err(&got, &want) < 1e-12, "{algorithm}");
    }
}

#[test]
fn hop_keeps_every_hop_th_column() {
    let w = Wavelet::from_name("morl").unwrap();
    let scales = vec![Scale::new(1.0), Scale::new(5.0), Scale::new(30.0)];
    let x = Signal::real(noise(200, 1));
    let full = run(&x, &w, &scales, |_| {});
    for algorithm in [Algorithm::Direct, Algorithm::Fft] {
        let hopped = run(&x, &w, &scales, |o| {
            o.hop = 7;
            o.algorithm = algorithm;
        });
        assert_eq!(hopped.dim(), (3, 200usize.div_ceil(7)));
        for i in 0..3 {
            for c in 0..hopped.dim().1 {
                assert!((hopped[[i, c]] - full[[i, c * 7]]).norm() < 1e-12);
            }
        }
    }
}

#[test]
fn output_kinds_derive_from_the_complex_coefficients() {
    let w = Wavelet::from_name("cmor1.5-1.0").unwrap();
    let scales = vec![Scale::new(2.0), Scale::new(8.0)];
    let x = Signal::real(noise(150, 4));
    let c = run(&x, &w, &scales, |_| {});
    for (kind, f) in [
        (
            OutputKind::Magnitude,
            (|z: Complex64| z.norm()) as fn(Complex64) -> f64,
        ),
        (OutputKind::Power, |z: Complex64| z.norm_sqr()),
        (OutputKind::Phase, |z: Complex64| z.arg()),
    ] {
        let got = run(&x, &w, &scales, |o| o.output = kind);
        for (g, z) in got.iter().zip(c.iter()) {
            assert!((g.re - f(*z)).abs() < 1e-12 && g.im == 0.0, "{kind}");
        }
    }
}

#[test]
fn oversampling_equals_the_transform_of_the_oversampled_signal() {
    let w = Wavelet::from_name("morl").unwrap();
    let x = Signal::real(noise(64, 8));
    let scales = vec![Scale::new(2.0), Scale::new(5.0)];
    for interp in [
        Interpolator::Hold,
        Interpolator::Linear,
        Interpolator::Cubic,
        Interpolator::Fft,
    ] {
        let got = run(&x, &w, &scales, |o| {
            o.oversampling = 4;
            o.interpolator = interp;
        });
        let up = multires::cwt::oversample(&x.to_complex(), 4, interp);
        let want = reference(
            &up,
            &[8.0, 20.0],
            &Ref {
                w: &w,
                boundary: Boundary::Zero,
                l1: false,
                gain: 1.0,
                offset: 0.0,
                skew: 0.0,
            },
        );
        assert_eq!(got.dim(), (2, 256));
        assert!(rel_err(&got, &want) < 1e-12, "{interp}");
    }
}

#[test]
fn packed_masks_follow_the_seed_layout() {
    let w = Wavelet::from_name("morl").unwrap();
    let scales = vec![Scale::new(3.0), Scale::new(1.0), Scale::new(2.0)];
    let plan = CwtPlan::new(CwtOptions::new(w, scales), 100, false).unwrap();
    let m = plan.masks();
    assert_eq!(m.lengths, vec![17, 33, 49]); // 16 s + 1, shortest first
    assert_eq!(m.offsets, vec![0, 17, 50]);
    assert_eq!(m.scale_index, vec![1, 2, 0]);
    assert_eq!(m.values.len(), 99);
    // Centre tap of scale 1: s^-1/2 ψ(0) = 1.
    assert!((m.mask(1)[8].re - 1.0).abs() < 1e-15);
}

#[test]
fn bad_input_is_a_typed_error() {
    let w = Wavelet::from_name("morl").unwrap();
    let o = CwtOptions::new(w.clone(), vec![Scale::new(1.0)]);
    assert!(CwtPlan::new(o.clone(), 0, false).is_err());
    let plan = CwtPlan::new(o.clone(), 3, false).unwrap();
    let err = plan
        .execute(&Signal::real(vec![1.0, f64::NAN, 0.0]), None)
        .unwrap_err();
    assert!(err.to_string().contains("sample 1"), "{err}");
    assert!(plan.execute(&Signal::real(vec![1.0; 4]), None).is_err());
    let mut allow = o.clone();
    allow.allow_nonfinite = true;
    // The FFT path would smear a NaN over its segment: refused, naming the fix.
    let e = CwtPlan::new(allow.clone(), 3, false)
        .unwrap()
        .execute(&Signal::real(vec![1.0, f64::NAN, 0.0]), None)
        .unwrap_err();
    assert!(e.to_string().contains("--algorithm direct"), "{e}");
    allow.algorithm = multires::cwt::Algorithm::Direct;
    let out = CwtPlan::new(allow, 3, false)
        .unwrap()
        .execute(&Signal::real(vec![1.0, f64::NAN, 0.0]), None)
        .unwrap();
    assert!(out.values.to_complex64()[[0, 1]].re.is_nan());
    for bad in [0.0, -1.0, f64::INFINITY] {
        assert!(
            CwtPlan::new(CwtOptions::new(w.clone(), vec![Scale::new(bad)]), 10, false).is_err()
        );
    }
    // Symmetric: with zero boundaries the mask is cut to twice the signal.
    let mut huge = CwtOptions::new(w.clone(), vec![Scale::new(1e15)]);
    huge.boundary = multires::Boundary::Symmetric;
    huge.memory_limit = Some(1 << 30);
    let e = CwtPlan::new(huge, 10, false).err().expect("too large");
    assert!(e.to_string().contains("GiB"), "{e}");
    let mut h0 = o;
    h0.hop = 0;
    assert!(CwtPlan::new(h0, 10, false).is_err());
}

/// With zero boundaries a mask longer than twice the signal is cut to it:
/// the taps beyond only meet zeros, so the sum is the definition's.
#[test]
fn masks_longer_than_the_signal_are_cut_without_changing_the_sum() {
    let w = Wavelet::from_name("cmor1.5-1.0").unwrap();
    let n = 300;
    let x = multires::signal::noise(n, 9);
    let scales = [40.0, 400.0, 4000.0];
    let xc: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
    let want = reference(
        &xc,
        &scales,
        &Ref {
            w: &w,
            boundary: Boundary::Zero,
            l1: false,
            gain: 1.0,
            offset: 0.0,
            skew: 0.0,
        },
    );
    for algorithm in [
        multires::cwt::Algorithm::Direct,
        multires::cwt::Algorithm::Fft,
    ] {
        let mut o = CwtOptions::new(w.clone(), scales.iter().map(|&s| Scale::new(s)).collect());
        o.algorithm = algorithm;
        let plan = CwtPlan::new(o, n, false).unwrap();
        assert!(plan.mask_layout().lengths.iter().all(|&l| l < 2 * n));
        let got = plan
            .execute(&Signal::real(x.clone()), None)
            .unwrap()
            .values
            .to_complex64();
        for (i, row) in want.iter().enumerate() {
            let scale = row.iter().map(|v| v.norm()).fold(0.0, f64::max).max(1e-300);
            for (j, v) in row.iter().enumerate() {
                assert!(
                    (got[[i, j]] - v).norm() <= 1e-12 * scale,
                    "{algorithm:?}, scale {} column {j}",
                    scales[i]
                );
            }
        }
    }
}

/// With --allow-nonfinite the direct sum gives NaN exactly where a mask
/// touches the NaN, and finite values everywhere else.
#[test]
fn a_nan_reaches_exactly_the_columns_whose_masks_touch_it() {
    let w = Wavelet::from_name("morl").unwrap();
    let n = 400;
    let p = 200;
    let mut x = multires::signal::noise(n, 3);
    x[p] = f64::NAN;
    let mut o = CwtOptions::new(w, vec![Scale::new(2.0), Scale::new(5.0)]);
    o.allow_nonfinite = true;
    o.algorithm = multires::cwt::Algorithm::Direct;
    let plan = CwtPlan::new(o, n, false).unwrap();
    let out = plan.execute(&Signal::real(x), None).unwrap();
    let v = out.values.to_complex64();
    for (r, s) in [2.0f64, 5.0].iter().enumerate() {
        let half = (8.0 * s).ceil() as usize;
        for c in 0..n {
            let touched = c + half >= p && c <= p + half;
            assert_eq!(v[[r, c]].re.is_nan(), touched, "scale {s}, column {c}");
        }
    }
}

/// A 16-bit output is the plan's float32 value rounded once (to nearest
/// even), for float16 and bfloat16, magnitude and power.
#[test]
fn sixteen_bit_outputs_round_the_float32_output() {
    use multires::cwt::{CwtValues, HalfFloat, OutputKind, Precision};
    let x = multires::Signal::real(multires::signal::noise(2000, 8));
    let scales: Vec<multires::Scale> = [1.0, 3.0, 20.0, 90.0]
        .iter()
        .map(|&s| multires::Scale::new(s))
        .collect();
    for output in [OutputKind::Magnitude, OutputKind::Power] {
        let mut o = multires::CwtOptions::new(
            multires::Wavelet::from_name("cmor1.5-1.0").unwrap(),
            scales.clone(),
        );
        o.precision = Precision::F32;
        o.output = output;
        let want = multires::CwtPlan::new(o.clone(), 2000, false)
            .unwrap()
            .execute(&x, None)
            .unwrap();
        let CwtValues::Real32(w) = &want.values else {
            panic!("float32")
        };
        for h in [HalfFloat::F16, HalfFloat::BF16] {
            o.half = Some(h);
            let plan = multires::CwtPlan::new(o.clone(), 2000, false).unwrap();
            assert_eq!(plan.output_dtype(), h.numpy_name());
            let got = plan.execute(&x, None).unwrap();
            let CwtValues::Half(g, _) = &got.values else {
                panic!("16-bit")
            };
            assert!(
                g.iter().zip(w.iter()).all(|(&b, &v)| b == h.bits_of(v)),
                "{output:?} {h:?}"
            );
        }
    }
}
