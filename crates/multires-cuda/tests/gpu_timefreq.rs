//! The synchrosqueezed CWT with both transforms on the GPU (the derivative
//! wavelet's masks sampled on the host and uploaded) against the CPU.
mod gpu_common;
use gpu_common::*;
use multires::cwt::Precision;
use multires::timefreq::{issq_cwt, ssq_cwt, ssq_cwt_on, SsqOptions};
use multires::{CwtOptions, Scale, Wavelet};
use multires_cuda::CudaBackend;

#[test]
fn the_gpu_synchrosqueezes_as_the_cpu() {
    let Some(_gpu) = gpu_or_skip("the_gpu_synchrosqueezes_as_the_cpu") else {
        return;
    };
    let backend = CudaBackend::new().unwrap();
    let x = random_signal(20_000, false, 5);
    for (name, precision, tol) in [
        ("morse60-3", Precision::F64, 1e-12),
        ("cmor1.5-1.0", Precision::F64, 1e-12),
        ("cmor1.5-1.0", Precision::F32, 1e-5),
    ] {
        let w = Wavelet::from_name(name).unwrap();
        let scales: Vec<Scale> = (0..96)
            .map(|k| Scale::new(2.0 * 2f64.powf(k as f64 / 16.0)))
            .collect();
        let mut o = CwtOptions::new(w.clone(), scales);
        o.precision = precision;
        let cpu = {
            let mut c = o.clone();
            c.precision = Precision::F64;
            ssq_cwt(&x, &c, &SsqOptions::default()).unwrap()
        };
        let gpu = ssq_cwt_on(&backend, &x, &o, &SsqOptions::default()).unwrap();
        let flat =
            |a: &ndarray::Array2<num_complex::Complex64>| a.iter().copied().collect::<Vec<_>>();
        let (ew, ed) = (
            rel_l2(&flat(&gpu.wx), &flat(&cpu.wx)),
            rel_l2(&flat(&gpu.dwx), &flat(&cpu.dwx)),
        );
        assert!(
            ew < tol && ed < tol,
            "{name} {precision:?}: Wx {ew:e} dWx {ed:e}"
        );
        if precision == Precision::F64 {
            let et = rel_l2(&flat(&gpu.tx), &flat(&cpu.tx));
            assert!(et < 1e-9, "{name}: Tx {et:e}");
        }
        // The squeezed plane inverts either way.
        let back = issq_cwt(gpu.tx.view(), &gpu.freqs, &w, None, 0.0).unwrap();
        assert_eq!(back.len(), x.len());
    }
}
