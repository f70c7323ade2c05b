//! `multires bench`: the canonical configurations of DESIGN.md, timed the
//! same way every time (plan once, warm up, median of repeats).
use anyhow::{bail, Result};
use clap::Args;
use multires::backend::{self, Device};
use multires::cwt::{Algorithm, CwtValues, OutputKind, Precision};
use multires::fir::{FilterBank, FirMode, FirOptions};
use multires::{CwtOptions, CwtPlan, ScaleSpec, Signal, Wavelet};
use ndarray::Array2;
use std::time::Instant;

#[derive(Args)]
pub struct BenchArgs {
    /// cwt-seed, cwt-1m, cwt-fcwt, fir-2m, fir-8m, dwt-64m, dwt2-16k or codec-3d.
    /// The configuration (DESIGN.md): cwt-seed, cwt-1m, cwt-fcwt, fir-2m,
    /// fir-8m, dwt-64m, dwt2-16k or codec-3d.
    #[arg(long)]
    pub config: String,
    /// auto (the GPU when one is usable, else the CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub device: Device,
    /// Working precision: f32 or f64.
    #[arg(long, default_value = "f32", value_name = "f32|f64")]
    pub precision: Precision,
    /// Override the configuration's wavelet (e.g. morl vs cmor1.5-1.0).
    #[arg(long)]
    pub wavelet: Option<String>,
    /// Timed repetitions after one warm-up run.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Compare with a float64 run of the same configuration and print the relative L2 error.
    #[arg(long)]
    pub check: bool,
    /// CWT configurations: complex, magnitude, power or phase.
    #[arg(long, default_value = "complex")]
    pub output_kind: OutputKind,
    /// CWT configurations: f16 or bf16 to store magnitude or power as
    /// 16-bit floats (with --check: their error against float64).
    #[arg(long, value_name = "f16|bf16")]
    pub output_dtype: Option<multires::cwt::HalfFloat>,
    /// The CWT's algorithm: auto (per scale, from the cost model), direct or fft.
    #[arg(long, default_value = "auto")]
    pub algorithm: Algorithm,
    /// DWT configurations: auto, matrix, matrix-nowrap, lattice, lattice-nowrap or lifting.
    #[arg(long, default_value = "auto")]
    pub dwt_algorithm: multires::dwt::Algorithm,
    /// DWT configurations: outputs per step of the matrix form (1, 2, 4).
    #[arg(long, default_value = "2")]
    pub granularity: multires::dwt::Granularity,
    /// DWT configurations: wavelets to time (default: db4 and haar for dwt-64m, haar for dwt2-16k).
    #[arg(long, value_delimiter = ',')]
    pub dwt_wavelets: Option<Vec<String>>,
    /// DWT configurations on the GPU: the extension mode (default periodization, as DESIGN.md).
    #[arg(long)]
    pub dwt_mode: Option<multires::dwt::Mode>,
    /// GPU CWT and FIR: also time this many channels (rows of one length)
    /// in one call, against the single signal's rate per output byte.
    #[arg(long, default_value_t = 1)]
    pub channels: usize,
    /// Print the plan (the GPU's per-scale choice) before timing.
    #[arg(long)]
    pub explain: bool,
    /// GPU CWT: also time the transform in windows of this many columns
    /// (two streams, pinned buffers; what runs when the output does not fit).
    #[arg(long, value_name = "COLUMNS")]
    pub gpu_window: Option<usize>,
    /// GPU DWT: also time wavedec and waverec of the same samples as rows,
    /// streamed in batches under this device memory limit (two streams,
    /// pinned buffers; what runs when the input does not fit).
    #[arg(long, value_name = "SIZE", value_parser = crate::cmd_dwt::parse_mem_size)]
    pub gpu_mem_limit: Option<usize>,
    /// codec-3d: points per axis of the fields (default 1024 on the GPU, 256 on the CPU).
    #[arg(long)]
    pub codec_size: Option<usize>,
    /// codec-3d: planes along the first axis (default --codec-size); the
    /// field is cut there or mirrored past its last plane. A depth of
    /// whole bricks (1032 = 8 x 129) gives every GPU's slab the same brick
    /// shapes, where 1024 leaves the last GPU a thinner brick layer.
    #[arg(long)]
    pub codec_depth: Option<usize>,
    /// codec-3d on the GPU: how many GPUs, or several counts to compare (e.g. 1,2; default: all).
    #[arg(long, value_delimiter = ',')]
    pub gpus: Option<Vec<usize>>,
    /// codec-3d on the GPU: also time a field that lives on the device
    /// (compress from GPU memory to .mrz bytes, decompress into GPU memory).
    #[arg(long)]
    pub resident: bool,
    /// codec-3d on the GPU: also time the field in page-locked host memory
    /// on each count of --gpus (the kernels read and write it across PCIe,
    /// with no copy on the host).
    #[arg(long)]
    pub pinned: bool,
    /// codec-3d: keep each field made as DIR/FIELD-SIZE.npy and read it
    /// from there in later runs (the turbulent field is an FFT on the
    /// host: about 15 s at 1024^3 on 32 cores, a minute at 1536^3).
    #[arg(long, value_name = "DIR")]
    pub codec_field_cache: Option<std::path::PathBuf>,
    /// codec-3d: the codec's profile (default, or fast: the Lorenzo
    /// predictor at a fixed bit length); with --resident the fast profile
    /// also prints a row of its device part alone (field, payloads and
    /// checksums in device memory), as cuSZp is timed.
    #[arg(long, value_enum, default_value = "default")]
    pub codec_profile: crate::cmd_codec::Profile,
    /// codec-3d: only this field (smooth or turbulent; default both).
    #[arg(long)]
    pub codec_field: Option<multires::codec::fields::FieldKind>,
    /// codec-3d: only these relative bounds (e.g. 1e-3; default 1e-2,1e-3,1e-4).
    #[arg(long, value_delimiter = ',', value_name = "REL")]
    pub codec_rel: Option<Vec<f64>>,
    /// codec-3d: the longest rANS chunk in values (as compress --rans-chunk).
    #[arg(long, value_name = "VALUES", default_value_t = 65536,
          value_parser = crate::cmd_codec::parse_rans_chunk)]
    pub codec_rans_chunk: usize,
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub(crate) fn rel_l2(a: &CwtValues, b: &CwtValues) -> f64 {
    let (a, b) = (a.to_complex64(), b.to_complex64());
    let num: f64 = a
        .iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).norm_sqr())
        .sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (num / den).sqrt()
}

pub fn bench(a: BenchArgs) -> Result<()> {
    if a.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let (backend, note) = multires_cuda::select(a.device)?;
    if let Some(n) = note {
        eprintln!("{n}");
    }
    let on_gpu = backend.name() == "cuda";
    let threads = rayon::current_num_threads();
    let cwt_cfg = |n: usize, wavelet: &str, spec: ScaleSpec| -> Result<(Signal, CwtOptions)> {
        let w = Wavelet::from_name(a.wavelet.as_deref().unwrap_or(wavelet))?;
        let scales = spec.scales(&w)?;
        let mut o = CwtOptions::new(w, scales);
        o.precision = a.precision;
        o.output = a.output_kind;
        o.half = a.output_dtype;
        o.algorithm = a.algorithm;
        Ok((Signal::real(multires::signal::doppler(n)), o))
    };
    let (signal, options) = match a.config.as_str() {
        "cwt-seed" => cwt_cfg(102_400, "morl", ScaleSpec::parse_linear("1:200")?)?,
        "cwt-1m" => cwt_cfg(1 << 20, "cmor1.5-1.0", ScaleSpec::parse_log("1:1024:256")?)?,
        "cwt-fcwt" => cwt_cfg(
            100_000,
            "cmor1.5-1.0",
            ScaleSpec::parse_frequencies("1:500:3000", 1000.0, false)?,
        )?,
        "fir-2m" if on_gpu => return crate::bench_cuda::fir(&a, 1 << 21, 8, &[64, 513]),
        "fir-8m" if on_gpu => return crate::bench_cuda::fir(&a, 1 << 23, 32, &[513, 2049]),
        "fir-2m" => return bench_fir(&a, &*backend, 1 << 21, 8, &[64, 513], threads),
        "fir-8m" => return bench_fir(&a, &*backend, 1 << 23, 32, &[513, 2049], threads),
        "dwt-64m" if on_gpu => {
            let names = a
                .dwt_wavelets
                .clone()
                .unwrap_or_else(|| vec!["db4".into(), "haar".into()]);
            return crate::bench_cuda::dwt(&a, 1 << 26, 8, &names);
        }
        "dwt2-16k" if on_gpu => {
            let names = a.dwt_wavelets.clone().unwrap_or_else(|| vec!["haar".into()]);
            return crate::bench_cuda::dwt2(&a, 16384, 6, &names);
        }
        "codec-3d" => return bench_codec(&a, on_gpu),
        "dwt-64m" => return bench_dwt(&a, &[1 << 26], 8, &["db4", "haar"], threads),
        "dwt2-16k" => return bench_dwt(&a, &[16384, 16384], 6, &["haar"], threads),
        other => bail!(
            "unknown --config '{other}': expected cwt-seed, cwt-1m, cwt-fcwt, fir-2m, fir-8m, dwt-64m, dwt2-16k or codec-3d"
        ),
    };
    if on_gpu {
        return crate::bench_cuda::cwt(&a, &signal, options);
    }
    let wavelet = options.wavelet.name().to_string();
    let scales = options.scales.len();
    let t0 = Instant::now();
    let plan = CwtPlan::new(options.clone(), signal.len(), false)?;
    let plan_ms = t0.elapsed().as_secs_f64() * 1e3;
    // Like the peers (fCWT's cwt(signal, scales, out)), the timed runs write
    // into an output allocated once.
    let warm = backend.cwt(&plan, &signal, None)?;
    let mut values = warm.values.clone();
    let mut times = Vec::new();
    for _ in 0..a.repeat {
        let t = Instant::now();
        backend.cwt_into(&plan, &signal, &mut values)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let med = median(times.clone());
    let outputs = (scales * signal.len()) as f64;
    println!(
        "{} | {} | {} threads | {} | {} | N={} | {} scales | plan {:.1} ms | median {:.2} ms | min {:.2} ms | {:.0} Mcoef/s",
        a.config,
        backend.name(),
        threads,
        wavelet,
        match a.precision { Precision::F32 => "f32", Precision::F64 => "f64" },
        signal.len(),
        scales,
        plan_ms,
        med,
        times.iter().cloned().fold(f64::INFINITY, f64::min),
        outputs / med / 1e3
    );
    if a.check {
        let mut o64 = options;
        o64.precision = Precision::F64;
        o64.algorithm = Algorithm::Fft;
        let reference = CwtPlan::new(o64, signal.len(), false)?.execute(&signal, None)?;
        println!(
            "  relative L2 error vs float64 overlap-save: {:.2e}",
            rel_l2(&warm.values, &reference.values)
        );
    }
    Ok(())
}

fn bench_fir(
    a: &BenchArgs,
    backend: &dyn backend::Backend,
    n: usize,
    filters: usize,
    taps: &[usize],
    threads: usize,
) -> Result<()> {
    let signal = Signal::real(multires::signal::noise(n, 1));
    for &m in taps {
        let noise = multires::signal::noise(filters * m, 2);
        let bank = FilterBank::Real(Array2::from_shape_vec((filters, m), noise)?);
        let opts = FirOptions {
            mode: FirMode::Same,
            ..FirOptions::default()
        };
        let (_, recipe) = backend.fir(&signal, &bank, &opts)?;
        let mut times = Vec::new();
        for _ in 0..a.repeat {
            let t = Instant::now();
            let out = backend.fir(&signal, &bank, &opts)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            drop(out);
        }
        println!(
            "{} | {} | {} threads | {}x{} taps | N={} | f64 | median {:.2} ms | {}",
            a.config,
            backend.name(),
            threads,
            filters,
            m,
            n,
            median(times),
            recipe
        );
    }
    Ok(())
}

/// The value of `f` and the milliseconds it took.
fn timed_ms<R, E>(f: impl FnOnce() -> Result<R, E>) -> Result<(R, f64), E> {
    let t = Instant::now();
    let r = f()?;
    Ok((r, t.elapsed().as_secs_f64() * 1e3))
}

/// dwt-64m (1-D, 2^26 float32) and dwt2-16k (16384^2 float32): wavedec and
/// waverec (wavedecn/waverecn over both axes for 2-D), periodization.
fn bench_dwt(
    a: &BenchArgs,
    shape: &[usize],
    levels: usize,
    default: &[&str],
    threads: usize,
) -> Result<()> {
    use multires::dwt::{self, DiscreteWavelet, Mode, Transform};
    if a.precision != Precision::F32 {
        bail!("the DWT configurations are float32 (DESIGN.md); drop --precision");
    }
    let n: usize = shape.iter().product();
    let x: Vec<f32> = multires::signal::noise(n, 7)
        .into_iter()
        .map(|v| v as f32)
        .collect();
    let x = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), x)?;
    let names: Vec<String> = a
        .dwt_wavelets
        .clone()
        .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect());
    let gb = (n * 4) as f64 / 1e9;
    for name in names {
        let w = DiscreteWavelet::from_name(&name)?;
        let t = Transform::<f32>::new(&w, Mode::Periodization, a.dwt_algorithm, a.granularity)?;
        let axes: Vec<isize> = (0..shape.len() as isize).collect();
        let mut dec = Vec::new();
        let mut rec = Vec::new();
        let mut err = 0.0f64;
        for r in 0..=a.repeat {
            let (c, t_dec, t_rec) = if shape.len() == 1 {
                let (c, td) = timed_ms(|| dwt::wavedec(x.view(), &t, Some(levels), 0))?;
                let (y, tr) = timed_ms(|| dwt::waverec(&c, &t, 0))?;
                (y, td, tr)
            } else {
                let (c, td) = timed_ms(|| dwt::wavedecn(x.view(), &t, Some(levels), &axes))?;
                let (y, tr) = timed_ms(|| dwt::waverecn(&c, &t, &axes))?;
                (y, td, tr)
            };
            if r > 0 {
                dec.push(t_dec);
                rec.push(t_rec);
            }
            if r == 0 {
                let num: f64 = c
                    .iter()
                    .zip(x.iter())
                    .map(|(a, b)| ((a - b) as f64).powi(2))
                    .sum();
                let den: f64 = x.iter().map(|b| (*b as f64).powi(2)).sum();
                err = (num / den).sqrt();
            }
        }
        let (md, mr) = (median(dec), median(rec));
        println!(
            "{} | cpu | {} threads | {} | f32 | shape {:?} | {} levels | {} | fresh outputs | wavedec median {:.1} ms ({:.2} GB/s) | waverec median {:.1} ms | reconstruction error {:.1e}",
            a.config, threads, name, shape, levels, a.dwt_algorithm, md, gb / (md / 1e3), mr, err
        );
        if shape.len() == 1 {
            // The same with output buffers kept between calls (Wavedec1d /
            // Waverec1d): no allocation or page faults after the first call.
            let xs = x.as_slice().expect("contiguous");
            let (mut wd, mut wr) = (dwt::Wavedec1d::new(), dwt::Waverec1d::new());
            let (mut dec, mut rec) = (Vec::new(), Vec::new());
            for r in 0..=a.repeat {
                let ((), t_dec) = timed_ms(|| wd.run(xs, &t, levels))?;
                let ((), t_rec) = timed_ms(|| wr.run(&wd.coeffs, &t))?;
                if r > 0 {
                    dec.push(t_dec);
                    rec.push(t_rec);
                }
            }
            let (md, mr) = (median(dec), median(rec));
            println!(
                "{} | cpu | {} threads | {} | f32 | shape {:?} | {} levels | {} | reused outputs | wavedec median {:.1} ms ({:.2} GB/s) | waverec median {:.1} ms",
                a.config, threads, name, shape, levels, a.dwt_algorithm, md, gb / (md / 1e3), mr
            );
        }
    }
    Ok(())
}

/// codec-3d with the field in GPU memory: compress from it, decompress
/// into it; the bytes are compared with the host path's (`host_bytes`) and
/// the decoded values with its decode (`host_back`).
fn bench_codec_resident(
    a: &BenchArgs,
    gpu: &std::sync::Arc<multires_cuda::Gpu>,
    field: &multires_cuda::codec::DeviceField,
    o: &multires::codec::CodecOptions,
    host_bytes: &[u8],
    host_back: &multires::codec::Values,
    raw: f64,
) -> Result<()> {
    use multires_cuda::codec::{compress_resident, decompress_resident};
    let mut back = None;
    let (bytes, c, d) = time_codec(
        a.repeat,
        &|b| page_locked_file(gpu, b),
        &mut || Ok(compress_resident(field, o, gpu, &|_| {})?.0),
        &mut |r| {
            // The previous decode is freed first, as a caller would (kept,
            // each run allocated 4.3 GB afresh: 89-96 GB/s on the
            // turbulent field, where the slabs row gave 101-118).
            drop(back.take());
            back = Some(decompress_resident(r, gpu, &|_| {})?);
            Ok(())
        },
    )?;
    let Some(back) = back else { bail!("no decode") };
    let mut back_dev: Option<multires_cuda::codec::DeviceField> = None;
    let same_bytes = bytes == host_bytes;
    let same_values =
        matches!(host_back, multires::codec::Values::F32(h) if back.download(gpu)? == *h);
    print_device_row("resident", o, None, (c, d, raw), (same_bytes, same_values));
    if o.transform == multires::codec::Lifting::Lorenzo {
        // The device's part alone: from the field in its memory to the
        // payloads and checksums there, and from the payloads there to
        // the field (the copies across PCIe left out, as cuSZp is timed).
        let (mut ct, mut dt) = (Vec::new(), Vec::new());
        let held = page_locked_file(gpu, &bytes)?;
        for _ in 0..=a.repeat {
            ct.push(compress_resident(field, o, gpu, &|_| {})?.2.code_s);
            let mut r = multires::codec::MrzReader::from_shared(held.clone(), "bench")?;
            drop(back_dev.take());
            back_dev = Some(decompress_resident(&mut r, gpu, &|_| {})?);
            dt.push(multires_cuda::codec::last_fast_decode_seconds());
        }
        let (c, d) = (median(ct[1..].to_vec()), median(dt[1..].to_vec()));
        println!(
            "codec-3d fast device part | {} | compress {c:.4} s = {:.2} GB/s | decompress {d:.4} s = {:.2} GB/s | ratio {:.2}",
            o.bound,
            raw / c / 1e9,
            raw / d / 1e9,
            raw / bytes.len() as f64
        );
    }
    Ok(())
}

/// A row of a field in GPU memory (`what`, on `gpus` where several may
/// run): the bound, both rates, and the checks against the host path.
fn print_device_row(
    what: &str,
    o: &multires::codec::CodecOptions,
    gpus: Option<usize>,
    (c, d, raw): (f64, f64, f64),
    (same_bytes, same_values): (bool, bool),
) {
    let on = gpus.map_or(String::new(), |n| format!(" | {n} GPU(s)"));
    println!(
        "codec-3d {what} | {}{on} | compress {c:.4} s = {:.2} GB/s | decompress {d:.4} s = {:.2} GB/s ({}) | {} | {}",
        o.bound,
        raw / c / 1e9,
        raw / d / 1e9,
        file_held(),
        if same_bytes { "bytes equal to the host path's" } else { "BYTES DIFFER FROM THE HOST PATH'S" },
        if same_values { "decoded values equal" } else { "DECODED VALUES DIFFER" }
    );
}

/// codec-3d with the field in slabs on several GPUs' memory (whole brick
/// layers, a slab a GPU): compress from them, decompress into them; bytes
/// and decoded values compared with the host path's.
fn bench_codec_slabs(
    a: &BenchArgs,
    field: &multires_cuda::codec::SlabField,
    o: &multires::codec::CodecOptions,
    (host_bytes, host_back): (&[u8], &multires::codec::Values),
    raw: f64,
) -> Result<()> {
    use multires_cuda::codec::{compress_slabs, decompress_slabs};
    let gpus: Vec<_> = field.slabs.iter().map(|s| s.gpu.clone()).collect();
    let mut back = None;
    let (bytes, c, d) = time_codec(
        a.repeat,
        &|b| page_locked_file(&gpus[0], b),
        &mut || Ok(compress_slabs(field, o, &|_| {})?.0),
        &mut |r| {
            // The previous decode is freed first, as a caller would.
            drop(back.take());
            back = Some(decompress_slabs(r, &gpus, &|_| {})?);
            Ok(())
        },
    )?;
    let Some(back) = back else { bail!("no decode") };
    let same_bytes = bytes == host_bytes;
    let same_values =
        matches!(host_back, multires::codec::Values::F32(h) if back.download()? == *h);
    print_device_row(
        "slabs",
        o,
        Some(gpus.len()),
        (c, d, raw),
        (same_bytes, same_values),
    );
    Ok(())
}

/// The file's bytes in page-locked memory, which the GPU decoder copies up
/// without gathering them first.
fn page_locked_file(
    gpu: &multires_cuda::Gpu,
    bytes: &[u8],
) -> Result<multires::codec::SharedBytes> {
    Ok(multires_cuda::codec::PinnedBytes::copy_of(gpu, bytes)?.shared())
}

/// With MULTIRES_BENCH_ALIGN_MS=N, each timed run starts at the next
/// multiple of N ms of the wall clock, so that bench processes on
/// different GPUs run in step (their heads and tails at once, as two GPUs
/// of one process do). Returns the tick (ms since the epoch), by which
/// `time_codec` prints each run's time to pair processes.
fn align_start() -> Option<u128> {
    static MS: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let ms = (*MS.get_or_init(|| {
        std::env::var("MULTIRES_BENCH_ALIGN_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&v| v > 0)
    }))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let (wait, tick) = next_tick(now, ms);
    std::thread::sleep(std::time::Duration::from_nanos(wait));
    Some(tick)
}

/// From `now` (ns since the epoch), the nanoseconds to the next multiple
/// of `ms` milliseconds (a whole period when on one) and that tick in ms.
fn next_tick(now: u128, ms: u64) -> (u64, u128) {
    let period = u128::from(ms.max(1)) * 1_000_000;
    let wait = period - now % period;
    (wait as u64, (now + wait) / 1_000_000)
}

/// With MULTIRES_BENCH_ALIGN_MS, each timed run's tick and milliseconds.
fn print_ticks(what: &str, ticks: &[(Option<u128>, f64)]) {
    if ticks.iter().any(|t| t.0.is_some()) {
        let line: Vec<String> = ticks
            .iter()
            .map(|(k, t)| format!("{}:{:.3}", k.unwrap_or(0), t * 1e3))
            .collect();
        eprintln!("bench ticks {what}: {}", line.join(" "));
    }
}

/// Where the decompression rows' file bytes lie.
fn file_held() -> &'static str {
    "file in page-locked memory"
}

/// The last file of `compress` (its parts, joined after the timing) and
/// the median seconds of it and of `decompress` (which reads it from
/// where `hold` puts its bytes, before the timing), each run once to warm
/// up and then `repeat` times.
fn time_codec(
    repeat: usize,
    hold: &dyn Fn(&[u8]) -> Result<multires::codec::SharedBytes>,
    compress: &mut dyn FnMut() -> Result<multires_cuda::codec::GpuMrz>,
    decompress: &mut dyn FnMut(&mut multires::codec::MrzReader) -> Result<()>,
) -> Result<(Vec<u8>, f64, f64)> {
    // Each run's tick (`align_start`) and seconds; the first is the warm-up.
    let (mut ct, mut dt) = (Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..=repeat {
        // The previous file is dropped first, as a caller that has written
        // it would: its page-locked buffers then serve this run.
        drop(last.take());
        let k = align_start();
        let t = Instant::now();
        last = Some(compress()?);
        ct.push((k, t.elapsed().as_secs_f64()));
    }
    print_ticks("compress", &ct);
    let Some(parts) = last else { bail!("no run") };
    let bytes = parts.to_vec();
    drop(parts);
    let held = hold(&bytes)?;
    for _ in 0..=repeat {
        let mut r = multires::codec::MrzReader::from_shared(held.clone(), "bench")?;
        let k = align_start();
        let t = Instant::now();
        decompress(&mut r)?;
        dt.push((k, t.elapsed().as_secs_f64()));
    }
    print_ticks("decompress", &dt);
    let timed = |runs: &[(Option<u128>, f64)]| median(runs[1..].iter().map(|r| r.1).collect());
    Ok((bytes, timed(&ct), timed(&dt)))
}

/// The codec-3d rows of a field in page-locked host memory on `gpus`: the
/// compress and decompress rates, and whether bytes and values equal the
/// host path's; then the same bound stated as the absolute bound it gives
/// on this field (`abs_bound`), under which each GPU codes a group of brick
/// layers as soon as it has arrived (the header then says abs, so the
/// bricks' payloads are what is compared).
#[allow(clippy::too_many_arguments)]
fn bench_codec_pinned(
    a: &BenchArgs,
    gpus: &[std::sync::Arc<multires_cuda::Gpu>],
    field: &multires_cuda::codec::PinnedField,
    out: &mut multires_cuda::codec::PinnedField,
    o: &multires::codec::CodecOptions,
    abs_bound: f64,
    (host_bytes, host_back): (&[u8], &multires::codec::Values),
    raw: f64,
) -> Result<()> {
    use multires::codec::{CodecOptions, ErrorBound, MrzReader};
    use multires_cuda::codec::{compress_pinned, decompress_pinned};
    let payloads = |b: &[u8]| -> Result<Vec<Vec<u8>>> {
        let r = MrzReader::from_bytes(b.to_vec(), "bench")?;
        let all: Vec<usize> = (0..r.grid().len()).collect();
        Ok(r.brick_slices(&all)?
            .into_iter()
            .map(|p| p.to_vec())
            .collect())
    };
    let abs = CodecOptions {
        bound: ErrorBound::Abs(abs_bound),
        ..o.clone()
    };
    for (o, stated) in [(o, "as given"), (&abs, "as abs")] {
        // NaN once, outside the timing: a value no decode wrote stays NaN.
        out.as_mut_slice().fill(f32::NAN);
        let (bytes, c, d) = time_codec(
            a.repeat,
            &|b| page_locked_file(&gpus[0], b),
            &mut || Ok(compress_pinned(field, o, gpus, &|_| {})?.0),
            &mut |r| Ok(decompress_pinned(r, out, gpus, &|_| {})?),
        )?;
        let same_bytes = if std::ptr::eq(o, &abs) {
            if payloads(&bytes)? == payloads(host_bytes)? {
                "payloads equal to the host path's"
            } else {
                "PAYLOADS DIFFER FROM THE HOST PATH'S"
            }
        } else if bytes == host_bytes {
            "bytes equal to the host path's"
        } else {
            "BYTES DIFFER FROM THE HOST PATH'S"
        };
        let same_values =
            matches!(host_back, multires::codec::Values::F32(h) if out.as_slice() == h.as_slice());
        println!(
            "codec-3d pinned | {} ({stated}) | {} GPU(s) | compress {c:.4} s = {:.2} GB/s | decompress {d:.4} s = {:.2} GB/s ({}) | {same_bytes} | {}",
            o.bound,
            gpus.len(),
            raw / c / 1e9,
            raw / d / 1e9,
            file_held(),
            if same_values { "decoded values equal" } else { "DECODED VALUES DIFFER" }
        );
    }
    Ok(())
}

/// A `size`^3 field cut to `depth` planes, or extended to them by
/// mirroring its planes back from the last (plane size + i is size - 2 - i,
/// wrapping back and forth for a depth more than twice the size).
fn to_depth(mut v: Vec<f32>, size: usize, depth: usize) -> Vec<f32> {
    let plane = size * size;
    if depth <= size || size < 2 {
        v.truncate(depth * plane);
        return v;
    }
    let period = 2 * (size - 1);
    v.reserve((depth - size) * plane);
    for z in size..depth {
        let m = z % period;
        let from = if m < size { m } else { period - m };
        v.extend_from_within(from * plane..(from + 1) * plane);
    }
    v
}

/// The codec-3d field `kind` of `size`^3 (seed 1), through
/// --codec-field-cache where given: read when its file is there with the
/// right shape, otherwise made and written there.
fn codec_field(
    a: &BenchArgs,
    kind: multires::codec::fields::FieldKind,
    size: usize,
) -> Result<Vec<f32>> {
    use anyhow::Context;
    let make = || multires::codec::fields::make(kind, size, true, 1);
    let Some(dir) = &a.codec_field_cache else {
        return Ok(make());
    };
    let name = format!("{kind:?}-{size}.npy").to_lowercase();
    let path = dir.join(name);
    if path.exists() {
        if let Some((shape, v)) = multires::io::read_f32_npy_vec(&path).with_context(|| {
            format!(
                "reading the cached field {} (delete it to have it made again)",
                path.display()
            )
        })? {
            if shape == [size; 3] {
                return Ok(v);
            }
        }
        eprintln!(
            "{} is not a float32 field of shape [{size}, {size}, {size}]: making the field again",
            path.display()
        );
    }
    let v = make();
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the field cache {}", dir.display()))?;
    multires::io::write_f32_npy(&path, &[size; 3], &v)
        .with_context(|| format!("writing the field to {}", path.display()))?;
    Ok(v)
}

/// codec-3d (DESIGN.md): the smooth and the turbulent float32 fields at
/// rel bounds 1e-2, 1e-3, 1e-4 with CDF 9/7: ratio, PSNR, max error, and
/// compress (GPU or CPU, host to host) and decompress (CPU) rates. With
/// --check, the GPU's bytes are compared with a CPU run.
fn bench_codec(a: &BenchArgs, on_gpu: bool) -> Result<()> {
    use multires::codec::{self, fields, CodecOptions, ErrorBound, Lifting, Values, Volume};
    let size = a.codec_size.unwrap_or(if on_gpu { 1024 } else { 256 });
    let count = if on_gpu {
        multires_cuda::device_count()
    } else {
        0
    };
    let counts = if on_gpu {
        a.gpus.clone().unwrap_or_else(|| vec![count])
    } else {
        vec![0]
    };
    if let Some(w) = counts.iter().find(|&&w| on_gpu && (w == 0 || w > count)) {
        bail!("--gpus {w}: this machine has {count} GPU(s)");
    }
    for kind in [fields::FieldKind::Smooth, fields::FieldKind::Turbulent] {
        if a.codec_field.is_some_and(|k| k != kind) {
            continue;
        }
        let depth = a.codec_depth.unwrap_or(size);
        if depth == 0 || size == 0 {
            bail!("--codec-size {size} --codec-depth {depth}: a field needs at least one point along each axis");
        }
        // The field, its spectrum while it is made, and the decoded copy.
        let need = (depth as u64)
            .saturating_mul(size as u64)
            .saturating_mul(size as u64)
            .saturating_mul(4 * 4);
        let memory = multires::memory::default_limit();
        if need > memory {
            bail!(
                "--codec-size {size} --codec-depth {depth}: the fields need about {} of memory, and {} is available",
                multires::memory::human_bytes(need),
                multires::memory::human_bytes(memory)
            );
        }
        let shape = [depth, size, size];
        let v = Volume::of(
            &shape,
            Values::F32(to_depth(codec_field(a, kind, size)?, size, depth)),
        )?;
        let raw = v.data.byte_len() as f64;
        // The GPU rows' fields (resident, in slabs, page-locked) take them
        // as float32.
        let Values::F32(vals) = &v.data else {
            bail!("the codec-3d fields are float32")
        };
        let mut pinned = if a.pinned && on_gpu {
            let gpu = multires_cuda::gpu_at(0)?;
            let field = multires_cuda::codec::PinnedField::from_values(&gpu, &shape, vals)?;
            let out = multires_cuda::codec::PinnedField::zeros(&gpu, &shape)?;
            Some((field, out))
        } else {
            None
        };
        // With --resident and several GPU counts (or more than one GPU),
        // the field also lies in slabs on each count's GPUs. Each copy on
        // the GPUs is uploaded just before its row and freed after it, so
        // that GPU 0 holds one at a time (a 1536^3 run holding the
        // resident field and every count's slabs at once failed).
        let slabs = a.resident && on_gpu && (counts.len() > 1 || counts.iter().any(|&c| c > 1));
        let rels = a
            .codec_rel
            .clone()
            .unwrap_or_else(|| vec![1e-2, 1e-3, 1e-4]);
        if let Some(r) = rels.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            bail!("--codec-rel {r}: a relative bound must be a positive number such as 1e-3");
        }
        for (rel, &ngpu) in rels
            .into_iter()
            .flat_map(|r| counts.iter().map(move |g| (r, g)))
        {
            let gpus = (0..ngpu)
                .map(multires_cuda::gpu_at)
                .collect::<Result<Vec<_>, _>>()?;
            let o = CodecOptions {
                rans_chunk: a.codec_rans_chunk,
                ..CodecOptions::new(
                    a.codec_profile.transform(Lifting::Interp)?,
                    ErrorBound::Rel(rel),
                )
            };
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..=a.repeat {
                // The GPU's file is timed as its parts (what `compress`
                // writes out) and joined after.
                let t = Instant::now();
                let r = if on_gpu {
                    let (b, s, run) =
                        multires_cuda::codec::compress(&v, &o, &gpus, a.gpu_mem_limit, &|_| {})?;
                    times.push(t.elapsed().as_secs_f64());
                    (b.to_vec(), s, Some(run))
                } else {
                    let (b, s) = codec::compress(&v, &o, &|_| {})?;
                    times.push(t.elapsed().as_secs_f64());
                    (b, s, None)
                };
                last = Some(r);
            }
            times.remove(0);
            let Some((bytes, s, run)) = last else {
                bail!("no run")
            };
            let reader = || codec::MrzReader::from_bytes(bytes.clone(), "bench");
            let mut dtimes = Vec::new();
            let mut back = None;
            // Timed as the compression is: a warm-up, then the median of
            // `repeat` (a single CPU decode read a cold one: its output's
            // and scratch's first page faults, 0.21-0.26 s against 0.12 at
            // 256^3 on one core).
            for _ in 0..=a.repeat {
                let mut r = reader()?;
                let t = Instant::now();
                let b = if on_gpu {
                    multires_cuda::codec::decompress(&mut r, None, &gpus, &|_| {})?
                } else {
                    codec::decompress(&mut r, None, &|_| {})?
                };
                dtimes.push(t.elapsed().as_secs_f64());
                back = Some(b);
            }
            if dtimes.len() > 1 {
                dtimes.remove(0);
            }
            let dsec = median(dtimes);
            let Some(mut back) = back else {
                bail!("no decode")
            };
            // Into an array the caller reuses (`decompress_into`): no page
            // faults of a new output, which the rows above pay.
            let reused = match (&mut back.data, on_gpu) {
                (multires::codec::Values::F32(out), true) => {
                    let mut rtimes = Vec::new();
                    for _ in 0..=a.repeat {
                        let mut r = reader()?;
                        let t = Instant::now();
                        multires_cuda::codec::decompress_into(&mut r, out, &gpus, &|_| {})?;
                        rtimes.push(t.elapsed().as_secs_f64());
                    }
                    rtimes.remove(0);
                    let sec = median(rtimes);
                    format!(" ({:.2} GB/s into an existing array)", raw / sec / 1e9)
                }
                _ => String::new(),
            };
            let dsame = if a.check && on_gpu {
                let c = codec::decompress(&mut reader()?, None, &|_| {})?;
                if c.data == back.data {
                    " | decoded values equal to the CPU's"
                } else {
                    " | DECODED VALUES DIFFER FROM THE CPU'S"
                }
            } else {
                ""
            };
            let maxe = v
                .data
                .to_f64()
                .iter()
                .zip(&back.data.to_f64())
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            let same = if a.check && on_gpu {
                let (cpu, _) = codec::compress(&v, &o, &|_| {})?;
                if cpu == bytes {
                    " | bytes equal to the CPU's"
                } else {
                    " | BYTES DIFFER FROM THE CPU'S"
                }
            } else {
                ""
            };
            if a.resident && on_gpu && ngpu == counts[0] {
                let gpu = multires_cuda::gpu_at(0)?;
                let field = multires_cuda::codec::DeviceField::upload(&gpu, &shape, vals)?;
                bench_codec_resident(a, &gpu, &field, &o, &bytes, &back.data, raw)?;
            }
            if slabs {
                let brick = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3))
                    .grid(shape)?
                    .brick;
                let field = multires_cuda::codec::SlabField::upload(&gpus, &shape, vals, brick)?;
                bench_codec_slabs(a, &field, &o, (&bytes, &back.data), raw)?;
            }
            if let Some((field, out)) = pinned.as_mut() {
                bench_codec_pinned(
                    a,
                    &gpus,
                    field,
                    out,
                    &o,
                    s.abs_bound,
                    (&bytes, &back.data),
                    raw,
                )?;
            }
            let csec = median(times);
            let dev = match &run {
                Some(r) => format!(
                    "{} GPU(s) x {} slots, {} batches; slot seconds fill {:.3} / code {:.3}",
                    r.gpus, r.slots, r.batches, r.fill_s, r.code_s
                ),
                None => format!("cpu, {} threads", rayon::current_num_threads()),
            };
            println!(
                "codec-3d | {kind:?} {} f32 | rel {rel:e} {} | ratio {:.2} | PSNR {}{:.1} dB | max error {:.3e} (bound {:.3e}, decoded {:.3e}) | compress {:.3} s = {:.2} GB/s | decompress ({}) {:.3} s = {:.2} GB/s{reused} | {dev}{same}{dsame}",
                if depth == size { format!("{size}^3") } else { format!("{depth}x{size}^2") },
                o.transform,
                s.ratio,
                if s.psnr_bound { ">= " } else { "" },
                s.psnr,
                s.max_error,
                s.abs_bound,
                maxe,
                csec,
                raw / csec / 1e9,
                if on_gpu { "gpu" } else { "cpu" },
                dsec,
                raw / dsec / 1e9
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_in_step_start_on_the_same_tick() {
        use super::next_tick;
        // Two processes a few ms apart in one 60 ms period wait for the
        // same tick; on a tick, a whole period.
        let t0 = 1_795_706_310_000u128 * 1_000_000;
        assert_eq!(
            next_tick(t0 + 7_000_000, 60),
            (53_000_000, 1_795_706_310_060)
        );
        assert_eq!(
            next_tick(t0 + 41_500_000, 60),
            (18_500_000, 1_795_706_310_060)
        );
        assert_eq!(next_tick(t0, 60), (60_000_000, 1_795_706_310_060));
        assert_eq!(next_tick(t0 + 59_999_999, 60).1, 1_795_706_310_060);
    }

    #[test]
    fn runs_start_on_the_next_tick() {
        use super::next_tick;
        // Two processes 8 ms apart in one 60 ms period share its end.
        let t0 = 1_795_706_320_000u128 * 1_000_000;
        let a = next_tick(t0 + 1_000_000, 60);
        let b = next_tick(t0 + 9_000_000, 60);
        assert_eq!(a.1, b.1);
        assert_eq!(u128::from(a.0) + t0 + 1_000_000, a.1 * 1_000_000);
    }

    use super::to_depth;

    #[test]
    fn depth_mirrors_planes_back_from_the_last_and_cuts() {
        // Three 3 x 3 planes, plane z holding z in all of its values.
        let v: Vec<f32> = (0..3).flat_map(|z| [z as f32; 9]).collect();
        let plane_of = |w: &[f32]| w.chunks(9).map(|p| p[0]).collect::<Vec<_>>();
        assert_eq!(
            plane_of(&to_depth(v.clone(), 3, 8)),
            [0., 1., 2., 1., 0., 1., 2., 1.]
        );
        assert_eq!(plane_of(&to_depth(v.clone(), 3, 2)), [0., 1.]);
        assert_eq!(to_depth(v.clone(), 3, 3), v);
    }
}
