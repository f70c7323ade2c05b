//! The GPU stream equals the GPU's in-memory transform bit for bit, for
//! random chunkings, every path (direct, shared-memory overlap-save, cuFFT),
//! boundaries, hops, precisions and real or complex signals.
mod gpu_common;

use gpu_common::{gpu_or_skip, random_signal};
use multires::cwt::{Algorithm, CwtValues, HalfFloat, OutputKind, Precision};
use multires::signal::Samples;
use multires::{Boundary, CwtOptions, CwtPlan, Scale, Signal, Wavelet};
use multires_cuda::{CudaCwt, CudaCwtStream, GpuReal};
use ndarray::{concatenate, Array2, Axis};
use std::sync::Arc;

fn bits(v: &CwtValues) -> Array2<(u64, u64)> {
    match v {
        CwtValues::Complex32(a) => a.mapv(|c| (c.re.to_bits() as u64, c.im.to_bits() as u64)),
        CwtValues::Real32(a) => a.mapv(|x| (x.to_bits() as u64, 0)),
        other => other
            .to_complex64()
            .mapv(|c| (c.re.to_bits(), c.im.to_bits())),
    }
}

fn slice(x: &Signal, lo: usize, hi: usize) -> Signal {
    match &x.samples {
        Samples::Real(v) => Signal::real(v[lo..hi].to_vec()),
        Samples::Complex(v) => Signal::complex(v[lo..hi].to_vec()),
    }
}

fn whole<T: GpuReal>(
    gpu: &Arc<multires_cuda::Gpu>,
    o: &CwtOptions,
    x: &Signal,
) -> Array2<(u64, u64)> {
    let plan = CwtPlan::new(o.clone(), x.len(), x.is_complex()).unwrap();
    let mut c = CudaCwt::<T>::new(gpu.clone(), &plan).unwrap();
    c.upload(&plan, x).unwrap();
    c.launch().unwrap();
    let mut v = CwtValues::zeroed_for(&plan);
    c.download(&mut v).unwrap();
    bits(&v)
}

fn streamed<T: GpuReal>(
    gpu: &Arc<multires_cuda::Gpu>,
    o: &CwtOptions,
    x: &Signal,
    chunk: usize,
    seed: u64,
    max: usize,
) -> (Array2<(u64, u64)>, usize) {
    let mut s = CudaCwtStream::<T>::new(gpu.clone(), o.clone(), x.is_complex(), chunk).unwrap();
    let mut state = seed;
    let mut parts = Vec::new();
    let mut at = 0;
    while at < x.len() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = (((state >> 33) as usize) % (max + 1)).min(x.len() - at);
        parts.push(bits(&s.push(&slice(x, at, at + len)).unwrap()));
        at += len;
    }
    let before = s.columns_emitted();
    parts.push(bits(&s.finish().unwrap()));
    let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
    (concatenate(Axis(1), &views).unwrap(), before)
}

#[test]
fn gpu_stream_equals_the_in_memory_run() {
    let Some(gpu) = gpu_or_skip("gpu_stream_equals_the_in_memory_run") else {
        return;
    };
    let scales: Vec<Scale> = [1.0, 2.5, 7.0, 30.0, 150.0, 300.0]
        .iter()
        .map(|&s| Scale::new(s))
        .collect();
    // Zero boundary with hop 1: windows of 1000 columns are shorter than
    // the longest mask (2 x 2400 + 1 taps), which a plan of the window's
    // length would have cut.
    for (hop, boundary) in [
        (1usize, Boundary::Symmetric),
        (3, Boundary::Zero),
        (1, Boundary::Reflect),
        (1, Boundary::Zero),
    ] {
        for algorithm in [Algorithm::Direct, Algorithm::Fft, Algorithm::Auto] {
            for (wavelet, complex) in [("cmor1.5-1.0", true), ("morl", false)] {
                for precision in [Precision::F64, Precision::F32] {
                    let mut o =
                        CwtOptions::new(Wavelet::from_name(wavelet).unwrap(), scales.clone());
                    o.precision = precision;
                    o.hop = hop;
                    o.boundary = boundary;
                    o.algorithm = algorithm;
                    if !complex {
                        o.output = OutputKind::Magnitude;
                    }
                    let what =
                        format!("hop {hop} {boundary} {algorithm:?} {wavelet} {precision:?}");
                    let chunk = 1000;
                    let latency = if precision == Precision::F64 {
                        CudaCwtStream::<f64>::new(gpu.clone(), o.clone(), complex, chunk)
                            .unwrap()
                            .latency()
                    } else {
                        CudaCwtStream::<f32>::new(gpu.clone(), o.clone(), complex, chunk)
                            .unwrap()
                            .latency()
                    };
                    let n = 2 * latency + 1234;
                    let x = random_signal(n, complex, 31);
                    for (seed, max) in [(1u64, 700usize), (2, 9000)] {
                        let (got, want, before) = if precision == Precision::F64 {
                            let (g, b) = streamed::<f64>(&gpu, &o, &x, chunk, seed, max);
                            (g, whole::<f64>(&gpu, &o, &x), b)
                        } else {
                            let (g, b) = streamed::<f32>(&gpu, &o, &x, chunk, seed, max);
                            (g, whole::<f32>(&gpu, &o, &x), b)
                        };
                        assert!(got == want, "{what}: chunks up to {max}");
                        assert!(
                            before * hop + latency + chunk * hop >= n,
                            "{what}: {before} columns before finish"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn gpu_short_streams_and_refusals() {
    let Some(gpu) = gpu_or_skip("gpu_short_streams_and_refusals") else {
        return;
    };
    let scales: Vec<Scale> = [2.0, 9.0, 40.0].iter().map(|&s| Scale::new(s)).collect();
    let mut o = CwtOptions::new(Wavelet::from_name("cmor1.5-1.0").unwrap(), scales);
    o.boundary = Boundary::Symmetric;
    for n in [1, 50, 999, 1500] {
        let x = random_signal(n, false, 5);
        let (got, _) = streamed::<f64>(&gpu, &o, &x, 1000, 9, 300);
        assert!(got == whole::<f64>(&gpu, &o, &x), "a stream of {n} samples");
    }
    let mut h = o.clone();
    h.output = OutputKind::Magnitude;
    h.precision = Precision::F32;
    h.half = Some(HalfFloat::F16);
    let e = CudaCwtStream::<f32>::new(gpu.clone(), h, false, 1000)
        .err()
        .unwrap();
    assert!(e.to_string().contains("float16"), "{e}");
    let mut p = o.clone();
    p.boundary = Boundary::Periodic;
    assert!(CudaCwtStream::<f64>::new(gpu.clone(), p, false, 1000).is_err());
    let e = CudaCwtStream::<f32>::new(gpu.clone(), o.clone(), false, 1000)
        .err()
        .unwrap();
    assert!(e.to_string().contains("f64"), "{e}");
}

#[test]
fn gpu_stream_of_a_long_signal_equals_the_in_memory_run() {
    let Some(gpu) = gpu_or_skip("gpu_stream_of_a_long_signal_equals_the_in_memory_run") else {
        return;
    };
    // 3 M samples: the cuFFT group (scales near 300) runs 108 segments in
    // memory and a handful per window; cuFFT chose other kernels for the
    // larger batch until every call took the same number of segments.
    let scales: Vec<Scale> = (0..40)
        .map(|i| Scale::new(2.0 * 150f64.powf(i as f64 / 39.0)))
        .collect();
    let mut o = CwtOptions::new(Wavelet::from_name("cmor1.5-1.0").unwrap(), scales);
    o.precision = Precision::F32;
    let x = random_signal(3_000_001, false, 6);
    let (got, _) = streamed::<f32>(&gpu, &o, &x, 262_144, 3, 400_000);
    assert!(got == whole::<f32>(&gpu, &o, &x));
}
