//! `multires bench --device cuda`: the CWT and FIR configurations on the
//! GPU, timed with CUDA events after a warm-up (median of the repeats), with
//! the memory floor (output bytes over the DRAM bandwidth) and the error
//! against a float64 CPU run.

use crate::bench::{median, rel_l2, BenchArgs};
use anyhow::{Context, Result};
use multires::cwt::{Algorithm, CwtValues, Precision};
use multires::fir::{FilterBank, FirMode, FirOptions, FirValues};
use multires::{CwtOptions, CwtPlan, Signal};
use multires_cuda::{CudaCwt, CudaFir, Gpu, GpuReal};
use ndarray::Array2;
use std::sync::Arc;
use std::time::Instant;

fn floor_ms(gpu: &Gpu, bytes: usize) -> f64 {
    bytes as f64 / gpu.info.peak_bandwidth() * 1e3
}

/// The link's page-locked rates (host to device, device to host), measured
/// once a process.
fn link(gpu: &Gpu) -> Result<(f64, f64)> {
    static RATES: std::sync::OnceLock<(f64, f64)> = std::sync::OnceLock::new();
    if let Some(r) = RATES.get() {
        return Ok(*r);
    }
    let r = multires_cuda::transfer::link_rates(gpu)?;
    Ok(*RATES.get_or_init(|| r))
}

/// A host-to-host time against the link: the PCIe time of the input going
/// up plus the output coming down at the measured page-locked rates.
fn host_to_host(gpu: &Gpu, in_bytes: usize, out_bytes: usize, ms: f64) -> Result<String> {
    let (up, down) = link(gpu)?;
    let pcie = (in_bytes as f64 / up + out_bytes as f64 / down) * 1e3;
    Ok(format!(
        "host to host {ms:.1} ms | PCIe {pcie:.1} ms ({:.0} MB up at {:.1} GB/s, {:.0} MB down at {:.1} GB/s) | {:.2}x the PCIe time",
        in_bytes as f64 / 1e6,
        up / 1e9,
        out_bytes as f64 / 1e6,
        down / 1e9,
        ms / pcie
    ))
}

/// The median of `runs` timings of `f` in milliseconds (wall clock).
fn wall_median(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut t = Vec::with_capacity(runs);
    for _ in 0..runs {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(t))
}

pub fn cwt(a: &BenchArgs, signal: &Signal, options: CwtOptions) -> Result<()> {
    let gpu = multires_cuda::gpu()?;
    match options.precision {
        Precision::F32 => cwt_typed::<f32>(a, &gpu, signal, options),
        Precision::F64 => cwt_typed::<f64>(a, &gpu, signal, options),
    }
}

fn cwt_typed<T: GpuReal>(
    a: &BenchArgs,
    gpu: &Arc<Gpu>,
    signal: &Signal,
    options: CwtOptions,
) -> Result<()> {
    let t0 = Instant::now();
    let plan = CwtPlan::new(options.clone(), signal.len(), signal.is_complex())?;
    let mut c = CudaCwt::<T>::new(gpu.clone(), &plan)?;
    let plan_ms = t0.elapsed().as_secs_f64() * 1e3;
    if a.explain {
        print!("{}", c.recipe());
    }
    c.upload(&plan, signal)?;
    // Warm-up: loads the kernels (from the disk cache, or NVRTC on a
    // first run ever) and touches every buffer.
    c.launch()?;
    gpu.synchronize()?;
    let first_ms = t0.elapsed().as_secs_f64() * 1e3;
    let mut times = Vec::new();
    for _ in 0..a.repeat {
        times.push(gpu.time_ms(|| c.launch())? as f64);
    }
    let med = median(times.clone());
    let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
    // Host to host: the signal (the plan's precision, as a user's array)
    // up, the transform, the coefficients down into the caller's array,
    // whose pages a first run has touched; median of five.
    let mut values = CwtValues::zeroed_for(&plan);
    let real: Option<Vec<T>> = match &signal.samples {
        multires::signal::Samples::Real(x) if options.oversampling == 1 => {
            Some(x.iter().map(|&v| T::of(v)).collect())
        }
        _ => None,
    };
    let complex_out = options.output == multires::cwt::OutputKind::Complex;
    let mut once = || -> Result<()> {
        match &real {
            Some(x) => c.upload_real(&plan, x)?,
            None => c.upload(&plan, signal)?,
        }
        c.launch()?;
        match &mut values {
            CwtValues::Half(h, _) => c.download_half(h.as_slice_mut().context("contiguous")?)?,
            v => c.download_raw(T::values_slice(v, complex_out)?)?,
        }
        Ok(())
    };
    once()?;
    let total_ms = wall_median(5, once)?;
    let in_bytes =
        signal.len() * std::mem::size_of::<T>() * if signal.is_complex() { 2 } else { 1 };
    let h2h = host_to_host(gpu, in_bytes, c.output_bytes(), total_ms)?;
    let precision = match options.precision {
        Precision::F32 => "f32",
        Precision::F64 => "f64",
    };
    println!(
        "{} | cuda | {} | {} | {} | N={} | {} scales | algorithm {} | plan {:.0} ms, first transform done at {:.0} ms | kernels median {:.3} ms (min {:.3}) | floor {:.3} ms (output {:.0} MB at {:.0} GB/s) | {:.2}x the floor | {}",
        a.config,
        gpu.info.name,
        options.wavelet.name(),
        precision,
        signal.len(),
        options.scales.len(),
        a.algorithm,
        plan_ms,
        first_ms,
        med,
        min,
        floor_ms(gpu, c.output_bytes()),
        c.output_bytes() as f64 / 1e6,
        gpu.info.peak_bandwidth() / 1e9,
        med / floor_ms(gpu, c.output_bytes()),
        h2h
    );
    if let (true, Some(x)) = (a.channels > 1 && options.half.is_none(), &real) {
        // Channels: C signals in one call, host to host, against one.
        let xs: Vec<T> = (0..a.channels).flat_map(|_| x.iter().copied()).collect();
        let per = c.output_bytes() / std::mem::size_of::<T>();
        let mut out = vec![T::of(0.0); per * a.channels];
        c.transform_rows(&plan, &xs, &mut out)?;
        let ms = wall_median(3, || Ok(c.transform_rows(&plan, &xs, &mut out)?))?;
        let rate = |bytes: usize, ms: f64| bytes as f64 / (ms / 1e3) / 1e9;
        let one = rate(c.output_bytes(), total_ms);
        let many = rate(c.output_bytes() * a.channels, ms);
        println!(
            "  {} channels in one call: {ms:.1} ms host to host, {many:.1} GB/s of coefficients against {one:.1} for one signal ({:.0}%)",
            a.channels,
            100.0 * many / one
        );
    }
    if let Some(w) = a.gpu_window {
        if w == 0 {
            anyhow::bail!("--gpu-window must be at least 1 column");
        }
        // Windows: the signal goes up and the coefficients come down per
        // window, overlapped with the other window's kernels.
        let mut parts = CwtValues::zeroed_for(&plan);
        multires_cuda::cwt_chunked::<T>(gpu.clone(), &plan, signal, &mut parts, w)?;
        let t = Instant::now();
        multires_cuda::cwt_chunked::<T>(gpu.clone(), &plan, signal, &mut parts, w)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let bytes = c.output_bytes() as f64;
        println!(
            "  in windows of {w} columns ({} windows, two streams, pinned buffers): {ms:.1} ms including all transfers ({:.1} GB/s of coefficients to the host); relative L2 difference from the in-memory run {:.2e}",
            plan.columns().div_ceil(w),
            bytes / (ms / 1e3) / 1e9,
            rel_l2(&parts, &values)
        );
    }
    if a.check {
        let half = options.half;
        let mut o64 = options;
        o64.precision = Precision::F64;
        o64.algorithm = Algorithm::Fft;
        o64.half = None;
        let reference = CwtPlan::new(o64, signal.len(), signal.is_complex())?
            .execute(signal, None)
            .context("the float64 CPU reference")?;
        println!(
            "  relative L2 error vs float64 CPU overlap-save: {:.2e}",
            rel_l2(&values, &reference.values)
        );
        if let (Some(h), CwtValues::Half(bits, _), CwtValues::Real64(want)) =
            (half, &values, &reference.values)
        {
            // Per value: the rounding a 16-bit float allows (2^-11 for
            // float16, 2^-8 for bfloat16) on top of float32's error;
            // float16 also overflows past 65504 and flushes below 6e-8.
            let peak = want.iter().fold(0f64, |m, v| m.max(v.abs()));
            let (mut worst, mut overflow) = (0f64, 0usize);
            for (&b, &w) in bits.iter().zip(want.iter()) {
                let g = h.value_of(b) as f64;
                if g.is_infinite() && w.is_finite() {
                    overflow += 1;
                } else if w.abs() > 1e-3 * peak {
                    worst = worst.max(((g - w) / w).abs());
                }
            }
            println!(
                "  {}: largest relative error {worst:.2e} (values above 1e-3 of the peak {peak:.3e}); {overflow} values overflowed",
                h.numpy_name()
            );
        }
    }
    Ok(())
}

pub fn fir(a: &BenchArgs, n: usize, filters: usize, taps: &[usize]) -> Result<()> {
    let gpu = multires_cuda::gpu()?;
    match a.precision {
        Precision::F32 => fir_typed::<f32>(a, &gpu, n, filters, taps),
        Precision::F64 => fir_typed::<f64>(a, &gpu, n, filters, taps),
    }
}

fn fir_typed<T: GpuReal>(
    a: &BenchArgs,
    gpu: &Arc<Gpu>,
    n: usize,
    filters: usize,
    taps: &[usize],
) -> Result<()> {
    let signal = Signal::real(multires::signal::noise(n, 1));
    for &m in taps {
        let noise = multires::signal::noise(filters * m, 2);
        let bank = FilterBank::Real(Array2::from_shape_vec((filters, m), noise)?);
        let opts = FirOptions {
            mode: FirMode::Same,
            ..FirOptions::default()
        };
        let mut f = CudaFir::<T>::new(gpu.clone(), n, false, &bank, &opts)?;
        f.upload(&signal)?;
        f.launch()?;
        gpu.synchronize()?;
        let mut times = Vec::new();
        for _ in 0..a.repeat {
            times.push(gpu.time_ms(|| f.launch())? as f64);
        }
        let med = median(times.clone());
        let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
        // Host to host: the signal in the bank's precision up, the rows
        // down into the caller's array (touched by a first run); median of five.
        let x: Vec<T> = multires::signal::noise(n, 1)
            .into_iter()
            .map(T::of)
            .collect();
        let mut rows = vec![T::of(0.0); f.output_bytes() / std::mem::size_of::<T>()];
        let mut once = || -> Result<()> {
            f.upload_real(&x)?;
            f.launch()?;
            f.download_raw(&mut rows)?;
            Ok(())
        };
        once()?;
        let total_ms = wall_median(5, once)?;
        let h2h = host_to_host(
            gpu,
            n * std::mem::size_of::<T>(),
            f.output_bytes(),
            total_ms,
        )?;
        let channels = if a.channels > 1 {
            let xs: Vec<T> = (0..a.channels).flat_map(|_| x.iter().copied()).collect();
            let mut out = vec![T::of(0.0); rows.len() * a.channels];
            f.filter_rows(&xs, &mut out)?;
            let ms = wall_median(3, || Ok(f.filter_rows(&xs, &mut out)?))?;
            let one = f.output_bytes() as f64 / total_ms;
            let many = (f.output_bytes() * a.channels) as f64 / ms;
            format!(
                "  {} channels in one call: {ms:.1} ms host to host, {:.1} GB/s of output against {:.1} for one signal ({:.0}%)",
                a.channels,
                many / 1e6,
                one / 1e6,
                100.0 * many / one
            )
        } else {
            String::new()
        };
        f.upload(&signal)?;
        f.launch()?;
        let got = f.download()?;
        let floor = floor_ms(gpu, f.output_bytes() + n * std::mem::size_of::<T>());
        println!(
            "{} | cuda | {} | {}x{} taps | N={} | {} | kernels median {:.3} ms (min {:.3}) | floor {:.3} ms | {:.2}x the floor | {} | {}",
            a.config,
            gpu.info.name,
            filters,
            m,
            n,
            T::NAME,
            med,
            min,
            floor,
            med / floor,
            h2h,
            f.recipe()
        );
        if !channels.is_empty() {
            println!("{channels}");
        }
        if let Some(w) = a.gpu_window {
            if w == 0 {
                anyhow::bail!("--gpu-window must be at least 1 column");
            }
            // Windows (float64, as the backend runs them for outputs larger
            // than the GPU): each window's slice up, its rows down.
            let t = Instant::now();
            let (parts, _) = multires_cuda::fir_windowed(gpu.clone(), &signal, &bank, &opts, w)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let (FirValues::Real(p), FirValues::Real(g)) = (&parts, &got) else {
                anyhow::bail!("a real bank gave a complex output");
            };
            let num: f64 = p.iter().zip(g.iter()).map(|(x, y)| (x - y).powi(2)).sum();
            let den: f64 = g.iter().map(|y| y * y).sum::<f64>().max(1e-300);
            println!(
                "  in windows of {w} columns ({} windows, float64): {ms:.1} ms including all transfers; relative L2 difference from the in-memory run {:.2e}",
                n.div_ceil(w),
                (num / den).sqrt()
            );
        }
        if a.check {
            let (want, _) = multires::fir::fir(&signal, &bank, &opts)?;
            let (FirValues::Real(g), FirValues::Real(w)) = (&got, &want) else {
                anyhow::bail!("a real bank gave a complex output");
            };
            let num: f64 = g.iter().zip(w.iter()).map(|(x, y)| (x - y).powi(2)).sum();
            let den: f64 = w.iter().map(|y| y * y).sum();
            println!(
                "  relative L2 error vs float64 CPU: {:.2e}",
                (num / den).sqrt()
            );
        }
    }
    Ok(())
}

/// dwt-64m on the GPU: wavedec and waverec of 2^26 float32 samples, 8
/// levels, periodization (DESIGN.md), for `auto` and each of the seed's
/// variants: kernel time (CUDA events, median of the repeats, data on the
/// device) and total time with the transfers (signal up and coefficients
/// down, or back), like the seed's Figs. 10-12.
pub fn dwt(a: &BenchArgs, n: usize, levels: usize, names: &[String]) -> Result<()> {
    use multires::dwt::{DiscreteWavelet, Mode};
    use multires_cuda::dwt::{DwtLayout, DwtWork, GpuDwt, GpuDwtVariant};
    let gpu = multires_cuda::gpu()?;
    let x: Vec<f32> = multires::signal::noise(n, 7)
        .into_iter()
        .map(|v| v as f32)
        .collect();
    let mode = a.dwt_mode.unwrap_or(Mode::Periodization);
    for name in names {
        let w = DiscreteWavelet::from_name(name)?;
        let layout = DwtLayout::wavedec(1, n, w.filter_len(), mode, levels);
        let rec_len = *multires_cuda::dwt::rec_lengths(&layout, w.filter_len(), mode)?
            .last()
            .context("no levels")?;
        let bytes = (n + layout.total()) * 4;
        let mut xd = gpu.stream.clone_htod(&x)?;
        let mut coeffs = gpu.stream.alloc_zeros::<f32>(layout.total())?;
        let mut out = gpu.stream.alloc_zeros::<f32>(rec_len)?;
        let mut host_c = vec![0f32; layout.total()];
        let mut host_y = vec![0f32; rec_len];
        for variant in GpuDwtVariant::ALL {
            let plan = match GpuDwt::<f32>::new(gpu.clone(), &w, mode, variant) {
                Ok(p) => p,
                Err(e) if variant.is_lattice() => {
                    println!(
                        "{} | cuda | {name} | {variant} | not available: {e}",
                        a.config
                    );
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let mut work = DwtWork::default();
            plan.wavedec_on_device(&xd, &layout, &mut coeffs, &mut work)?;
            plan.waverec_on_device(&coeffs, &layout, &mut out, &mut work)?;
            gpu.synchronize()?;
            let (mut td, mut tr) = (Vec::new(), Vec::new());
            for _ in 0..a.repeat.max(3) {
                td.push(
                    gpu.time_ms(|| plan.wavedec_on_device(&xd, &layout, &mut coeffs, &mut work))?
                        as f64,
                );
                tr.push(
                    gpu.time_ms(|| plan.waverec_on_device(&coeffs, &layout, &mut out, &mut work))?
                        as f64,
                );
            }
            // Host to host through the page-locked ring: the signal up and
            // the coefficients down into the caller's arrays; and back.
            // Medians of five after a run that touched the host arrays.
            use multires_cuda::transfer::{download_into, upload_into};
            let s = &gpu.stream;
            let mut dec = || -> Result<()> {
                upload_into(&gpu, s, &x, &mut xd, 0)?;
                plan.wavedec_on_device(&xd, &layout, &mut coeffs, &mut work)?;
                download_into(&gpu, s, &coeffs, 0, &mut host_c)?;
                Ok(())
            };
            dec()?;
            let total_dec = wall_median(5, dec)?;
            let mut rec = || -> Result<()> {
                upload_into(&gpu, s, &host_c, &mut coeffs, 0)?;
                plan.waverec_on_device(&coeffs, &layout, &mut out, &mut work)?;
                download_into(&gpu, s, &out, 0, &mut host_y)?;
                Ok(())
            };
            rec()?;
            let total_rec = wall_median(5, rec)?;
            let h2h_dec = host_to_host(&gpu, n * 4, layout.total() * 4, total_dec)?;
            let h2h_rec = host_to_host(&gpu, layout.total() * 4, rec_len * 4, total_rec)?;
            let num: f64 = host_y
                .iter()
                .zip(&x)
                .map(|(a, b)| ((a - b) as f64).powi(2))
                .sum();
            let den: f64 = x.iter().map(|b| (*b as f64).powi(2)).sum();
            let (md, mr) = (median(td), median(tr));
            println!(
                "{} | cuda | {} | {name} | f32 | N={n} | {levels} levels | {mode} | {variant} | wavedec kernels {:.3} ms ({:.0} GB/s, {:.2}x the floor) | waverec kernels {:.3} ms ({:.2}x) | floor {:.3} ms | reconstruction error {:.1e}\n  wavedec {}\n  waverec {}",
                a.config,
                gpu.info.name,
                md,
                bytes as f64 / (md / 1e3) / 1e9,
                md / floor_ms(&gpu, bytes),
                mr,
                mr / floor_ms(&gpu, bytes),
                floor_ms(&gpu, bytes),
                (num / den).sqrt(),
                h2h_dec,
                h2h_rec
            );
        }
        if let Some(limit) = a.gpu_mem_limit {
            dwt_streamed(a, &gpu, &w, mode, levels, &x, limit)?;
        }
        if a.check {
            // The coefficients against the CPU's (float32, equal to PyWavelets by its tests).
            let plan = GpuDwt::<f32>::new(gpu.clone(), &w, mode, GpuDwtVariant::Auto)?;
            let got = multires_cuda::dwt::wavedec(&plan, &x, 1, levels)?;
            let t = multires::dwt::Transform::<f32>::new(
                &w,
                mode,
                multires::dwt::Algorithm::Auto,
                multires::dwt::Granularity::Two,
            )?;
            let xa = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[n]), x.clone())?;
            let want = multires::dwt::wavedec(xa.view(), &t, Some(levels), 0)?;
            let (mut num, mut den) = (0f64, 0f64);
            for (g, w) in got.iter().zip(&want) {
                for (p, q) in g.iter().zip(w.iter()) {
                    num += ((p - q) as f64).powi(2);
                    den += (*q as f64).powi(2);
                }
            }
            println!(
                "  {name}: relative L2 difference of the coefficients from the CPU's: {:.2e}",
                (num / den.max(1e-300)).sqrt()
            );
        }
    }
    Ok(())
}

/// The streamed DWT: the samples as 1024 rows, wavedec and waverec (auto)
/// under `limit` bytes of device memory, against the pinned copy rates
/// (the floor when copies overlap kernels: the slower direction's time)
/// and the in-core run of the same rows (pageable copies, one batch).
fn dwt_streamed(
    a: &BenchArgs,
    gpu: &std::sync::Arc<multires_cuda::Gpu>,
    w: &multires::dwt::DiscreteWavelet,
    mode: multires::dwt::Mode,
    levels: usize,
    x: &[f32],
    limit: usize,
) -> Result<()> {
    use multires_cuda::dwt::{GpuDwt, GpuDwtVariant};
    let rows = 1024.min(x.len());
    let n = x.len() / rows;
    let x = &x[..rows * n];
    let mut plan = GpuDwt::<f32>::new(gpu.clone(), w, mode, GpuDwtVariant::Auto)?;
    // The first call's milliseconds (it allocates the pinned buffers) and the
    // median of the repeats after it.
    let wall = |f: &mut dyn FnMut() -> Result<()>| -> Result<(f64, f64)> {
        let first = wall_median(1, &mut *f)?;
        Ok((first, wall_median(a.repeat.max(3), f)?))
    };
    plan.stream_above = usize::MAX;
    let mut coeffs = Vec::new();
    let in_dec = wall(&mut || {
        coeffs = multires_cuda::dwt::wavedec(&plan, x, rows, levels)?;
        Ok(())
    })?;
    let in_rec = wall(&mut || {
        multires_cuda::dwt::waverec(&plan, &coeffs, rows)?;
        Ok(())
    })?;
    let mut runs = Vec::new();
    for lim in [None, Some(limit)] {
        plan.stream_above = 0;
        plan.mem_limit = lim;
        let mut streamed = Vec::new();
        let dec = wall(&mut || {
            streamed = multires_cuda::dwt::wavedec(&plan, x, rows, levels)?;
            Ok(())
        })?;
        let mut y = Vec::new();
        let rec = wall(&mut || {
            y = multires_cuda::dwt::waverec(&plan, &coeffs, rows)?.0;
            Ok(())
        })?;
        let same = streamed == coeffs;
        let back = y
            .iter()
            .zip(x)
            .all(|(p, q)| (p - q).abs() <= 1e-5 * (1.0 + q.abs()));
        runs.push((lim, dec, rec, same && back, y.len()));
    }
    // The link's page-locked rates, as every host-to-host line uses them.
    let (r_up, r_down) = link(gpu)?;
    let (r_up, r_down) = (r_up / 1e9, r_down / 1e9);
    let total_c: usize = coeffs.iter().map(Vec::len).sum();
    // Bytes each way: wavedec sends x up and coefficients down; waverec the reverse.
    let floor = |b_up: usize, b_down: usize| {
        ((b_up * 4) as f64 / r_up).max((b_down * 4) as f64 / r_down) / 1e6
    };
    for (lim, dec, rec, ok, ylen) in runs {
        let (f_dec, f_rec) = (floor(x.len(), total_c), floor(total_c, ylen));
        println!(
            "{} | cuda | {} | {} | streamed, {rows} rows x {n} | {} | wavedec {:.1} ms (first call {:.1}; in core {:.1}), copy floor {f_dec:.1} ms, {:.0}% of the rate | waverec {:.1} ms (first {:.1}; in core {:.1}), copy floor {f_rec:.1} ms, {:.0}% | pinned copies up {r_up:.1} GB/s, down {r_down:.1} GB/s | equal to the in-core run: {ok}",
            a.config,
            gpu.info.name,
            w.name,
            lim.map_or("default memory".to_string(), |l| format!("--gpu-mem-limit {} MiB", l >> 20)),
            dec.1,
            dec.0,
            in_dec.1,
            100.0 * f_dec / dec.1,
            rec.1,
            rec.0,
            in_rec.1,
            100.0 * f_rec / rec.1,
        );
    }
    Ok(())
}

/// dwt2-16k on the GPU: wavedecn over the last two axes (pywt.wavedec2) of a
/// side x side float32 image, the fused 2-D level; waverecn by axis passes.
pub fn dwt2(a: &BenchArgs, side: usize, levels: usize, names: &[String]) -> Result<()> {
    use multires::dwt::{DiscreteWavelet, Mode};
    use multires_cuda::dwt::{GpuDwt, GpuDwtVariant};
    use multires_cuda::dwtn::DevArray;
    let gpu = multires_cuda::gpu()?;
    let n = side * side;
    let x: Vec<f32> = multires::signal::noise(n, 11)
        .into_iter()
        .map(|v| v as f32)
        .collect();
    let mode = a.dwt_mode.unwrap_or(Mode::Periodization);
    let xa = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[side, side]), x)?;
    let xd = DevArray::upload(&gpu, &xa)?;
    let axes = [0usize, 1];
    for name in names {
        let w = DiscreteWavelet::from_name(name)?;
        let plan = GpuDwt::<f32>::new(gpu.clone(), &w, mode, GpuDwtVariant::Auto)?;
        let (ap, det) = plan.wavedecn_on_device(&xd, &axes, levels)?;
        let y = plan.waverecn_on_device(&ap, &det, &axes)?;
        gpu.synchronize()?;
        drop(y);
        let (mut td, mut tr) = (Vec::new(), Vec::new());
        for _ in 0..a.repeat.max(3) {
            let mut keep = None;
            td.push(gpu.time_ms(|| {
                keep = Some(plan.wavedecn_on_device(&xd, &axes, levels)?);
                Ok(())
            })? as f64);
            drop(keep);
            let mut keep = None;
            tr.push(gpu.time_ms(|| {
                keep = Some(plan.waverecn_on_device(&ap, &det, &axes)?);
                Ok(())
            })? as f64);
            drop(keep);
        }
        // Accuracy: the round trip on the device, against the input.
        let y = plan.waverecn_on_device(&ap, &det, &axes)?.download(&gpu)?;
        let num: f64 = y
            .iter()
            .zip(xa.iter())
            .map(|(p, q)| ((p - q) as f64).powi(2))
            .sum();
        let den: f64 = xa.iter().map(|q| (*q as f64).powi(2)).sum();
        let coeff_bytes: usize = ap.len()
            + det
                .iter()
                .flat_map(|d| d.values())
                .map(|v| v.len())
                .sum::<usize>();
        let bytes = (n + coeff_bytes) * 4;
        let (md, mr) = (median(td), median(tr));
        // Host to host: pywt.wavedec2's and waverec2's calls from host
        // arrays to new host arrays; medians of five after a first run.
        let ax = [0isize, 1];
        let mut host = multires_cuda::dwtn::wavedecn(&plan, &xa, Some(levels), &ax)?;
        let dec_ms = wall_median(5, || {
            host = multires_cuda::dwtn::wavedecn(&plan, &xa, Some(levels), &ax)?;
            Ok(())
        })?;
        // Where a host-to-host wavedec2 spends its time: the image up, the
        // kernels, the coefficients down into new arrays.
        let t = Instant::now();
        let up = DevArray::upload(&gpu, &xa)?;
        gpu.synchronize()?;
        let t_up = t.elapsed().as_secs_f64() * 1e3;
        let (ap2, det2) = plan.wavedecn_on_device(&up, &axes, levels)?;
        gpu.synchronize()?;
        let t_dev = t.elapsed().as_secs_f64() * 1e3 - t_up;
        let mut down_bytes = ap2.download(&gpu)?.len() * 4;
        for d in &det2 {
            for v in d.values() {
                down_bytes += v.download(&gpu)?.len() * 4;
            }
        }
        let t_down = t.elapsed().as_secs_f64() * 1e3 - t_up - t_dev;
        drop((up, ap2, det2));
        multires_cuda::dwtn::waverecn(&plan, &host, &ax)?;
        let rec_ms = wall_median(5, || {
            multires_cuda::dwtn::waverecn(&plan, &host, &ax)?;
            Ok(())
        })?;
        println!(
            "{} | cuda | {} | {name} | f32 | {side}x{side} | {levels} levels | {mode} | wavedec2 (fused 2-D levels) {:.3} ms ({:.0} GB/s, {:.2}x the floor) | waverec2 {:.3} ms ({:.2}x) | floor {:.3} ms | round-trip error {:.1e}\n  wavedec2 {}\n  waverec2 {}",
            a.config,
            gpu.info.name,
            md,
            bytes as f64 / (md / 1e3) / 1e9,
            md / floor_ms(&gpu, bytes),
            mr,
            mr / floor_ms(&gpu, bytes),
            floor_ms(&gpu, bytes),
            (num / den).sqrt(),
            host_to_host(&gpu, n * 4, coeff_bytes * 4, dec_ms)?,
            host_to_host(&gpu, coeff_bytes * 4, n * 4, rec_ms)?
        );
        println!(
            "  one wavedec2 host to host: image up {t_up:.1} ms, kernels and allocations {t_dev:.1} ms, {:.0} MB of coefficients down into new arrays {t_down:.1} ms",
            down_bytes as f64 / 1e6
        );
    }
    Ok(())
}
