//! A scalogram of a chirp with the complex Morlet wavelet: plan once,
//! transform, read the ridge, and draw the PNG.
//!
//!     cargo run --release -p multires --example cwt
use multires::plot::{scalogram_png, PlotOptions};
use multires::{CwtOptions, CwtPlan, ScaleSpec, Signal, Wavelet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fs = 1000.0;
    let n = 4096;
    // A chirp from 20 Hz to 200 Hz.
    let x: Vec<f64> = (0..n)
        .map(|i| {
            let t = i as f64 / fs;
            (2.0 * std::f64::consts::PI * (20.0 * t + 22.0 * t * t)).sin()
        })
        .collect();
    let mut signal = Signal::real(x);
    signal.sample_rate = Some(fs);

    let wavelet = Wavelet::from_name("cmor1.5-1.0")?;
    let scales = ScaleSpec::parse_frequencies("10:250:96", fs, true)?.scales(&wavelet)?;
    let mut options = CwtOptions::new(wavelet, scales);
    options.sample_rate = Some(fs);
    let plan = CwtPlan::new(options, signal.len(), signal.is_complex())?;
    let out = plan.execute(&signal, None)?;

    let (rows, cols) = out.values.shape();
    let mag = out.values.magnitude();
    let freqs = out.frequencies.clone().unwrap_or_default();
    for c in [cols / 8, cols / 2, 7 * cols / 8] {
        let best = (0..rows)
            .max_by(|&a, &b| mag[[a, c]].total_cmp(&mag[[b, c]]))
            .unwrap_or(0);
        println!("t = {:.2} s: ridge at {:.1} Hz", c as f64 / fs, freqs[best]);
    }
    scalogram_png(
        &out,
        std::path::Path::new("chirp_scalogram.png"),
        &PlotOptions::default(),
    )?;
    println!("{rows} x {cols} coefficients; wrote chirp_scalogram.png");
    Ok(())
}
