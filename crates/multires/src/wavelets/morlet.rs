//! Morlet wavelets: the seed's real Morlet and PyWavelets' complex Morlet.
use num_complex::Complex64;
use std::f64::consts::PI;

pub fn morl(t: f64) -> f64 {
    (-0.5 * t * t).exp() * (5.0 * t).cos()
}

pub fn cmor(t: f64, bandwidth: f64, center: f64) -> Complex64 {
    let env = (-(t * t) / bandwidth).exp() / (PI * bandwidth).sqrt();
    Complex64::from_polar(env, 2.0 * PI * center * t)
}
