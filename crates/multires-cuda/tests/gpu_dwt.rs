//! Every GPU DWT kernel against the CPU's float64 result, on fresh random
//! inputs, with outputs poisoned (NaN) before each run so an unwritten
//! element fails. Without a GPU these tests print a notice and pass, unless
//! MULTIRES_REQUIRE_GPU=1, where a missing GPU fails them.

mod gpu_common;
use gpu_common::*;
use multires_cuda::Gpu;
use std::sync::Arc;

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
