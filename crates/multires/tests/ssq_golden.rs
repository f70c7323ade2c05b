//! Synchrosqueezing, the inverse CWT and ridges against ssqueezepy 0.6.6
//! (fixtures from tools/golden/make_ssq_golden.py: circular transforms of a
//! chirp plus a tone, 512 samples, scales 2..128 at 8 voices per octave).
use multires::boundary::Boundary;
use multires::cwt::{CwtOptions, CwtPlan, Normalization};
use multires::scales::Scale;
use multires::signal::Signal;
use multires::timefreq::{
    extract_ridges, icwt, issq_cwt, phase_transform, scale_weights, ssq_cwt, ssqueeze, IcwtOptions,
    Squeezing, SsqOptions,
};
use multires::wavelets::Wavelet;
use ndarray::{Array1, Array2};
use ndarray_npy::NpzReader;
use num_complex::Complex64;
use std::f64::consts::PI;
use std::fs::File;

struct Case {
    x: Vec<f64>,
    scales: Vec<f64>,
    wx: Array2<Complex64>,
    dwx: Array2<Complex64>,
    w: Array2<f64>,
    tx: Array2<Complex64>,
    tx_lebesgue: Array2<Complex64>,
    freqs_desc: Vec<f64>,
    issq: Vec<f64>,
    icwt: Vec<f64>,
    ridges: Array2<i64>,
    adm_ssq: f64,
}

fn load(name: &str) -> Case {
    let path = format!("{}/tests/data/ssq/{name}.npz", env!("CARGO_MANIFEST_DIR"));
    let mut z = NpzReader::new(File::open(path).expect("fixture")).expect("npz");
    let v = |z: &mut NpzReader<File>, k: &str| -> Vec<f64> {
        let a: Array1<f64> = z.by_name(k).expect(k);
        a.to_vec()
    };
    let c = |z: &mut NpzReader<File>, k: &str| -> Array2<Complex64> { z.by_name(k).expect(k) };
    let adm: ndarray::Array0<f64> = z.by_name("adm_ssq").expect("adm");
    Case {
        x: v(&mut z, "x"),
        scales: v(&mut z, "scales"),
        wx: c(&mut z, "Wx"),
        dwx: c(&mut z, "dWx"),
        w: z.by_name("w").expect("w"),
        tx: c(&mut z, "Tx"),
        tx_lebesgue: c(&mut z, "Tx_lebesgue"),
        freqs_desc: v(&mut z, "ssq_freqs"),
        issq: v(&mut z, "issq"),
        icwt: v(&mut z, "icwt"),
        ridges: z.by_name("ridges").expect("ridges"),
        adm_ssq: adm.into_scalar(),
    }
}

fn rel(a: &Array2<Complex64>, b: &Array2<Complex64>) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(p, q)| (p - q).norm_sqr()).sum();
    let den: f64 = b.iter().map(|q| q.norm_sqr()).sum();
    (num / den).sqrt()
}

fn rel1(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(p, q)| (p - q).powi(2)).sum();
    let den: f64 = b.iter().map(|q| q * q).sum();
    (num / den).sqrt()
}

/// ssqueezepy's Morlet (mu = 6) over multires' cmor2.0-(6/2π): the
/// constant √2 cs π^¼ of its spectrum.
fn morlet_factor() -> f64 {
    let mu: f64 = 6.0;
    let cs = (1.0 + (-mu * mu).exp() - 2.0 * (-0.75 * mu * mu).exp()).powf(-0.5);
    2f64.sqrt() * cs * PI.powf(0.25)
}

fn wavelet_of(name: &str) -> (Wavelet, f64) {
    match name {
        "gmw" => (Wavelet::from_name("morse60-3").unwrap(), 1.0),
        _ => (
            Wavelet::from_name(&format!("cmor2.0-{}", 6.0 / (2.0 * PI))).unwrap(),
            morlet_factor(),
        ),
    }
}

fn options(w: &Wavelet, scales: &[f64]) -> CwtOptions {
    let mut o = CwtOptions::new(w.clone(), scales.iter().map(|&s| Scale::new(s)).collect());
    o.boundary = Boundary::Periodic;
    o.normalization = Normalization::L1;
    o
}

/// Our exact CWT and its exact time derivative equal ssqueezepy's
/// frequency-domain ones where both compute the same circular sum.
#[test]
fn the_cwt_and_its_derivative_equal_ssqueezepys() {
    for name in ["gmw", "morlet"] {
        let c = load(name);
        let (w, f) = wavelet_of(name);
        let s = ssq_cwt(
            &Signal::real(c.x.clone()),
            &options(&w, &c.scales),
            &SsqOptions::default(),
        )
        .unwrap();
        let (ew, ed) = (rel(&(&s.wx * f), &c.wx), rel(&(&s.dwx * f), &c.dwx));
        println!("{name}: Wx rel {ew:.2e}, dWx rel {ed:.2e}");
        assert!(ew < 1e-6 && ed < 1e-6, "{name}: {ew:e} {ed:e}");
        // The plain CWT plan gives the same Wx as ssq_cwt's.
        let plan = CwtPlan::new(options(&w, &c.scales), c.x.len(), false).unwrap();
        let plain = plan.execute(&Signal::real(c.x.clone()), None).unwrap();
        assert_eq!(plain.values.to_complex64(), s.wx);
    }
}

/// Fed ssqueezepy's own Wx and dWx, the squeezing lands every coefficient
/// in the same bin: the planes agree to rounding.
#[test]
fn squeezing_their_coefficients_gives_their_plane() {
    for name in ["gmw", "morlet"] {
        let c = load(name);
        let mut asc = c.freqs_desc.clone();
        asc.reverse();
        let wts = scale_weights(&c.scales).unwrap();
        let gamma = 10.0 * f64::EPSILON;
        let t = ssqueeze(
            c.wx.view(),
            c.dwx.view(),
            &wts,
            &asc,
            Squeezing::Sum,
            gamma,
            true,
        )
        .unwrap();
        let e = rel(&t, &c.tx);
        assert!(e < 1e-13, "{name}: Tx rel {e:e}");
        let l = ssqueeze(
            c.wx.view(),
            c.dwx.view(),
            &wts,
            &asc,
            Squeezing::Lebesgue,
            gamma,
            true,
        )
        .unwrap();
        let e = rel(&l, &c.tx_lebesgue);
        assert!(e < 1e-13, "{name}: lebesgue rel {e:e}");
        let w = phase_transform(c.wx.view(), c.dwx.view(), gamma).unwrap();
        let worst = w
            .iter()
            .zip(&c.w)
            .filter(|(a, _)| a.is_finite())
            .map(|(a, b)| (a - b).abs() / b.abs().max(1e-300))
            .fold(0.0f64, f64::max);
        assert!(worst < 1e-13, "{name}: phase transform {worst:e}");
    }
}

/// The whole synchrosqueezed CWT against ssqueezepy's, on its frequencies:
/// the planes differ only where ω sits on a bin edge to within the CWTs'
/// 1e-6 difference.
#[test]
fn the_synchrosqueezed_plane_equals_ssqueezepys() {
    for name in ["gmw", "morlet"] {
        let c = load(name);
        let (w, f) = wavelet_of(name);
        let ssq = SsqOptions {
            freqs: Some(c.freqs_desc.clone()),
            ..SsqOptions::default()
        };
        let s = ssq_cwt(&Signal::real(c.x.clone()), &options(&w, &c.scales), &ssq).unwrap();
        assert_eq!(s.freqs, c.freqs_desc);
        let e = rel(&(&s.tx * f), &c.tx);
        println!("{name}: Tx rel {e:.2e}");
        assert!(e < 1e-5, "{name}: Tx rel {e:e}");
    }
}

/// The admissibility constant, the inverses and the ridges.
#[test]
fn inverses_and_ridges_equal_ssqueezepys() {
    for name in ["gmw", "morlet"] {
        let c = load(name);
        let (w, f) = wavelet_of(name);
        let k = w.admissibility().positive.re * f;
        let ek = (k - c.adm_ssq).abs() / c.adm_ssq;
        println!("{name}: K+ {k} vs adm_ssq {} ({ek:.1e})", c.adm_ssq);
        assert!(ek < 1e-6, "{name}: {ek:e}");
        // On their planes, scaled to our wavelet.
        let mut asc = c.freqs_desc.clone();
        asc.reverse();
        let x = issq_cwt((&c.tx / f).view(), &c.freqs_desc, &w, None, 0.0).unwrap();
        let e = rel1(&x, &c.issq);
        assert!(e < 1e-6, "{name}: issq {e:e}");
        let o = IcwtOptions {
            normalization: Normalization::L1,
            ..IcwtOptions::default()
        };
        let x = icwt((&c.wx / f).view(), &c.scales, &w, &o).unwrap();
        let xr: Vec<f64> = x.iter().map(|v| v.re).collect();
        let e = rel1(&xr, &c.icwt);
        assert!(e < 1e-6, "{name}: icwt {e:e}");
        let energy = c.tx.mapv(|v| v.norm_sqr());
        let r = extract_ridges(energy.view(), &c.scales, true, 2.0, 2, 4, f64::EPSILON).unwrap();
        let same = r
            .indices
            .iter()
            .zip(&c.ridges)
            .filter(|(a, b)| **a as i64 == **b)
            .count();
        println!("{name}: ridges agree at {same} of {}", c.ridges.len());
        assert!(same * 100 >= 99 * c.ridges.len(), "{name}: {same}");
        // Where they differ, ssqueezepy's backward pass found no sum equal
        // within ε and kept a column's own best: ours costs no more.
        let lv: Vec<f64> = c.scales.iter().map(|s| s.ln()).collect();
        let mut e = energy.clone();
        for k in 0..2 {
            let path = |col: &dyn Fn(usize) -> usize| -> f64 {
                let mut total = 0.0;
                for t in 0..e.ncols() {
                    let m = e.column(t).iter().fold(0.0f64, |a, &b| a.max(b));
                    total += -(e[[col(t), t]] / m + f64::EPSILON).ln();
                    if t > 0 {
                        total += 2.0 * (lv[col(t)] - lv[col(t - 1)]).powi(2);
                    }
                }
                total
            };
            let ours = path(&|t| r.indices[[t, k]]);
            let theirs = path(&|t| c.ridges[[t, k]] as usize);
            assert!(ours <= theirs + 1e-9, "{name} ridge {k}: {ours} > {theirs}");
            for t in 0..e.ncols() {
                let f = r.indices[[t, k]];
                for g in f.saturating_sub(4)..(f + 4).min(e.nrows()) {
                    e[[g, t]] = 0.0;
                }
            }
        }
    }
}
