//! Host-to-host paths: the page-locked ring's copies equal the bytes both
//! ways at every size (under, at and over a chunk, wrapping the ring), a
//! float32 signal uploaded as it is gives the same coefficients as the
//! float64 Signal path, rows transformed in one batch equal rows
//! transformed one by one, reduced-precision outputs stay within their
//! rounding of float32, and the kernel cache misses, then hits. Without a
//! GPU these print a notice and pass, unless MULTIRES_REQUIRE_GPU=1.

mod gpu_common;
use gpu_common::*;
use multires::cwt::{CwtValues, OutputKind, Precision};
use multires::{Boundary, CwtOptions, CwtPlan, Scale, Signal, Wavelet};
use multires_cuda::transfer::{download_into, upload, upload_into};
use multires_cuda::CudaCwt;

#[test]
fn staged_copies_equal_the_bytes_both_ways() {
    let Some(gpu) = gpu_or_skip("staged_copies_equal_the_bytes_both_ways") else {
        return;
    };
    let s = &gpu.stream;
    let chunk = 32 << 20;
    for len in [
        0usize,
        1,
        1000,
        256 << 10,
        chunk + 17,
        4 * chunk + 5,
        9 * chunk + 3,
    ] {
        let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
        let d = upload(&gpu, s, &src).unwrap();
        // The reference: the driver's own copy from pageable memory.
        let mut direct = vec![0u8; d.len()];
        s.memcpy_dtoh(&d, &mut direct).unwrap();
        s.synchronize().unwrap();
        assert_eq!(&direct[..len], &src[..], "{len} bytes up");
        let mut back = vec![0xAAu8; len];
        download_into(&gpu, s, &d, 0, &mut back).unwrap();
        assert!(back == src, "{len} bytes down");
    }
    // At an offset, into a larger buffer, and out of range.
    let src: Vec<f32> = (0..(10 << 20)).map(|i| i as f32).collect();
    let mut d = s.alloc_zeros::<f32>(src.len() + 1000).unwrap();
    upload_into(&gpu, s, &src, &mut d, 1000).unwrap();
    let mut back = vec![0f32; src.len()];
    download_into(&gpu, s, &d, 1000, &mut back).unwrap();
    assert!(back == src, "at an offset");
    let mut head = vec![1f32; 1000];
    download_into(&gpu, s, &d, 0, &mut head).unwrap();
    assert!(
        head.iter().all(|&v| v == 0.0),
        "the bytes before the offset"
    );
    assert!(upload_into(&gpu, s, &src, &mut d, 1001).is_err());
    assert!(download_into(&gpu, s, &d, 1001, &mut back).is_err());
}

fn plan_of(n: usize, output: OutputKind, boundary: Boundary) -> CwtPlan {
    let scales: Vec<Scale> = (0..40).map(|i| Scale::new(1.3f64.powi(i))).collect();
    let mut o = CwtOptions::new(Wavelet::from_name("cmor1.5-1.0").unwrap(), scales);
    o.precision = Precision::F32;
    o.output = output;
    o.boundary = boundary;
    CwtPlan::new(o, n, false).unwrap()
}

#[test]
fn a_float32_signal_as_it_is_equals_the_signal_path() {
    let Some(gpu) = gpu_or_skip("a_float32_signal_as_it_is_equals_the_signal_path") else {
        return;
    };
    for boundary in [
        Boundary::Zero,
        Boundary::Symmetric,
        Boundary::Reflect,
        Boundary::Periodic,
    ] {
        let n = 300_001;
        let x: Vec<f32> = multires::signal::noise(n, 5)
            .iter()
            .map(|&v| v as f32)
            .collect();
        let signal = Signal::real(x.iter().map(|&v| v as f64).collect());
        let plan = plan_of(n, OutputKind::Complex, boundary);
        let mut c = CudaCwt::<f32>::new(gpu.clone(), &plan).unwrap();
        let mut want = CwtValues::zeroed_for(&plan);
        c.upload(&plan, &signal).unwrap();
        c.launch().unwrap();
        c.download(&mut want).unwrap();
        c.poison().unwrap();
        let mut got = vec![f32::NAN; c.output_bytes() / 4];
        c.upload_real(&plan, &x).unwrap();
        c.launch().unwrap();
        c.download_raw(&mut got).unwrap();
        let CwtValues::Complex32(w) = &want else {
            panic!("complex64 planned")
        };
        let w: &[f32] = bytemuck::cast_slice(w.as_slice().unwrap());
        let bad = got
            .iter()
            .zip(w)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(bad, 0, "{boundary}: {bad} values differ");
    }
    // Wrong length and a NaN are the caller's errors, named.
    let plan = plan_of(1000, OutputKind::Complex, Boundary::Zero);
    let mut c = CudaCwt::<f32>::new(gpu.clone(), &plan).unwrap();
    let e = c.upload_real(&plan, &[0.0; 999]).unwrap_err().to_string();
    assert!(e.contains("1000") && e.contains("999"), "{e}");
    let mut x = vec![0f32; 1000];
    x[17] = f32::NAN;
    let e = c.upload_real(&plan, &x).unwrap_err().to_string();
    assert!(e.contains("17"), "{e}");
}

#[test]
fn kernel_cache_misses_then_hits_and_survives_a_bad_file() {
    let Some(gpu) = gpu_or_skip("kernel_cache_misses_then_hits_and_survives_a_bad_file") else {
        return;
    };
    use multires_cuda::kernels::{cache_dir, compile, CacheOutcome, Kernel};
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("MULTIRES_CACHE_DIR", dir.path());
    assert_eq!(cache_dir().unwrap(), dir.path());
    let inst = "TO_DIRECT(kernel, float)";
    let cc = gpu.info.compute_capability;
    let (_, first) = compile(&gpu.ctx, Kernel::CwtMasks, inst, cc).unwrap();
    assert_eq!(first, CacheOutcome::Compiled);
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "one cached image");
    let t = std::time::Instant::now();
    let (_, second) = compile(&gpu.ctx, Kernel::CwtMasks, inst, cc).unwrap();
    assert_eq!(second, CacheOutcome::Hit);
    eprintln!(
        "cache hit loaded in {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    // A cut or foreign file is compiled again and replaced.
    std::fs::write(files[0].path(), b"C\x7fELF cut short").unwrap();
    let (_, third) = compile(&gpu.ctx, Kernel::CwtMasks, inst, cc).unwrap();
    assert_eq!(third, CacheOutcome::Compiled);
    let (_, fourth) = compile(&gpu.ctx, Kernel::CwtMasks, inst, cc).unwrap();
    assert_eq!(fourth, CacheOutcome::Hit);
    std::env::remove_var("MULTIRES_CACHE_DIR");
}

#[test]
fn sixteen_bit_outputs_are_the_float32_outputs_rounded_once() {
    let Some(gpu) = gpu_or_skip("sixteen_bit_outputs_are_the_float32_outputs_rounded_once") else {
        return;
    };
    use multires::cwt::HalfFloat;
    let n = 50_001;
    let x: Vec<f32> = multires::signal::noise(n, 9)
        .iter()
        .map(|&v| v as f32)
        .collect();
    for output in [OutputKind::Magnitude, OutputKind::Power] {
        let plan = plan_of(n, output, Boundary::Zero);
        let mut c = CudaCwt::<f32>::new(gpu.clone(), &plan).unwrap();
        let mut want = vec![0f32; c.output_bytes() / 4];
        c.upload_real(&plan, &x).unwrap();
        c.launch().unwrap();
        c.download_raw(&mut want).unwrap();
        for h in [HalfFloat::F16, HalfFloat::BF16] {
            let mut o = plan.options().clone();
            o.half = Some(h);
            let hp = CwtPlan::new(o, n, false).unwrap();
            let mut c = CudaCwt::<f32>::new(gpu.clone(), &hp).unwrap();
            assert_eq!(c.output_bytes(), want.len() * 2, "{h:?}: half the bytes");
            c.poison().unwrap();
            c.upload_real(&hp, &x).unwrap();
            c.launch().unwrap();
            let mut got = vec![0u16; want.len()];
            c.download_half(&mut got).unwrap();
            let bad = got
                .iter()
                .zip(&want)
                .filter(|(g, w)| **g != h.bits_of(**w))
                .count();
            assert_eq!(
                bad, 0,
                "{output:?} {h:?}: {bad} values are not the float32 value rounded"
            );
            // Through the backend, as the CLI runs it: the same bits.
            let mut values = CwtValues::zeroed_for(&hp);
            c.download(&mut values).unwrap();
            let CwtValues::Half(a, _) = &values else {
                panic!("a 16-bit plan gives 16-bit values")
            };
            assert!(a.iter().zip(&got).all(|(p, q)| p == q));
            let mut wrong = vec![0f32; want.len()];
            assert!(c.download_raw(&mut wrong).is_err());
        }
    }
    let mut o = plan_of(100, OutputKind::Complex, Boundary::Zero)
        .options()
        .clone();
    o.half = Some(HalfFloat::F16);
    let Err(e) = CwtPlan::new(o, 100, false) else {
        panic!("a complex float16 plan was accepted")
    };
    let e = e.to_string();
    assert!(e.contains("magnitude or power"), "{e}");
}

#[test]
fn rows_in_one_call_equal_rows_one_by_one() {
    let Some(gpu) = gpu_or_skip("rows_in_one_call_equal_rows_one_by_one") else {
        return;
    };
    let (rows, n) = (4, 40_000);
    let x: Vec<f32> = multires::signal::noise(rows * n, 3)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let plan = plan_of(n, OutputKind::Complex, Boundary::Reflect);
    let mut c = CudaCwt::<f32>::new(gpu.clone(), &plan).unwrap();
    let per = c.output_bytes() / 4;
    let mut batched = vec![f32::NAN; rows * per];
    c.transform_rows(&plan, &x, &mut batched).unwrap();
    for r in 0..rows {
        let mut one = vec![0f32; per];
        c.upload_real(&plan, &x[r * n..(r + 1) * n]).unwrap();
        c.launch().unwrap();
        c.download_raw(&mut one).unwrap();
        assert!(one == batched[r * per..(r + 1) * per], "CWT row {r}");
    }
    assert!(c.transform_rows(&plan, &x[..n + 1], &mut batched).is_err());
    // The FIR bank likewise.
    use multires::fir::{FilterBank, FirMode, FirOptions};
    let taps = multires::signal::noise(8 * 129, 4);
    let bank = FilterBank::Real(ndarray::Array2::from_shape_vec((8, 129), taps).unwrap());
    let opts = FirOptions {
        mode: FirMode::Same,
        ..FirOptions::default()
    };
    let mut f = multires_cuda::CudaFir::<f32>::new(gpu.clone(), n, false, &bank, &opts).unwrap();
    let per = f.output_bytes() / 4;
    let mut batched = vec![f32::NAN; rows * per];
    f.filter_rows(&x, &mut batched).unwrap();
    for r in 0..rows {
        let mut one = vec![0f32; per];
        f.upload_real(&x[r * n..(r + 1) * n]).unwrap();
        f.launch().unwrap();
        f.download_raw(&mut one).unwrap();
        assert!(one == batched[r * per..(r + 1) * per], "FIR row {r}");
    }
}

#[test]
fn the_backend_into_a_callers_slice_equals_into_its_values() {
    let Some(_gpu) = gpu_or_skip("the_backend_into_a_callers_slice_equals_into_its_values") else {
        return;
    };
    use multires::backend::Backend;
    use multires::cwt::{CwtSlice, HalfFloat};
    let backend = multires_cuda::CudaBackend::new().unwrap();
    let n = 20_000;
    let signal = random_signal(n, false, 12);
    for (output, half) in [
        (OutputKind::Complex, None),
        (OutputKind::Magnitude, None),
        (OutputKind::Power, Some(HalfFloat::BF16)),
    ] {
        let mut o = plan_of(n, output, Boundary::Symmetric).options().clone();
        o.half = half;
        let plan = CwtPlan::new(o, n, false).unwrap();
        let mut want = CwtValues::zeroed_for(&plan);
        backend.cwt_into(&plan, &signal, &mut want).unwrap();
        let same = match &want {
            CwtValues::Complex32(w) => {
                let mut got = vec![num_complex::Complex32::new(f32::NAN, 0.0); w.len()];
                backend
                    .cwt_into_slice(&plan, &signal, CwtSlice::Complex32(&mut got), None)
                    .unwrap();
                got.iter().zip(w.iter()).all(|(a, b)| a == b)
            }
            CwtValues::Real32(w) => {
                let mut got = vec![f32::NAN; w.len()];
                backend
                    .cwt_into_slice(&plan, &signal, CwtSlice::Real32(&mut got), None)
                    .unwrap();
                got.iter().zip(w.iter()).all(|(a, b)| a == b)
            }
            CwtValues::Half(w, h) => {
                let mut got = vec![0xFFFFu16; w.len()];
                backend
                    .cwt_into_slice(&plan, &signal, CwtSlice::Half(&mut got, *h), None)
                    .unwrap();
                got.iter().zip(w.iter()).all(|(a, b)| a == b)
            }
            v => panic!("unexpected {}", v.dtype()),
        };
        assert!(same, "{output:?} {half:?}");
        // A slice of the wrong dtype or length is the caller's error.
        let mut wrong = vec![0f64; 3];
        assert!(backend
            .cwt_into_slice(&plan, &signal, CwtSlice::Real64(&mut wrong), None)
            .is_err());
    }
}
