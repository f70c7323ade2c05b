//! A FIR stream gives `fir` on the whole signal bit for bit, for every mode,
//! post-step and algorithm, whatever the chunking.
use multires::fir::{
    fir, FilterBank, FirAlgorithm, FirMode, FirOptions, FirPost, FirStream, FirValues,
};
use multires::signal::{noise, Samples};
use multires::Signal;
use ndarray::{concatenate, Array2, Axis};
use num_complex::Complex64;

fn bits(v: &FirValues) -> Array2<(u64, u64)> {
    match v {
        FirValues::Real(a) => a.mapv(|x| (x.to_bits(), 1)),
        FirValues::Complex(a) => a.mapv(|c| (c.re.to_bits(), c.im.to_bits())),
    }
}

fn slice(x: &Signal, lo: usize, hi: usize) -> Signal {
    match &x.samples {
        Samples::Real(v) => Signal::real(v[lo..hi].to_vec()),
        Samples::Complex(v) => Signal::complex(v[lo..hi].to_vec()),
    }
}

fn chunks(seed: u64, max: usize) -> impl Iterator<Item = usize> {
    let mut state = seed;
    std::iter::repeat_with(move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % (max + 1)
    })
}

fn streamed(
    h: &FilterBank,
    o: &FirOptions,
    x: &Signal,
    sizes: &mut dyn Iterator<Item = usize>,
) -> (Array2<(u64, u64)>, usize) {
    let mut s = FirStream::new(h.clone(), o.clone(), x.is_complex()).expect("stream");
    let mut parts = Vec::new();
    let mut at = 0;
    while at < x.len() {
        let len = sizes.next().unwrap_or(x.len()).min(x.len() - at);
        parts.push(bits(&s.push(&slice(x, at, at + len)).expect("push")));
        at += len;
    }
    let before = s.columns_emitted();
    parts.push(bits(&s.finish().expect("finish")));
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    (concatenate(Axis(1), &views).expect("rows agree"), before)
}

fn bank(nf: usize, m: usize, complex: bool) -> FilterBank {
    let re = noise(nf * m, 42);
    if complex {
        let im = noise(nf * m, 43);
        let v = re
            .iter()
            .zip(&im)
            .map(|(&a, &b)| Complex64::new(a, b))
            .collect();
        FilterBank::Complex(Array2::from_shape_vec((nf, m), v).expect("shape"))
    } else {
        FilterBank::Real(Array2::from_shape_vec((nf, m), re).expect("shape"))
    }
}

#[test]
fn every_mode_post_and_algorithm_streams_bit_for_bit() {
    let modes = [FirMode::Full, FirMode::Same, FirMode::Valid];
    let posts = [
        FirPost::None,
        FirPost::Power,
        FirPost::Magnitude,
        FirPost::Derivative,
    ];
    for (algorithm, m) in [
        (FirAlgorithm::Direct, 9),
        (FirAlgorithm::OverlapSave, 257),
        (FirAlgorithm::Auto, 1000),
    ] {
        for (complex_x, complex_h) in [(false, false), (true, false), (false, true)] {
            let h = bank(3, m, complex_h);
            for mode in modes {
                for post in posts {
                    let o = FirOptions {
                        mode,
                        post,
                        algorithm,
                        ..FirOptions::default()
                    };
                    let latency = FirStream::new(h.clone(), o.clone(), complex_x)
                        .expect("stream")
                        .latency();
                    let n = 3 * latency + 5;
                    let re = noise(n, 9);
                    let x = if complex_x {
                        let im = noise(n, 10);
                        Signal::complex(
                            re.iter()
                                .zip(&im)
                                .map(|(&a, &b)| Complex64::new(a, b))
                                .collect(),
                        )
                    } else {
                        Signal::real(re)
                    };
                    let want = bits(&fir(&x, &h, &o).expect("fir").0);
                    for (seed, max) in [(1, 40), (2, latency + 3)] {
                        let (got, before) = streamed(&h, &o, &x, &mut chunks(seed, max));
                        let what = format!("{algorithm:?} M={m} {mode:?} {post:?} complex x {complex_x} h {complex_h} chunks <= {max}");
                        assert!(got == want, "{what}");
                        assert!(
                            before >= n - 2 * latency,
                            "{what}: {before} columns before finish"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn short_streams_and_bad_chunks() {
    let h = bank(2, 300, false);
    let o = FirOptions::default();
    let latency = FirStream::new(h.clone(), o.clone(), false)
        .expect("stream")
        .latency();
    for n in [1, 100, latency - 1, latency, latency + 1] {
        let x = Signal::real(noise(n, 4));
        let (got, _) = streamed(&h, &o, &x, &mut chunks(3, 77));
        assert!(got == bits(&fir(&x, &h, &o).expect("fir").0), "n = {n}");
    }
    let mut s = FirStream::new(h.clone(), o.clone(), false).expect("stream");
    s.push(&Signal::real(vec![0.0; 5])).expect("push");
    let e = s
        .push(&Signal::real(vec![f64::INFINITY]))
        .expect_err("inf refused");
    assert!(e.to_string().contains("sample 5"), "{e}");
    let e = s
        .push(&Signal::complex(vec![Complex64::new(0.0, 1.0)]))
        .expect_err("kind");
    assert!(e.to_string().contains("complex"), "{e}");
    let e = FirStream::new(bank(0, 3, false), o.clone(), false)
        .err()
        .expect("empty bank");
    assert!(e.to_string().contains("empty"), "{e}");
    let empty = FirStream::new(h, o, false).expect("stream");
    assert!(empty.finish().is_err());
}
