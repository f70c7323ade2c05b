//! `multires ssq`: the synchrosqueezed CWT, its ridges and its plot.
use crate::cmd_cwt::{build_options, TransformArgs};
use crate::paths;
use anyhow::{bail, Context, Result};
use clap::Args;
use multires::cwt::{CwtOutput, CwtValues, OutputKind};
use multires::io::{self, RawType, ReadOptions};
use multires::plot::{scalogram_png, PlotOptions};
use multires::timefreq::{
    extract_ridges, ssq_cwt_on, FreqSpacing, MapRange, Squeezing, SsqOptions,
};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args, Clone)]
#[command(
    after_help = "Examples:\n  multires ssq chirp.npy -o T.npy --wavelet morse60-3 --scales-voices 2:512:32 --plot T.png --ridges 2\n  multires ssq eeg.wav -o T.npy --wavelet cmor1.5-1.0 --freqs 1:60:128 --freq-spacing log --ssq-spacing log"
)]
pub struct SsqArgs {
    /// Input signal: .npy, .wav, .csv/.txt (one column), or raw with --raw.
    pub input: PathBuf,
    /// Output .npy of the synchrosqueezed plane Tx, shape (frequencies, N),
    /// complex; rows from the highest frequency down.
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub transform: TransformArgs,
    /// What each coefficient adds to its bin: sum (W, invertible) or lebesgue (a count).
    #[arg(long, default_value = "sum")]
    pub squeezing: Squeezing,
    /// Spacing of the output frequencies: log or linear (default: as the scales).
    #[arg(long, value_name = "log|linear")]
    pub ssq_spacing: Option<FreqSpacing>,
    /// Frequencies spanned: peak (the wavelet's at the largest and smallest
    /// scale), maximal (fs/N to fs/2) or FMIN:FMAX.
    #[arg(long, default_value = "peak", value_name = "peak|maximal|FMIN:FMAX")]
    pub maprange: String,
    /// |W| (L1) at or below which a coefficient is not reassigned (default 10 eps).
    #[arg(long)]
    pub gamma: Option<f64>,
    /// Write the row frequencies (.npy).
    #[arg(long, value_name = "F.npy")]
    pub freqs_out: Option<PathBuf>,
    /// Track this many ridges (penalized path of ssqueezepy's extract_ridges).
    #[arg(long, default_value_t = 0)]
    pub ridges: usize,
    /// Penalty on a ridge's squared jump in log frequency.
    #[arg(long, default_value_t = 2.0)]
    pub penalty: f64,
    /// Rows cleared around each ridge before the next is tracked.
    #[arg(long, default_value_t = 4)]
    pub ridge_bw: usize,
    /// Write the ridges' rows as int64 .npy of shape (N, ridges).
    #[arg(long, value_name = "R.npy")]
    pub ridges_out: Option<PathBuf>,
    /// Write |Tx| as a PNG with the ridges drawn over it.
    #[arg(long, value_name = "P.png")]
    pub plot: Option<PathBuf>,
    /// Read the input as raw little-endian samples of this type.
    #[arg(long, value_name = "f32|f64")]
    pub raw: Option<RawType>,
    /// WAV channel or CSV column to read (0-based).
    #[arg(long, default_value_t = 0)]
    pub channel: usize,
}

fn maprange(s: &str) -> Result<MapRange> {
    match s {
        "peak" => Ok(MapRange::Peak),
        "maximal" => Ok(MapRange::Maximal),
        _ => {
            let p: Vec<&str> = s.split(':').collect();
            let nums: Option<Vec<f64>> = p.iter().map(|v| v.trim().parse().ok()).collect();
            match nums.as_deref() {
                Some([a, b]) if a.is_finite() && b.is_finite() && *a > 0.0 && b > a => {
                    Ok(MapRange::Range(*a, *b))
                }
                _ => bail!(
                    "--maprange {s}: expected peak, maximal or FMIN:FMAX with 0 < FMIN < FMAX"
                ),
            }
        }
    }
}

const NPY: &[&str] = &["npy"];
const PNG: &[&str] = &["png"];

pub fn ssq(a: SsqArgs) -> Result<()> {
    let mut outputs = vec![paths::Output::new(&a.output, "-o", &["npy"])];
    for (p, flag, ext) in [
        (&a.freqs_out, "--freqs-out", NPY),
        (&a.ridges_out, "--ridges-out", NPY),
        (&a.plot, "--plot", PNG),
    ] {
        if let Some(p) = p {
            outputs.push(paths::Output::new(p, flag, ext));
        }
    }
    paths::check(&[a.input.as_path()], &outputs)?;
    if a.ridges_out.is_some() && a.ridges == 0 {
        bail!("--ridges-out needs --ridges N (N >= 1)");
    }
    let read = ReadOptions {
        raw: a.raw,
        channel: a.channel,
    };
    let signal = io::read_signal(&a.input, &read)?;
    paths::say(&signal.notes);
    if signal.is_empty() {
        bail!("'{}' holds no samples", a.input.display());
    }
    let options = build_options(&a.transform, &signal)?;
    let fs = options.sample_rate;
    let ssq = SsqOptions {
        squeezing: a.squeezing,
        spacing: a.ssq_spacing,
        maprange: maprange(&a.maprange)?,
        gamma: a.gamma,
        ..SsqOptions::default()
    };
    let (backend, note) = multires_cuda::select(a.transform.device)?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let start = Instant::now();
    let s = ssq_cwt_on(backend.as_ref(), &signal, &options, &ssq).context("synchrosqueezing")?;
    let secs = start.elapsed().as_secs_f64();
    let ridges = if a.ridges > 0 {
        let energy = s.tx.mapv(|v| v.norm_sqr());
        let r = extract_ridges(
            energy.view(),
            &s.freqs,
            true,
            a.penalty,
            a.ridges,
            a.ridge_bw,
            f64::EPSILON,
        )?;
        Some(r)
    } else {
        None
    };
    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| -> Result<()> {
        io::write_npy(&a.output, &s.tx)?;
        written.push(a.output.clone());
        if let Some(p) = &a.freqs_out {
            io::write_npy(p, &ndarray::Array1::from(s.freqs.clone()))?;
            written.push(p.clone());
        }
        if let (Some(p), Some(r)) = (&a.ridges_out, &ridges) {
            io::write_npy(p, &r.indices.mapv(|v| v as i64))?;
            written.push(p.clone());
        }
        if let Some(p) = &a.plot {
            plot(
                p,
                &s.tx,
                &s.freqs,
                fs,
                ridges.as_ref(),
                options.wavelet.name(),
            )?;
            written.push(p.clone());
        }
        Ok(())
    })();
    if let Err(e) = result {
        for p in written {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    let (nf, n) = s.tx.dim();
    println!(
        "ssq_cwt: {} scales -> {nf} frequencies x {n} columns ({}), {:.3} s on {}",
        s.scales.len(),
        a.squeezing,
        secs,
        backend.name()
    );
    if let Some(r) = &ridges {
        for k in 0..r.indices.ncols() {
            let f = r.values.column(k);
            let mean = f.iter().sum::<f64>() / f.len().max(1) as f64;
            println!(
                "ridge {k}: mean frequency {mean:.6}{}",
                if fs.is_some() {
                    " Hz"
                } else {
                    " cycles/sample"
                }
            );
        }
    }
    Ok(())
}

fn plot(
    path: &Path,
    tx: &ndarray::Array2<num_complex::Complex64>,
    freqs: &[f64],
    fs: Option<f64>,
    ridges: Option<&multires::timefreq::Ridges>,
    wavelet: &str,
) -> Result<()> {
    let out = CwtOutput {
        values: CwtValues::Real64(tx.mapv(|v| v.norm())),
        scales: vec![1.0; freqs.len()],
        frequencies: Some(freqs.to_vec()),
        coi: vec![f64::INFINITY; tx.ncols()],
        column_step: 1.0,
        sample_rate: fs,
        output: OutputKind::Magnitude,
    };
    let opts = PlotOptions {
        title: format!("synchrosqueezed CWT ({wavelet})"),
        coi: false,
        ridges: ridges
            .map(|r| {
                (0..r.indices.ncols())
                    .map(|k| r.indices.column(k).to_vec())
                    .collect()
            })
            .unwrap_or_default(),
        y_label: Some(
            if fs.is_some() {
                "frequency (Hz)"
            } else {
                "frequency (cycles/sample)"
            }
            .into(),
        ),
        ..PlotOptions::default()
    };
    scalogram_png(&out, path, &opts)?;
    Ok(())
}
