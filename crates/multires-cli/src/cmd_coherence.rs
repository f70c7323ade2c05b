//! `multires coherence`: wavelet coherence of two series (pycwt's wct).
use crate::paths;
use crate::progress::Bar;
use anyhow::{bail, Context, Result};
use clap::Args;
use multires::backend::Device;
use multires::cwt::{CwtOutput, CwtValues, OutputKind};
use multires::io::{self, ReadOptions};
use multires::plot::{scalogram_png, PlotOptions};
use multires::timefreq::{
    ar1, morlet_coherence, wct_significance, MonteCarlo, MorletCoherenceOptions,
};
use multires::Boundary;
use std::path::PathBuf;

#[derive(Args, Clone)]
#[command(
    after_help = "Example:\n  multires coherence a.npy b.npy -o C.npz --dt 0.25 --plot C.png --sig\n\nC.npz holds wct (scales x N), phase (radians: the first series leads by it), freq, scales, coi, and with --sig the level per scale (sig)."
)]
pub struct CoherenceArgs {
    /// The first series (.npy, .wav, .csv/.txt).
    pub first: PathBuf,
    /// The second series, of the same length.
    pub second: PathBuf,
    /// Output .npz with wct, phase, freq, scales and coi.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Sampling interval (the unit of periods and of the cone of influence).
    #[arg(long, default_value_t = 1.0)]
    pub dt: f64,
    /// Scale spacing in octaves.
    #[arg(long, default_value_t = 1.0 / 12.0)]
    pub dj: f64,
    /// Smallest scale, in the units of --dt (default 2 dt / flambda, pycwt's).
    #[arg(long)]
    pub s0: Option<f64>,
    /// zero (default) or periodic (pycwt's circular FFT for a power-of-two length).
    #[arg(long, default_value = "zero")]
    pub boundary: Boundary,
    /// auto, cpu or cuda (the two transforms).
    #[arg(long, default_value = "auto")]
    pub device: Device,
    /// Write the coherence with phase arrows and the cone of influence as a PNG.
    #[arg(long, value_name = "P.png")]
    pub plot: Option<PathBuf>,
    /// Also the Monte Carlo significance against AR(1) noise with the
    /// series' lag-1 coefficients (pycwt's wct(sig=True)): `sig` per scale
    /// in the .npz, and its contour on the plot.
    #[arg(long)]
    pub sig: bool,
    /// Noise pairs of the Monte Carlo.
    #[arg(long, default_value_t = 300)]
    pub mc_count: usize,
    /// The quantile the noise pairs stay below.
    #[arg(long, default_value_t = 0.95)]
    pub significance_level: f64,
    /// Seed of the Monte Carlo's generator (a run repeats exactly).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

pub fn coherence(a: CoherenceArgs) -> Result<()> {
    let mut outputs = vec![paths::Output::new(&a.output, "-o", &["npz"])];
    if let Some(p) = &a.plot {
        outputs.push(paths::Output::new(p, "--plot", &["png"]));
    }
    paths::check(&[a.first.as_path(), a.second.as_path()], &outputs)?;
    let read = |p: &PathBuf| -> Result<Vec<f64>> {
        let s = io::read_signal(p, &ReadOptions::default())
            .with_context(|| format!("reading '{}'", p.display()))?;
        if s.is_complex() {
            bail!("'{}' is complex: coherence takes real series", p.display());
        }
        Ok(s.to_complex().iter().map(|c| c.re).collect())
    };
    let (y1, y2) = (read(&a.first)?, read(&a.second)?);
    let (backend, note) = multires_cuda::select(a.device)?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let o = MorletCoherenceOptions {
        dt: a.dt,
        dj: a.dj,
        s0: a.s0,
        j: None,
        normalize: true,
        boundary: a.boundary,
    };
    let c = morlet_coherence(backend.as_ref(), &y1, &y2, &o).context("coherence")?;
    let sig = if a.sig {
        let (g1, g2) = (ar1(&y1)?.0, ar1(&y2)?.0);
        let mc = MonteCarlo {
            count: a.mc_count,
            level: a.significance_level,
            seed: a.seed,
        };
        let on = MorletCoherenceOptions {
            s0: c.scales.first().copied(),
            j: Some(c.scales.len().saturating_sub(1)),
            ..o.clone()
        };
        let bar = Bar::new(a.mc_count as u64, "significance");
        let progress = |d: usize, n: usize| bar.update(d, n);
        let levels = wct_significance(backend.as_ref(), g1, g2, &on, &mc, Some(&progress))
            .context("the Monte Carlo significance")?;
        bar.finish();
        Some(levels)
    } else {
        None
    };
    let v = |x: &[f64]| ndarray::Array1::from(x.to_vec()).into_dyn();
    let mut arrays = vec![
        ("wct".to_string(), c.coherence.wct.clone().into_dyn()),
        ("phase".to_string(), c.coherence.phase.clone().into_dyn()),
        ("freq".to_string(), v(&c.freqs)),
        ("scales".to_string(), v(&c.scales)),
        ("coi".to_string(), v(&c.coi)),
    ];
    if let Some(s) = &sig {
        arrays.push(("sig".to_string(), v(s)));
    }
    let views: Vec<(String, ndarray::ArrayViewD<f64>)> =
        arrays.iter().map(|(k, a)| (k.clone(), a.view())).collect();
    io::write_npz(&a.output, &views)?;
    if let Some(p) = &a.plot {
        let periods: Vec<f64> = c.freqs.iter().map(|f| 1.0 / f).collect();
        let out = CwtOutput {
            values: CwtValues::Real64(c.coherence.wct.clone()),
            scales: periods.clone(),
            frequencies: Some(periods),
            coi: c.coi.clone(),
            column_step: 1.0,
            sample_rate: Some(1.0 / a.dt),
            output: OutputKind::Magnitude,
        };
        let opts = PlotOptions {
            title: if sig.is_some() {
                format!(
                    "wavelet coherence (arrows: phase, right = in phase; contour: {:.0}% significance)",
                    100.0 * a.significance_level
                )
            } else {
                "wavelet coherence (arrows: phase, right = in phase)".into()
            },
            y_label: Some("period".into()),
            value_range: Some((0.0, 1.0)),
            value_label: Some("coherence".into()),
            arrows: Some(c.coherence.phase.clone()),
            contour: sig.clone(),
            ..PlotOptions::default()
        };
        if let Err(e) = scalogram_png(&out, p, &opts) {
            let _ = std::fs::remove_file(&a.output);
            return Err(e.into());
        }
    }
    let (rows, n) = c.coherence.wct.dim();
    println!(
        "coherence: {n} samples, {rows} scales -> {}",
        a.output.display()
    );
    Ok(())
}
