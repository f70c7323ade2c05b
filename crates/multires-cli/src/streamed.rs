//! `multires cwt --stream` and `multires fir --stream`: inputs larger than memory.
//! The input is read a chunk at a time (memory-mapped .npy and raw files,
//! WAV decoded as it goes), each chunk's final columns go straight into the
//! output file's mapped pages, and the engine holds only the masks, the
//! FFT kernels and a window of the longest segment plus the halo. The
//! columns are the whole transform's, bit for bit. The FIR bank streams
//! the same way.

use crate::cmd_cwt::{build_options, CwtArgs};
use crate::progress::Bar;
use anyhow::{bail, Context, Result};
use multires::backend::Device;
use multires::cwt::Precision;
use multires::cwt::{cone_of_influence, CwtValues, HalfFloat};
use multires::fir::{output_range, FilterBank, FirOptions, FirPost, FirStream, FirValues};
use multires::io::{self, Float16Bits, ReadOptions, SignalChunks};
use multires::memory::human_bytes;
use multires::{CwtStream, Signal};
use multires_cuda::{CudaCwtStream, GpuReal};
use ndarray::Array2;
use num_complex::{Complex32, Complex64};
use std::time::Instant;

/// Copies each push's columns into the row-major (rows x cols) output.
struct Placer<'a, T> {
    out: &'a mut [T],
    cols: usize,
    at: usize,
}

impl<T: Copy> Placer<'_, T> {
    fn place(&mut self, v: Array2<T>) -> Result<()> {
        let k = v.ncols();
        if self.at + k > self.cols {
            bail!(
                "the stream returned more columns than the input's length gives ({} > {})",
                self.at + k,
                self.cols
            );
        }
        for (r, row) in v.rows().into_iter().enumerate() {
            let dst = &mut self.out[r * self.cols + self.at..r * self.cols + self.at + k];
            for (d, s) in dst.iter_mut().zip(row.iter()) {
                *d = *s;
            }
        }
        self.at += k;
        Ok(())
    }
}

/// What the pump drives: a CWT stream (CPU or GPU) or a FIR stream.
trait Stream {
    type Values;
    fn push(&mut self, chunk: &Signal) -> Result<Self::Values>;
    fn finish(self: Box<Self>) -> Result<Self::Values>;
}

impl Stream for CwtStream {
    type Values = CwtValues;
    fn push(&mut self, chunk: &Signal) -> Result<CwtValues> {
        Ok(CwtStream::push(self, chunk)?)
    }
    fn finish(self: Box<Self>) -> Result<CwtValues> {
        Ok(CwtStream::finish(*self)?)
    }
}

impl<T: GpuReal> Stream for CudaCwtStream<T> {
    type Values = CwtValues;
    fn push(&mut self, chunk: &Signal) -> Result<CwtValues> {
        Ok(CudaCwtStream::push(self, chunk)?)
    }
    fn finish(self: Box<Self>) -> Result<CwtValues> {
        Ok(CudaCwtStream::finish(*self)?)
    }
}

impl Stream for FirStream {
    type Values = FirValues;
    fn push(&mut self, chunk: &Signal) -> Result<FirValues> {
        Ok(FirStream::push(self, chunk)?)
    }
    fn finish(self: Box<Self>) -> Result<FirValues> {
        Ok(FirStream::finish(*self)?)
    }
}

/// Pushes every chunk, then finishes, placing the columns as they come.
fn pump<V, T: Copy>(
    mut stream: Box<dyn Stream<Values = V> + '_>,
    chunks: &mut SignalChunks,
    chunk: usize,
    out: &mut [T],
    cols: usize,
    pick: fn(V) -> Option<Array2<T>>,
    bar: &Bar,
) -> Result<()> {
    let mut placer = Placer { out, cols, at: 0 };
    let n = chunks.len();
    let wrong = || anyhow::anyhow!("the stream's values are not of the output's dtype");
    while let Some(c) = chunks.next_chunk(chunk)? {
        let v = stream
            .push(&c)
            .with_context(|| format!("at sample {}", chunks.position() - c.len()))?;
        placer.place(pick(v).ok_or_else(wrong)?)?;
        bar.update(chunks.position(), n);
    }
    placer.place(pick(stream.finish()?).ok_or_else(wrong)?)?;
    if placer.at != cols {
        bail!("the stream gave {} of {cols} columns", placer.at);
    }
    Ok(())
}

/// The input read a chunk at a time, checked to hold samples.
fn open_chunks(
    input: &std::path::Path,
    raw: Option<multires::io::RawType>,
    channel: usize,
    chunk: usize,
) -> Result<SignalChunks> {
    if chunk == 0 {
        bail!("--chunk 0: a chunk needs at least one sample");
    }
    let chunks = SignalChunks::open(input, &ReadOptions { raw, channel })?;
    if chunks.is_empty() {
        bail!("'{}' holds no samples", input.display());
    }
    Ok(chunks)
}

/// The transform of `a.input` in chunks of `a.chunk` samples into `a.output`.
pub fn cwt_streamed(a: &CwtArgs) -> Result<()> {
    if a.plot.is_some() {
        bail!("--plot draws the whole scalogram from memory; with --stream, write the .npy and plot it afterwards (or drop --stream)");
    }
    let mut chunks = open_chunks(&a.input, a.raw, a.channel, a.chunk)?;
    let mut probe = Signal::real(Vec::new());
    probe.sample_rate = chunks.sample_rate();
    let options = build_options(&a.transform, &probe)?;
    let start = Instant::now();
    let cpu = CwtStream::new(options, chunks.is_complex())?;
    let o = cpu.options().clone();
    let n = chunks.len();
    let (rows, cols) = (o.scales.len(), n.div_ceil(o.hop));
    let dtype = cpu.output_dtype();
    // 'auto' streams on the GPU where one is usable and the output is not
    // 16-bit (GPU windows store float32 or float64).
    let gpu = match a.transform.device {
        Device::Cpu => None,
        Device::Auto if o.half.is_some() => None,
        Device::Auto => multires_cuda::gpu().ok(),
        Device::Cuda => Some(multires_cuda::gpu()?),
    };
    let stream: Box<dyn Stream<Values = CwtValues>> = match gpu {
        None => {
            if a.transform.explain {
                print!("{}", cpu.recipe());
                println!(
                    "stream: the first columns come after {} samples; it holds at most {} (masks, FFT kernels, a window of the longest segment and the halo) plus {} for each chunk of {} samples; the output goes to the file as it is made",
                    cpu.latency(),
                    human_bytes(cpu.memory_bound()),
                    human_bytes(cpu.memory_per_chunk(a.chunk)),
                    a.chunk
                );
            }
            Box::new(cpu)
        }
        Some(g) => {
            eprintln!("stream on the GPU ({})", g.info.name);
            let window = a.chunk.div_ceil(o.hop);
            let complex = chunks.is_complex();
            macro_rules! on_gpu {
                ($t:ty) => {{
                    let s = CudaCwtStream::<$t>::new(g, o.clone(), complex, window)?;
                    if a.transform.explain {
                        println!(
                            "stream on the GPU: windows of {window} columns; the first come after {} samples; the device holds the window plan and {} of input, the host a chunk of {} samples and its columns; the output goes to the file as it is made",
                            s.latency(),
                            human_bytes(s.input_bytes() as u64),
                            a.chunk
                        );
                    }
                    Box::new(s) as Box<dyn Stream<Values = CwtValues>>
                }};
            }
            match o.precision {
                Precision::F32 => on_gpu!(f32),
                Precision::F64 => on_gpu!(f64),
            }
        }
    };
    let bar = Bar::new(n as u64, "cwt stream");
    let shape = [rows, cols];
    let chunk = a.chunk;
    macro_rules! mapped {
        ($t:ty, $pick:expr) => {
            io::write_npy_mapped::<$t, anyhow::Error>(&a.output, &shape, |out| {
                pump(stream, &mut chunks, chunk, out, cols, $pick, &bar)
            })
        };
    }
    match (dtype, o.half) {
        (_, Some(HalfFloat::F16)) => mapped!(Float16Bits, |v| match v {
            CwtValues::Half(a, _) => Some(a.mapv(Float16Bits)),
            _ => None,
        }),
        (_, Some(HalfFloat::BF16)) => mapped!(u16, |v| match v {
            CwtValues::Half(a, _) => Some(a),
            _ => None,
        }),
        ("complex64", _) => mapped!(Complex32, |v| match v {
            CwtValues::Complex32(a) => Some(a),
            _ => None,
        }),
        ("complex128", _) => mapped!(Complex64, |v| match v {
            CwtValues::Complex64(a) => Some(a),
            _ => None,
        }),
        ("float32", _) => mapped!(f32, |v| match v {
            CwtValues::Real32(a) => Some(a),
            _ => None,
        }),
        _ => mapped!(f64, |v| match v {
            CwtValues::Real64(a) => Some(a),
            _ => None,
        }),
    }?;
    bar.finish();
    if let Some(p) = &a.coi_out {
        let coi = cone_of_influence(n, o.hop, 1, o.wavelet.coi_factor());
        if let Err(e) = io::write_npy(p, &ndarray::Array1::from(coi)) {
            let _ = std::fs::remove_file(&a.output);
            return Err(e.into());
        }
    }
    eprintln!(
        "cwt: {n} samples streamed in chunks of {chunk}, {rows} scales, wavelet {} -> {} ({rows} x {cols} {dtype}) in {:.3} s",
        o.wavelet.name(),
        a.output.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The bank of `a.filters` over `a.input` in chunks, into `a.output`.
pub fn fir_streamed(a: &crate::cmd_fir::FirArgs, bank: FilterBank, opts: FirOptions) -> Result<()> {
    if a.device == Device::Cuda {
        bail!("--stream runs on the CPU; pass --device cpu (or auto), or drop --stream to filter on the GPU");
    }
    let mut chunks = open_chunks(&a.input, a.raw, a.channel, a.chunk)?;
    let n = chunks.len();
    let (nf, m) = bank.dim();
    let real = matches!(opts.post, FirPost::Power | FirPost::Magnitude)
        || (!chunks.is_complex() && !bank.is_complex());
    let start = Instant::now();
    let fir = FirStream::new(bank, opts.clone(), chunks.is_complex())?;
    if a.explain {
        println!("{}", fir.recipe());
        println!(
            "stream: the first outputs come after {} samples; it holds at most {} besides a chunk of {} samples",
            fir.latency(),
            human_bytes(fir.memory_bound()),
            a.chunk
        );
    }
    let stream: Box<dyn Stream<Values = FirValues>> = Box::new(fir);
    let cols = output_range(n, m, opts.mode).1;
    let bar = Bar::new(n as u64, "fir stream");
    let chunk = a.chunk;
    macro_rules! mapped {
        ($t:ty, $pick:expr) => {
            io::write_npy_mapped::<$t, anyhow::Error>(&a.output, &[nf, cols], |out| {
                pump(stream, &mut chunks, chunk, out, cols, $pick, &bar)
            })
        };
    }
    if real {
        mapped!(f64, |v| match v {
            FirValues::Real(a) => Some(a),
            _ => None,
        })
    } else {
        mapped!(Complex64, |v| match v {
            FirValues::Complex(a) => Some(a),
            _ => None,
        })
    }?;
    bar.finish();
    eprintln!(
        "fir: {n} samples streamed in chunks of {chunk} x {nf} filters of {m} taps -> {} ({nf} x {cols}) in {:.3} s",
        a.output.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
