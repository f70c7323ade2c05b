//! A multilevel DWT as PyWavelets' `wavedec` and `waverec`: db4, the
//! symmetric mode, five levels, and the reconstruction error.
//!
//!     cargo run --release -p multires --example wavedec
use multires::dwt::{self, Algorithm, DiscreteWavelet, Granularity, Mode, Transform};
use ndarray::{ArrayD, IxDyn};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let x = multires::signal::noise(1000, 7);
    let w = DiscreteWavelet::from_name("db4")?;
    let t = Transform::<f64>::new(&w, Mode::Symmetric, Algorithm::Auto, Granularity::Two)?;
    let xa = ArrayD::from_shape_vec(IxDyn(&[x.len()]), x.clone())?;
    let coeffs = dwt::wavedec(xa.view(), &t, Some(5), -1)?;
    // [cA5, cD5, cD4, ..., cD1], as pywt.wavedec returns them.
    for (i, c) in coeffs.iter().enumerate() {
        println!("arr_{i}: {} coefficients", c.len());
    }
    let back = dwt::waverec(&coeffs, &t, -1)?;
    let err = x
        .iter()
        .zip(back.iter())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    println!("largest reconstruction error: {err:.1e}");
    Ok(())
}
