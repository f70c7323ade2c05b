//! `multires icwt`: the signal of CWT coefficients that `multires cwt` wrote.
use crate::cmd_cwt::{build_options, TransformArgs};
use crate::paths;
use anyhow::{bail, Context, Result};
use clap::Args;
use multires::io::{self, Matrix};
use multires::timefreq::{icwt, IcwtOptions};
use multires::Signal;
use ndarray::Array1;
use num_complex::Complex64;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args, Clone)]
#[command(
    after_help = "The scale flags, --wavelet and --normalization must be those the coefficients were made with:\n  multires cwt x.npy -o W.npy --wavelet cmor1.5-1.0 --scales-voices 2:1024:32\n  multires icwt W.npy -o x2.npy --wavelet cmor1.5-1.0 --scales-voices 2:1024:32 --band 8:64"
)]
pub struct IcwtArgs {
    /// Complex CWT coefficients .npy of shape (scales, N), as `multires cwt` writes them.
    pub input: PathBuf,
    /// Output .npy of the N samples (float64; complex128 with --complex-signal).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub transform: TransformArgs,
    /// Rebuild only the rows whose scale (in samples) lies in LO:HI.
    #[arg(long, value_name = "LO:HI", allow_hyphen_values = true)]
    pub band: Option<String>,
    /// Added to every sample: the signal's mean, which no finite scale holds.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub mean: f64,
    /// The transformed signal was complex (default: real).
    #[arg(long)]
    pub complex_signal: bool,
}

fn parse_band(s: &str) -> Result<(f64, f64)> {
    let parts: Vec<&str> = s.split(':').collect();
    let [lo, hi] = parts[..] else {
        bail!("--band {s}: expected LO:HI, two scales in samples");
    };
    let lo: f64 = lo
        .trim()
        .parse()
        .with_context(|| format!("--band {s}: LO"))?;
    let hi: f64 = hi
        .trim()
        .parse()
        .with_context(|| format!("--band {s}: HI"))?;
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi > 0.0) {
        bail!("--band {s}: scales must be finite and positive");
    }
    Ok((lo, hi))
}

pub fn run(a: IcwtArgs) -> Result<()> {
    paths::check(
        &[&a.input],
        &[paths::Output::new(&a.output, "-o", &["npy"])],
    )?;
    let w = match io::read_matrix(&a.input).context("reading the coefficients")? {
        Matrix::Complex(m) => m,
        Matrix::Real(_) => bail!(
            "'{}' holds real values: the inverse needs the complex coefficients (multires cwt with --output-kind complex, the default)",
            a.input.display()
        ),
    };
    let mut probe = Signal::real(Vec::new());
    probe.sample_rate = a.transform.fs;
    let o = build_options(&a.transform, &probe)?;
    let scales: Vec<f64> = o.scales.iter().map(|s| s.value()).collect();
    if w.nrows() != scales.len() {
        bail!(
            "'{}' has {} rows but the scale flags give {} scales: pass the scale flags the coefficients were made with",
            a.input.display(),
            w.nrows(),
            scales.len()
        );
    }
    let options = IcwtOptions {
        normalization: o.normalization,
        band: a.band.as_deref().map(parse_band).transpose()?,
        mean: a.mean,
        real: !a.complex_signal,
    };
    let start = Instant::now();
    let x = icwt(w.view(), &scales, &o.wavelet, &options)?;
    let secs = start.elapsed().as_secs_f64();
    if a.complex_signal {
        io::write_npy(&a.output, &Array1::from(x.clone()))?;
    } else {
        let re: Vec<f64> = x.iter().map(|c: &Complex64| c.re).collect();
        io::write_npy(&a.output, &Array1::from(re))?;
    }
    eprintln!(
        "icwt: {} scales x {} columns, wavelet {} -> {} ({} samples) in {secs:.3} s",
        scales.len(),
        w.ncols(),
        o.wavelet.name(),
        a.output.display(),
        x.len()
    );
    Ok(())
}
