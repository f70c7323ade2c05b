//! Paul wavelet of Torrence & Compo (1998):
//! ψ(t) = 2^m i^m m! / sqrt(π (2m)!) (1 - i t)^-(m+1).
use num_complex::Complex64;
use std::f64::consts::PI;

pub fn paul(t: f64, order: u32) -> Complex64 {
    let m = order as i32;
    let mut fact_m = 1.0f64;
    for k in 1..=order {
        fact_m *= k as f64;
    }
    let mut fact_2m = 1.0f64;
    for k in 1..=2 * order {
        fact_2m *= k as f64;
    }
    let norm = 2f64.powi(m) * fact_m / (PI * fact_2m).sqrt();
    let i_m = Complex64::i().powi(m);
    let base = Complex64::new(1.0, -t);
    i_m * norm * base.powi(-(m + 1))
}
