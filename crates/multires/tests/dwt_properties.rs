//! Properties of the DWT beyond the golden files: perfect reconstruction
//! sweeps, random lengths x random wavelets x all modes with every
//! algorithm agreeing, awkward lengths, batching over axes, bad input.

use multires::dwt::{
    self, Algorithm, DiscreteWavelet, Granularity, Mode, Transform, Wavedec1d, Waverec1d,
};
use multires::signal::noise;
use ndarray::{ArrayD, IxDyn};

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// SplitMix-style picks, so failures reproduce.
fn pick(seed: u64, n: usize) -> usize {
    let mut z = seed.wrapping_add(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    ((z ^ (z >> 31)) % n as u64) as usize
}

#[test]
fn perfect_reconstruction_for_every_wavelet_in_periodization() {
    // Periodization on even lengths is an exact (bi)orthogonal change of basis.
    for w in DiscreteWavelet::all() {
        if w.name == "dmey" {
            continue; // an FIR approximation, not perfect-reconstruction
        }
        let t = Transform::<f64>::new(&w, Mode::Periodization, Algorithm::Auto, Granularity::Two)
            .unwrap();
        let x = noise(256, 3);
        let xa = ArrayD::from_shape_vec(IxDyn(&[256]), x.clone()).unwrap();
        let c = dwt::wavedec(xa.view(), &t, Some(3), 0).unwrap();
        let r = dwt::waverec(&c, &t, 0).unwrap();
        let e = max_rel(r.as_slice().unwrap(), &x);
        // PyWavelets' longest filters are perfect-reconstruction only to ~1e-11.
        assert!(e < 1e-9, "{}: {e:e}", w.name);
    }
}

#[test]
fn random_lengths_wavelets_and_modes_agree_across_algorithms() {
    let names: Vec<&str> = DiscreteWavelet::names().collect();
    for case in 0..120u64 {
        let w = DiscreteWavelet::from_name(names[pick(case, names.len())]).unwrap();
        let mode = Mode::ALL[pick(case + 1000, 9)];
        let n = 1 + pick(case + 2000, 300);
        if n < 2 && matches!(mode, Mode::Reflect | Mode::Antireflect) {
            continue;
        }
        let x = noise(n, case);
        let reference =
            Transform::<f64>::new(&w, mode, Algorithm::Matrix, Granularity::One).unwrap();
        let (ra, rd) = dwt::dwt(&x, &reference).unwrap();
        let rr = dwt::idwt(&ra, &rd, &reference).unwrap();
        let scale = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        for alg in [
            Algorithm::Auto,
            Algorithm::MatrixNoWrap,
            Algorithm::Lattice,
            Algorithm::LatticeNoWrap,
            Algorithm::Lifting,
        ] {
            for g in [Granularity::One, Granularity::Two, Granularity::Four] {
                let Ok(t) = Transform::<f64>::new(&w, mode, alg, g) else {
                    continue;
                };
                let (a, d) = dwt::dwt(&x, &t).unwrap();
                let ctx = format!("{} {mode} n={n} {alg} g{g}", w.name);
                for (got, want) in [(&a, &ra), (&d, &rd)] {
                    let err = got
                        .iter()
                        .zip(want.iter())
                        .map(|(p, q)| (p - q).powi(2))
                        .sum::<f64>()
                        .sqrt();
                    let den = want.iter().map(|v| v * v).sum::<f64>().sqrt().max(scale);
                    assert!(err <= 1e-12 * den, "{ctx}: {err:e}");
                }
                let r = dwt::idwt(&ra, &rd, &t).unwrap();
                let err = r
                    .iter()
                    .zip(&rr)
                    .map(|(p, q)| (p - q).powi(2))
                    .sum::<f64>()
                    .sqrt();
                let den = rr.iter().map(|v| v * v).sum::<f64>().sqrt().max(scale);
                assert!(err <= 1e-12 * den, "{ctx} idwt: {err:e}");
            }
        }
    }
}

#[test]
fn lengths_and_levels_follow_pywavelets() {
    assert_eq!(dwt::coeff_len(1, 8, Mode::Symmetric), 4);
    assert_eq!(dwt::coeff_len(7, 2, Mode::Periodization), 4);
    assert_eq!(dwt::max_level(1 << 26, 8), 23);
    assert_eq!(dwt::max_level(5, 8), 0);
    assert_eq!(dwt::max_level(1000, 2), 9);
    // Level above the maximum: computed, as PyWavelets does.
    let w = DiscreteWavelet::from_name("db4").unwrap();
    let t = Transform::<f64>::new(&w, Mode::Symmetric, Algorithm::Auto, Granularity::Two).unwrap();
    let x = ArrayD::from_shape_vec(IxDyn(&[20]), noise(20, 1)).unwrap();
    let c = dwt::wavedec(x.view(), &t, Some(5), -1).unwrap();
    assert_eq!(c.len(), 6);
    let lens: Vec<usize> = c.iter().map(|a| a.len()).collect();
    assert_eq!(lens, vec![7, 7, 7, 8, 10, 13]);
}

#[test]
fn batched_axes_equal_one_signal_at_a_time() {
    let w = DiscreteWavelet::from_name("sym4").unwrap();
    for alg in [Algorithm::Auto, Algorithm::Lattice, Algorithm::Lifting] {
        let Ok(t) = Transform::<f64>::new(&w, Mode::Smooth, alg, Granularity::Two) else {
            continue;
        };
        let (r, c) = (5, 33);
        let a = ArrayD::from_shape_vec(IxDyn(&[r, c]), noise(r * c, 9)).unwrap();
        for axis in [0isize, 1] {
            let got = dwt::wavedec(a.view(), &t, Some(2), axis).unwrap();
            let lanes = a.lanes(ndarray::Axis(axis as usize));
            for (k, lane) in lanes.into_iter().enumerate() {
                let one = ArrayD::from_shape_vec(IxDyn(&[lane.len()]), lane.to_vec()).unwrap();
                let want = dwt::wavedec(one.view(), &t, Some(2), 0).unwrap();
                for (g, w) in got.iter().zip(&want) {
                    let g_lane = g.index_axis(ndarray::Axis(1 - axis as usize), k);
                    assert!(
                        max_rel(
                            &g_lane.iter().copied().collect::<Vec<f64>>(),
                            w.as_slice().unwrap()
                        ) < 1e-13,
                        "{alg} axis {axis}"
                    );
                }
            }
        }
    }
}

#[test]
fn reusable_buffers_equal_the_allocating_api() {
    let w = DiscreteWavelet::from_name("db4").unwrap();
    let t =
        Transform::<f32>::new(&w, Mode::Periodization, Algorithm::Auto, Granularity::Two).unwrap();
    let x: Vec<f32> = noise(1001, 4).into_iter().map(|v| v as f32).collect();
    let xa = ArrayD::from_shape_vec(IxDyn(&[x.len()]), x.clone()).unwrap();
    let want = dwt::wavedec(xa.view(), &t, Some(4), 0).unwrap();
    let (mut wd, mut wr) = (Wavedec1d::new(), Waverec1d::new());
    for _ in 0..2 {
        wd.run(&x, &t, 4).unwrap();
        for (g, w) in wd.coeffs.iter().zip(&want) {
            assert_eq!(g.as_slice(), w.as_slice().unwrap());
        }
        wr.run(&wd.coeffs, &t).unwrap();
        let r = dwt::waverec(&want, &t, 0).unwrap();
        assert_eq!(wr.out.as_slice(), r.as_slice().unwrap());
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    assert!(DiscreteWavelet::from_name("db99").is_err());
    assert!("nosuchmode".parse::<Mode>().is_err());
    let w = DiscreteWavelet::from_name("db2").unwrap();
    let t = Transform::<f64>::new(&w, Mode::Reflect, Algorithm::Auto, Granularity::Two).unwrap();
    assert!(dwt::dwt(&[1.0], &t).is_err());
    assert!(dwt::dwt::<f64>(&[], &t).is_err());
    assert!(dwt::idwt(&[1.0, 2.0], &[1.0], &t).is_err());
    assert!(
        dwt::idwt(&[1.0], &[1.0], &t).is_err(),
        "fewer coefficients than the filter needs"
    );
    let bior = DiscreteWavelet::from_name("bior2.2").unwrap();
    let e =
        Transform::<f64>::new(&bior, Mode::Zero, Algorithm::Lattice, Granularity::Two).unwrap_err();
    assert!(e.to_string().contains("orthogonal"), "{e}");
    let x = ArrayD::from_shape_vec(IxDyn(&[4, 4]), vec![0.0; 16]).unwrap();
    assert!(dwt::wavedecn(x.view(), &t, Some(1), &[0, 0]).is_err());
    assert!(dwt::wavedecn(x.view(), &t, Some(1), &[2]).is_err());
    let e = dwt::wavedecn(x.view(), &t, Some(4_000_000_000), &[0]).unwrap_err();
    assert!(e.to_string().contains("at most"), "{e}");
    let one = ArrayD::from_shape_vec(IxDyn(&[8]), vec![1.0; 8]).unwrap();
    assert!(dwt::wavedec(one.view(), &t, Some(usize::MAX), 0).is_err());
    // Mismatched coefficient lengths in waverec: 5 then 2 along the axis.
    let t = Transform::<f64>::new(&w, Mode::Symmetric, Algorithm::Auto, Granularity::Two).unwrap();
    let a = ArrayD::from_shape_vec(IxDyn(&[5]), vec![1.0; 5]).unwrap();
    let d = ArrayD::from_shape_vec(IxDyn(&[2]), vec![1.0; 2]).unwrap();
    let e = dwt::waverec(&[a, d], &t, 0).unwrap_err();
    assert!(e.to_string().contains("approximation"), "{e}");
}

/// Long periodization signals take the fused path (all levels per chunk in
/// cache); it must equal the level-by-level transform, wrap-around included.
#[test]
fn fused_multilevel_equals_level_by_level() {
    let n = 1 << 17;
    let x = ArrayD::from_shape_vec(IxDyn(&[n]), noise(n, 21)).unwrap();
    for name in ["haar", "db4", "sym5", "coif3", "bior4.4", "db20"] {
        let w = DiscreteWavelet::from_name(name).unwrap();
        let fused =
            Transform::<f64>::new(&w, Mode::Periodization, Algorithm::Auto, Granularity::Two)
                .unwrap();
        let plain =
            Transform::<f64>::new(&w, Mode::Periodization, Algorithm::Matrix, Granularity::Two)
                .unwrap();
        for level in [1usize, 3, 8] {
            let a = dwt::wavedec(x.view(), &fused, Some(level), 0).unwrap();
            let b = dwt::wavedec(x.view(), &plain, Some(level), 0).unwrap();
            assert_eq!(a.len(), b.len());
            for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                assert_eq!(p.len(), q.len(), "{name} level {level} array {i}");
                let e = max_rel(p.as_slice().unwrap(), q.as_slice().unwrap());
                assert!(e < 1e-12, "{name} level {level} array {i}: {e:e}");
            }
            // The fused inverse equals the level-by-level one.
            let ra = dwt::waverec(&b, &fused, 0).unwrap();
            let rb = dwt::waverec(&b, &plain, 0).unwrap();
            assert_eq!(ra.len(), n);
            let e = max_rel(ra.as_slice().unwrap(), rb.as_slice().unwrap());
            assert!(e < 1e-12, "{name} level {level} waverec: {e:e}");
        }
    }
}

/// float32 in the extrapolating modes (smooth, antireflect) with long
/// filters: the extended samples are made in float64 and rounded once, so
/// the boundary coefficients are as close to the float64 transform of the
/// same values as the interior ones (made as two float32 products that
/// cancel, they were 10-40x further: up to 2e-4 relative for db38).
#[test]
fn float32_boundaries_of_extrapolating_modes_are_as_close_as_the_interior() {
    for (name, n) in [
        ("db20", 257),
        ("db38", 257),
        ("db38", 1000),
        ("dmey", 1000),
        ("sym20", 600),
    ] {
        let w = DiscreteWavelet::all()
            .into_iter()
            .find(|w| w.name == name)
            .unwrap();
        let f = w.dec_lo.len();
        // A random walk far from zero: its details are small beside its values.
        let walk: Vec<f64> = noise(n, 9)
            .iter()
            .scan(50.0, |s, v| {
                *s += v;
                Some(*s)
            })
            .collect();
        let x32: Vec<f32> = walk.iter().map(|&v| v as f32).collect();
        let x64: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
        for mode in [Mode::Smooth, Mode::Antireflect] {
            for alg in [Algorithm::Auto, Algorithm::Matrix] {
                let t32 = Transform::<f32>::new(&w, mode, alg, Granularity::Two).unwrap();
                let t64 = Transform::<f64>::new(&w, mode, alg, Granularity::Two).unwrap();
                let a32 = ArrayD::from_shape_vec(IxDyn(&[n]), x32.clone()).unwrap();
                let a64 = ArrayD::from_shape_vec(IxDyn(&[n]), x64.clone()).unwrap();
                let c32 = dwt::wavedec(a32.view(), &t32, Some(1), 0).unwrap();
                let c64 = dwt::wavedec(a64.view(), &t64, Some(1), 0).unwrap();
                for (a, b) in c32.iter().zip(&c64) {
                    let (a, b) = (a.as_slice().unwrap(), b.as_slice().unwrap());
                    let scale = b.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
                    let err = |r: std::ops::Range<usize>| {
                        r.map(|i| (a[i] as f64 - b[i]).abs() / scale)
                            .fold(0.0, f64::max)
                    };
                    let len = b.len();
                    let edge = (f / 2).min(len / 2);
                    let boundary = err(0..edge).max(err(len - edge..len));
                    let interior = err(edge..len - edge).max(1e-7);
                    assert!(
                        boundary <= 3.0 * interior && boundary < 3e-5,
                        "{name} n {n} {mode:?} {alg:?}: boundary {boundary:.2e}, interior {interior:.2e}"
                    );
                }
            }
        }
    }
}
