//! Every GPU CWT and FIR bank kernel against the CPU's float64 result, on fresh random
//! inputs, with outputs poisoned (NaN) before each run so an unwritten
//! element fails. Without a GPU these tests print a notice and pass, unless
//! MULTIRES_REQUIRE_GPU=1, where a missing GPU fails them.

mod gpu_common;
use gpu_common::*;
use multires::backend::Device;
use multires::cwt::{Algorithm, CwtValues, OutputKind, Precision};
use multires::fir::{FilterBank, FirMode, FirOptions, FirPost, FirValues};
use multires::{Boundary, CwtOptions, CwtPlan, Scale, Signal, Wavelet};
use multires_cuda::{CudaCwt, CudaFir, Gpu};
use ndarray::Array2;
use num_complex::Complex64;
use std::sync::Arc;

/// One GPU run with a poisoned output, compared with the CPU's float64 direct sum.
fn check_cwt(gpu: &Arc<Gpu>, signal: &Signal, mut o: CwtOptions, what: &str) {
    let tol = match o.precision {
        Precision::F32 => 1e-5,
        Precision::F64 => 1e-12,
    };
    let mut want_o = o.clone();
    want_o.precision = Precision::F64;
    want_o.algorithm = Algorithm::Direct;
    // Compare complex coefficients; the post-processed kinds follow from them
    // and are checked through magnitude and power below.
    let kind = o.output;
    want_o.output = if kind == OutputKind::Phase {
        OutputKind::Complex
    } else {
        kind
    };
    let want = CwtPlan::new(want_o, signal.len(), signal.is_complex())
        .unwrap()
        .execute(signal, None)
        .unwrap();
    o.output = kind;
    let plan = CwtPlan::new(o.clone(), signal.len(), signal.is_complex()).unwrap();
    let mut values = CwtValues::zeroed_for(&plan);
    let got = match o.precision {
        Precision::F32 => {
            let mut c = CudaCwt::<f32>::new(gpu.clone(), &plan).unwrap();
            c.poison().unwrap();
            c.upload(&plan, signal).unwrap();
            c.launch().unwrap();
            c.download(&mut values).unwrap();
            values
        }
        Precision::F64 => {
            let mut c = CudaCwt::<f64>::new(gpu.clone(), &plan).unwrap();
            c.poison().unwrap();
            c.upload(&plan, signal).unwrap();
            c.launch().unwrap();
            c.download(&mut values).unwrap();
            values
        }
    };
    let g = flat(&got);
    assert!(
        g.iter().all(|v| v.re.is_finite() && v.im.is_finite()),
        "{what}: unwritten (NaN) outputs"
    );
    if kind == OutputKind::Phase {
        // Phase is compared where the coefficient is not negligible.
        let w = flat(&want.values);
        let big = w.iter().map(|v| v.norm()).fold(0.0, f64::max) * 1e-3;
        for (i, (p, c)) in g.iter().zip(&w).enumerate() {
            if c.norm() > big {
                let d = (p.re - c.arg()).abs();
                let d = d.min(2.0 * std::f64::consts::PI - d);
                assert!(
                    d < tol * 1e3,
                    "{what}: phase at {i}: {} vs {}",
                    p.re,
                    c.arg()
                );
            }
        }
        return;
    }
    let e = rel_l2(&g, &flat(&want.values));
    assert!(e <= tol, "{what}: relative L2 error {e:e} > {tol:e}");
}

#[test]
fn cwt_matches_cpu_float64_on_awkward_sizes() {
    let Some(gpu) = gpu_or_skip("cwt_matches_cpu_float64_on_awkward_sizes") else {
        return;
    };
    // Lengths: 1, a prime, not a multiple of the tile, masks longer than the
    // signal (scale 300: 4801 taps, cut into pieces).
    let scales: Vec<Scale> = [1.0, 1.5, 2.0, 3.7, 8.0, 20.0, 55.5, 130.0, 300.0]
        .iter()
        .map(|&s| Scale::new(s))
        .collect();
    let mut case = 0u64;
    for &n in &[1usize, 7, 1031, 3000] {
        for wavelet in ["morl", "cmor1.5-1.0"] {
            for complex in [false, true] {
                for precision in [Precision::F64, Precision::F32] {
                    for algorithm in [Algorithm::Direct, Algorithm::Fft, Algorithm::Auto] {
                        case += 1;
                        let signal = random_signal(n, complex, case);
                        let mut o =
                            CwtOptions::new(Wavelet::from_name(wavelet).unwrap(), scales.clone());
                        o.precision = precision;
                        o.algorithm = algorithm;
                        let what = format!(
                            "n {n} {wavelet} complex {complex} {precision:?} {algorithm:?}"
                        );
                        check_cwt(&gpu, &signal, o, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn cwt_outputs_hop_and_boundaries() {
    let Some(gpu) = gpu_or_skip("cwt_outputs_hop_and_boundaries") else {
        return;
    };
    let scales: Vec<Scale> = (1..=40).map(|s| Scale::new(s as f64 * 2.5)).collect();
    let mut seed = 500;
    for kind in [
        OutputKind::Complex,
        OutputKind::Magnitude,
        OutputKind::Power,
        OutputKind::Phase,
    ] {
        for hop in [1usize, 3] {
            for boundary in [Boundary::Zero, Boundary::Symmetric, Boundary::Periodic] {
                for algorithm in [Algorithm::Direct, Algorithm::Fft] {
                    seed += 1;
                    let signal = random_signal(2503, false, seed);
                    let mut o =
                        CwtOptions::new(Wavelet::from_name("cmor1.5-1.0").unwrap(), scales.clone());
                    o.precision = Precision::F64;
                    o.output = kind;
                    o.hop = hop;
                    o.boundary = boundary;
                    o.algorithm = algorithm;
                    check_cwt(
                        &gpu,
                        &signal,
                        o,
                        &format!("{kind:?} hop {hop} {boundary:?} {algorithm:?}"),
                    );
                }
            }
        }
    }
}

#[test]
fn cwt_backend_round_trip_and_seed_config() {
    let Some(_gpu) = gpu_or_skip("cwt_backend_round_trip_and_seed_config") else {
        return;
    };
    // The canonical cwt-seed configuration through the Backend trait, f32.
    let (backend, _) = multires_cuda::select(Device::Cuda).unwrap();
    let n = 102_400;
    let signal = Signal::real(multires::signal::doppler(n));
    let scales: Vec<Scale> = (1..=200).map(|s| Scale::new(s as f64)).collect();
    let mut o = CwtOptions::new(Wavelet::from_name("morl").unwrap(), scales);
    o.precision = Precision::F32;
    let plan = CwtPlan::new(o.clone(), n, false).unwrap();
    let got = backend.cwt(&plan, &signal, None).unwrap();
    o.precision = Precision::F64;
    o.algorithm = Algorithm::Fft;
    let want = CwtPlan::new(o, n, false)
        .unwrap()
        .execute(&signal, None)
        .unwrap();
    let e = rel_l2(&flat(&got.values), &flat(&want.values));
    assert!(e < 1e-5, "cwt-seed f32 error {e:e}");
    assert!(backend.last_explain().unwrap().contains("GPU plan"));
}

#[allow(clippy::too_many_arguments)]
fn fir_case(
    gpu: &Arc<Gpu>,
    n: usize,
    nf: usize,
    m: usize,
    complex: bool,
    mode: FirMode,
    post: FirPost,
    f32: bool,
    seed: u64,
) {
    let signal = random_signal(n, complex, seed);
    let taps = multires::signal::noise(nf * m, seed + 7);
    let bank = if complex {
        let im = multires::signal::noise(nf * m, seed + 9);
        FilterBank::Complex(
            Array2::from_shape_vec(
                (nf, m),
                taps.iter()
                    .zip(&im)
                    .map(|(&r, &i)| Complex64::new(r, i))
                    .collect(),
            )
            .unwrap(),
        )
    } else {
        FilterBank::Real(Array2::from_shape_vec((nf, m), taps).unwrap())
    };
    let opts = FirOptions {
        mode,
        post,
        ..FirOptions::default()
    };
    let (want, _) = multires::fir::fir(&signal, &bank, &opts).unwrap();
    let got = if f32 {
        let mut f = CudaFir::<f32>::new(gpu.clone(), n, complex, &bank, &opts).unwrap();
        f.poison().unwrap();
        f.upload(&signal).unwrap();
        f.launch().unwrap();
        f.download().unwrap()
    } else {
        let mut f = CudaFir::<f64>::new(gpu.clone(), n, complex, &bank, &opts).unwrap();
        f.poison().unwrap();
        f.upload(&signal).unwrap();
        f.launch().unwrap();
        f.download().unwrap()
    };
    let as_c = |v: &FirValues| -> Vec<Complex64> {
        match v {
            FirValues::Real(a) => a.iter().map(|&x| Complex64::new(x, 0.0)).collect(),
            FirValues::Complex(a) => a.iter().copied().collect(),
        }
    };
    assert_eq!(got.dim(), want.dim(), "n {n} m {m} {mode:?}");
    let g = as_c(&got);
    let what = format!("n {n} nf {nf} m {m} complex {complex} {mode:?} {post:?} f32 {f32}");
    assert!(
        g.iter().all(|v| v.re.is_finite() && v.im.is_finite()),
        "{what}: unwritten outputs"
    );
    let e = rel_l2(&g, &as_c(&want));
    // Power squares the relative error; the derivative differences nearby values.
    let tol = if f32 { 1e-5 } else { 1e-12 }
        * if post == FirPost::Derivative {
            10.0
        } else {
            1.0
        };
    assert!(e <= tol, "{what}: relative L2 error {e:e}");
}

#[test]
fn fir_bank_matches_cpu_float64() {
    let Some(gpu) = gpu_or_skip("fir_bank_matches_cpu_float64") else {
        return;
    };
    let mut seed = 900;
    for &(n, m) in &[
        (1usize, 1usize),
        (97, 2),
        (5000, 64),
        (5000, 513),
        (300, 700),
        (20011, 129),
        // Beyond the shared-memory segments: the cuFFT path (3000 taps in float64 only).
        (9001, 3000),
        (12000, 5000),
    ] {
        for complex in [false, true] {
            for mode in [FirMode::Full, FirMode::Same, FirMode::Valid] {
                for f32 in [false, true] {
                    seed += 1;
                    fir_case(&gpu, n, 5, m, complex, mode, FirPost::None, f32, seed);
                }
            }
        }
    }
    for post in [FirPost::Power, FirPost::Magnitude, FirPost::Derivative] {
        for complex in [false, true] {
            seed += 1;
            fir_case(&gpu, 7001, 3, 33, complex, FirMode::Same, post, false, seed);
            fir_case(&gpu, 7001, 3, 33, complex, FirMode::Full, post, true, seed);
        }
    }
}

#[test]
fn device_selection_never_panics() {
    // On a machine without CUDA, cuda is a typed error and auto falls back.
    let cuda = multires_cuda::select(Device::Cuda);
    let (auto, note) = multires_cuda::select(Device::Auto).unwrap();
    match multires_cuda::available() {
        Ok(()) => {
            assert!(cuda.is_ok());
            assert_eq!(auto.name(), "cuda");
        }
        Err(_) => {
            let msg = cuda.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                msg.contains("CUDA") || msg.contains("GPU") || msg.contains("device"),
                "{msg}"
            );
            assert_eq!(auto.name(), "cpu");
            // Without any GPU, auto says nothing on every run; with a GPU
            // that cannot be used, it says why, briefly.
            match multires_cuda::device_count() {
                0 => assert!(note.is_none(), "{note:?}"),
                _ => {
                    assert!(note.is_some_and(|n| n.contains("running on the CPU") && n.len() < 200))
                }
            }
        }
    }
}

#[test]
fn chunked_run_equals_the_in_memory_run() {
    let Some(gpu) = gpu_or_skip("chunked_run_equals_the_in_memory_run") else {
        return;
    };
    // Windows of 1000 columns over 3001 (the last one short), with masks
    // longer than a window (scale 300: 4801 taps, the cuFFT path) and every
    // path; real signals with a real wavelet pair filters in one FFT.
    let scales: Vec<Scale> = [1.0, 2.5, 7.0, 30.0, 150.0, 300.0]
        .iter()
        .map(|&s| Scale::new(s))
        .collect();
    for (hop, boundary) in [(1usize, Boundary::Symmetric), (3, Boundary::Zero)] {
        for algorithm in [Algorithm::Direct, Algorithm::Fft, Algorithm::Auto] {
            for (wavelet, complex) in [("cmor1.5-1.0", true), ("morl", false)] {
                for precision in [Precision::F64, Precision::F32] {
                    let what = format!("hop {hop} {algorithm:?} {wavelet} {precision:?}");
                    let signal = random_signal(3001, complex, 77);
                    let mut o =
                        CwtOptions::new(Wavelet::from_name(wavelet).unwrap(), scales.clone());
                    o.precision = precision;
                    o.hop = hop;
                    o.boundary = boundary;
                    o.algorithm = algorithm;
                    let plan = CwtPlan::new(o, signal.len(), complex).unwrap();
                    let mut whole = CwtValues::zeroed_for(&plan);
                    let mut parts = CwtValues::zeroed_for(&plan);
                    if precision == Precision::F64 {
                        let mut c = CudaCwt::<f64>::new(gpu.clone(), &plan).unwrap();
                        c.upload(&plan, &signal).unwrap();
                        c.launch().unwrap();
                        c.download(&mut whole).unwrap();
                        if let CwtValues::Complex64(a) = &mut parts {
                            a.fill(Complex64::new(f64::NAN, f64::NAN));
                        }
                        multires_cuda::cwt_chunked::<f64>(
                            gpu.clone(),
                            &plan,
                            &signal,
                            &mut parts,
                            1000,
                        )
                        .unwrap();
                    } else {
                        let mut c = CudaCwt::<f32>::new(gpu.clone(), &plan).unwrap();
                        c.upload(&plan, &signal).unwrap();
                        c.launch().unwrap();
                        c.download(&mut whole).unwrap();
                        if let CwtValues::Complex32(a) = &mut parts {
                            a.fill(num_complex::Complex32::new(f32::NAN, f32::NAN));
                        }
                        multires_cuda::cwt_chunked::<f32>(
                            gpu.clone(),
                            &plan,
                            &signal,
                            &mut parts,
                            1000,
                        )
                        .unwrap();
                    }
                    let (w, p) = (flat(&whole), flat(&parts));
                    assert!(
                        p.iter().all(|v| v.re.is_finite()),
                        "{what}: unwritten columns"
                    );
                    let bad = p.iter().zip(&w).filter(|(a, b)| a != b).count();
                    assert_eq!(
                        bad,
                        0,
                        "{what}: {bad} values differ from the in-memory run (rel L2 {:e})",
                        rel_l2(&p, &w)
                    );
                }
            }
        }
    }
}

/// Masks sampled on the GPU (one thread per tap) equal the CPU's packed
/// masks for every continuous family, with rational scales and the seed's
/// per-scale timing and gain corrections; and the transforms built on them
/// (direct, shared-memory and cuFFT overlap-save) equal the CPU's float64 sum.
#[test]
fn masks_sampled_on_the_gpu_match_the_cpu_for_every_wavelet() {
    let Some(gpu) = gpu_or_skip("masks_sampled_on_the_gpu") else {
        return;
    };
    let user: Vec<Complex64> = (0..97)
        .map(|i| {
            let t = (i as f64 - 48.0) / 6.0;
            Complex64::from_polar((-t * t / 2.0).exp(), 3.0 * t)
        })
        .collect();
    let mut names: Vec<String> = [
        "morl",
        "cmor1.5-1.0",
        "cmor0.7-2.5",
        "mexh",
        "shan1.5-1.0",
        "fbsp2-1.0-1.5",
        "fbsp1-1.5-1.0",
        "paul1",
        "paul4",
        "paul13",
        "dog1",
        "dog2",
        "dog7",
        "morse20-3",
        "morse3-2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for p in 1..=8 {
        names.push(format!("gaus{p}"));
        names.push(format!("cgau{p}"));
    }
    let signal = random_signal(1500, true, 77);
    for name in names.iter().map(|s| s.as_str()).chain(["user"]) {
        let wavelet = if name == "user" {
            Wavelet::from_user_samples(user.clone(), 8.0).unwrap()
        } else {
            Wavelet::from_name(name).unwrap()
        };
        let scales = vec![
            Scale::rational(7, 3),
            Scale::new(1.0),
            Scale::new(0.6),
            Scale::new(12.5),
            Scale::new(40.0),
            Scale::new(150.0),
        ];
        let mut o = CwtOptions::new(wavelet, scales);
        o.timing_skew = Some(multires::cwt::ScaleFunction::PerScale(vec![
            1e-3, -2e-3, 0.0, 5e-4, 1e-4, 0.0,
        ]));
        o.timing_offset = Some(multires::cwt::ScaleFunction::Constant(0.25));
        o.amplitude_gain = Some(multires::cwt::ScaleFunction::Constant(1.5));
        o.precision = Precision::F64;
        let plan = CwtPlan::new(o.clone(), signal.len(), true).unwrap();
        let got = multires_cuda::gpu_masks(&gpu, &plan).unwrap();
        let want = &plan.masks().values;
        assert_eq!(got.len(), want.len(), "{name}: tap count");
        let peak = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
        assert!(peak > 0.0, "{name}: all-zero masks");
        let worst = got
            .iter()
            .zip(want.iter())
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        assert!(
            worst <= 1e-13 * peak,
            "{name}: max |gpu - cpu| = {worst:e} (peak {peak:e})"
        );
        for algorithm in [Algorithm::Direct, Algorithm::Fft] {
            for precision in [Precision::F64, Precision::F32] {
                let mut oo = o.clone();
                oo.algorithm = algorithm;
                oo.precision = precision;
                check_cwt(
                    &gpu,
                    &signal,
                    oo,
                    &format!("{name} {algorithm:?} {precision:?}"),
                );
            }
        }
    }
}

/// The FIR bank run in output windows (as for outputs larger than the GPU)
/// is bit-identical to the in-memory run and equals the CPU's float64
/// result: window edges inside the signal, at its ends, windows shorter
/// than the filters, every mode and post-processing.
#[test]
fn fir_windows_equal_the_whole_run() {
    let Some(gpu) = gpu_or_skip("fir_windows_equal_the_whole_run") else {
        return;
    };
    let as_c = |v: &FirValues| -> Vec<Complex64> {
        match v {
            FirValues::Real(a) => a.iter().map(|&x| Complex64::new(x, 0.0)).collect(),
            FirValues::Complex(a) => a.iter().copied().collect(),
        }
    };
    let mut seed = 4000;
    for &(n, m, window) in &[
        (10007usize, 129usize, 1000usize),
        (5000, 513, 77),
        (3000, 3000, 1024),
        (50, 7, 1),
    ] {
        for complex in [false, true] {
            for mode in [FirMode::Full, FirMode::Same, FirMode::Valid] {
                for post in [FirPost::None, FirPost::Power, FirPost::Derivative] {
                    if post == FirPost::Derivative && m > 2000 {
                        // Not fused on the cuFFT path: a clear error, tested elsewhere.
                        continue;
                    }
                    seed += 1;
                    let signal = random_signal(n, complex, seed);
                    let taps = multires::signal::noise(3 * m, seed + 5);
                    let bank = FilterBank::Real(Array2::from_shape_vec((3, m), taps).unwrap());
                    let opts = FirOptions {
                        mode,
                        post,
                        ..FirOptions::default()
                    };
                    let what =
                        format!("n {n} m {m} window {window} complex {complex} {mode:?} {post:?}");
                    let (want, _) = multires::fir::fir(&signal, &bank, &opts).unwrap();
                    let (got, _) =
                        multires_cuda::fir_windowed(gpu.clone(), &signal, &bank, &opts, window)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(got.dim(), want.dim(), "{what}");
                    let mut f = CudaFir::<f64>::new(gpu.clone(), n, complex, &bank, &opts).unwrap();
                    f.poison().unwrap();
                    f.upload(&signal).unwrap();
                    f.launch().unwrap();
                    let whole = f.download().unwrap();
                    let (g, w) = (as_c(&got), as_c(&whole));
                    let bad = g.iter().zip(&w).filter(|(a, b)| a != b).count();
                    assert_eq!(bad, 0, "{what}: {bad} values differ from the in-memory run");
                    let e = rel_l2(&as_c(&got), &as_c(&want));
                    let tol = if post == FirPost::Derivative {
                        1e-11
                    } else {
                        1e-12
                    };
                    assert!(e <= tol, "{what}: relative L2 error {e:e}");
                }
            }
        }
    }
}
