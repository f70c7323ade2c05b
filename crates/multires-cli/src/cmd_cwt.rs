//! `multires cwt` and `multires demo`.
use crate::paths;
use crate::progress::Bar;
use anyhow::{bail, Context, Result};
use clap::Args;
use multires::backend::Device;
use multires::cwt::{
    Algorithm, CwtValues, Interpolator, Normalization, OutputKind, Precision, ScaleFunction,
};
use multires::io::{self, RawType, ReadOptions};
use multires::plot::{scalogram_png, PlotOptions};
use multires::{Boundary, CwtOptions, CwtOutput, CwtPlan, ScaleSpec, Signal, Wavelet};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args, Clone)]
pub struct CwtArgs {
    /// Input signal: .npy (float/complex/int), .wav, .csv/.txt (one column), or raw with --raw.
    pub input: PathBuf,
    /// Output .npy of shape (scales, columns), rows in the order of the scales given.
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub transform: TransformArgs,
    /// Write a scalogram PNG with frequency/scale and time axes and the cone of influence.
    #[arg(long, value_name = "P.png")]
    pub plot: Option<PathBuf>,
    /// Write the cone of influence (largest unaffected scale per column) as .npy.
    #[arg(long, value_name = "F.npy")]
    pub coi_out: Option<PathBuf>,
    /// Read the input as raw little-endian samples of this type.
    #[arg(long, value_name = "f32|f64")]
    pub raw: Option<RawType>,
    /// WAV channel or CSV column to read (0-based).
    #[arg(long, default_value_t = 0)]
    pub channel: usize,
    /// Read the input a chunk at a time and write the columns as they are
    /// final, for inputs larger than memory (.npy and raw are memory-mapped,
    /// WAV decoded as it goes); the columns equal the whole transform's bit
    /// for bit. On the GPU the window of samples stays on the device.
    /// Not with --plot, periodic boundaries or --oversample.
    #[arg(long)]
    pub stream: bool,
    /// Samples per chunk with --stream (on the GPU, a window of
    /// CHUNK / hop columns).
    #[arg(long, default_value_t = 1 << 20, value_name = "SAMPLES")]
    pub chunk: usize,
    /// Under mpirun: every rank computes its columns from its block of the
    /// signal and the halo its neighbours send (the widest mask's reach), on
    /// its CPU cores, and all write
    /// the one .npy together (MPI-IO); with --algorithm direct the values
    /// equal one process's bit for bit. Zero boundaries, no --oversample.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub mpi: bool,
}

#[derive(Args, Clone)]
pub struct TransformArgs {
    /// Wavelet: morl, cmorB-C, mexh, gausP, cgauP, shanB-C, fbspM-B-C, paulM, dogM, morseB-G, user:F.npy.
    #[arg(long, short, default_value = "morl")]
    pub wavelet: String,
    /// Linear scales START:STOP[:STEP], inclusive; fractions P/Q, decimals and 1e3 kept exact.
    /// Without any scale flag the scales are 1:64 (1, 2, ..., 64 samples).
    #[arg(
        long,
        value_name = "START:STOP[:STEP]",
        group = "scale_spec",
        allow_hyphen_values = true
    )]
    pub scales: Option<String>,
    /// Geometric scales START:STOP:COUNT.
    #[arg(
        long,
        value_name = "START:STOP:COUNT",
        group = "scale_spec",
        allow_hyphen_values = true
    )]
    pub scales_log: Option<String>,
    /// Geometric scales START:STOP:VOICES, VOICES per octave.
    #[arg(
        long,
        value_name = "START:STOP:VOICES",
        group = "scale_spec",
        allow_hyphen_values = true
    )]
    pub scales_voices: Option<String>,
    /// Frequencies FMIN:FMAX:COUNT in Hz (needs --fs, or a .wav input).
    #[arg(
        long,
        value_name = "FMIN:FMAX:COUNT",
        group = "scale_spec",
        allow_hyphen_values = true
    )]
    pub freqs: Option<String>,
    /// Explicit scales from a 1-D file (.npy, .csv/.txt).
    #[arg(long, value_name = "F.npy", group = "scale_spec")]
    pub scales_file: Option<PathBuf>,
    /// Sampling rate in Hz (frequencies on the plot and for --freqs).
    #[arg(long)]
    pub fs: Option<f64>,
    /// Spacing of --freqs.
    #[arg(long, default_value = "linear", value_parser = ["linear", "log"])]
    pub freq_spacing: String,
    /// complex, magnitude, power or phase.
    #[arg(long = "output-kind", visible_alias = "out", default_value = "complex")]
    pub kind: OutputKind,
    /// Working precision of the sums: f64 or f32 (f32 keeps
    /// Kahan-compensated sums; complex64/float32 output).
    #[arg(long, default_value = "f64", value_name = "f64|f32")]
    pub precision: Precision,
    /// Type of the stored values: f32 or f64 (as --precision), or f16 or
    /// bf16 for magnitude or power (half the bytes of f32; computed in
    /// --precision, rounded once). bf16 is written as uint16 bits.
    #[arg(long, value_name = "f16|bf16|f32|f64")]
    pub output_dtype: Option<String>,
    /// auto picks direct or FFT per scale from a cost model (see --explain).
    #[arg(long, default_value = "auto")]
    pub algorithm: Algorithm,
    /// zero, symmetric, reflect or periodic.
    #[arg(long, default_value = "zero")]
    pub boundary: Boundary,
    /// l2 (s^-1/2) or l1 (s^-1).
    #[arg(long, default_value = "l2")]
    pub normalization: Normalization,
    /// Keep every HOP-th column.
    #[arg(long, default_value_t = 1)]
    pub hop: usize,
    /// auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub device: Device,
    /// Print the chosen algorithm per scale group.
    #[arg(long)]
    pub explain: bool,
    /// Propagate NaN/Inf instead of refusing them.
    #[arg(long)]
    pub allow_nonfinite: bool,
    /// Per-scale mask gain g(s) (seed V-A): CONST, poly:C0,C1,..., or file:G.npy (one per scale).
    #[arg(long, value_name = "SPEC")]
    pub amplitude_gain: Option<String>,
    /// Per-scale shift of mask sample positions δ(s) in samples (seed V-C): CONST, poly:..., file:...
    #[arg(long, value_name = "SPEC")]
    pub timing_offset: Option<String>,
    /// Per-scale clock deviation ε(s), positions k(1+ε) (seed V-C): CONST, poly:..., file:...
    #[arg(long, value_name = "SPEC")]
    pub timing_skew: Option<String>,
    /// Digital oversampling of the input (seed V-B): 1, 2 or 4.
    #[arg(long, default_value_t = 1)]
    pub oversample: usize,
    /// Interpolator for --oversample: hold, linear, cubic or fft.
    #[arg(long, default_value = "cubic")]
    pub interpolator: Interpolator,
    /// Half-support B of a user:F.npy wavelet (its samples span [-B, B]).
    #[arg(long, default_value_t = 8.0)]
    pub mask_support: f64,
    /// Refuse jobs needing more memory than this many MiB (default: 90% of available).
    #[arg(long, value_name = "MiB")]
    pub memory_limit: Option<u64>,
}

/// The scales when none are given: 1, 2, ..., 64 samples.
const DEFAULT_SCALES: &str = "1:64";

fn scale_function(spec: &Option<String>, what: &str) -> Result<Option<ScaleFunction>> {
    let Some(spec) = spec else { return Ok(None) };
    if let Some(path) = spec.strip_prefix("file:") {
        let s = io::read_signal(Path::new(path), &ReadOptions::default())
            .with_context(|| format!("reading {what} values"))?;
        let v = s.to_complex().iter().map(|c| c.re).collect();
        return Ok(Some(ScaleFunction::PerScale(v)));
    }
    Ok(Some(
        ScaleFunction::parse(spec).with_context(|| format!("--{what}"))?,
    ))
}

/// Frequencies above fs/2 alias: the wavelet there is sampled too coarsely
/// to mean that frequency. They are computed as asked, with a warning.
fn warn_above_nyquist(freqs: &str, fs: f64) {
    let nyquist = fs / 2.0;
    let top = freqs
        .split(':')
        .take(2)
        .filter_map(|f| f.trim().parse::<f64>().ok())
        .fold(f64::NEG_INFINITY, f64::max);
    if top > nyquist {
        eprintln!(
            "warning: --freqs {freqs} reaches {top} Hz, above the Nyquist frequency {nyquist} Hz (fs = {fs} Hz); those rows alias"
        );
    }
}

/// Options for the transform of `signal`; sample rate from --fs or the file.
pub fn build_options(t: &TransformArgs, signal: &Signal) -> Result<CwtOptions> {
    let wavelet = match t.wavelet.strip_prefix("user:") {
        Some(path) => Wavelet::from_user_file(Path::new(path), t.mask_support)?,
        None => {
            if let Some(full) = multires::wavelets::bare_default(&t.wavelet) {
                eprintln!(
                    "warning: --wavelet {} names no parameters; using {full}, as PyWavelets does (name them, e.g. cmor1.5-1.0)",
                    t.wavelet
                );
            }
            Wavelet::from_name(&t.wavelet)?
        }
    };
    let fs = t.fs.or(signal.sample_rate);
    if let Some(fs) = t.fs {
        if !(fs.is_finite() && fs > 0.0) {
            bail!("--fs {fs}: the sampling rate must be a finite number > 0");
        }
    }
    let spec = if let Some(s) = &t.scales {
        ScaleSpec::parse_linear(s)?
    } else if let Some(s) = &t.scales_log {
        ScaleSpec::parse_log(s)?
    } else if let Some(s) = &t.scales_voices {
        ScaleSpec::parse_voices(s)?
    } else if let Some(s) = &t.freqs {
        let Some(fs) = fs else {
            bail!("--freqs needs the sampling rate: pass --fs HZ (a .wav input carries its own)");
        };
        warn_above_nyquist(s, fs);
        ScaleSpec::parse_frequencies(s, fs, t.freq_spacing == "log")?
    } else if let Some(p) = &t.scales_file {
        let s = io::read_signal(p, &ReadOptions::default()).context("reading --scales-file")?;
        ScaleSpec::List(s.to_complex().iter().map(|c| c.re).collect())
    } else {
        ScaleSpec::parse_linear(DEFAULT_SCALES)?
    };
    let scales = spec.scales(&wavelet)?;
    let mut o = CwtOptions::new(wavelet, scales);
    o.boundary = t.boundary;
    o.normalization = t.normalization;
    o.output = t.kind;
    o.precision = t.precision;
    match t.output_dtype.as_deref() {
        None => {}
        Some(d) if d.eq_ignore_ascii_case("f32") => o.precision = Precision::F32,
        Some(d) if d.eq_ignore_ascii_case("f64") => o.precision = Precision::F64,
        Some(d) => {
            o.half = Some(
                d.parse()
                    .map_err(|e: String| anyhow::anyhow!("--output-dtype: {e} (or f32, f64)"))?,
            )
        }
    }
    o.algorithm = t.algorithm;
    o.hop = t.hop;
    o.amplitude_gain = scale_function(&t.amplitude_gain, "amplitude-gain")?;
    o.timing_offset = scale_function(&t.timing_offset, "timing-offset")?;
    o.timing_skew = scale_function(&t.timing_skew, "timing-skew")?;
    o.oversampling = t.oversample;
    o.interpolator = t.interpolator;
    o.allow_nonfinite = t.allow_nonfinite;
    o.sample_rate = fs;
    o.memory_limit = t.memory_limit.map(|m| m.saturating_mul(1 << 20));
    Ok(o)
}

/// What `transform` gives back: the output, the CPU plan, seconds taken, the
/// backend's name and, from a GPU, how it planned the scales.
type Transformed = (CwtOutput, CwtPlan, f64, &'static str, Option<String>);

/// The backend and the plan for `t`, saying which device runs it and,
/// with --explain on the CPU, the recipe; and when planning began.
fn plan_on_backend(
    t: &TransformArgs,
    signal: &Signal,
) -> Result<(Box<dyn multires::backend::Backend>, CwtPlan, Instant)> {
    let options = build_options(t, signal)?;
    let (backend, note) = multires_cuda::select(t.device)?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let start = Instant::now();
    let plan = CwtPlan::new(options, signal.len(), signal.is_complex())?;
    if t.explain && backend.name() == "cpu" {
        println!("{}", plan.recipe());
    }
    Ok((backend, plan, start))
}

/// Plans and runs the transform with a progress bar; prints the recipe with --explain.
pub fn transform(t: &TransformArgs, signal: &Signal) -> Result<Transformed> {
    let (backend, plan, start) = plan_on_backend(t, signal)?;
    let bar = Bar::new(plan.options().scales.len() as u64, "cwt");
    let progress = |d: usize, n: usize| bar.update(d, n);
    let out = backend.cwt(&plan, signal, Some(&progress))?;
    bar.finish();
    let explain = backend.last_explain();
    if t.explain {
        if let Some(e) = &explain {
            print!("{e}");
        }
    }
    Ok((
        out,
        plan,
        start.elapsed().as_secs_f64(),
        backend.name(),
        explain,
    ))
}

/// Plans and runs the transform straight into the output file's mapped
/// pages (no copy of the coefficients in ordinary memory, so an output
/// larger than memory can be written; a GPU's ring copies into the page
/// cache), then writes the cone of influence. float16, which the mapped
/// writer has no element for, is made in memory. Nothing is left behind
/// on error. Returns the plan, seconds, shape and dtype.
fn transform_to_file(
    t: &TransformArgs,
    signal: &Signal,
    path: &Path,
    coi: Option<&Path>,
) -> Result<(CwtPlan, f64, usize, usize, &'static str)> {
    use multires::cwt::CwtSlice;
    use num_complex::{Complex32, Complex64};
    let (backend, plan, start) = plan_on_backend(t, signal)?;
    let (rows, cols) = (plan.options().scales.len(), plan.columns());
    let dtype = plan.output_dtype();
    let bar = Bar::new(rows as u64, "cwt");
    let progress = |d: usize, n: usize| bar.update(d, n);
    let shape = [rows, cols];
    macro_rules! mapped {
        ($t:ty, $slice:expr) => {
            io::write_npy_mapped::<$t, anyhow::Error>(path, &shape, |o| {
                Ok(backend.cwt_into_slice(&plan, signal, $slice(o), Some(&progress))?)
            })
        };
    }
    let half = plan.options().half;
    match (dtype, half) {
        ("complex64", _) => mapped!(Complex32, CwtSlice::Complex32),
        ("complex128", _) => mapped!(Complex64, CwtSlice::Complex64),
        ("float32", _) => mapped!(f32, CwtSlice::Real32),
        ("float64", _) => mapped!(f64, CwtSlice::Real64),
        (_, Some(h @ multires::cwt::HalfFloat::BF16)) => {
            mapped!(u16, |o| CwtSlice::Half(o, h))
        }
        _ => {
            let mut values = CwtValues::zeroed_for(&plan);
            backend.cwt_into(&plan, signal, &mut values)?;
            write_values(path, &values)
        }
    }?;
    bar.finish();
    let secs = start.elapsed().as_secs_f64();
    if t.explain {
        if let Some(e) = backend.last_explain() {
            print!("{e}");
        }
    }
    if let Some(p) = coi {
        if let Err(e) = io::write_npy(p, &ndarray::Array1::from(plan.coi())) {
            let _ = std::fs::remove_file(path);
            return Err(e.into());
        }
    }
    Ok((plan, secs, rows, cols, dtype))
}

pub fn write_values(path: &Path, values: &CwtValues) -> Result<()> {
    match values {
        CwtValues::Complex32(a) => io::write_npy(path, a),
        CwtValues::Complex64(a) => io::write_npy(path, a),
        CwtValues::Real32(a) => io::write_npy(path, a),
        CwtValues::Real64(a) => io::write_npy(path, a),
        CwtValues::Half(a, h) => io::write_npy(path, &io::HalfArray(a, *h)),
    }?;
    Ok(())
}

/// Writes every requested output; if any fails, the ones written are removed.
fn write_outputs(
    out: &CwtOutput,
    npy: Option<&Path>,
    plot: Option<(&Path, &str)>,
    coi: Option<&Path>,
) -> Result<()> {
    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| -> Result<()> {
        if let Some(p) = npy {
            write_values(p, &out.values)?;
            written.push(p.to_path_buf());
        }
        if let Some(p) = coi {
            io::write_npy(p, &ndarray::Array1::from(out.coi.clone()))?;
            written.push(p.to_path_buf());
        }
        if let Some((p, title)) = plot {
            let opts = PlotOptions {
                title: title.to_string(),
                ..PlotOptions::default()
            };
            scalogram_png(out, p, &opts)?;
            written.push(p.to_path_buf());
        }
        Ok(())
    })();
    if result.is_err() {
        for p in written {
            let _ = std::fs::remove_file(p);
        }
    }
    result
}

/// Files a transform's options read (scales, user wavelet, per-scale values).
fn option_inputs(t: &TransformArgs) -> Vec<&Path> {
    let mut v: Vec<&Path> = t.scales_file.iter().map(|p| p.as_path()).collect();
    v.extend(paths::file_of(Some(&t.wavelet), "user:"));
    for spec in [&t.amplitude_gain, &t.timing_offset, &t.timing_skew] {
        v.extend(paths::file_of(spec.as_deref(), "file:"));
    }
    v
}

pub fn cwt(a: CwtArgs) -> Result<()> {
    let mut inputs = option_inputs(&a.transform);
    inputs.push(&a.input);
    let mut outputs = vec![paths::Output::new(&a.output, "-o", &["npy"])];
    if let Some(p) = &a.plot {
        outputs.push(paths::Output::new(p, "--plot", &["png"]));
    }
    if let Some(p) = &a.coi_out {
        outputs.push(paths::Output::new(p, "--coi-out", &["npy"]));
    }
    paths::check(&inputs, &outputs)?;
    if a.stream {
        return crate::streamed::cwt_streamed(&a);
    }
    let read = ReadOptions {
        raw: a.raw,
        channel: a.channel,
    };
    let signal = io::read_signal(&a.input, &read)?;
    paths::say(&signal.notes);
    if signal.is_empty() {
        bail!(
            "'{}' holds no samples: a CWT needs at least one",
            a.input.display()
        );
    }
    let (plan, secs, rows, cols, dtype) = if a.plot.is_none() {
        transform_to_file(&a.transform, &signal, &a.output, a.coi_out.as_deref())?
    } else {
        let (out, plan, secs, _, _) = transform(&a.transform, &signal)?;
        let title = format!("{} — {}", a.input.display(), plan.options().wavelet.name());
        write_outputs(
            &out,
            Some(&a.output),
            a.plot.as_deref().map(|p| (p, title.as_str())),
            a.coi_out.as_deref(),
        )?;
        let (rows, cols) = out.values.shape();
        (plan, secs, rows, cols, out.values.dtype())
    };
    eprintln!(
        "cwt: {} samples, {} scales, wavelet {} -> {} ({rows} x {cols} {}) in {:.3} s",
        signal.len(),
        rows,
        plan.options().wavelet.name(),
        a.output.display(),
        dtype,
        secs
    );
    Ok(())
}

#[derive(Args)]
pub struct DemoArgs {
    /// Where to write the scalogram.
    #[arg(short, long, default_value = "doppler_scalogram.png")]
    pub output: PathBuf,
    /// Also write the coefficients as .npy.
    #[arg(long)]
    pub npy: Option<PathBuf>,
    /// Samples of the Doppler signal.
    #[arg(long, default_value_t = 16384)]
    pub samples: usize,
    /// auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub device: Device,
}

pub fn demo(a: DemoArgs) -> Result<()> {
    let mut outputs = vec![paths::Output::new(&a.output, "-o", &["png"])];
    if let Some(p) = &a.npy {
        outputs.push(paths::Output::new(p, "--npy", &["npy"]));
    }
    paths::check(&[], &outputs)?;
    if a.samples < 16 {
        bail!(
            "--samples {}: the demo needs at least 16 samples",
            a.samples
        );
    }
    let mut signal = Signal::real(multires::signal::doppler(a.samples));
    let fs = 1000.0;
    signal.sample_rate = Some(fs);
    let t = TransformArgs {
        wavelet: "cmor1.5-1.0".into(),
        scales: None,
        scales_log: Some(format!("2:{}:192", (a.samples / 4).max(4))),
        scales_voices: None,
        freqs: None,
        scales_file: None,
        fs: Some(fs),
        freq_spacing: "linear".into(),
        kind: OutputKind::Complex,
        precision: Precision::F32,
        output_dtype: None,
        algorithm: Algorithm::Auto,
        boundary: Boundary::Zero,
        // L1 keeps a tone's ridge equally bright at every scale.
        normalization: Normalization::L1,
        hop: 1,
        device: a.device,
        explain: false,
        allow_nonfinite: false,
        amplitude_gain: None,
        timing_offset: None,
        timing_skew: None,
        oversample: 1,
        interpolator: Interpolator::Cubic,
        mask_support: 8.0,
        memory_limit: None,
    };
    let (out, plan, secs, device, explain) = transform(&t, &signal)?;
    write_outputs(
        &out,
        a.npy.as_deref(),
        Some((
            &a.output,
            "Doppler signal — complex Morlet cmor1.5-1.0 scalogram",
        )),
        None,
    )?;
    println!(
        "demo: Doppler signal, {} samples at {} Hz; wavelet {}; {} log-spaced scales {}..{}",
        a.samples,
        fs,
        plan.options().wavelet.name(),
        out.scales.len(),
        out.scales[0],
        out.scales[out.scales.len() - 1]
    );
    match &explain {
        Some(e) => print!("{e}"),
        None => print!("{}", plan.recipe()),
    }
    println!("transform took {secs:.3} s on the {device}");
    println!("wrote {}", a.output.display());
    if let Some(p) = &a.npy {
        println!("wrote {}", p.display());
    }
    Ok(())
}
