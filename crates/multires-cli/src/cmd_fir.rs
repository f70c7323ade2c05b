//! `multires fir`.
use anyhow::{Context, Result};
use clap::Args;
use multires::backend::Device;
use multires::fir::{FilterBank, FirAlgorithm, FirMode, FirOptions, FirPost, FirValues};
use multires::io::{self, Matrix, RawType, ReadOptions};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct FirArgs {
    /// Input signal (.npy, .wav, .csv/.txt, or raw with --raw).
    pub input: PathBuf,
    /// Filter bank .npy of shape (F, M), real or complex.
    #[arg(long)]
    pub filters: PathBuf,
    /// Output .npy of shape (F, len).
    #[arg(short, long)]
    pub output: PathBuf,
    /// full (N+M-1), same (max(N,M), centred) or valid, as numpy.convolve.
    #[arg(long, default_value = "full")]
    pub mode: FirMode,
    /// none, power, magnitude or derivative (numpy.gradient), fused into the store.
    #[arg(long, default_value = "none")]
    pub post: FirPost,
    /// auto, direct or overlap-save.
    #[arg(long, default_value = "auto")]
    pub algorithm: FirAlgorithm,
    /// auto (the GPU when one is usable, else the CPU), cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub device: Device,
    /// Print how the bank is computed (algorithm, FFT size, segments).
    #[arg(long)]
    pub explain: bool,
    /// Propagate NaN/Inf through the sums instead of refusing such input.
    #[arg(long)]
    pub allow_nonfinite: bool,
    /// Read the input as raw little-endian samples of this type.
    #[arg(long, value_name = "f32|f64")]
    pub raw: Option<RawType>,
    /// WAV channel or CSV column to read (0-based).
    #[arg(long, default_value_t = 0)]
    pub channel: usize,
    /// Read the input a chunk at a time and write the outputs as they are
    /// final, for inputs larger than memory; equal to the whole bank's bit
    /// for bit (CPU).
    #[arg(long)]
    pub stream: bool,
    /// Samples per chunk with --stream.
    #[arg(long, default_value_t = 1 << 20, value_name = "SAMPLES")]
    pub chunk: usize,
    /// Under mpirun: every rank computes its columns of the output from its
    /// block of the input and the halo the other ranks send (the filters'
    /// reach) on its CPU cores, and
    /// all write the one .npy together (MPI-IO); with --algorithm direct the
    /// values equal one process's bit for bit.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub mpi: bool,
}

pub fn fir(a: FirArgs) -> Result<()> {
    crate::paths::check(
        &[&a.input, &a.filters],
        &[crate::paths::Output::new(&a.output, "-o", &["npy"])],
    )?;
    let bank = match io::read_matrix(&a.filters).context("reading --filters")? {
        Matrix::Real(m) => FilterBank::Real(m),
        Matrix::Complex(m) => FilterBank::Complex(m),
    };
    let opts = FirOptions {
        mode: a.mode,
        post: a.post,
        algorithm: a.algorithm,
        allow_nonfinite: a.allow_nonfinite,
        memory_limit: None,
    };
    if a.stream {
        return crate::streamed::fir_streamed(&a, bank, opts);
    }
    let signal = io::read_signal(
        &a.input,
        &ReadOptions {
            raw: a.raw,
            channel: a.channel,
        },
    )?;
    crate::paths::say(&signal.notes);
    let (backend, note) = multires_cuda::select(a.device)?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    let start = Instant::now();
    let (values, recipe) = backend.fir(&signal, &bank, &opts)?;
    let secs = start.elapsed().as_secs_f64();
    if a.explain {
        println!("{recipe}");
    }
    match &values {
        FirValues::Real(v) => io::write_npy(&a.output, v)?,
        FirValues::Complex(v) => io::write_npy(&a.output, v)?,
    }
    let (f, n) = values.dim();
    eprintln!(
        "fir: {} samples x {} filters of {} taps -> {} ({f} x {n}) in {secs:.3} s",
        signal.len(),
        recipe.filters,
        recipe.taps,
        a.output.display()
    );
    Ok(())
}
