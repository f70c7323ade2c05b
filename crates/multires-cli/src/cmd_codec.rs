//! `multires compress`, `decompress`, `info` and `make-field`: the
//! error-bounded wavelet codec and its .mrz container.
use anyhow::{bail, Context, Result};
use clap::Args;
use multires::backend::Device;
use multires::codec::{
    self, fields::FieldKind, CodecOptions, DType, Elem, ErrorBound, Lifting, MrzReader, Values,
    Volume,
};
use multires::io::{self, RawType, ReadOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The codec's profiles (`--profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    Default,
    Fast,
}

impl Profile {
    /// The transform the profile codes with, given --transform `t`.
    pub fn transform(self, t: Lifting) -> Result<Lifting> {
        match (self, t) {
            (Profile::Default, t) => Ok(t),
            (Profile::Fast, Lifting::Interp | Lifting::Lorenzo) => Ok(Lifting::Lorenzo),
            (Profile::Fast, t) => bail!(
                "--profile fast codes with the Lorenzo predictor; it does not take --transform {t} (drop one)"
            ),
        }
    }
}

#[derive(Args)]
pub struct CompressArgs {
    /// Input field: .npy (1 to 4 axes; float32/float64, or uint8/uint16/int16/int32
    /// coded as integers and decoded to them), .pgm/.png (grey image), or raw
    /// little-endian samples with --raw and --shape.
    pub input: PathBuf,
    /// Output .mrz (required unless --seed-thresholds runs the seed's experiment).
    #[arg(short, long, required_unless_present = "seed_thresholds")]
    pub output: Option<PathBuf>,
    /// Largest error allowed on every finite value: abs:E, rel:E (of the finite
    /// values' range) or psnr:DB; or lossless (every bit kept). NaN and
    /// infinities are kept exactly; integer inputs take abs:E in integer units.
    #[arg(long, default_value = "rel:1e-3")]
    pub error_bound: ErrorBound,
    /// Transform: interp (interpolating wavelet in closed loop, the smallest files),
    /// cdf97 or cdf53 (JPEG 2000 lifting), haar (the seed's), lorenzo (the fast
    /// profile's predictor).
    #[arg(long, default_value = "interp")]
    pub transform: Lifting,
    /// default (the interpolation and rANS: the smallest files) or fast (the
    /// Lorenzo predictor in blocks of 64 values packed at a fixed bit length, as
    /// cuSZp packs, each block on its own; larger files, the same strict bound;
    /// its speed against the default's and cuSZp's is in BENCHMARKS.md). fast
    /// is --transform lorenzo.
    #[arg(long, value_enum, default_value = "default")]
    pub profile: Profile,
    /// Brick extent (each brick decodes on its own): one number for every axis,
    /// or one per axis (Z,Y,X or Y,X). Default 129 (3-D), 257 (2-D) for interp,
    /// 128 and 256 for the lifting transforms.
    #[arg(long, value_delimiter = ',')]
    pub brick: Option<Vec<usize>>,
    /// The longest rANS chunk (interp), in values: a power of two from 2048 to
    /// 65536. A GPU decodes each chunk in one serial chain: 16384 decodes very
    /// compressible fields up to 4x faster there, in larger files (about 36 bits
    /// a chunk; chunks are cut shorter anyway where a field has bits enough).
    #[arg(long, value_name = "VALUES", default_value_t = 65536, value_parser = parse_rans_chunk)]
    pub rans_chunk: usize,
    /// auto (the GPU when there is one), cpu or cuda. Both give the same bytes.
    #[arg(long, default_value = "auto")]
    pub device: Device,
    /// GPUs to spread bricks over: all (default) or a count.
    #[arg(long, value_name = "all|N")]
    pub gpus: Option<String>,
    /// Under mpirun: every rank reads its slab of whole brick layers of the
    /// input (.npy, or raw with --shape) and codes it on its host's GPUs in
    /// turn (or its CPU cores: --device); all write the one .mrz together
    /// (MPI-IO), the bytes one process writes.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub mpi: bool,
    /// Device memory per GPU (e.g. 512MiB): smaller batches of bricks stream
    /// through it, with the same output.
    #[arg(long, value_name = "SIZE", value_parser = crate::cmd_dwt::parse_mem_size)]
    pub gpu_mem_limit: Option<usize>,
    /// Read the input as raw little-endian samples of this type (needs --shape).
    #[arg(long, value_name = "f32|f64", requires = "shape")]
    pub raw: Option<RawType>,
    /// Shape of a raw input, e.g. 256,256,256.
    #[arg(long, value_delimiter = ',')]
    pub shape: Option<Vec<usize>>,
    /// 2-D input: write the original, the decoded field and the error side by side (PNG).
    #[arg(long, value_name = "PNG")]
    pub plot: Option<PathBuf>,
    /// The seed's experiment instead: Haar, details below T (finest level),
    /// T/2, T/4 ... zeroed, survivors packed by Morton key; prints ratio and
    /// times per size. Grey images (0-255).
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub seed_thresholds: Option<f64>,
    /// Square sizes the image is resampled to for the seed's table, e.g. 1024,2048,4096.
    #[arg(long, value_delimiter = ',', requires = "seed_thresholds")]
    pub seed_sizes: Option<Vec<usize>>,
}

#[derive(Args)]
pub struct DecompressArgs {
    /// Input .mrz.
    pub input: PathBuf,
    /// Output: .npy (the input's type and shape) or .png (2-D, grey over the stored value range).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Decode only this box: one start:end per axis (z0:z1,y0:y1,x0:x1 for 3-D);
    /// an empty bound means the axis's end. Only the bricks it meets are read.
    #[arg(long)]
    pub region: Option<String>,
    /// A coarse view at 2^-K resolution: every 2^K-th point per axis of each
    /// brick (counted from the brick's origin), read and decoded from the front
    /// of each brick's stream (interp files). The values are the full decode's
    /// at those points: within the file's bound of the original there.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub level: usize,
    /// auto (the GPU when there is one), cpu or cuda. Both decode the same values.
    #[arg(long, default_value = "auto")]
    pub device: Device,
    /// GPUs to spread bricks over: all (default) or a count.
    #[arg(long, value_name = "all|N")]
    pub gpus: Option<String>,
    /// Under mpirun: every rank decodes its slab of brick layers (of the
    /// region, if given) and all write the one .npy together (MPI-IO).
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub mpi: bool,
}

#[derive(Args)]
pub struct InfoArgs {
    /// Input .mrz.
    pub input: PathBuf,
}

#[derive(Args)]
pub struct MakeFieldArgs {
    /// smooth or turbulent (k^-5/3 spectrum, random phases).
    #[arg(long)]
    pub kind: FieldKind,
    /// Points per axis.
    #[arg(long, default_value_t = 256)]
    pub size: usize,
    /// A 2-D field (size x size) instead of 3-D.
    #[arg(long = "2d")]
    pub two_d: bool,
    /// Seed of the random phases (the same seed gives the same field).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output .npy (float32).
    #[arg(short, long)]
    pub output: PathBuf,
}

fn is_image(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["pgm", "png", "pnm"].contains(&e.to_ascii_lowercase().as_str()))
}

fn is_npy(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// The input as a float32 file the GPU codec can read straight into
/// page-locked memory (a little-endian C-order .npy, or raw float32 with
/// --shape, as an .npy header of no bytes), when it is one (None: read it
/// as a volume).
fn float32_file(a: &CompressArgs) -> Result<Option<io::NpyHeader>> {
    let p = &a.input;
    if is_image(p) && a.raw.is_none() {
        return Ok(None);
    }
    match a.raw {
        None if is_npy(p) => {
            let h = io::read_npy_header(p)?;
            if !h.is_f32_c_order() {
                return Ok(None);
            }
            io::check_f32_npy(p, &h)?;
            Ok(Some(h))
        }
        Some(RawType::F32) => {
            let Some(shape) = a.shape.clone() else {
                return Ok(None);
            };
            let len = std::fs::metadata(p)
                .with_context(|| format!("cannot read {}", p.display()))?
                .len();
            let header = io::NpyHeader {
                descr: "<f4".into(),
                fortran_order: false,
                shape: shape.clone(),
                data_offset: 0,
                file_len: len,
            };
            let n = header.len().unwrap_or(usize::MAX);
            if (n as u64).checked_mul(4) != Some(len) {
                bail!(
                    "--shape {shape:?} holds {n} values but {} has {} bytes ({} float32 values)",
                    p.display(),
                    len,
                    len / 4
                );
            }
            Ok(Some(header))
        }
        _ => Ok(None),
    }
}

/// A float32 or float64 input's values where they lie (memory-mapped).
enum Mapped {
    F32(io::MappedValues<f32>),
    F64(io::MappedValues<f64>),
}

impl Mapped {
    fn values(&self) -> codec::ValuesRef<'_> {
        match self {
            Mapped::F32(m) => codec::ValuesRef::F32(m.values()),
            Mapped::F64(m) => codec::ValuesRef::F64(m.values()),
        }
    }
}

/// The input mapped where it can be (float32 or float64, an .npy in C
/// order or raw with --shape, of the length its shape says), with its
/// shape; None: read it (`read_volume` also says what is wrong with it).
fn mapped_input(a: &CompressArgs) -> Result<Option<(Mapped, Vec<usize>)>> {
    if let Some(f) = float32_file(a)? {
        return Ok(io::MappedValues::open(&a.input, &f)?.map(|m| (Mapped::F32(m), f.shape)));
    }
    let p = &a.input;
    let h = match (a.raw, &a.shape) {
        (None, _) if is_npy(p) && !is_image(p) => io::read_npy_header(p)?,
        (Some(RawType::F64), Some(shape)) => io::NpyHeader {
            descr: "<f8".into(),
            fortran_order: false,
            shape: shape.clone(),
            data_offset: 0,
            file_len: std::fs::metadata(p)
                .with_context(|| format!("cannot read {}", p.display()))?
                .len(),
        },
        _ => return Ok(None),
    };
    if !(h.is_f64_c_order() && h.fits(8)) {
        return Ok(None);
    }
    Ok(io::MappedValues::open(p, &h)?.map(|m| (Mapped::F64(m), h.shape)))
}

/// The integer type of an .npy input, which is coded as that type (None:
/// floats, and integers of other widths, coded as float64 values).
pub(crate) fn npy_elem(a: &CompressArgs) -> Result<Option<Elem>> {
    if a.raw.is_some() || !is_npy(&a.input) {
        return Ok(None);
    }
    let h = io::read_npy_header(&a.input)?;
    Ok(match h.descr.trim_start_matches(['<', '>', '|', '=']) {
        "u1" => Some(Elem::U8),
        "u2" => Some(Elem::U16),
        "i2" => Some(Elem::I16),
        "i4" => Some(Elem::I32),
        _ => None,
    })
}

/// Work the GPU codec does not do (`why`) goes to the CPU under --device
/// auto, with a note; --device cuda is refused.
fn on_cpu<T>(device: Device, why: &str) -> Result<Option<T>> {
    if device == Device::Cuda {
        bail!("--device cuda: {why} runs on the CPU; use --device cpu or auto");
    }
    eprintln!("note: {why} runs on the CPU");
    Ok(None)
}

/// The input as a codec volume, and the bytes a value takes in the input
/// file (1 for a grey image or uint8, 4 for float32), which the ratio is
/// reported against, and the input's shape (the volume has the shape it
/// is coded as, `codec::coded_shape`). Integers of `elem` are held in its
/// coding precision.
fn read_volume(a: &CompressArgs, elem: Option<Elem>) -> Result<(Volume, usize, Vec<usize>)> {
    let p = &a.input;
    if is_image(p) && a.raw.is_none() {
        let (h, w, data) = io::read_grey_image(p)?;
        return Ok((Volume::new(&[h, w], data, DType::F32)?, 1, vec![h, w]));
    }
    if a.shape.is_some() && a.raw.is_none() {
        bail!("--shape is for raw inputs (with --raw f32|f64); an .npy carries its shape");
    }
    // Float32 (.npy or raw) is read as float32: no widened copy of the field.
    let float32 = match a.raw {
        None if is_npy(p) => io::read_f32_npy_vec(p)?,
        None => None,
        Some(RawType::F32) => {
            let data = io::read_raw_f32(p)?;
            Some((vec![data.len()], data))
        }
        Some(RawType::F64) => None,
    };
    let (stored, values, size) = match float32 {
        Some((shape, data)) => (shape, Values::F32(data), 4),
        None => {
            let r = io::read_real_array(
                p,
                &ReadOptions {
                    raw: a.raw,
                    channel: 0,
                },
            )?;
            if r.inexact_integers > 0 {
                bail!(
                    "{}: {} of its integers lie beyond 2^53, where float64 (the codec's values) cannot hold them exactly; \
                     the bound could not be kept on them. Scale or offset the data into +-2^53 first",
                    p.display(),
                    r.inexact_integers
                );
            }
            let dtype = match (elem, r.was_f32) {
                (Some(e), _) => e.coding(),
                (None, true) => DType::F32,
                (None, false) => DType::F64,
            };
            let shape = r.values.shape().to_vec();
            (
                shape,
                Values::from_f64(r.values.iter().copied().collect(), dtype),
                r.stored_size,
            )
        }
    };
    let shape = a.shape.clone().unwrap_or(stored);
    let n: usize = shape.iter().product();
    if n != values.len() {
        bail!(
            "--shape {shape:?} holds {n} values but {} has {}",
            p.display(),
            values.len()
        );
    }
    let coded = codec::coded_shape(&shape).with_context(|| format!("{}", p.display()))?;
    Ok((
        Volume::of(&coded, values).with_context(|| format!("{}", p.display()))?,
        size,
        shape,
    ))
}

/// The GPUs the codec runs on (None: the CPU), from --device and --gpus.
fn codec_gpus(a: &CompressArgs) -> Result<Option<Vec<std::sync::Arc<multires_cuda::Gpu>>>> {
    let gpu_flags = a.gpus.is_some() || a.gpu_mem_limit.is_some();
    if a.seed_thresholds.is_some() {
        if a.device == Device::Cuda || gpu_flags {
            bail!("--seed-thresholds runs the seed's experiment on the CPU; drop --device cuda, --gpus and --gpu-mem-limit");
        }
        return Ok(None);
    }
    select_gpus(a.device, a.gpus.as_deref(), gpu_flags)
}

/// The GPUs for --device and --gpus (None: the CPU).
fn select_gpus(
    device: Device,
    gpus: Option<&str>,
    gpu_flags: bool,
) -> Result<Option<Vec<std::sync::Arc<multires_cuda::Gpu>>>> {
    if device == Device::Cpu && gpu_flags {
        bail!("--gpus and --gpu-mem-limit apply to the GPU; drop them or use --device cuda");
    }
    let Some(_) = crate::cmd_dwt::dwt_gpu(device)? else {
        if gpu_flags {
            eprintln!("note: no GPU, so --gpus and --gpu-mem-limit do nothing");
        }
        return Ok(None);
    };
    let count = multires_cuda::device_count();
    let want = match gpus.map(str::trim) {
        None | Some("all") => count,
        Some(s) => match s.parse::<usize>() {
            Ok(n) if (1..=count).contains(&n) => n,
            _ => bail!(
                "--gpus {s}: give all, or a count from 1 to {count} (the GPUs this machine has)"
            ),
        },
    };
    let gpus = (0..want)
        .map(|i| multires_cuda::gpu_at(i).with_context(|| format!("opening GPU {i}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(gpus))
}

/// `--rans-chunk`: a chunk length the codec takes, checked as the flags
/// are parsed (before any input is read).
pub fn parse_rans_chunk(s: &str) -> Result<usize, String> {
    let values: usize = s
        .parse()
        .map_err(|e| format!("'{s}' is not a count of values: {e}"))?;
    codec::rans_chunk_log(values).map_err(|e| e.to_string())?;
    Ok(values)
}

/// The codec options of `a` for an `ndim`-D input.
pub(crate) fn codec_options(a: &CompressArgs, ndim: usize) -> Result<CodecOptions> {
    let mut opts = CodecOptions::new(a.profile.transform(a.transform)?, a.error_bound);
    opts.rans_chunk = a.rans_chunk;
    if let Some(b) = &a.brick {
        opts.brick = Some(match (b.len(), ndim) {
            (1, 3) => [b[0]; 3],
            (1, 2) => [1, b[0], b[0]],
            (3, 3) => [b[0], b[1], b[2]],
            (2, 2) => [1, b[0], b[1]],
            _ => bail!("--brick {b:?}: give one extent, or one per axis of the {ndim}-D input"),
        });
    }
    Ok(opts)
}

type Gpus = Vec<std::sync::Arc<multires_cuda::Gpu>>;

pub fn compress(a: CompressArgs) -> Result<()> {
    // A missing input is reported before any device is probed.
    if let Err(why) = std::fs::metadata(&a.input) {
        return Err(io::IoError::Open {
            path: a.input.display().to_string(),
            why,
        }
        .into());
    }
    let mut outputs = Vec::new();
    if let Some(o) = &a.output {
        outputs.push(crate::paths::Output::new(o, "-o", &["mrz"]));
    }
    if let Some(p) = &a.plot {
        outputs.push(crate::paths::Output::new(p, "--plot", &["png"]));
    }
    crate::paths::check(&[&a.input], &outputs)?;
    let elem = npy_elem(&a)?;
    let mut gpus = codec_gpus(&a)?;
    if gpus.is_some() {
        if a.error_bound == ErrorBound::Lossless {
            gpus = on_cpu(a.device, "lossless coding")?;
        } else if let Some(e) = elem {
            gpus = on_cpu(a.device, &format!("coding {} values", e.name()))?;
        }
    }
    // A float32 file for the GPU goes straight into page-locked memory,
    // which the GPUs read at the link's rate (ordinary memory must first
    // be copied into pinned buffers by the host). --gpu-mem-limit keeps
    // the batched path it asks for.
    if let (Some(g), None, None) = (&gpus, a.gpu_mem_limit, a.seed_thresholds) {
        if let Some(f) = float32_file(&a)? {
            if (2..=3).contains(&f.shape.len()) {
                if let Some(done) = compress_page_locked(&a, &f, g)? {
                    return Ok(done);
                }
            }
        }
    }
    // On the CPU a float32 file is coded where it lies (memory-mapped): no
    // copy of the field in ordinary memory, and it may be larger than RAM.
    let mapped = match (&gpus, a.seed_thresholds, &a.plot) {
        (None, None, None) if a.shape.is_none() || a.raw.is_some() => mapped_input(&a)?,
        _ => None,
    };
    let (read, stored_size, read_shape) = match mapped {
        Some(_) => (None, None, None),
        None => {
            let (v, size, shape) = read_volume(&a, elem)?;
            (Some(v), Some(size), Some(shape))
        }
    };
    if let (Some(t), Some(v)) = (a.seed_thresholds, &read) {
        return seed_table(&a, v, t);
    }
    let (v, shape) = match (&mapped, &read, read_shape) {
        (Some((m, shape)), _, _) => {
            let coded = codec::coded_shape(shape)?;
            let v = codec::FieldView::of(&coded, m.values())
                .with_context(|| format!("{}", a.input.display()))?;
            (v, shape.clone())
        }
        (None, Some(v), Some(shape)) => (v.view(), shape),
        _ => bail!("{}: no values were read", a.input.display()),
    };
    plot_fits(&a, shape.len())?;
    let out = a.output.as_ref().context("--output is required")?;
    let mut opts = codec_options(&a, v.ndim)?;
    if shape != v.info().shape() {
        opts.axes = Some(shape.clone());
    }
    opts.elem = elem;
    let grid_len = opts.grid(v.dims)?.len();
    let bar = crate::progress::Bar::new(grid_len as u64, "compress");
    let t = Instant::now();
    let (bytes, s, run) = match (&gpus, &read) {
        (Some(g), Some(field)) => {
            let progress = |d| bar.update(d, grid_len);
            match multires_cuda::codec::compress(field, &opts, g, a.gpu_mem_limit, &progress) {
                Ok((b, s, r)) => (Mrz::Parts(b), s, Some(r)),
                // The GPU codes finite fields, and says so in its range's
                // pass, before any coding; the CPU codec keeps NaN and
                // infinities exactly.
                Err(multires_cuda::CudaError::Codec(codec::CodecError::NonFinite { .. })) => {
                    on_cpu::<()>(a.device, "a field with NaN or infinities")?;
                    let (b, s) = codec::compress_view(v, &opts, &progress)?;
                    (Mrz::Joined(b), s, None)
                }
                Err(e) => return Err(anyhow::Error::from(e).context("compressing on the GPU")),
            }
        }
        _ => {
            let (b, s) = codec::compress_view(v, &opts, &|d| bar.update(d, grid_len))?;
            (Mrz::Joined(b), s, None)
        }
    };
    let secs = t.elapsed().as_secs_f64();
    bar.finish();
    io::write_atomic(out, |w| bytes.write_to(w).map_err(|e| e.to_string()))?;
    let info = v.info();
    // Against the input as it was stored (a uint8 image is 1 byte a value).
    let raw = info.len() * stored_size.unwrap_or(info.dtype.size());
    let name = elem.map_or(info.dtype.name(), |e| e.name());
    report(
        (&a, &opts, grid_len),
        (&shape, name),
        (&s, secs, raw),
        run.as_ref().zip(gpus.as_ref()),
    );
    if let (Some(p), Some(field)) = (&a.plot, &read) {
        // All outputs or none: a failed figure takes the .mrz with it.
        if let Err(e) = plot_decoded(p, field, bytes.into_vec(), out, s.abs_bound) {
            let _ = std::fs::remove_file(out);
            return Err(e.context(format!(
                "--plot {}; {} was removed",
                p.display(),
                out.display()
            )));
        }
    }
    Ok(())
}

/// A compressed file: joined (the CPU's) or the GPU's parts, written out
/// one after another without joining them.
enum Mrz {
    Joined(Vec<u8>),
    Parts(multires_cuda::codec::GpuMrz),
}

impl Mrz {
    fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self {
            Mrz::Joined(b) => w.write_all(b),
            Mrz::Parts(p) => p.write_to(w),
        }
    }

    fn into_vec(self) -> Vec<u8> {
        match self {
            Mrz::Joined(b) => b,
            Mrz::Parts(p) => p.to_vec(),
        }
    }
}

/// `--plot`: the field beside its decoded self (the .mrz `bytes` written
/// to `out`) and the error.
fn plot_decoded(p: &Path, v: &Volume, bytes: Vec<u8>, out: &Path, bound: f64) -> Result<()> {
    let mut r = MrzReader::from_bytes(bytes, &out.display().to_string())?;
    let back = codec::decompress(&mut r, None, &|_| {})?;
    plot_before_after(p, v, &back.data.to_f64(), bound)?;
    println!("plot: {}", p.display());
    Ok(())
}

/// `--plot` draws a 2-D field only: refused before any coding or writing.
fn plot_fits(a: &CompressArgs, ndim: usize) -> Result<()> {
    match (&a.plot, ndim) {
        (Some(p), n) if n != 2 => bail!(
            "--plot {}: the before/after/error plot draws 2-D fields, and {} is {n}-D; \
             leave out --plot, or give a 2-D field",
            p.display(),
            a.input.display()
        ),
        _ => Ok(()),
    }
}

/// Compresses a float32 file on the GPUs from page-locked memory it is
/// read into; None (after a note) when that memory cannot be had, for the
/// ordinary path.
fn compress_page_locked(a: &CompressArgs, f: &io::NpyHeader, gpus: &Gpus) -> Result<Option<()>> {
    use multires_cuda::codec::{compress_pinned, FillError, PinnedField};
    plot_fits(a, f.shape.len())?;
    let out = a.output.as_ref().context("--output is required")?;
    let p = &a.input;
    let file = std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?;
    let t_read = Instant::now();
    let read = |first: usize, d: &mut [f32]| io::read_f32_npy_at(p, &file, f, first, d);
    let field = match PinnedField::filled(&gpus[0], &f.shape, &read) {
        Ok(field) => field,
        Err(FillError::Fill(e)) => return Err(e.into()),
        Err(FillError::Cuda(e)) => {
            eprintln!(
                "note: {e:#}; reading {} into ordinary memory instead (slower)",
                p.display()
            );
            return Ok(None);
        }
    };
    if field.first_nonfinite().is_some() {
        // The ordinary path codes it on the CPU (after a note), or refuses --device cuda.
        return Ok(None);
    }
    let read_s = t_read.elapsed().as_secs_f64();
    let opts = codec_options(a, f.shape.len())?;
    let grid_len = opts.grid(field.info.dims)?.len();
    let bar = crate::progress::Bar::new(grid_len as u64, "compress");
    let t = Instant::now();
    let (bytes, s, run) = compress_pinned(&field, &opts, gpus, &|d| bar.update(d, grid_len))
        .context("compressing on the GPU")?;
    let secs = t.elapsed().as_secs_f64();
    bar.finish();
    io::write_atomic(out, |w| bytes.write_to(w).map_err(|e| e.to_string()))?;
    report(
        (a, &opts, grid_len),
        (&f.shape, "float32"),
        (&s, secs, 4 * field.info.len()),
        Some((&run, gpus)),
    );
    println!(
        "read: {} into page-locked memory in {:.2} s ({:.0} MB/s)",
        p.display(),
        read_s,
        (4 * field.info.len()) as f64 / read_s / 1e6
    );
    if let Some(pl) = &a.plot {
        let v = Volume::of(&f.shape, Values::F32(field.as_slice().to_vec()))?;
        plot_decoded(pl, &v, bytes.to_vec(), out, s.abs_bound)?;
    }
    Ok(Some(()))
}

/// The lines `compress` prints: the result, and how the GPUs ran.
fn report(
    (a, opts, grid_len): (&CompressArgs, &CodecOptions, usize),
    (shape, dtype): (&[usize], &str),
    (s, secs, raw): (&codec::CodecStats, f64, usize),
    run: Option<(&multires_cuda::codec::GpuRun, &Gpus)>,
) {
    let out = a.output.as_deref().unwrap_or(Path::new("-"));
    let ratio = raw as f64 / s.bytes.max(1) as f64;
    println!(
        "compress: {:?} {} -> {} ({} bytes), {} {}, bound {} (absolute {:.3e}): ratio {:.2}, max error {:.3e}, PSNR {}{:.1} dB, {} outliers stored, {:.2} s ({:.0} MB/s)",
        shape,
        dtype,
        out.display(),
        s.bytes,
        opts.transform,
        if grid_len == 1 { "1 brick".to_string() } else { format!("{grid_len} bricks") },
        a.error_bound,
        s.abs_bound,
        ratio,
        s.max_error,
        if s.psnr_bound { "at least " } else { "" },
        s.psnr,
        s.outliers,
        secs,
        raw as f64 / secs / 1e6
    );
    if ratio < 1.0 {
        let values: usize = shape.iter().product();
        let why = if opts.bound == ErrorBound::Lossless {
            "Lossless coding keeps every bit, and these values barely predict one another \
             (noise in the low mantissa bits is incompressible); a bound such as --error-bound rel:1e-6 \
             codes them"
                .to_string()
        } else if s.abs_bound == 0.0 {
            format!(
                "A zero bound keeps every value bit for bit, and the wavelet misses most {} values by an ulp or so, \
                 so {} values are stored whole; a bound such as --error-bound rel:1e-9 codes them",
                dtype,
                s.outliers
            )
        } else if s.outliers.saturating_mul(4) >= values {
            format!(
                "The bound {:.3e} is too tight for the wavelet's codes (at most 2^{} steps of twice the bound), \
                 so {} values are stored whole. A bound of about 1e-9 of the values' magnitude or more codes them \
                 (e.g. --error-bound rel:1e-9)",
                s.abs_bound,
                multires::codec::rice::MAX_INT.log2(),
                s.outliers
            )
        } else {
            "A small field's headers and brick index can outweigh its values, and the input's values \
             are narrower than the codec's float values"
                .to_string()
        };
        eprintln!(
            "note: the file ({} bytes) is larger than the input ({raw} bytes of values). {why}",
            s.bytes
        );
    }
    if let Some((r, gpus)) = run {
        println!(
            "device: {} GPU(s) ({}), {} slot(s) each, {} batch(es) of up to {} bricks; slot time putting bricks on the device {:.3} s, coding {:.3} s",
            r.gpus,
            gpus.first().map_or(String::new(), |g| g.info.name.clone()),
            r.slots,
            r.batches,
            r.max_bricks_per_batch,
            r.fill_s,
            r.code_s
        );
    }
}

/// Bytes a size of the seed's table holds at once: the resampled image
/// as u8 and float64, the transform's float64 copy and the survivors.
const SEED_BYTES_PER_PIXEL: u64 = 1 + 8 + 8 + 16;

/// The seed's threshold must be a finite number >= 0 and every size must
/// fit in memory (a size of 10^6 is 10^12 pixels).
fn check_seed_args(t: f64, sizes: &[usize], memory: u64) -> Result<()> {
    if !(t.is_finite() && t >= 0.0) {
        bail!("--seed-thresholds {t}: give a finite threshold >= 0 (grey levels, e.g. 100)");
    }
    for &n in sizes {
        let need = (n as u64)
            .saturating_mul(n as u64)
            .saturating_mul(SEED_BYTES_PER_PIXEL);
        if n == 0 || n > u32::MAX as usize || need > memory {
            bail!(
                "--seed-sizes {n}: a {n}x{n} image needs about {} of memory, and {} is available; give sizes from 1 to {}",
                multires::memory::human_bytes(need),
                multires::memory::human_bytes(memory),
                ((memory / SEED_BYTES_PER_PIXEL) as f64).sqrt() as u64
            );
        }
    }
    Ok(())
}

/// The seed's table: per size, values, survivors, ratio, forward and inverse times.
fn seed_table(a: &CompressArgs, v: &Volume, t: f64) -> Result<()> {
    if v.ndim != 2 {
        bail!(
            "--seed-thresholds runs the seed's 2-D experiment; {} is {}-D",
            a.input.display(),
            v.ndim
        );
    }
    let (h, w) = (v.dims[1], v.dims[2]);
    check_seed_args(
        t,
        a.seed_sizes.as_deref().unwrap_or(&[]),
        multires::memory::default_limit(),
    )?;
    let sizes: Vec<Option<usize>> = match &a.seed_sizes {
        Some(s) => s.iter().map(|&n| Some(n)).collect(),
        None => vec![None],
    };
    println!("The seed's experiment: Haar, thresholds {t} (finest level), {}, {} ...; survivors packed by Morton key", t / 2.0, t / 4.0);
    println!();
    println!("| dimensions | memory (float32) | forward (s) | inverse (s) | survivors | compression | PSNR (dB) |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut first = None;
    for n in sizes {
        let (ny, nx, img) = match n {
            None => (h, w, v.data.to_f64()),
            Some(0) => bail!("--seed-sizes: sizes must be at least 1"),
            Some(n) => {
                let src = image::GrayImage::from_raw(
                    w as u32,
                    h as u32,
                    v.data
                        .to_f64()
                        .iter()
                        .map(|&x| x.clamp(0.0, 255.0) as u8)
                        .collect(),
                )
                .context("the image does not fit in memory")?;
                let r = image::imageops::resize(
                    &src,
                    n as u32,
                    n as u32,
                    image::imageops::FilterType::Triangle,
                );
                (n, n, r.pixels().map(|p| p.0[0] as f64).collect())
            }
        };
        let run = codec::seed::run(&img, ny, nx, t);
        println!(
            "| {ny} x {nx} | {:.1} MB | {:.3} | {:.3} | {} | {:.2}x | {:.1} |",
            (ny * nx * 4) as f64 / (1 << 20) as f64,
            run.forward_s,
            run.inverse_s,
            run.survivors,
            run.ratio,
            run.psnr
        );
        if first.is_none() {
            first = Some((ny, nx, img, run));
        }
    }
    if let (Some(p), Some((ny, nx, img, run))) = (&a.plot, first) {
        let vol = Volume::new(&[ny, nx], img, DType::F32)?;
        plot_before_after(p, &vol, &run.rebuilt, run.max_error.max(1e-12))?;
        println!("\nplot: {} (first size)", p.display());
    }
    Ok(())
}

/// Original, decoded and |error| side by side (the seed's Figure 1): grey
/// over the original's range; the error from black (0) to white (the bound).
fn plot_before_after(path: &Path, v: &Volume, back: &[f64], bound: f64) -> Result<()> {
    if v.ndim != 2 {
        bail!("--plot draws 2-D fields; this one is {}-D", v.ndim);
    }
    let title = format!(
        "{} x {} field: original, decoded, and the error against the bound {bound:.3e}",
        v.dims[1], v.dims[2]
    );
    multires::plot::before_after_png(
        &v.data.to_f64(),
        back,
        (v.dims[1], v.dims[2]),
        bound,
        path,
        &title,
    )?;
    Ok(())
}

pub fn decompress(a: DecompressArgs) -> Result<()> {
    crate::paths::check(
        &[&a.input],
        &[crate::paths::Output::new(&a.output, "-o", &["npy", "png"])],
    )?;
    let mut r = MrzReader::open(&a.input)?;
    let h = r.header().clone();
    // The box asked for in the field's own axes (1 to 4), and the box of
    // the coded grid that holds it.
    let shape = h.shape();
    let wanted = match &a.region {
        Some(s) => codec::parse_box(s, &shape).map_err(anyhow::Error::msg)?,
        None => shape.iter().map(|&n| (0, n)).collect(),
    };
    let (coded, exact) = codec::coded_box(&wanted, &shape);
    let region = a.region.as_ref().map(|_| coded);
    let out_shape: Vec<usize> = wanted.iter().map(|(s, e)| e - s).collect();
    let ext = a
        .output
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    if ext.as_deref() == Some("png") && out_shape.len() != 2 {
        bail!(
            "{}: PNG holds 2-D fields; this is {}-D (write .npy)",
            a.output.display(),
            out_shape.len()
        );
    }
    if a.level > 0 {
        return decompress_level(&a, &mut r, (&wanted, &shape), ext.as_deref());
    }
    let n = r.grid().len();
    let mut gpus = select_gpus(a.device, a.gpus.as_deref(), a.gpus.is_some())?;
    if gpus.is_some() && h.is_lossless() {
        gpus = on_cpu(a.device, "decoding a lossless file")?;
    }
    let float_out = !h.elem.is_integer() && exact;
    // Every path but the CPU's .npy (decoded into the file's pages, whose
    // room the writer checks) holds the output in memory.
    let out_values: u64 = coded.iter().map(|&(s, e)| (e - s) as u64).product();
    let out_bytes = out_values.saturating_mul(h.dtype.size() as u64);
    let memory = multires::memory::default_limit();
    let mapped = gpus.is_none() && ext.as_deref() == Some("npy") && float_out;
    if !mapped && out_bytes > memory {
        bail!(
            "{}: the decoded {:?} {} field needs {} of memory, and {} is available; decode a part with --region{}",
            a.input.display(),
            out_shape,
            h.elem.name(),
            multires::memory::human_bytes(out_bytes),
            multires::memory::human_bytes(memory),
            if ext.as_deref() == Some("npy") && float_out {
                ", or decode on the CPU (--device cpu), which writes the .npy in place"
            } else {
                ""
            }
        );
    }
    let bar = crate::progress::Bar::new(n as u64, "decompress");
    let t = Instant::now();
    // A whole float32 field for an .npy: decoded by the GPUs into
    // page-locked memory (copied down at the link's rate), written from
    // there on every core.
    if let (Some(g), None, Some("npy"), Elem::F32) = (&gpus, region, ext.as_deref(), h.elem) {
        use multires_cuda::codec::{decompress_pinned, PinnedField};
        match PinnedField::zeros(&g[0], &h.coded_shape()) {
            Ok(mut field) => {
                decompress_pinned(&mut r, &mut field, g, &|d| bar.update(d, n))
                    .context("decompressing on the GPU")?;
                bar.finish();
                let secs = t.elapsed().as_secs_f64();
                let t_write = Instant::now();
                io::write_f32_npy(&a.output, &shape, field.as_slice())?;
                let written = format!(" (written in {:.2} s)", t_write.elapsed().as_secs_f64());
                report_decompressed(&a, &shape, h.elem, secs, &written);
                return Ok(());
            }
            Err(e) => eprintln!("note: {e:#}; decoding into ordinary memory instead (slower)"),
        }
    }
    // On the CPU an .npy is decoded straight into the output file's pages:
    // no copy of the field in ordinary memory (a field larger than RAM can
    // be written) and no pass copying it into the file.
    if mapped {
        let progress = |d| bar.update(d, n);
        match h.dtype {
            DType::F32 => io::write_npy_mapped::<f32, anyhow::Error>(&a.output, &out_shape, |o| {
                Ok(codec::decompress_into(&mut r, region, o, &progress)?)
            })?,
            DType::F64 => io::write_npy_mapped::<f64, anyhow::Error>(&a.output, &out_shape, |o| {
                Ok(codec::decompress_into(&mut r, region, o, &progress)?)
            })?,
        }
        bar.finish();
        report_decompressed(&a, &out_shape, h.elem, t.elapsed().as_secs_f64(), "");
        return Ok(());
    }
    let v = match &gpus {
        None => codec::decompress(&mut r, region, &|d| bar.update(d, n))?,
        Some(g) => multires_cuda::codec::decompress(&mut r, region, g, &|d| bar.update(d, n))
            .context("decompressing on the GPU")?,
    };
    bar.finish();
    let secs = t.elapsed().as_secs_f64();
    let mut data = v.data;
    if !exact {
        data = pick_planes(
            data,
            &codec::box_planes(&wanted, &shape),
            v.dims[1] * v.dims[2],
        );
    }
    if ext.as_deref() == Some("png") {
        write_grey_png(
            &a.output,
            &data,
            (out_shape[0], out_shape[1]),
            h.value_range,
        )?;
    } else {
        write_elem_npy(&a.output, &out_shape, data, h.elem)?;
    }
    report_decompressed(&a, &out_shape, h.elem, secs, "");
    Ok(())
}

/// `decompress --level K`: the coarse view of the box `wanted` of a field
/// of `shape` (1 to 3 axes), on the CPU.
fn decompress_level(
    a: &DecompressArgs,
    r: &mut MrzReader,
    (wanted, shape): (&[(usize, usize)], &[usize]),
    ext: Option<&str>,
) -> Result<()> {
    let h = r.header().clone();
    if shape.len() == 4 {
        bail!(
            "--level {}: coarse views are of 1-D to 3-D fields, and {} is 4-D {:?}; decode it whole or by --region",
            a.level,
            a.input.display(),
            shape
        );
    }
    if a.device == Device::Cuda || a.gpus.is_some() {
        on_cpu::<()>(a.device, "a coarse view (--level)")?;
    }
    let (coded, _) = codec::coded_box(wanted, shape);
    let n = codec::bricks_in(&r.grid(), &coded).len();
    let bar = crate::progress::Bar::new(n as u64, "decompress");
    let t = Instant::now();
    let (v, pos) = codec::decompress_coarse(r, Some(coded), a.level, &|d| bar.update(d, n))?;
    bar.finish();
    let secs = t.elapsed().as_secs_f64();
    let out_shape: Vec<usize> = pos[3 - shape.len()..].iter().map(|p| p.len()).collect();
    if ext == Some("png") {
        write_grey_png(
            &a.output,
            &v.data,
            (out_shape[0], out_shape[1]),
            h.value_range,
        )?;
    } else {
        write_elem_npy(&a.output, &out_shape, v.data, h.elem)?;
    }
    report_decompressed(a, &out_shape, h.elem, secs, "");
    let brick = &h.brick[3 - shape.len()..];
    let within = if h.is_lossless() {
        "equal to the original there, bit for bit".to_string()
    } else if h.elem.is_integer() {
        format!(
            "within {} of the original there",
            h.bound.absolute(0.0).floor()
        )
    } else {
        format!(
            "within {:.3e} of the original there (the original decimated to these points)",
            h.abs_bound
        )
    };
    println!(
        "level {}: every {}th point of each brick of {:?} per axis, from its origin (first points {:?}); each value {within}",
        a.level,
        1usize << a.level,
        brick,
        pos[3 - shape.len()..]
            .iter()
            .map(|p| p.iter().take(3).copied().collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
    Ok(())
}

/// A 2-D field of `rows` x `cols` as a grey PNG, black to white over the
/// stored value range `(lo, hi)`.
fn write_grey_png(
    path: &Path,
    data: &Values,
    (rows, cols): (usize, usize),
    (lo, hi): (f64, f64),
) -> Result<()> {
    let span = (hi - lo).max(1e-300);
    let grey: Vec<u8> = data
        .to_f64()
        .iter()
        .map(|&x| ((x - lo) / span * 255.0).round().clamp(0.0, 255.0) as u8)
        .collect();
    io::write_png(path, &grey, cols as u32, rows as u32, image::ColorType::L8)?;
    Ok(())
}

/// The planes `planes` (each `plane` values) of `data`, in that order.
fn pick_planes(data: Values, planes: &[usize], plane: usize) -> Values {
    fn pick<T: Copy>(d: &[T], planes: &[usize], plane: usize) -> Vec<T> {
        planes
            .iter()
            .flat_map(|&p| d[p * plane..(p + 1) * plane].iter().copied())
            .collect()
    }
    match data {
        Values::F32(d) => Values::F32(pick(&d, planes, plane)),
        Values::F64(d) => Values::F64(pick(&d, planes, plane)),
    }
}

/// Decoded values written as an .npy of the field's element type: floats
/// as stored, integers rounded to the type (they decode within its bound).
pub(crate) fn write_elem_npy(path: &Path, shape: &[usize], data: Values, elem: Elem) -> Result<()> {
    macro_rules! ints {
        ($t:ty, $d:expr) => {{
            let v: Vec<$t> = $d
                .to_f64()
                .iter()
                .map(|&x| codec::integer_value(x, elem) as $t)
                .collect();
            io::write_npy(path, &ndarray::ArrayD::from_shape_vec(shape.to_vec(), v)?)?
        }};
    }
    match (elem, data) {
        (Elem::F32, Values::F32(d)) => io::write_f32_npy(path, shape, &d)?,
        (Elem::F64, Values::F64(d)) => {
            io::write_npy(path, &ndarray::ArrayD::from_shape_vec(shape.to_vec(), d)?)?
        }
        (Elem::U8, data) => ints!(u8, data),
        (Elem::U16, data) => ints!(u16, data),
        (Elem::I16, data) => ints!(i16, data),
        (Elem::I32, data) => ints!(i32, data),
        (e, _) => bail!(
            "{}: a file of {} values decoded as another precision",
            path.display(),
            e.name()
        ),
    }
    Ok(())
}

/// The line a decompression ends with (`extra` after the time).
fn report_decompressed(a: &DecompressArgs, shape: &[usize], elem: Elem, secs: f64, extra: &str) {
    println!(
        "decompress: {} -> {} {:?} {} in {:.2} s{extra}",
        a.input.display(),
        a.output.display(),
        shape,
        elem.name(),
        secs
    );
}

pub fn info(a: InfoArgs) -> Result<()> {
    let r = MrzReader::open(&a.input)?;
    let h = r.header();
    let sizes = r.brick_sizes();
    let grid = r.grid();
    let (mn, mx) = sizes
        .iter()
        .fold((u64::MAX, 0), |(a, b), &s| (a.min(s), b.max(s)));
    println!(
        "file:       {} ({} bytes, .mrz version {})",
        a.input.display(),
        r.file_len(),
        r.version()
    );
    println!(
        "field:      {:?} {}{}",
        h.shape(),
        h.elem.name(),
        if h.shape() != h.coded_shape() {
            format!(" (coded as {:?})", h.coded_shape())
        } else {
            String::new()
        }
    );
    println!(
        "values:     {:.6e} to {:.6e}",
        h.value_range.0, h.value_range.1
    );
    println!(
        "transform:  {}",
        match h.transform {
            Lifting::Interp =>
                "interp (interpolating wavelet in closed loop), rANS-coded".to_string(),
            Lifting::Lorenzo =>
                "lorenzo (the fast profile: blocks of 64 values at a fixed bit length)".to_string(),
            t => format!(
                "{t} lifting, up to {} levels per brick, Rice-coded",
                codec::MAX_LEVELS
            ),
        }
    );
    if h.is_lossless() {
        println!("bound:      lossless (every bit kept)");
    } else if h.elem.is_integer() {
        println!(
            "bound:      {} (integers within {})",
            h.bound,
            h.bound.absolute(0.0).floor()
        );
    } else {
        println!(
            "bound:      {} (every finite value within {:.3e}; NaN and infinities exact)",
            h.bound, h.abs_bound
        );
    }
    println!(
        "ratio:      {:.2} ({} bytes raw)",
        h.raw_bytes() as f64 / r.file_len() as f64,
        h.raw_bytes()
    );
    println!(
        "bricks:     {} of {:?} ({:?} on the grid), {} to {} bytes each",
        grid.len(),
        &h.brick[3 - h.ndim..],
        &grid.counts()[3 - h.ndim..],
        mn,
        mx
    );
    Ok(())
}

pub fn make_field(a: MakeFieldArgs) -> Result<()> {
    crate::paths::check(&[], &[crate::paths::Output::new(&a.output, "-o", &["npy"])])?;
    if a.size < 2 || a.size > 2048 {
        bail!("--size {}: give 2 to 2048 points per axis", a.size);
    }
    let t = Instant::now();
    let v = codec::fields::make(a.kind, a.size, !a.two_d, a.seed);
    let shape = if a.two_d {
        vec![a.size; 2]
    } else {
        vec![a.size; 3]
    };
    io::write_f32_npy(&a.output, &shape, &v)?;
    println!(
        "make-field: {:?} {:?} float32 (seed {}) -> {} in {:.2} s",
        a.kind,
        shape,
        a.seed,
        a.output.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
