//! `multires denoise`: wavelet shrinkage of a signal, image or volume as
//! scikit-image's denoise_wavelet runs it (wavedecn in mode symmetric,
//! a threshold per detail subband, waverecn).
use anyhow::{bail, Result};
use clap::Args;
use multires::dwt::denoise::{self, DenoiseOptions, ShrinkMethod, ThresholdMode};
use multires::dwt::{Algorithm, DiscreteWavelet, Granularity, Mode, Transform};
use multires::io;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct DenoiseArgs {
    /// Input: .npy (1-D, 2-D or 3-D), .wav, .csv/.txt. Values are denoised as
    /// they are (integers are not rescaled to [0, 1] as skimage does).
    pub input: PathBuf,
    /// Output .npy, the input's shape (float64, or float32 for float32 input).
    #[arg(short, long)]
    pub output: PathBuf,
    /// bayes (BayesShrink: a threshold per subband), visu (VisuShrink: the
    /// universal threshold) or sure (SureShrink: the hybrid SURE threshold per subband).
    #[arg(long, default_value = "bayes")]
    pub method: ShrinkMethod,
    /// Orthogonal discrete wavelet (skimage's default db1).
    #[arg(long, short, default_value = "db1")]
    pub wavelet: String,
    /// soft or hard thresholding.
    #[arg(long, default_value = "soft")]
    pub mode: ThresholdMode,
    /// The noise's standard deviation (default: estimated from the finest
    /// diagonal details by their median absolute deviation).
    #[arg(long, allow_hyphen_values = true)]
    pub sigma: Option<f64>,
    /// Levels (default: the deepest level minus 3, at least 1, as skimage).
    #[arg(long)]
    pub levels: Option<usize>,
}

pub fn denoise(a: DenoiseArgs) -> Result<()> {
    crate::paths::check(
        &[&a.input],
        &[crate::paths::Output::new(&a.output, "-o", &["npy"])],
    )?;
    if let Some(s) = a.sigma.filter(|s| !(s.is_finite() && *s >= 0.0)) {
        bail!("--sigma {s}: give the noise's standard deviation, a finite number >= 0");
    }
    if a.levels == Some(0) {
        bail!("--levels 0: give at least 1 level (or leave it out for skimage's default)");
    }
    let t0 = Instant::now();
    let x = crate::cmd_dwt::read_finite(
        &a.input,
        "denoising needs finite samples (fill or mask them first)",
    )?;
    let w = DiscreteWavelet::from_name(&a.wavelet)?;
    if !w.orthogonal {
        eprintln!(
            "warning: wavelet thresholding is designed for orthogonal wavelets; {} is not",
            w.name
        );
    }
    let o = DenoiseOptions {
        method: a.method,
        mode: a.mode,
        sigma: a.sigma,
        levels: a.levels,
    };
    let sigma = if x.was_f32 {
        let t =
            Transform::<f32>::new(&w, Mode::Symmetric, Algorithm::Auto, Granularity::default())?;
        let (y, s) = denoise::denoise(x.values.mapv(|v| v as f32).view(), &t, &o)?;
        io::write_npy(&a.output, &y)?;
        s
    } else {
        let t =
            Transform::<f64>::new(&w, Mode::Symmetric, Algorithm::Auto, Granularity::default())?;
        let (y, s) = denoise::denoise(x.values.view(), &t, &o)?;
        io::write_npy(&a.output, &y)?;
        s
    };
    eprintln!(
        "denoise: {:?}, {} {} thresholds, wavelet {}, sigma {sigma:.6}{} -> {} in {:.3} s",
        x.values.shape(),
        a.method,
        a.mode,
        a.wavelet,
        if a.sigma.is_some() {
            " (given)"
        } else {
            " (estimated)"
        },
        a.output.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
