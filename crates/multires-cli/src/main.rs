//! The `multires` command: thin argument parsing, progress and error
//! reporting over the `multires` library.

mod bench;
mod bench_cuda;
mod cmd_codec;
mod cmd_coherence;
mod cmd_cwt;
mod cmd_denoise;
mod cmd_dwt;
mod cmd_fir;
mod cmd_icwt;
#[cfg(feature = "mpi")]
mod cmd_mpi;
mod cmd_ssq;
mod cmd_undecimated;
mod paths;
mod progress;
mod streamed;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "multires",
    version,
    about = "Multiresolution (wavelet) analysis on CPUs and NVIDIA GPUs",
    long_about = "Multiresolution (wavelet) analysis on CPUs and NVIDIA GPUs.\n\n\
Continuous wavelet transforms (scalograms) computed as the exact discrete sum of DESIGN.md, \
FIR filter banks, and more. Start with `multires demo`.",
    after_help = "Examples:\n  multires demo\n  multires cwt signal.wav -o W.npy --wavelet cmor1.5-1.0 --freqs 20:2000:128 --plot W.png\n  multires ssq chirp.npy -o T.npy --wavelet morse60-3 --scales-voices 2:512:32 --plot T.png --ridges 1\n  multires coherence a.npy b.npy -o C.npz --plot C.png\n  multires fir x.npy --filters bank.npy -o y.npy --mode same --post power\n  multires wavedec x.npy -o c.npz --wavelet db4 --level 8 --mode periodization\n  multires wavedecn img.npy -o c.npz --wavelet haar --level 6 --mode periodization\n  multires wavelets\n  multires compress field.npy -o field.mrz --error-bound rel:1e-3\n  multires decompress field.mrz -o part.npy --region 0:64,0:64,0:64"
)]
struct Cli {
    /// Worker threads (default: all cores, or RAYON_NUM_THREADS; half the
    /// cores when the codec runs on GPUs, whose own threads do most of their
    /// host work).
    #[arg(long, global = true, value_name = "N")]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a scalogram of the Doppler test signal to a PNG (no input needed).
    Demo(cmd_cwt::DemoArgs),
    /// Continuous wavelet transform of a signal.
    Cwt(Box<cmd_cwt::CwtArgs>),
    /// Inverse CWT: the signal of the coefficients `multires cwt` wrote.
    Icwt(Box<cmd_icwt::IcwtArgs>),
    /// Synchrosqueezed CWT (ssqueezepy's ssq_cwt), with ridges and a plot.
    Ssq(Box<cmd_ssq::SsqArgs>),
    /// Wavelet coherence of two series (pycwt's wct), with a plot.
    Coherence(Box<cmd_coherence::CoherenceArgs>),
    /// Convolve one signal with a bank of FIR filters.
    Fir(cmd_fir::FirArgs),
    /// Time a canonical benchmark configuration of DESIGN.md.
    Bench(bench::BenchArgs),
    /// Multilevel 1-D DWT along one axis (pywt.wavedec) into an .npz.
    Wavedec(Box<cmd_dwt::WavedecArgs>),
    /// Inverse of wavedec (pywt.waverec).
    Waverec(Box<cmd_dwt::WaverecArgs>),
    /// Multilevel n-D DWT (pywt.wavedecn) into an .npz.
    Wavedecn(Box<cmd_dwt::WavedecnArgs>),
    /// Inverse of wavedecn (pywt.waverecn).
    Waverecn(Box<cmd_dwt::WaverecnArgs>),
    /// Stationary wavelet transform along one axis (pywt.swt) into an .npz.
    Swt(Box<cmd_undecimated::SwtArgs>),
    /// Inverse of swt (pywt.iswt).
    Iswt(Box<cmd_undecimated::IswtArgs>),
    /// Maximal overlap DWT (MATLAB's modwt; --mra for modwtmra) into an .npy, any length.
    Modwt(Box<cmd_undecimated::ModwtArgs>),
    /// Wavelet denoising (BayesShrink, VisuShrink, SureShrink) as scikit-image's denoise_wavelet.
    Denoise(Box<cmd_denoise::DenoiseArgs>),
    /// List the wavelets multires knows (continuous and discrete).
    Wavelets,
    /// Compress a 2-D/3-D field into an .mrz, every value within the error bound.
    Compress(Box<cmd_codec::CompressArgs>),
    /// Decode an .mrz (or a region of it) to .npy or .png.
    Decompress(cmd_codec::DecompressArgs),
    /// Describe an .mrz: shape, bound, ratio, bricks.
    Info(cmd_codec::InfoArgs),
    /// Write a seeded synthetic field (smooth, or k^-5/3 turbulence) as .npy.
    MakeField(cmd_codec::MakeFieldArgs),
}

/// Whether the command runs the codec on GPUs (probing for one under
/// `--device auto`).
fn gpu_codec(command: &Command) -> bool {
    use multires::backend::Device;
    let device = match command {
        Command::Compress(a) if a.seed_thresholds.is_none() => a.device,
        Command::Decompress(a) => a.device,
        Command::Bench(a) if a.config == "codec-3d" => a.device,
        _ => return false,
    };
    device != Device::Cpu && multires_cuda::device_count() > 0
}

/// rayon's pool for a codec run on GPUs when neither --threads nor
/// RAYON_NUM_THREADS sizes it: half the cores. Each GPU's slot threads
/// (about 13) do their batches' host steps themselves, and a pool of every
/// core beside them slowed two GPUs: two H200s (32 cores) decoded at 272
/// GB/s with 16 pool threads against 263 with 32, coded at 239 against
/// 232, one GPU alike (medians of five processes each).
fn codec_pool_threads(cores: usize) -> usize {
    (cores / 2).max(1)
}

/// More worker threads than this many a core only add switching (4000
/// threads on 2 cores hung in start-up).
const THREADS_PER_CORE: usize = 4;

/// The worker pool's size: --threads (refused above the bound), else
/// RAYON_NUM_THREADS (clamped to the bound, with a note), else the codec's
/// half pool on GPUs, else rayon's default of every core.
fn pool_threads(
    flag: Option<usize>,
    env: Option<&str>,
    cores: usize,
    gpu_codec: bool,
) -> Result<Option<usize>> {
    let most = THREADS_PER_CORE * cores.max(1);
    match flag {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(n) if n > most => anyhow::bail!(
            "--threads {n}: this machine has {cores} cores; give at most {most} ({THREADS_PER_CORE} a core)"
        ),
        Some(n) => return Ok(Some(n)),
        None => {}
    }
    match env.map(str::trim) {
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > most => {
                eprintln!("note: RAYON_NUM_THREADS={n} is more than {most} ({THREADS_PER_CORE} a core on {cores} cores); using {most}");
                Ok(Some(most))
            }
            Ok(n) if n > 0 => Ok(Some(n)),
            // Empty or 0 mean rayon's default, as rayon reads them.
            Ok(_) => Ok(None),
            Err(_) if v.is_empty() => Ok(None),
            Err(_) => {
                anyhow::bail!("RAYON_NUM_THREADS='{v}': give a number of threads from 1 to {most}")
            }
        },
        None if gpu_codec => Ok(Some(codec_pool_threads(cores))),
        None => Ok(None),
    }
}

fn run(cli: Cli) -> Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let env = std::env::var("RAYON_NUM_THREADS").ok();
    let threads = pool_threads(cli.threads, env.as_deref(), cores, gpu_codec(&cli.command))?;
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start {n} threads: {e}"))?;
    }
    match cli.command {
        Command::Demo(a) => cmd_cwt::demo(a),
        #[cfg(feature = "mpi")]
        Command::Cwt(a) if a.mpi => cmd_mpi::cwt(*a),
        Command::Cwt(a) => cmd_cwt::cwt(*a),
        Command::Icwt(a) => cmd_icwt::run(*a),
        Command::Ssq(a) => cmd_ssq::ssq(*a),
        Command::Coherence(a) => cmd_coherence::coherence(*a),
        #[cfg(feature = "mpi")]
        Command::Fir(a) if a.mpi => cmd_mpi::fir(a),
        Command::Fir(a) => cmd_fir::fir(a),
        Command::Bench(a) => bench::bench(a),
        Command::Wavedec(a) => cmd_dwt::wavedec(*a),
        Command::Waverec(a) => cmd_dwt::waverec(*a),
        Command::Wavedecn(a) => cmd_dwt::wavedecn(*a),
        Command::Waverecn(a) => cmd_dwt::waverecn(*a),
        Command::Swt(a) => cmd_undecimated::swt(*a),
        Command::Iswt(a) => cmd_undecimated::iswt(*a),
        Command::Modwt(a) => cmd_undecimated::modwt(*a),
        Command::Denoise(a) => cmd_denoise::denoise(*a),
        #[cfg(feature = "mpi")]
        Command::Compress(a) if a.mpi => cmd_mpi::compress(*a),
        #[cfg(feature = "mpi")]
        Command::Decompress(a) if a.mpi => cmd_mpi::decompress(&a),
        Command::Compress(a) => cmd_codec::compress(*a),
        Command::Decompress(a) => cmd_codec::decompress(a),
        Command::Info(a) => cmd_codec::info(a),
        Command::MakeField(a) => cmd_codec::make_field(a),
        Command::Wavelets => {
            println!("continuous wavelets (for `multires cwt --wavelet NAME`):");
            for (name, what) in multires::wavelets::CONTINUOUS_FAMILIES {
                println!("  {name:<12} {what}");
            }
            println!();
            cmd_dwt::list_discrete();
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    clean_up_on_signals();
    multires_cuda::kernels::set_compile_notice(|m| eprintln!("{m}"));
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Output piped into a reader that stops early (`multires info F.mrz |
/// head -3`) ends the process quietly, as other command-line tools do:
/// Rust ignores SIGPIPE, so every `println!` after the reader left
/// panicked with "failed printing to stdout".
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: `signal` only sets SIGPIPE's disposition back to the
    // system's default; it runs first in `main`, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// SIGINT and SIGTERM remove the outputs being written (their hidden
/// temporary files, full size for a decompress) and end the process with
/// the conventional status 128 + the signal. The signals are blocked in
/// every thread (threads inherit the mask, and none is started before
/// this) and taken by one thread in `sigwait`, where removing files is
/// safe, unlike in an asynchronous handler.
fn clean_up_on_signals() {
    #[cfg(unix)]
    // SAFETY: plain libc calls on a local, initialized signal set; this
    // runs first in `main`, before any other thread exists.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let waiter = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut sig: libc::c_int = 0;
                // SAFETY: `set` was initialized above and lives in this closure.
                if libc::sigwait(&set, &mut sig) == 0 {
                    multires::io::remove_pending_outputs();
                    eprintln!("\ninterrupted: outputs being written were removed");
                    std::process::exit(128 + sig);
                }
            });
        if waiter.is_err() {
            // Without the waiter, let the signals end the process as usual.
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// mimalloc keeps freed blocks for reuse: a second transform in one process
/// writes into memory that is already mapped instead of faulting in fresh
/// pages (on a VM, clearing a fresh 256 MB output cost 20 to 50 ms, as much
/// as a whole Haar wavedec).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_are_bounded_by_the_cores() {
        assert!(pool_threads(Some(4000), None, 2, false).is_err());
        assert!(pool_threads(Some(0), None, 2, false).is_err());
        assert_eq!(pool_threads(Some(8), None, 2, false).unwrap(), Some(8));
        assert_eq!(pool_threads(None, Some("4000"), 2, false).unwrap(), Some(8));
        assert_eq!(pool_threads(None, Some("3"), 2, false).unwrap(), Some(3));
        assert_eq!(pool_threads(None, Some("0"), 2, true).unwrap(), None);
        assert!(pool_threads(None, Some("many"), 2, false).is_err());
        assert_eq!(pool_threads(None, None, 32, true).unwrap(), Some(16));
        assert_eq!(pool_threads(None, None, 32, false).unwrap(), None);
    }

    #[test]
    fn codec_pool_is_half_the_cores() {
        assert_eq!(codec_pool_threads(32), 16);
        assert_eq!(codec_pool_threads(3), 1);
        assert_eq!(codec_pool_threads(1), 1);
    }

    /// Jobs on the CPU, and commands other than the codec's, keep the pool
    /// of every core; `auto` and `cuda` halve it exactly when a GPU is
    /// there.
    #[test]
    fn only_gpu_codec_jobs_halve_the_pool() {
        let gpus = multires_cuda::device_count() > 0;
        for (line, halves) in [
            (
                "compress f.npy -o f.mrz --error-bound rel:1e-3 --device cpu",
                false,
            ),
            ("decompress f.mrz -o f.npy --device cpu", false),
            ("bench --config codec-3d --device cpu", false),
            ("bench --config fir-2m --device cuda", false),
            ("info f.mrz", false),
            ("compress f.npy -o f.mrz --error-bound rel:1e-3", gpus),
            ("decompress f.mrz -o f.npy --device cuda", gpus),
            ("bench --config codec-3d --device cuda", gpus),
        ] {
            let args = std::iter::once("multires").chain(line.split_whitespace());
            match Cli::try_parse_from(args) {
                Ok(c) => assert_eq!(gpu_codec(&c.command), halves, "{line}"),
                Err(e) => panic!("{line}: {e}"),
            }
        }
    }
}
