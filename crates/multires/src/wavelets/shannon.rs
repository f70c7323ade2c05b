//! Shannon and frequency B-spline wavelets (PyWavelets' definitions).
use num_complex::Complex64;
use std::f64::consts::PI;

fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        (PI * x).sin() / (PI * x)
    }
}

pub fn shan(t: f64, bandwidth: f64, center: f64) -> Complex64 {
    Complex64::from_polar(
        bandwidth.sqrt() * sinc(bandwidth * t),
        2.0 * PI * center * t,
    )
}

pub fn fbsp(t: f64, order: u32, bandwidth: f64, center: f64) -> Complex64 {
    let env = bandwidth.sqrt() * sinc(bandwidth * t / order as f64).powi(order as i32);
    Complex64::from_polar(env, 2.0 * PI * center * t)
}
