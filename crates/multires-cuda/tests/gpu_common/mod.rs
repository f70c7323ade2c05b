//! Helpers of the GPU tests: the GPU or a skip (a failure under
//! MULTIRES_REQUIRE_GPU=1), readers of in-memory files, errors, signals.
#![allow(dead_code)]

use multires::cwt::CwtValues;
use multires::Signal;
use multires_cuda::Gpu;
use num_complex::Complex64;
use std::sync::Arc;

pub fn gpu_or_skip(test: &str) -> Option<Arc<Gpu>> {
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
pub fn in_memory(bytes: &[u8]) -> multires::codec::MrzReader {
    multires::codec::MrzReader::from_reader(Box::new(std::io::Cursor::new(bytes.to_vec())), "t")
        .unwrap()
}

pub fn rel_l2(a: &[Complex64], b: &[Complex64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum::<f64>().max(1e-300);
    (num / den).sqrt()
}

pub fn flat(v: &CwtValues) -> Vec<Complex64> {
    v.to_complex64().iter().copied().collect()
}

pub fn random_signal(n: usize, complex: bool, seed: u64) -> Signal {
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
