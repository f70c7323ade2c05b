//! A CWT stream gives the whole signal's transform bit for bit, whatever the
//! chunking: random chunk lengths (zero included), one sample at a time,
//! one push, and streams too short to start before `finish`.

use multires::cwt::{Algorithm, CwtValues, HalfFloat, OutputKind, Precision};
use multires::signal::{noise, Samples};
use multires::{Boundary, CwtOptions, CwtPlan, CwtStream, Scale, Signal, Wavelet};
use ndarray::{concatenate, Array2, Axis};
use num_complex::Complex64;

/// Each value's bits, so -0.0 and 0.0 (and any NaN payload) differ.
fn bits(v: &CwtValues) -> Array2<(u64, u64)> {
    match v {
        CwtValues::Half(a, _) => a.mapv(|b| (b as u64, 0)),
        CwtValues::Real32(a) => a.mapv(|x| (x.to_bits() as u64, 0)),
        CwtValues::Complex32(a) => a.mapv(|c| (c.re.to_bits() as u64, c.im.to_bits() as u64)),
        other => other
            .to_complex64()
            .mapv(|c| (c.re.to_bits(), c.im.to_bits())),
    }
}

fn options(wavelet: &str, n_scales: usize, top: f64) -> CwtOptions {
    let w = Wavelet::from_name(wavelet).expect("wavelet");
    let scales = (0..n_scales)
        .map(|i| Scale::new(1.5 * (top / 1.5).powf(i as f64 / (n_scales - 1) as f64)))
        .collect();
    CwtOptions::new(w, scales)
}

fn signal(n: usize, complex: bool, seed: u64) -> Signal {
    let re = noise(n, seed);
    if complex {
        let im = noise(n, seed + 1);
        Signal::complex(
            re.iter()
                .zip(&im)
                .map(|(&a, &b)| Complex64::new(a, b))
                .collect(),
        )
    } else {
        Signal::real(re)
    }
}

fn slice(x: &Signal, lo: usize, hi: usize) -> Signal {
    match &x.samples {
        Samples::Real(v) => Signal::real(v[lo..hi].to_vec()),
        Samples::Complex(v) => Signal::complex(v[lo..hi].to_vec()),
    }
}

/// The stream's columns for chunks of the given lengths (the rest in one
/// last push), checked to be as many as the columns they follow.
fn streamed(
    o: &CwtOptions,
    x: &Signal,
    chunks: &mut dyn Iterator<Item = usize>,
) -> Array2<(u64, u64)> {
    let mut s = CwtStream::new(o.clone(), x.is_complex()).expect("stream");
    let dtype = CwtPlan::new(o.clone(), 1, x.is_complex())
        .expect("plan")
        .output_dtype();
    let mut parts = Vec::new();
    let mut at = 0;
    while at < x.len() {
        let len = chunks.next().unwrap_or(x.len()).min(x.len() - at);
        let cols = s.push(&slice(x, at, at + len)).expect("push");
        at += len;
        assert_eq!(cols.dtype(), dtype, "every part in the output's dtype");
        assert_eq!(cols.shape().0, o.scales.len());
        parts.push(bits(&cols));
        assert_eq!(
            s.columns_emitted(),
            parts.iter().map(|p| p.ncols()).sum::<usize>()
        );
    }
    let before_finish = s.columns_emitted();
    if x.len() >= 2 * s.latency() {
        // Past the latency, a stream hands out columns as it goes.
        assert!(
            before_finish * o.hop >= x.len() - s.latency() - 64,
            "{before_finish} columns before finish"
        );
    }
    let last = s.finish().expect("finish");
    assert_eq!(last.dtype(), dtype);
    parts.push(bits(&last));
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    concatenate(Axis(1), &views).expect("rows agree")
}

fn whole(o: &CwtOptions, x: &Signal) -> Array2<(u64, u64)> {
    let plan = CwtPlan::new(o.clone(), x.len(), x.is_complex()).expect("plan");
    bits(&plan.execute(x, None).expect("execute").values)
}

/// Chunk lengths from a small LCG: 0..max, zeros included.
fn random_chunks(seed: u64, max: usize) -> impl Iterator<Item = usize> {
    let mut state = seed;
    std::iter::repeat_with(move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % (max + 1)
    })
}

/// A signal of 2.5 latencies plus `extra` samples, so that most columns
/// come out before `finish`.
fn check(o: &CwtOptions, extra: usize, complex: bool) {
    let latency = CwtStream::new(o.clone(), complex)
        .expect("stream")
        .latency();
    let n = latency * 5 / 2 + extra;
    let x = signal(n, complex, 7);
    let want = whole(o, &x);
    for (seed, max) in [(1, 50), (2, 3000), (3, latency + 99)] {
        let got = streamed(o, &x, &mut random_chunks(seed, max));
        assert!(
            got == want,
            "chunks up to {max} differ from the whole transform"
        );
    }
    let got = streamed(o, &x, &mut std::iter::empty());
    assert!(got == want, "one push differs from the whole transform");
}

#[test]
fn real_wavelet_auto_zero_boundary() {
    let o = options("morl", 24, 300.0);
    check(&o, 17, false);
}

#[test]
fn complex_wavelet_complex_signal_symmetric_f32_hop() {
    let mut o = options("cmor1.5-1.0", 20, 200.0);
    o.boundary = Boundary::Symmetric;
    o.precision = Precision::F32;
    o.output = OutputKind::Magnitude;
    o.hop = 3;
    check(&o, 1, true);
}

#[test]
fn fft_only_reflect_power_hop() {
    let mut o = options("mexh", 12, 120.0);
    o.boundary = Boundary::Reflect;
    o.algorithm = Algorithm::Fft;
    o.output = OutputKind::Power;
    o.hop = 2;
    check(&o, 0, false);
    check(&o, 3, true);
}

#[test]
fn direct_only_f32_phase_and_half_floats() {
    let mut o = options("cmor1.5-1.0", 8, 30.0);
    o.algorithm = Algorithm::Direct;
    o.precision = Precision::F32;
    o.output = OutputKind::Phase;
    o.boundary = Boundary::Symmetric;
    check(&o, 5, true);
    o.output = OutputKind::Magnitude;
    o.half = Some(HalfFloat::F16);
    check(&o, 2, false);
}

#[test]
fn one_sample_at_a_time() {
    let mut o = options("morl", 10, 40.0);
    o.boundary = Boundary::Symmetric;
    let latency = CwtStream::new(o.clone(), false).expect("stream").latency();
    let x = signal(3 * latency, false, 3);
    let got = streamed(&o, &x, &mut std::iter::repeat(1));
    assert!(got == whole(&o, &x));
}

#[test]
fn the_window_stays_bounded() {
    let o = options("cmor1.5-1.0", 12, 80.0);
    let mut s = CwtStream::new(o, false).expect("stream");
    let bound = 2 * s.latency() + 4096;
    for i in 0..400u64 {
        s.push(&signal(4096, false, i)).expect("push");
        assert!(
            s.held_samples() <= bound,
            "{} held > {bound}",
            s.held_samples()
        );
    }
    assert!(s.columns_emitted() > 400 * 4096 - 2 * s.latency());
}

#[test]
fn short_streams_are_transformed_at_finish() {
    let o = options("morl", 16, 200.0);
    let s = CwtStream::new(o.clone(), false).expect("stream");
    let latency = s.latency();
    for n in [1, 7, latency / 2, latency - 1, latency, latency + 1] {
        let x = signal(n, false, 11);
        let got = streamed(&o, &x, &mut random_chunks(5, 300));
        assert!(
            got == whole(&o, &x),
            "a stream of {n} samples (latency {latency})"
        );
    }
}

#[test]
fn streams_refuse_what_needs_the_whole_signal() {
    let mut o = options("morl", 4, 10.0);
    o.boundary = Boundary::Periodic;
    let e = CwtStream::new(o.clone(), false)
        .err()
        .expect("periodic refused");
    assert!(e.to_string().contains("periodic"), "{e}");
    o.boundary = Boundary::Zero;
    o.oversampling = 2;
    let e = CwtStream::new(o.clone(), false)
        .err()
        .expect("oversampling refused");
    assert!(e.to_string().contains("oversampling"), "{e}");
    o.oversampling = 1;
    let mut s = CwtStream::new(o.clone(), false).expect("stream");
    let e = s
        .push(&Signal::complex(vec![Complex64::new(1.0, 1.0)]))
        .expect_err("complex chunk in a real stream");
    assert!(e.to_string().contains("began with real"), "{e}");
    s.push(&Signal::real(vec![0.0; 10])).expect("push");
    let e = s
        .push(&Signal::real(vec![1.0, f64::NAN]))
        .expect_err("NaN refused");
    assert!(e.to_string().contains("sample 11"), "{e}");
    let empty = CwtStream::new(o, false).expect("stream");
    assert!(empty.finish().is_err(), "an empty stream has no transform");
}
