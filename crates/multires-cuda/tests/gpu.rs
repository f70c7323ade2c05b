//! Every GPU kernel against the CPU's float64 result, on fresh random
//! inputs, with outputs poisoned (NaN) before each run so an unwritten
//! element fails. Without a GPU these tests print a notice and pass, unless
//! MULTIRES_REQUIRE_GPU=1, where a missing GPU fails them.

use multires::backend::Device;
use multires::cwt::{Algorithm, CwtValues, OutputKind, Precision};
use multires::fir::{FilterBank, FirMode, FirOptions, FirPost, FirValues};
use multires::{Boundary, CwtOptions, CwtPlan, Scale, Signal, Wavelet};
use multires_cuda::{CudaCwt, CudaFir, Gpu};
use ndarray::Array2;
use num_complex::Complex64;
use std::sync::Arc;

fn gpu_or_skip(test: &str) -> Option<Arc<Gpu>> {
    match multires_cuda::gpu() {
        Ok(g) => Some(g),
        Err(e) => {
            if std::env::var("MULTIRES_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("{test}: MULTIRES_REQUIRE_GPU=1 but no GPU: {e}");
            }
            eprintln!("{test}: skipped, no GPU ({e})");
            None
        }
    }
}

/// A reader over a copy of an in-memory `.mrz` file, as `decompress` opens one.
fn in_memory(bytes: &[u8]) -> multires::codec::MrzReader {
    multires::codec::MrzReader::from_reader(Box::new(std::io::Cursor::new(bytes.to_vec())), "t")
        .unwrap()
}

fn rel_l2(a: &[Complex64], b: &[Complex64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum::<f64>().max(1e-300);
    (num / den).sqrt()
}

fn flat(v: &CwtValues) -> Vec<Complex64> {
    v.to_complex64().iter().copied().collect()
}

fn random_signal(n: usize, complex: bool, seed: u64) -> Signal {
    let re = multires::signal::noise(n, seed);
    if complex {
        let im = multires::signal::noise(n, seed + 1000);
        Signal::complex(
            re.iter()
                .zip(&im)
                .map(|(&r, &i)| Complex64::new(r, i))
                .collect(),
        )
    } else {
        Signal::real(re)
    }
}

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

/// GPU wavedec and waverec against the CPU DWT (itself equal to
/// PyWavelets by its golden tests): every mode, a wavelet of every family,
/// every seed variant, awkward lengths (1, odd, shorter than the filter,
/// long enough for global levels before the fused ones), batches of rows,
/// levels up to one above dwt_max_level, float32 and float64.
#[test]
fn dwt_on_the_gpu_matches_the_cpu() {
    use multires::dwt::{
        self, Algorithm as DwtAlgorithm, DiscreteWavelet, Granularity, Mode, Transform,
    };
    use multires_cuda::dwt::{GpuDwt, GpuDwtVariant};
    let Some(gpu) = gpu_or_skip("dwt_on_the_gpu_matches_the_cpu") else {
        return;
    };
    #[allow(clippy::too_many_arguments)]
    fn check<T: multires_cuda::GpuReal + ndarray::NdFloat>(
        gpu: &Arc<Gpu>,
        w: &DiscreteWavelet,
        mode: Mode,
        variant: GpuDwtVariant,
        rows: usize,
        n: usize,
        level: usize,
        tol: f64,
        seed: u64,
    ) {
        let what = format!(
            "{} {mode} {variant} rows {rows} n {n} level {level} {}",
            w.name,
            std::any::type_name::<T>()
        );
        let x: Vec<T> = multires::signal::noise(rows * n, seed)
            .iter()
            .map(|&v| T::of(v))
            .collect();
        // The reference in float64 on the CPU, fed the same (rounded) samples.
        let t = Transform::<f64>::new(w, mode, DwtAlgorithm::Auto, Granularity::Two).unwrap();
        let x64: Vec<f64> = x.iter().map(|v| v.f64()).collect();
        let xa = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[rows, n]), x64).unwrap();
        let want = dwt::wavedec(xa.view(), &t, Some(level), -1).unwrap();
        let plan = GpuDwt::<T>::new(gpu.clone(), w, mode, variant).unwrap();
        let got = multires_cuda::dwt::wavedec(&plan, &x, rows, level)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got.len(), want.len(), "{what}: arrays");
        // Relative to the array, or to the signal where the array is (near) zero
        // (a constant extension's details, say).
        // In float32, also relative to the whole transform's norm: a detail array whose
        // large inputs cancel (smooth extension's ramps under many vanishing moments)
        // keeps the rounding of those inputs, not of its own size.
        let mut scale: f64 = x.iter().map(|v| v.f64().powi(2)).sum::<f64>() / rows as f64;
        if std::mem::size_of::<T>() == 4 {
            scale = scale.max(
                want.iter()
                    .flat_map(|a| a.iter())
                    .map(|v| v * v)
                    .sum::<f64>(),
            );
        }
        let rel = |g: &[T], w: &[f64]| -> f64 {
            let num: f64 = g.iter().zip(w).map(|(a, b)| (a.f64() - b).powi(2)).sum();
            let den: f64 = w
                .iter()
                .map(|b| b.powi(2))
                .sum::<f64>()
                .max(scale)
                .max(1e-300);
            (num / den).sqrt()
        };
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let w = w.as_slice().unwrap();
            assert_eq!(g.len(), w.len(), "{what}: length of array {i}");
            assert!(
                g.iter().all(|v| v.f64().is_finite()),
                "{what}: array {i} not finite"
            );
            let e = rel(g, w);
            assert!(e <= tol, "{what}: array {i} relative error {e:e}");
        }
        // waverec of the CPU's coefficients, against the CPU's waverec.
        let want_rec = dwt::waverec(&want, &t, -1).unwrap();
        let flat: Vec<Vec<T>> = want
            .iter()
            .map(|a| a.iter().map(|&v| T::of(v)).collect())
            .collect();
        let (rec, len) = multires_cuda::dwt::waverec(&plan, &flat, rows)
            .unwrap_or_else(|e| panic!("{what} waverec: {e}"));
        assert_eq!(rows * len, want_rec.len(), "{what}: waverec length");
        // Rounding the coefficients to T already costs eps x their norm,
        // which modes like smooth make far larger than the signal's.
        let energy: f64 = want.iter().flat_map(|a| a.iter()).map(|v| v * v).sum();
        let x_energy: f64 = want_rec.iter().map(|v| v * v).sum::<f64>().max(1e-300);
        let e = rel(&rec, want_rec.as_slice().unwrap()) / (energy / x_energy).sqrt().max(1.0);
        assert!(
            e <= tol,
            "{what}: waverec relative error {e:e} (scaled by the coefficients' norm)"
        );
    }
    let wavelets = ["haar", "db4", "sym5", "coif3", "bior4.4", "rbio3.1", "dmey"];
    let mut seed = 10;
    for name in wavelets {
        let w = DiscreteWavelet::from_name(name).unwrap();
        for mode in Mode::ALL {
            // 70001 and 300007: one and two tiled passes in auto (with an
            // odd length at every level for periodization's cuts).
            for &(rows, n) in &[
                (3usize, 1usize),
                (2, 7),
                (3, 100),
                (2, 1001),
                (1, 70001),
                (2, 300007),
                (1, 1 << 19),
            ] {
                if n < 2 && matches!(mode, Mode::Reflect | Mode::Antireflect) {
                    continue;
                }
                let max = dwt::max_level(n, w.filter_len());
                for level in [max.max(1), max + 1] {
                    for variant in GpuDwtVariant::ALL {
                        // The long rows once per wavelet and mode for the slow variants.
                        if n > 10000 && level != max.max(1) {
                            continue;
                        }
                        if n > 100000 && variant != GpuDwtVariant::Auto {
                            continue;
                        }
                        if variant.is_lattice() {
                            // The lattice exists where the CPU's does (orthogonal
                            // wavelets that factorize to 1e-12).
                            let gpu_ok = GpuDwt::<f64>::new(gpu.clone(), &w, mode, variant).is_ok();
                            let cpu_ok = Transform::<f64>::new(
                                &w,
                                mode,
                                DwtAlgorithm::Lattice,
                                Granularity::Two,
                            )
                            .is_ok();
                            assert_eq!(gpu_ok, cpu_ok, "{name} {variant}: lattice availability");
                            if !gpu_ok {
                                continue;
                            }
                        }
                        seed += 1;
                        check::<f64>(&gpu, &w, mode, variant, rows, n, level, 1e-12, seed);
                        // Each level rounds its input again and the errors add:
                        // float32's bound grows with depth.
                        let tol32 = 1e-5 * level.max(1) as f64;
                        check::<f32>(&gpu, &w, mode, variant, rows, n, level, tol32, seed);
                    }
                }
            }
        }
    }
    // More rows than one launch takes: batches of rows.
    let haar = DiscreteWavelet::from_name("haar").unwrap();
    check::<f32>(
        &gpu,
        &haar,
        Mode::Symmetric,
        GpuDwtVariant::Auto,
        70000,
        5,
        1,
        1e-5,
        99,
    );
    // Bad input: mismatched lengths are an error, not a panic.
    let w = DiscreteWavelet::from_name("db2").unwrap();
    let plan = GpuDwt::<f64>::new(gpu.clone(), &w, Mode::Symmetric, GpuDwtVariant::Auto).unwrap();
    let bad = vec![vec![0.0; 10], vec![0.0; 3]];
    assert!(multires_cuda::dwt::waverec(&plan, &bad, 1).is_err());
}

/// wavedecn / waverecn on the GPU against the CPU's float64 result: the fused
/// 2-D level (last two axes, several tiles and every edge), the axis passes
/// (other axes, 3-D), every mode, a sample of every family.
#[test]
fn dwtn_on_the_gpu_matches_the_cpu() {
    use multires::dwt::{
        self, Algorithm as DwtAlgorithm, DiscreteWavelet, Granularity, Mode, NdCoefficients,
        Transform,
    };
    use multires_cuda::dwt::{GpuDwt, GpuDwtVariant};
    let Some(gpu) = gpu_or_skip("dwtn_on_the_gpu_matches_the_cpu") else {
        return;
    };
    fn rel<T: multires_cuda::GpuReal>(
        g: &ndarray::ArrayD<T>,
        w: &ndarray::ArrayD<f64>,
        scale: f64,
    ) -> f64 {
        assert_eq!(g.shape(), w.shape());
        let num: f64 = g
            .iter()
            .zip(w.iter())
            .map(|(a, b)| (a.f64() - b).powi(2))
            .sum();
        let den: f64 = w.iter().map(|b| b * b).sum::<f64>().max(scale).max(1e-300);
        (num / den).sqrt()
    }
    #[allow(clippy::too_many_arguments)]
    fn check<T: multires_cuda::GpuReal + ndarray::NdFloat>(
        gpu: &Arc<Gpu>,
        w: &DiscreteWavelet,
        mode: Mode,
        shape: &[usize],
        axes: &[isize],
        level: Option<usize>,
        tol: f64,
        seed: u64,
    ) {
        let what = format!(
            "{} {mode} shape {shape:?} axes {axes:?} level {level:?} {}",
            w.name,
            std::any::type_name::<T>()
        );
        let n: usize = shape.iter().product();
        let x: Vec<T> = multires::signal::noise(n, seed)
            .iter()
            .map(|&v| T::of(v))
            .collect();
        let xa = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), x).unwrap();
        let x64 = xa.mapv(|v| v.f64());
        let t = Transform::<f64>::new(w, mode, DwtAlgorithm::Auto, Granularity::Two).unwrap();
        let want = dwt::wavedecn(x64.view(), &t, level, axes).unwrap();
        let plan = GpuDwt::<T>::new(gpu.clone(), w, mode, GpuDwtVariant::Auto).unwrap();
        let got = multires_cuda::dwtn::wavedecn(&plan, &xa, level, axes)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let energy: f64 = want
            .approx
            .iter()
            .chain(
                want.details
                    .iter()
                    .flat_map(|d| d.values().flat_map(|a| a.iter())),
            )
            .map(|v| v * v)
            .sum();
        let scale = if std::mem::size_of::<T>() == 4 {
            energy
        } else {
            x64.iter().map(|v| v * v).sum::<f64>() / n as f64
        };
        let e = rel(&got.approx, &want.approx, scale);
        assert!(e <= tol, "{what}: approximation relative error {e:e}");
        assert_eq!(got.details.len(), want.details.len(), "{what}: levels");
        for (i, (g, wd)) in got.details.iter().zip(&want.details).enumerate() {
            assert_eq!(
                g.keys().collect::<Vec<_>>(),
                wd.keys().collect::<Vec<_>>(),
                "{what}: keys of level {i}"
            );
            for (k, wa) in wd {
                let e = rel(&g[k], wa, scale);
                assert!(e <= tol, "{what}: level {i} '{k}' relative error {e:e}");
            }
        }
        // waverecn of the CPU's coefficients.
        let want_rec = dwt::waverecn(&want, &t, axes).unwrap();
        let c_t = NdCoefficients {
            approx: want.approx.mapv(T::of),
            details: want
                .details
                .iter()
                .map(|d| d.iter().map(|(k, v)| (k.clone(), v.mapv(T::of))).collect())
                .collect(),
        };
        let rec = multires_cuda::dwtn::waverecn(&plan, &c_t, axes)
            .unwrap_or_else(|e| panic!("{what} waverecn: {e}"));
        let x_energy: f64 = want_rec.iter().map(|v| v * v).sum::<f64>().max(1e-300);
        let e = rel(&rec, &want_rec, 0.0) / (energy / x_energy).sqrt().max(1.0);
        assert!(e <= tol, "{what}: waverecn relative error {e:e}");
    }
    let mut seed = 500;
    for name in ["haar", "db4", "sym5", "coif3", "bior4.4", "rbio3.1"] {
        let w = DiscreteWavelet::from_name(name).unwrap();
        for mode in Mode::ALL {
            for (shape, axes, level) in [
                (vec![7usize, 9], vec![-2isize, -1], None),
                (vec![70, 101], vec![-2, -1], Some(2)),
                (vec![2, 33, 64], vec![1, 2], None),
                (vec![5, 12, 7], vec![0, 2], Some(1)),
                (vec![6, 5, 9], vec![0, 1, 2], Some(2)),
                (vec![1, 40], vec![0, 1], Some(1)),
            ] {
                if matches!(mode, Mode::Reflect | Mode::Antireflect) && shape.iter().any(|&s| s < 2)
                {
                    continue;
                }
                seed += 1;
                let l = level.map(|l: usize| {
                    l.min(
                        shape
                            .iter()
                            .map(|&s| dwt::max_level(s, w.filter_len()))
                            .min()
                            .unwrap_or(0)
                            .max(1),
                    )
                });
                check::<f64>(&gpu, &w, mode, &shape, &axes, l, 1e-12, seed);
                let tol32 = 1e-5 * l.unwrap_or(3).max(1) as f64;
                check::<f32>(&gpu, &w, mode, &shape, &axes, l, tol32, seed);
            }
        }
    }
    // Bad input: a detail of the wrong shape is an error, not a panic.
    let w = DiscreteWavelet::from_name("db2").unwrap();
    let plan = GpuDwt::<f64>::new(gpu.clone(), &w, Mode::Symmetric, GpuDwtVariant::Auto).unwrap();
    let x =
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[8, 8]), multires::signal::noise(64, 3))
            .unwrap();
    let mut c = multires_cuda::dwtn::wavedecn(&plan, &x, Some(1), &[0, 1]).unwrap();
    c.details[0].insert("dd".into(), ndarray::ArrayD::zeros(ndarray::IxDyn(&[2, 2])));
    assert!(multires_cuda::dwtn::waverecn(&plan, &c, &[0, 1]).is_err());
}

/// Inputs above the memory limit stream through in batches of rows on two
/// streams; every value must equal the in-core run's, bit for bit, for
/// wavedec and waverec, in both precisions, with a short last batch.
#[test]
fn streamed_batches_equal_the_in_core_run() {
    use multires::dwt::{DiscreteWavelet, Mode};
    use multires_cuda::dwt::{GpuDwt, GpuDwtVariant};
    let Some(gpu) = gpu_or_skip("streamed_batches_equal_the_in_core_run") else {
        return;
    };
    fn check<T: multires_cuda::GpuReal>(
        gpu: &Arc<Gpu>,
        name: &str,
        mode: Mode,
        variant: GpuDwtVariant,
        rows: usize,
        n: usize,
        level: usize,
    ) {
        let what = format!(
            "{name} {mode} {variant} rows {rows} n {n} level {level} {}",
            std::any::type_name::<T>()
        );
        let w = DiscreteWavelet::from_name(name).unwrap();
        let x: Vec<T> = multires::signal::noise(rows * n, 7)
            .iter()
            .map(|&v| T::of(v))
            .collect();
        let mut plan = GpuDwt::<T>::new(gpu.clone(), &w, mode, variant).unwrap();
        let whole = multires_cuda::dwt::wavedec(&plan, &x, rows, level).unwrap();
        let (back, len) = multires_cuda::dwt::waverec(&plan, &whole, rows).unwrap();
        // About 7 rows of input per batch: 2 slots of ~3.5 rows each, so
        // rows / 3 batches or more, the last one short.
        let elem = std::mem::size_of::<T>();
        plan.mem_limit = Some(7 * 3 * n * elem + 64);
        let streamed = multires_cuda::dwt::wavedec(&plan, &x, rows, level)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(streamed.len(), whole.len(), "{what}: arrays");
        for (i, (s, w)) in streamed.iter().zip(&whole).enumerate() {
            assert!(
                s.iter()
                    .zip(w)
                    .all(|(a, b)| a.f64().to_bits() == b.f64().to_bits()),
                "{what}: wavedec array {i} differs from the in-core run"
            );
        }
        let (sback, slen) = multires_cuda::dwt::waverec(&plan, &whole, rows)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(slen, len, "{what}: waverec length");
        assert!(
            sback
                .iter()
                .zip(&back)
                .all(|(a, b)| a.f64().to_bits() == b.f64().to_bits()),
            "{what}: waverec differs from the in-core run"
        );
        // A limit below two rows' worth is refused with the sizes, not run.
        plan.mem_limit = Some(n * elem);
        let e = multires_cuda::dwt::wavedec(&plan, &x, rows, level).unwrap_err();
        assert!(e.to_string().contains("memory"), "{what}: {e}");
    }
    for (name, mode, variant) in [
        ("db4", Mode::Symmetric, GpuDwtVariant::Auto),
        ("haar", Mode::Periodization, GpuDwtVariant::Auto),
        ("sym5", Mode::Smooth, GpuDwtVariant::M4Wrap),
        ("db3", Mode::Zero, GpuDwtVariant::L2NoWrap),
        ("bior3.5", Mode::Periodic, GpuDwtVariant::M2NoWrap),
    ] {
        check::<f32>(&gpu, name, mode, variant, 61, 3001, 4);
        check::<f64>(&gpu, name, mode, variant, 37, 20_011, 6);
    }
}

/// The codec's output on the GPU, byte for byte the CPU's: every transform,
/// bound kind (zero included), dtype, 2-D and 3-D, bricks of several
/// shapes; then streamed in small batches, and spread over every GPU (each
/// given twice, so four or more slots share the bricks): the same bytes.
/// The codec slots' small copies (a kernel through mapped page-locked
/// memory): odd lengths, misaligned views, a stage filled (it waits for
/// the stream) and outgrown (it grows), several element types.
/// RPLAN, RPIECES and RWORDS plan every brick as `rans::plan` does (the
/// bytes of the file depend on it): tables, chunk length, split, table
/// words and chunk lists, over synthetic histograms of every kind of plan,
/// three bricks a batch. The codec tests below check the same on real
/// fields, through the files' bytes.
#[test]
fn rans_plans_on_the_device_equal_the_hosts() {
    use multires::codec::rans;
    let Some(gpu) = gpu_or_skip("rans_plans_on_the_device_equal_the_hosts") else {
        return;
    };
    let cases = rans::synthetic_plan_cases(11, 600);
    let (mut split, mut logs) = (0, std::collections::BTreeSet::new());
    for (g, group) in cases.chunks_exact(3).enumerate() {
        let most_log = [16, 14, 12, 15, 13][g % 5];
        let (n, blocks) = (group[0].2, &group[0].1);
        let hists: Vec<u32> = group.iter().flat_map(|c| c.0.iter().copied()).collect();
        let got = multires_cuda::codec::plans_on_device(&gpu, &hists, blocks, n, most_log)
            .unwrap_or_else(|e| panic!("group {g}: {e}"));
        assert_eq!(got.len(), 3);
        for (b, (c, d)) in group.iter().zip(&got).enumerate() {
            let p = rans::plan(&c.0, blocks, n, most_log);
            let at = format!("group {g} brick {b} (n {n}, most_log {most_log})");
            assert_eq!(d.cum, p.tables.cum, "{at}: cumulative starts");
            assert_eq!(d.scale, p.tables.scale, "{at}: scales");
            assert_eq!(
                (d.chunk_log, d.split),
                (p.chunk_log, p.split),
                "{at}: chunks"
            );
            assert_eq!(d.words, p.words, "{at}: table words");
            let pieces: Vec<_> = rans::pieces(n, p.chunk_log, p.split).collect();
            assert_eq!(d.pieces, pieces, "{at}: chunk list");
            split += (p.split.chunks > 0) as usize;
            logs.insert(p.chunk_log);
        }
    }
    assert!(
        split >= 10 && logs.len() >= 4,
        "{split} splits, chunk logs {logs:?}"
    );
}

#[test]
fn staged_copies_equal_their_data() {
    use multires_cuda::stage::Stage;
    let Some(gpu) = gpu_or_skip("staged_copies_equal_their_data") else {
        return;
    };
    let s = gpu.ctx.new_stream().unwrap();
    let mut stage = Stage::default();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // All copies up are queued before any comes down: the 2 MiB one no
    // longer fits in the first 4 MiB, the last one outgrows it.
    let lens = [
        0usize,
        1,
        3,
        16,
        17,
        1000,
        65_537,
        3 << 20,
        2 << 20,
        (9 << 20) + 3,
    ];
    let mut ups = Vec::new();
    for &n in &lens {
        let v: Vec<u8> = (0..n).map(|_| next() as u8).collect();
        let d = stage.up(&gpu, &s, &v).unwrap();
        ups.push((v, d));
    }
    for (v, d) in &ups {
        let back = stage.down(&gpu, &s, &d.slice(0..v.len())).unwrap();
        assert!(back == *v, "{} bytes up and down differ", v.len());
        if v.len() > 1 {
            let back = stage.down(&gpu, &s, &d.slice(1..v.len())).unwrap();
            assert!(back == v[1..], "{} bytes at offset 1 differ", v.len() - 1);
        }
    }
    let w: Vec<u64> = (0..1001).map(|_| next()).collect();
    let d = stage.up(&gpu, &s, &w).unwrap();
    assert_eq!(stage.down(&gpu, &s, &d).unwrap(), w);
    let f: Vec<f64> = (0..777).map(|_| next() as f64 / 3.0).collect();
    let d = stage.up(&gpu, &s, &f).unwrap();
    assert_eq!(stage.down(&gpu, &s, &d).unwrap(), f);
    let d = stage
        .up_bytes(&gpu, &s, 41, |b| {
            b.iter_mut().enumerate().for_each(|(i, v)| *v = i as u8)
        })
        .unwrap();
    let want: Vec<u8> = (0..41u8).collect();
    assert_eq!(stage.down(&gpu, &s, &d.slice(0..41)).unwrap(), want);
}

#[test]
fn codec_on_the_gpu_is_byte_identical_to_the_cpu() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::{compress, CodecOptions, DType, ErrorBound, Lifting, Volume};
    let Some(gpu) = gpu_or_skip("codec_on_the_gpu_is_byte_identical_to_the_cpu") else {
        return;
    };
    let turb: Vec<f64> = make(FieldKind::Turbulent, 48, true, 3)
        .into_iter()
        .map(f64::from)
        .collect();
    // 40 x 48 x 44 with 16^3 bricks: interior and edge bricks of 8 shapes.
    let mut cut = Vec::new();
    for z in 0..40 {
        for y in 0..48 {
            cut.extend_from_slice(&turb[(z * 48 + y) * 48..(z * 48 + y) * 48 + 44]);
        }
    }
    let smooth2: Vec<f64> = make(FieldKind::Smooth, 100, false, 5)
        .into_iter()
        .map(f64::from)
        .collect();
    let noise: Vec<f64> = (0..37 * 53)
        .map(|i| ((i as f64 * 0.7).sin() * 1e3).fract())
        .collect();
    let cases: Vec<(Volume, [usize; 3])> = vec![
        (
            Volume::new(&[40, 48, 44], cut.clone(), DType::F32).unwrap(),
            [16, 16, 16],
        ),
        (
            Volume::new(&[100, 100], smooth2.clone(), DType::F32).unwrap(),
            [1, 64, 64],
        ),
        (
            Volume::new(&[37, 53], noise.clone(), DType::F64).unwrap(),
            [1, 32, 32],
        ),
        // Bricks of 2^k + 1 (interp's default shape), edges of 6 and 15.
        (
            Volume::new(&[40, 48, 44], cut.clone(), DType::F32).unwrap(),
            [17, 33, 17],
        ),
    ];
    let bounds = [
        ErrorBound::Rel(1e-2),
        ErrorBound::Rel(1e-4),
        ErrorBound::Abs(0.0),
        ErrorBound::Psnr(60.0),
    ];
    let mut checked = 0;
    for (v, brick) in &cases {
        for t in Lifting::ALL {
            for bound in bounds {
                let mut o = CodecOptions::new(t, bound);
                o.brick = Some(*brick);
                let (cpu, _) = compress(v, &o, &|_| {}).unwrap();
                let (dev, stats, _) = multires_cuda::codec::compress(
                    v,
                    &o,
                    std::slice::from_ref(&gpu),
                    None,
                    &|_| {},
                )
                .unwrap();
                // The file's parts written out, compared unjoined and
                // joined.
                let mut written = Vec::new();
                dev.write_to(&mut written).unwrap();
                let same = dev.equals(&cpu) && dev.len() == cpu.len();
                let dev = dev.to_vec();
                assert!(
                    cpu == dev,
                    "{t} {bound} {:?}: GPU {} bytes, CPU {} bytes, first difference at {:?}",
                    v.dims,
                    dev.len(),
                    cpu.len(),
                    cpu.iter().zip(&dev).position(|(a, b)| a != b)
                );
                assert!(
                    same && written == dev,
                    "{t} {bound}: the parts disagree with the file"
                );
                assert!(stats.max_error <= stats.abs_bound, "{t} {bound}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 64);
    // Constant fields under a relative bound (a range of 0, so a zero
    // bound): the interpolation's step a power of two below the peak
    // (float32: a sixteenth of its epsilon), on the device as on the CPU,
    // and decoded on the device to every value.
    for (c, dtype) in [(1.0, DType::F64), (3.7, DType::F64), (3.7, DType::F32)] {
        let v = Volume::new(&[40, 48, 44], vec![dtype.round(c); 40 * 48 * 44], dtype).unwrap();
        let mut o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
        o.brick = Some([17, 33, 17]);
        let (cpu, st) = compress(&v, &o, &|_| {}).unwrap();
        let (dev, _, _) =
            multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {})
                .unwrap();
        assert!(
            dev.to_vec() == cpu,
            "constant {c} {dtype:?}: GPU bytes differ"
        );
        assert_eq!(st.max_error, 0.0, "constant {c} {dtype:?}");
        let back = multires_cuda::codec::decompress(
            &mut in_memory(&cpu),
            None,
            std::slice::from_ref(&gpu),
            &|_| {},
        )
        .unwrap();
        assert!(
            back.data == v.data,
            "constant {c} {dtype:?}: GPU decode differs"
        );
    }
    // Every rANS chunk cap, on bricks of many chunks (65^3, smooth).
    let sm: Vec<f64> = make(FieldKind::Smooth, 65, true, 7)
        .into_iter()
        .map(f64::from)
        .collect();
    let v = Volume::new(&[65, 65, 65], sm, DType::F32).unwrap();
    for chunk in [1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16] {
        let o = CodecOptions {
            rans_chunk: chunk,
            ..CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3))
        };
        let (cpu, _) = compress(&v, &o, &|_| {}).unwrap();
        let (dev, _, _) =
            multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {})
                .unwrap();
        assert!(dev.to_vec() == cpu, "rANS chunk {chunk}: GPU bytes differ");
    }
    // A dense brick (turbulent 129^3 at 1e-4, about 9 bits a value): 525
    // chunks of 2^12, so RDEC decodes it in three blocks of six warps and
    // RENC codes it in 17 blocks.
    let tu: Vec<f64> = make(FieldKind::Turbulent, 129, true, 3)
        .into_iter()
        .map(f64::from)
        .collect();
    let v = Volume::new(&[129, 129, 129], tu, DType::F32).unwrap();
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-4));
    let (cpu, _) = compress(&v, &o, &|_| {}).unwrap();
    let (dev, _, _) =
        multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {}).unwrap();
    assert!(dev.to_vec() == cpu, "dense brick: GPU bytes differ");
    let want = multires::codec::decompress(&mut in_memory(&cpu), None, &|_| {}).unwrap();
    let got = multires_cuda::codec::decompress(
        &mut in_memory(&cpu),
        None,
        std::slice::from_ref(&gpu),
        &|_| {},
    )
    .unwrap();
    assert!(
        want.data.to_f64() == got.data.to_f64(),
        "dense brick: GPU decode differs"
    );
    // Streamed: a limit that lets one brick per batch; and several GPUs.
    let v = &cases[0].0;
    for t in [Lifting::Cdf97, Lifting::Interp] {
        let mut o = CodecOptions::new(t, ErrorBound::Rel(1e-3));
        o.brick = Some([16, 16, 16]);
        let (cpu, _) = compress(v, &o, &|_| {}).unwrap();
        let (streamed, _, run) = multires_cuda::codec::compress(
            v,
            &o,
            std::slice::from_ref(&gpu),
            Some(3 << 20),
            &|_| {},
        )
        .unwrap();
        let streamed = streamed.to_vec();
        assert_eq!(run.max_bricks_per_batch, 1);
        assert_eq!(run.batches, 27, "{run:?}");
        assert!(streamed == cpu, "streamed bytes differ");
        let mut all = Vec::new();
        for i in 0..multires_cuda::device_count() {
            let g = multires_cuda::gpu_at(i).unwrap();
            all.push(g.clone());
            all.push(g);
        }
        let (multi, _, run) =
            multires_cuda::codec::compress(v, &o, &all, Some(3 << 20), &|_| {}).unwrap();
        assert!(
            multi.equals(&cpu),
            "{t}: bytes on {} slots differ",
            run.gpus * 2
        );
        // A limit below one brick's working set is a clear error.
        let err =
            multires_cuda::codec::compress(v, &o, std::slice::from_ref(&gpu), Some(1000), &|_| {})
                .unwrap_err();
        assert!(err.to_string().contains("limit"), "{err}");
    }
}

/// Decoding on the GPU gives the CPU decoder's values bit for bit (whole
/// fields and regions, every transform, f32 and f64, 2-D and 3-D), and a
/// corrupt brick is an error that names it, as on the CPU.
#[test]
fn codec_decodes_on_the_gpu_as_on_the_cpu() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::{compress, decompress, CodecOptions, DType, ErrorBound, Lifting};
    use multires::codec::{MrzReader, Volume};
    let Some(gpu) = gpu_or_skip("codec_decodes_on_the_gpu_as_on_the_cpu") else {
        return;
    };
    let f3: Vec<f64> = make(FieldKind::Turbulent, 40, true, 7)
        .into_iter()
        .map(f64::from)
        .collect();
    let f2: Vec<f64> = make(FieldKind::Smooth, 90, false, 2)
        .into_iter()
        .map(f64::from)
        .collect();
    let cases = [
        (
            Volume::new(&[40, 40, 40], f3, DType::F32).unwrap(),
            [16, 16, 16],
            "5:33,0:40,7:21",
        ),
        (
            Volume::new(&[90, 90], f2, DType::F64).unwrap(),
            [1, 32, 32],
            "10:80,3:4",
        ),
    ];
    for (v, brick, region) in &cases {
        for t in Lifting::ALL {
            for bound in [
                ErrorBound::Rel(1e-3),
                ErrorBound::Abs(0.0),
                ErrorBound::Rel(1e-1),
            ] {
                let mut o = CodecOptions::new(t, bound);
                o.brick = Some(*brick);
                let (bytes, _) = compress(v, &o, &|_| {}).unwrap();
                let cpu = decompress(&mut in_memory(&bytes), None, &|_| {}).unwrap();
                let dev = multires_cuda::codec::decompress(
                    &mut in_memory(&bytes),
                    None,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert_eq!(cpu.dims, dev.dims);
                assert_eq!(cpu.dtype(), dev.dtype(), "decoded to the stored type");
                let same = cpu
                    .data
                    .to_f64()
                    .iter()
                    .zip(&dev.data.to_f64())
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{t} {bound} {:?}: GPU decode differs", v.dims);
                // The file in page-locked memory: its streams go up from
                // where they lie, with the same values.
                let locked = multires_cuda::codec::PinnedBytes::copy_of(&gpu, &bytes)
                    .unwrap()
                    .shared();
                let before = multires_cuda::codec::direct_batches();
                let from_locked = multires_cuda::codec::decompress(
                    &mut MrzReader::from_shared(locked.clone(), "t").unwrap(),
                    None,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert!(
                    from_locked.data == dev.data,
                    "{t} {bound} {:?}: decode from page-locked bytes differs",
                    v.dims
                );
                if t == Lifting::Interp && bound != ErrorBound::Abs(0.0) {
                    assert!(
                        multires_cuda::codec::direct_batches() > before,
                        "{t} {bound}: the streams were gathered, not copied from where they lie"
                    );
                }
                let r = multires::codec::parse_region(region, &v.shape()).unwrap();
                let c = decompress(&mut in_memory(&bytes), Some(r), &|_| {}).unwrap();
                let g = multires_cuda::codec::decompress(
                    &mut in_memory(&bytes),
                    Some(r),
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert!(c.data == g.data && c.dims == g.dims, "{t} {bound}: region");
                let g = multires_cuda::codec::decompress(
                    &mut MrzReader::from_shared(locked, "t").unwrap(),
                    Some(r),
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert!(
                    c.data == g.data && c.dims == g.dims,
                    "{t} {bound}: region from page-locked bytes"
                );
            }
        }
    }
    // A damaged brick in a file held in memory (its checksum verified
    // while the kernels decode): an error naming the brick, from every
    // GPU decoder, with the file in ordinary or page-locked memory,
    // whether the damage is in the brick's rANS data or in its last byte
    // (its outlier counts: the checksum's error comes first).
    let v = &cases[0].0;
    let mut o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    o.brick = Some([16, 16, 16]);
    let (good, _) = compress(v, &o, &|_| {}).unwrap();
    let idx_off = u64::from_le_bytes(good[86..94].try_into().unwrap()) as usize;
    let e = 20 * 5;
    let (off, len) = (
        u64::from_le_bytes(good[idx_off + e..idx_off + e + 8].try_into().unwrap()) as usize,
        u64::from_le_bytes(good[idx_off + e + 8..idx_off + e + 16].try_into().unwrap()) as usize,
    );
    for at in [off + len / 2, off + len - 1] {
        let mut bytes = good.clone();
        bytes[at] ^= 0x10;
        let shape = v.shape();
        let mut out = multires_cuda::codec::PinnedField::zeros(&gpu, &shape).unwrap();
        for locked in [false, true] {
            let held: multires::codec::SharedBytes = if locked {
                multires_cuda::codec::PinnedBytes::copy_of(&gpu, &bytes)
                    .unwrap()
                    .shared()
            } else {
                std::sync::Arc::new(bytes.clone())
            };
            let open = || MrzReader::from_shared(held.clone(), "bad.mrz").unwrap();
            let errs = [
                multires_cuda::codec::decompress(
                    &mut open(),
                    None,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .map(|_| ())
                .unwrap_err(),
                multires_cuda::codec::decompress_resident(&mut open(), &gpu, &|_| {})
                    .map(|_| ())
                    .unwrap_err(),
                multires_cuda::codec::decompress_pinned(
                    &mut open(),
                    &mut out,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .map(|_| ())
                .unwrap_err(),
            ];
            for e in errs {
                let e = e.to_string();
                assert!(
                    e.contains("brick 5") && e.contains("checksum"),
                    "page-locked {locked}, byte {} of {len}: {e}",
                    at - off
                );
            }
        }
    }
    // Files of versions 3 and 4 (the details in Morton order, and in the
    // second a split chunk), and of version 6 (rANS contexts restarting
    // every 4,096 values, where version 7's restart every 2,048) decode on
    // the GPU as on the CPU.
    for file in [
        "v3_wave40.mrz",
        "v4_wave40.mrz",
        "v6/v6_interp_f32_bricks.mrz",
        "v6/v6_interp_f32_fine.mrz",
        "v6/v6_interp_f32_chunks.mrz",
        "v6/v6_interp_f64_2d.mrz",
        "v6/v6_interp_f64_exact.mrz",
        "v6/v6_cdf97_f32.mrz",
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data")
            .join(file);
        let bytes = std::fs::read(&path).unwrap();
        let cpu = decompress(&mut in_memory(&bytes), None, &|_| {}).unwrap();
        let dev = multires_cuda::codec::decompress(
            &mut in_memory(&bytes),
            None,
            std::slice::from_ref(&gpu),
            &|_| {},
        )
        .unwrap();
        assert!(cpu.data == dev.data, "{file}: GPU decode differs");
    }
    // A brick whose stream is damaged but whose CRC was fixed up: the CPU
    // decoder's error, naming the brick, or exactly the CPU's values.
    let v = &cases[0].0;
    for t in [Lifting::Cdf97, Lifting::Interp] {
        let mut o = CodecOptions::new(t, ErrorBound::Rel(1e-3));
        o.brick = Some([16, 16, 16]);
        let (bytes, _) = compress(v, &o, &|_| {}).unwrap();
        let idx_off = u64::from_le_bytes(bytes[86..94].try_into().unwrap()) as usize;
        let (off, len) = (
            u64::from_le_bytes(bytes[idx_off..idx_off + 8].try_into().unwrap()) as usize,
            u64::from_le_bytes(bytes[idx_off + 8..idx_off + 16].try_into().unwrap()) as usize,
        );
        let mut checked = 0;
        for pos in (off + 8..off + len).step_by(7).take(300) {
            let mut bad = bytes.clone();
            bad[pos] ^= 0x5a;
            let crc = crc32fast::hash(&bad[off..off + len]);
            bad[idx_off + 16..idx_off + 20].copy_from_slice(&crc.to_le_bytes());
            let icrc = crc32fast::hash(&bad[idx_off..bad.len() - 4]);
            let n = bad.len();
            bad[n - 4..].copy_from_slice(&icrc.to_le_bytes());
            let c = decompress(&mut in_memory(&bad), None, &|_| {});
            let g = multires_cuda::codec::decompress(
                &mut in_memory(&bad),
                None,
                std::slice::from_ref(&gpu),
                &|_| {},
            );
            match (c, g) {
                (Ok(c), Ok(g)) => assert!(c.data == g.data, "byte {pos}: decodes differ"),
                (Err(c), Err(g)) => {
                    assert!(g.to_string().contains("brick 0"), "{g}");
                    assert!(g.to_string().contains(&c.to_string()), "{g} vs {c}");
                }
                (c, g) => panic!("byte {pos}: CPU {:?}, GPU {:?}", c.is_ok(), g.is_ok()),
            }
            checked += 1;
        }
        assert!(checked > 100, "{t}");
    }
}

/// A field that lives on the GPU: compressed there into the same bytes as
/// the host path (every transform, bounds that leave outliers, 2-D and 3-D,
/// bricks of several shapes), decoded there into the CPU's values; a NaN
/// is an error that names its index.
#[test]
fn codec_on_a_device_resident_or_pinned_field_equals_the_host_path() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::{compress, decompress, CodecOptions, DType, ErrorBound, Lifting};
    use multires::codec::{MrzReader, Volume};
    use multires_cuda::codec::{compress_pinned, decompress_pinned, PinnedField};
    use multires_cuda::codec::{compress_resident, decompress_resident, DeviceField};
    use multires_cuda::codec::{compress_slabs, decompress_slabs, SlabField};
    use multires_cuda::codec::{set_pinned_tuning, PinnedTuning};
    let Some(gpu) = gpu_or_skip("codec_on_a_device_resident_or_pinned_field_equals_the_host_path")
    else {
        return;
    };
    // A page-locked field is read and written by every GPU, each twice
    // over (two lists of slots), so shares and batches cross GPUs.
    let gpus: Vec<_> = (0..multires_cuda::device_count())
        .flat_map(|i| {
            let g = multires_cuda::gpu_at(i).unwrap();
            [g.clone(), g]
        })
        .collect();
    let f3 = make(FieldKind::Turbulent, 40, true, 11);
    let f2 = make(FieldKind::Smooth, 90, false, 3);
    // The last 3-D case has 8 brick layers: each slab of the page-locked
    // field goes up (and comes down) in several groups of layers.
    let cases: [(Vec<usize>, Vec<f32>, [usize; 3]); 4] = [
        (vec![40, 40, 40], f3.clone(), [16, 16, 16]),
        (vec![40, 40, 40], f3.clone(), [17, 33, 17]),
        (vec![90, 90], f2, [1, 32, 32]),
        (vec![40, 40, 40], f3, [5, 40, 40]),
    ];
    let mut checked = 0;
    for (shape, values, brick) in &cases {
        let v = Volume::new(
            shape,
            values.iter().map(|&x| x as f64).collect(),
            DType::F32,
        )
        .unwrap();
        let field = DeviceField::upload(&gpu, shape, values).unwrap();
        let pinned = PinnedField::from_values(&gpu, shape, values).unwrap();
        // The same values after `as_mut_slice`: the range the host took
        // while writing them is forgotten, so the devices take it.
        let mut unknown = PinnedField::from_values(&gpu, shape, values).unwrap();
        let _ = unknown.as_mut_slice();
        let mut pinned_out = PinnedField::zeros(&gpu, shape).unwrap();
        for t in Lifting::ALL {
            for bound in [
                ErrorBound::Rel(1e-4),
                ErrorBound::Rel(1e-2),
                ErrorBound::Abs(0.0),
                // A positive absolute bound: the pinned path codes each
                // group of layers as it arrives.
                ErrorBound::Abs(2e-3),
            ] {
                let mut o = CodecOptions::new(t, bound);
                o.brick = Some(*brick);
                let (cpu, _) = compress(&v, &o, &|_| {}).unwrap();
                let (dev, stats, _) = compress_resident(&field, &o, &gpu, &|_| {}).unwrap();
                let dev = dev.to_vec();
                assert!(
                    cpu == dev,
                    "{t} {bound} {shape:?}: resident {} bytes, CPU {} bytes, first difference at {:?}",
                    dev.len(),
                    cpu.len(),
                    cpu.iter().zip(&dev).position(|(a, b)| a != b)
                );
                assert!(stats.max_error <= stats.abs_bound);
                let want = decompress(&mut in_memory(&cpu), None, &|_| {})
                    .unwrap()
                    .data
                    .to_f64();
                // Decoded float32 values equal the CPU decoder's, bit for bit.
                let same_as_cpu = |got: &[f32]| {
                    want.iter()
                        .zip(got)
                        .all(|(a, &b)| a.to_bits() == (b as f64).to_bits())
                };
                let back = decompress_resident(&mut in_memory(&cpu), &gpu, &|_| {}).unwrap();
                assert_eq!(back.info.shape(), *shape);
                assert!(
                    same_as_cpu(&back.download(&gpu).unwrap()),
                    "{t} {bound} {shape:?}: resident decode differs from the CPU's"
                );
                let locked = multires_cuda::codec::PinnedBytes::copy_of(&gpu, &cpu)
                    .unwrap()
                    .shared();
                let back = decompress_resident(
                    &mut MrzReader::from_shared(locked, "t").unwrap(),
                    &gpu,
                    &|_| {},
                )
                .unwrap();
                assert!(
                    same_as_cpu(&back.download(&gpu).unwrap()),
                    "{t} {bound} {shape:?}: resident decode from page-locked bytes differs from the CPU's"
                );
                // Slabs of brick layers in the GPUs' memory (each GPU
                // twice): the bytes, and the values decoded into slabs.
                let brick_of = o.grid(v.info().dims).unwrap().brick;
                let slabs = SlabField::upload(&gpus, shape, values, brick_of).unwrap();
                let (sl, _, run) = compress_slabs(&slabs, &o, &|_| {}).unwrap();
                assert_eq!(run.gpus, gpus.len());
                assert!(
                    sl.equals(&cpu),
                    "{t} {bound} {shape:?}: slabs on {} GPU lists: bytes differ from the CPU's",
                    gpus.len()
                );
                let back = decompress_slabs(&mut in_memory(&cpu), &gpus, &|_| {}).unwrap();
                assert_eq!(back.info.shape(), *shape);
                assert!(
                    same_as_cpu(&back.download().unwrap()),
                    "{t} {bound} {shape:?}: decode into slabs differs from the CPU's"
                );
                // Slabs on the devices, then slabs left on the host.
                for across in [false, true] {
                    let tune = PinnedTuning {
                        slabs_on_host: across,
                        ..PinnedTuning::DEFAULT
                    };
                    set_pinned_tuning(tune);
                    let (pin, _, run) = compress_pinned(&pinned, &o, &gpus, &|_| {}).unwrap();
                    let pin = pin.to_vec();
                    assert_eq!(run.gpus, gpus.len());
                    let (pin2, _, _) = compress_pinned(&unknown, &o, &gpus, &|_| {}).unwrap();
                    assert!(
                        pin2.equals(&cpu),
                        "{t} {bound} {shape:?} across PCIe {across}: pinned, range not known on the host: bytes differ from the CPU's"
                    );
                    assert!(
                        cpu == pin,
                        "{t} {bound} {shape:?} across PCIe {across}: pinned {} bytes, CPU {} bytes, first difference at {:?}",
                        pin.len(),
                        cpu.len(),
                        cpu.iter().zip(&pin).position(|(a, b)| a != b)
                    );
                    // The decoder copies the slab down whole, or in
                    // groups of layers as each is placed, its batches
                    // kept a few (or one) behind the earliest.
                    // Pieces of brick rows (rows "1") as well as layers.
                    for (groups, ahead, rows) in [
                        (1, (8, 4), false),
                        (4, (8, 4), false),
                        (16, (8, 4), false),
                        (16, (1, 1), false),
                        (16, (8, 4), true),
                    ] {
                        set_pinned_tuning(PinnedTuning {
                            decode_groups: groups,
                            decode_ahead: ahead,
                            rows_down: rows,
                            ..tune
                        });
                        pinned_out.as_mut_slice().fill(f32::NAN);
                        decompress_pinned(&mut in_memory(&cpu), &mut pinned_out, &gpus, &|_| {})
                            .unwrap();
                        assert!(
                            same_as_cpu(pinned_out.as_slice()),
                            "{t} {bound} {shape:?} across PCIe {across}, {groups} group(s), {ahead:?} ahead, rows {rows}: pinned decode differs from the CPU's"
                        );
                    }
                    set_pinned_tuning(PinnedTuning::DEFAULT);
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 64);
    // A NaN: the error names where it is, as the host path's does.
    let mut bad = make(FieldKind::Smooth, 24, true, 1);
    bad[1234] = f32::NAN;
    let field = DeviceField::upload(&gpu, &[24, 24, 24], &bad).unwrap();
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    let Err(e) = compress_resident(&field, &o, &gpu, &|_| {}) else {
        panic!("a NaN must be refused");
    };
    assert!(e.to_string().contains("1234"), "{e}");
    // In a page-locked field, the first NaN is named whichever GPU's share
    // and group of layers holds it (here the last layer, then also the
    // first), under a relative bound (the range first) and an absolute one
    // (layers coded as they arrive), with slabs on the devices or not.
    bad[1234] = 0.5;
    bad[13800] = f32::NAN;
    for across in [false, true] {
        set_pinned_tuning(PinnedTuning {
            slabs_on_host: across,
            ..PinnedTuning::DEFAULT
        });
        for bound in [ErrorBound::Rel(1e-3), ErrorBound::Abs(1e-3)] {
            let mut o = CodecOptions::new(Lifting::Interp, bound);
            o.brick = Some([4, 8, 8]);
            let mut p = PinnedField::from_values(&gpu, &[24, 24, 24], &bad).unwrap();
            let Err(e) = compress_pinned(&p, &o, &gpus, &|_| {}) else {
                panic!("a NaN must be refused");
            };
            assert!(e.to_string().contains("value 13800 is NaN"), "{bound}: {e}");
            p.as_mut_slice()[7] = f32::INFINITY;
            let Err(e) = compress_pinned(&p, &o, &gpus, &|_| {}) else {
                panic!("an infinity must be refused");
            };
            assert!(e.to_string().contains("value 7 is inf"), "{bound}: {e}");
        }
        set_pinned_tuning(PinnedTuning::DEFAULT);
    }
    // Slabs: the NaN named by its index in the whole field (it lies in a
    // later slab), and slabs not cut at the bricks' layers refused.
    let os = {
        let mut os = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
        os.brick = Some([4, 8, 8]);
        os
    };
    let slabs = SlabField::upload(&gpus, &[24, 24, 24], &bad, [4, 8, 8]).unwrap();
    let Err(e) = compress_slabs(&slabs, &os, &|_| {}) else {
        panic!("a NaN in a slab must be refused");
    };
    assert!(e.to_string().contains("value 13800 is NaN"), "{e}");
    bad[13800] = 0.25;
    if gpus.len() > 1 {
        let cut = SlabField::upload(&gpus, &[24, 24, 24], &bad, [5, 8, 8]).unwrap();
        let Err(e) = compress_slabs(&cut, &os, &|_| {}) else {
            panic!("slabs not cut at brick layers must be refused");
        };
        assert!(e.to_string().contains("whole layers of 4 planes"), "{e}");
    }
    // A decoded field must have the file's shape.
    let (b24, _) = compress(
        &Volume::new(&[24, 24, 24], vec![1.0; 13824], DType::F32).unwrap(),
        &o,
        &|_| {},
    )
    .unwrap();
    let mut wrong = PinnedField::zeros(&gpu, &[24, 24, 25]).unwrap();
    let Err(e) = decompress_pinned(&mut in_memory(&b24), &mut wrong, &gpus, &|_| {}) else {
        panic!("a field of another shape must be refused");
    };
    assert!(e.to_string().contains("[24, 24, 25]"), "{e}");
    // A float64 file cannot be decoded into a float32 field.
    let v = Volume::new(&[8, 8], (0..64).map(|i| i as f64).collect(), DType::F64).unwrap();
    let (b64, _) = compress(&v, &o, &|_| {}).unwrap();
    let Err(e) = decompress_resident(&mut in_memory(&b64), &gpu, &|_| {}) else {
        panic!("a float64 file must be refused");
    };
    assert!(e.to_string().contains("float64"), "{e}");
    let mut f8 = PinnedField::zeros(&gpu, &[8, 8]).unwrap();
    let Err(e) = decompress_pinned(&mut in_memory(&b64), &mut f8, &gpus, &|_| {}) else {
        panic!("a float64 file must be refused");
    };
    assert!(e.to_string().contains("float64"), "{e}");
}
