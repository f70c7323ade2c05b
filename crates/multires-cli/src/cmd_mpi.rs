//! `compress --mpi` and `decompress --mpi`: one field across the ranks of
//! `mpirun`, each rank a slab of whole brick layers, one file written by
//! all of them with MPI-IO (crates/multires-mpi).
use crate::cmd_codec::{codec_options, npy_elem, CompressArgs, DecompressArgs};
use anyhow::{bail, Context, Result};
use mpi::traits::*;
use multires::backend::Device;
use multires::codec::{self, DType, Elem, ErrorBound, MrzReader, Values, Volume};
use multires::io::{self, RawType};
use multires_mpi::{agree, slab_of, MpiError, MpiFile};
use rayon::prelude::*;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// What a rank reads of the input: its shape, type and where its values start.
struct Input {
    shape: Vec<usize>,
    dtype: DType,
    offset: u64,
}

fn input_of(a: &CompressArgs) -> Result<Input> {
    let p = &a.input;
    match (a.raw, &a.shape) {
        (Some(raw), Some(shape)) => Ok(Input {
            shape: shape.clone(),
            dtype: if raw == RawType::F32 {
                DType::F32
            } else {
                DType::F64
            },
            offset: 0,
        }),
        (None, None) => {
            let h = io::read_npy_header(p)?;
            let dtype = if h.is_f32_c_order() {
                DType::F32
            } else if h.is_f64_c_order() {
                DType::F64
            } else {
                bail!(
                    "{}: --mpi reads little-endian C-order float32 or float64 .npy files (or raw with --raw and --shape); this one is {} ({})",
                    p.display(),
                    h.descr,
                    if h.fortran_order { "Fortran order" } else { "C order" }
                );
            };
            Ok(Input {
                shape: h.shape.clone(),
                dtype,
                offset: h.data_offset,
            })
        }
        _ => bail!("--mpi takes an .npy, or raw samples with both --raw and --shape"),
    }
}

/// The rank's planes [z0, z1) of the coded field, read from the shared file.
fn read_slab(
    path: &Path,
    inp: &Input,
    coded: &[usize],
    (z0, z1): (usize, usize),
) -> Result<Values> {
    // Planes along the split axis are contiguous: the axes before it are 1.
    let dims = codec::FieldInfo::new(coded, inp.dtype)?.dims;
    let plane: usize = dims[multires_mpi::split_axis(dims) + 1..].iter().product();
    let size = inp.dtype.size();
    let n = (z1 - z0) * plane;
    let f = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let at = inp.offset + (z0 * plane * size) as u64;
    let what = || {
        format!(
            "{}: planes {z0}..{z1} ({} bytes at {at}) cannot be read: is the file as long as its shape says?",
            path.display(),
            n * size
        )
    };
    Ok(match inp.dtype {
        DType::F32 => Values::F32(read_le_at(&f, at, n).with_context(what)?),
        DType::F64 => Values::F64(read_le_at(&f, at, n).with_context(what)?),
    })
}

/// `n` little-endian values at byte `at` of `f`, read straight into the
/// typed vector by pieces on all cores: one pass over the memory instead
/// of a byte buffer and a converted copy (a 4 GB slab was read at 1.1 GB/s
/// that way on the H200's host; this reads it at the page cache's rate).
fn read_le_at<T: bytemuck::Pod + Send + LittleEndian>(
    f: &std::fs::File,
    at: u64,
    n: usize,
) -> std::io::Result<Vec<T>> {
    const PIECE: usize = 1 << 20;
    let size = std::mem::size_of::<T>();
    let mut v = multires::memory::zeroed_vec::<T>(n);
    v.par_chunks_mut(PIECE).enumerate().try_for_each(|(i, c)| {
        f.read_exact_at(bytemuck::cast_slice_mut(c), at + (i * PIECE * size) as u64)?;
        if cfg!(target_endian = "big") {
            c.iter_mut().for_each(T::swap_le);
        }
        Ok::<(), std::io::Error>(())
    })?;
    Ok(v)
}

/// Values stored little-endian in the files: swapping a value's bytes
/// takes it from that order to the host's and back (a no-op on a
/// little-endian host).
trait LittleEndian {
    fn swap_le(&mut self);
}

impl LittleEndian for f32 {
    fn swap_le(&mut self) {
        *self = f32::from_bits(u32::from_le(self.to_bits()));
    }
}

impl LittleEndian for f64 {
    fn swap_le(&mut self) {
        *self = f64::from_bits(u64::from_le(self.to_bits()));
    }
}

fn mpi_world() -> Result<mpi::environment::Universe> {
    mpi::initialize()
        .context("MPI could not be initialized (run under mpirun, with an MPI library installed)")
}

/// An error as every rank agrees on it (`agree`), for `?` in the driver.
fn agreed<C: Communicator, T>(world: &C, r: Result<T>) -> Result<T> {
    agree(world, r.map_err(|e| MpiError::Invalid(format!("{e:#}")))).map_err(anyhow::Error::from)
}

/// Ends an MPI command: a failing rank prints why, every rank waits for
/// that (mpirun stops the others at the first nonzero exit, which could
/// lose the message), and the ranks that failed end with status 1 after
/// MPI is finalized.
fn finish(universe: mpi::environment::Universe, r: Result<()>) -> Result<()> {
    let world = universe.world();
    if let Err(e) = &r {
        if !matches!(
            e.downcast_ref::<MpiError>(),
            Some(MpiError::Elsewhere { .. })
        ) {
            eprintln!("error: {e:#}");
        }
    }
    world.barrier();
    drop(universe);
    if r.is_err() {
        std::process::exit(1);
    }
    Ok(())
}

/// This rank's GPU for `device` (None: its CPU cores). The ranks on one
/// host take its GPUs in turn by their rank on that host, so `mpirun -np
/// N` on a host of N GPUs gives each rank its own. Collective: every rank
/// calls it.
fn rank_gpu<C: Communicator>(world: &C, device: Device) -> Result<Option<RankGpu>> {
    let local = world.split_shared(world.rank()).rank() as usize;
    if device == Device::Cpu {
        return Ok(None);
    }
    let count = multires_cuda::device_count();
    if count == 0 {
        if device == Device::Cuda {
            let why = multires_cuda::gpu()
                .err()
                .map_or_else(String::new, |e| format!(" ({e})"));
            bail!("--device cuda: this rank's host has no usable GPU{why}");
        }
        return Ok(None);
    }
    let i = local % count;
    let g = multires_cuda::gpu_at(i).with_context(|| format!("opening GPU {i} for the rank"))?;
    Ok(Some((i, g)))
}

/// A rank's GPU: its ordinal on the host, and the device.
type RankGpu = (usize, Arc<multires_cuda::Gpu>);

/// Where a rank's bricks were coded: a GPU's batch buffers or the CPU's.
enum Payload {
    Gpu(multires_cuda::codec::BatchBytes),
    Cpu(Vec<u8>),
}

impl AsRef<[u8]> for Payload {
    fn as_ref(&self) -> &[u8] {
        match self {
            Payload::Gpu(b) => b.as_ref(),
            Payload::Cpu(v) => v,
        }
    }
}

/// The payloads of a rank's slab `v`, coded on `gpu` (or on the CPU when
/// there is none, and under --device auto when the GPU does not code the
/// slab: NaN or infinities in it); the bytes are the same either way.
fn code_rank_slab(
    v: &Volume,
    opts: &codec::CodecOptions,
    plan: ((f64, f64), f64, [usize; 3]),
    gpu: Option<&RankGpu>,
    (device, first): (Device, usize),
) -> Result<(Vec<multires_mpi::CodedPayload<Payload>>, &'static str), MpiError> {
    if let Some((i, g)) = gpu {
        match multires_cuda::codec::code_slab(v, opts, plan, std::slice::from_ref(g), &|_| {}) {
            Ok(c) => {
                let c = c.into_iter().map(|(p, m, s, o)| (Payload::Gpu(p), m, s, o));
                return Ok((c.collect(), "GPU"));
            }
            Err(multires_cuda::CudaError::Codec(codec::CodecError::NonFinite { .. }))
                if device == Device::Auto => {}
            // Named by its index in the whole field (`first`: the slab's).
            Err(multires_cuda::CudaError::Codec(codec::CodecError::NonFinite { index, value })) => {
                return Err(codec::CodecError::NonFinite {
                    index: first + index,
                    value,
                }
                .into())
            }
            Err(e) => {
                return Err(MpiError::Invalid(format!(
                    "coding the slab on GPU {i}: {e}"
                )))
            }
        }
    }
    let c = codec::code_bricks(v.view(), opts, plan.1, plan.2, &|_| {})?;
    let c = c.into_iter().map(|(p, m, s, o)| (Payload::Cpu(p), m, s, o));
    Ok((c.collect(), "CPU"))
}

pub fn compress(a: CompressArgs) -> Result<()> {
    let universe = mpi_world()?;
    let r = compress_on(&universe.world(), a);
    finish(universe, r)
}

pub fn decompress(a: &DecompressArgs) -> Result<()> {
    let universe = mpi_world()?;
    let r = decompress_on(&universe.world(), a);
    finish(universe, r)
}

fn compress_on(world: &mpi::topology::SimpleCommunicator, a: CompressArgs) -> Result<()> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let out = a.output.clone().context("--output is required")?;
    let prepared = (|| -> Result<_> {
        if a.seed_thresholds.is_some() || a.plot.is_some() {
            bail!("--mpi codes the field; --seed-thresholds and --plot run in one process");
        }
        if a.gpus.is_some() || a.gpu_mem_limit.is_some() {
            bail!("--mpi codes each rank's slab on one GPU (its host's GPUs in turn) or its CPU cores; drop --gpus and --gpu-mem-limit");
        }
        if a.device == Device::Cuda && a.error_bound == ErrorBound::Lossless {
            bail!("--device cuda: lossless coding runs on the CPU; use --device cpu or auto");
        }
        let inp = input_of(&a)?;
        let coded = codec::coded_shape(&inp.shape)?;
        let mut opts = codec_options(&a, coded.len())?;
        if coded != inp.shape {
            opts.axes = Some(inp.shape.clone());
        }
        opts.elem = npy_elem(&a)?;
        if opts.elem.is_some() {
            bail!("--mpi reads float32 and float64 fields; code integer fields in one process");
        }
        let info = codec::FieldInfo::new(&coded, inp.dtype)?;
        let brick = multires_mpi::brick_of(info.dims, &opts)?;
        let layers = multires_mpi::layers(info.dims, brick);
        if layers < size {
            bail!(
                "the field has {layers} brick layers of {} planes along its first axis, fewer than the {size} ranks: run at most {layers} ranks, or give a thinner --brick",
                brick[multires_mpi::split_axis(info.dims)]
            );
        }
        Ok((inp, coded, opts, info, brick))
    })();
    let (inp, coded, opts, info, brick) = agreed(world, prepared)?;
    let gpu = rank_gpu(world, a.device);
    let mut gpu = agreed(world, gpu)?;
    // Lossless coding runs on the CPU; the fast profile's GPU coder takes a
    // whole field on one GPU.
    let on_cpu = if a.error_bound == ErrorBound::Lossless {
        Some("lossless coding runs on the CPU")
    } else if opts.transform == codec::Lifting::Lorenzo {
        Some("the fast profile codes slabs over ranks on the CPU")
    } else {
        None
    };
    if let (Some(why), true) = (on_cpu, gpu.is_some()) {
        if rank == 0 {
            eprintln!("note: {why}");
        }
        gpu = None;
    }
    let (z0, z1) = slab_of(info.dims, brick, rank, size);
    let t_read = std::time::Instant::now();
    // The slab's shape: the coded shape with its split axis cut to the slab.
    let axis = multires_mpi::split_axis(info.dims) - (3 - coded.len());
    let mut slab_shape = coded.clone();
    slab_shape[axis] = z1 - z0;
    let values = agreed(world, read_slab(&a.input, &inp, &coded, (z0, z1)))?;
    let read_s = t_read.elapsed().as_secs_f64();
    let slab = agreed(
        world,
        Volume::of(&slab_shape, values).map_err(anyhow::Error::from),
    )?;
    let held = multires_mpi::Slab {
        shape: &slab_shape,
        dtype: inp.dtype,
        range: multires_mpi::local_range(slab.view()),
        z0,
    };
    let first = z0 * slab.view().info().len() / (z1 - z0);
    let mut on = "CPU";
    let run = multires_mpi::compress_slab_with(world, held, &coded, &opts, &out, |range, e, b| {
        let (c, w) = code_rank_slab(&slab, &opts, (range, e, b), gpu.as_ref(), (a.device, first))?;
        on = w;
        Ok(c)
    })?;
    let on = match (&gpu, on) {
        (Some((i, _)), "GPU") => format!("GPU {i}"),
        _ => "CPU".to_string(),
    };
    let s = &run.stats;
    let per_rank = format!(
        "rank {rank} ({on}): planes {z0}..{z1}, {} bricks, {} payload bytes, read {:.3} s, coded {:.3} s, wrote {:.3} s",
        run.bricks, run.payload_bytes, read_s, run.code_s, run.write_s
    );
    let lines = gather_lines(world, &per_rank);
    if rank == 0 {
        println!(
            "compress --mpi: {:?} {} -> {} ({} bytes) on {size} ranks, bound {} (absolute {:.3e}): ratio {:.2}, max error {:.3e}, {} outliers stored",
            inp.shape,
            inp.dtype.name(),
            out.display(),
            s.bytes,
            a.error_bound,
            s.abs_bound,
            s.ratio,
            s.max_error,
            s.outliers
        );
        for l in lines {
            println!("  {l}");
        }
    }
    Ok(())
}

/// Every rank's line, in rank order, on rank 0 (empty elsewhere).
fn gather_lines<C: Communicator>(world: &C, line: &str) -> Vec<String> {
    let bytes: Vec<u64> = line.bytes().map(u64::from).collect();
    let all = multires_mpi::all_gather(world, &[bytes.len() as u64]);
    let text = multires_mpi::all_gather(world, &bytes);
    if world.rank() != 0 {
        return Vec::new();
    }
    let mut at = 0usize;
    all.iter()
        .map(|&n| {
            let s: String = text[at..at + n as usize]
                .iter()
                .map(|&b| b as u8 as char)
                .collect();
            at += n as usize;
            s
        })
        .collect()
}

/// The bytes of an .npy header for `shape` of numpy type `descr`.
fn npy_header(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}}}");
    // Version 1.0: a u16 length; the header padded with spaces to a
    // multiple of 64 bytes, ending in a newline (as ndarray-npy writes it, so the file equals one process's).
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

fn decompress_on(world: &mpi::topology::SimpleCommunicator, a: &DecompressArgs) -> Result<()> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let prepared = (|| -> Result<_> {
        if a.level > 0 || a.gpus.is_some() {
            bail!("--mpi decodes slabs at full resolution, each rank on one GPU (its host's GPUs in turn) or its CPU cores; drop --level and --gpus");
        }
        let ext = a
            .output
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        if ext.as_deref() != Some("npy") {
            bail!("{}: --mpi writes an .npy", a.output.display());
        }
        Ok(())
    })();
    agreed(world, prepared)?;
    let gpu = rank_gpu(world, a.device);
    let mut gpu = agreed(world, gpu)?;
    let f = agreed(
        world,
        MpiFile::open(world, &a.input).map_err(anyhow::Error::from),
    )?;
    let name = a.input.display().to_string();
    let mut r = agreed(
        world,
        f.reader()
            .map_err(anyhow::Error::from)
            .and_then(|rd| Ok(MrzReader::from_reader(Box::new(rd), &name)?)),
    )?;
    let h = r.header().clone();
    // Lossless files decode on the CPU; the fast profile's GPU decoder
    // takes a whole field on one GPU. (what the file is, the note)
    let on_cpu = if h.is_lossless() {
        Some((
            "is lossless, which decodes on the CPU",
            "a lossless file decodes on the CPU",
        ))
    } else if h.transform == codec::Lifting::Lorenzo {
        Some((
            "is a fast-profile file, which decodes by ranks on the CPU",
            "a fast-profile file decodes by ranks on the CPU",
        ))
    } else {
        None
    };
    if let (Some((what, note)), true) = (on_cpu, gpu.is_some()) {
        let refused = match a.device {
            Device::Cuda => Err(anyhow::anyhow!(
                "--device cuda: {} {what}; use --device cpu or auto",
                a.input.display()
            )),
            _ => Ok(()),
        };
        agreed(world, refused)?;
        if rank == 0 {
            eprintln!("note: {note}");
        }
        gpu = None;
    }
    let plain = h.shape() == h.coded_shape() || h.shape().len() == 1;
    let region = match &a.region {
        Some(s) if plain => {
            Some(codec::parse_region(s, &h.coded_shape()).map_err(anyhow::Error::msg))
        }
        Some(_) => Some(Err(anyhow::anyhow!(
            "--mpi --region takes 2-D and 3-D files"
        ))),
        None => None,
    };
    let region = agreed(world, region.transpose())?.unwrap_or(codec::full_region(h.dims));
    let out_dims = region.map(|(s, e)| e - s);
    let esize = h.elem.size();
    // This rank's planes along the split axis: its slab of brick layers
    // within the region (the region's planes before it are 1 deep).
    let ax = multires_mpi::split_axis(h.dims);
    let plane: usize = out_dims[ax + 1..].iter().product();
    let (s0, s1) = slab_of(h.dims, h.brick, rank, size);
    let (z0, z1) = (s0.max(region[ax].0), s1.min(region[ax].1));
    let t_dec = std::time::Instant::now();
    let decoded = if z0 < z1 {
        let mut mine = region;
        mine[ax] = (z0, z1);
        match &gpu {
            Some((i, g)) => multires_cuda::codec::decompress(
                &mut r,
                Some(mine),
                std::slice::from_ref(g),
                &|_| {},
            )
            .map(Some)
            .with_context(|| format!("decoding the slab on GPU {i}")),
            None => codec::decompress(&mut r, Some(mine), &|_| {})
                .map(Some)
                .map_err(anyhow::Error::from),
        }
    } else {
        Ok(None)
    };
    let decoded = agreed(world, decoded)?;
    let values = decoded.map(|v| NpyValues::of(v.data, h.elem));
    let bytes: &[u8] = values.as_ref().map_or(&[], NpyValues::bytes);
    let shape: Vec<usize> = if h.shape().len() == 1 {
        vec![out_dims[2]]
    } else if plain {
        out_dims[3 - h.ndim..].to_vec()
    } else {
        h.shape()
    };
    let descr = match h.elem {
        Elem::F32 => "<f4",
        Elem::F64 => "<f8",
        Elem::U8 => "|u1",
        Elem::U16 => "<u2",
        Elem::I16 => "<i2",
        Elem::I32 => "<i4",
    };
    let head = npy_header(descr, &shape);
    let at = head.len() as u64 + ((z0.max(region[ax].0) - region[ax].0) * plane * esize) as u64;
    let mut pieces: Vec<(u64, &[u8])> = vec![(at, bytes)];
    if rank == 0 {
        pieces.push((0, &head));
    }
    let dec_s = t_dec.elapsed().as_secs_f64();
    let t_write = std::time::Instant::now();
    multires_mpi::write_shared(world, &a.output, &pieces)?;
    let on = gpu
        .as_ref()
        .map_or("CPU".to_string(), |(i, _)| format!("GPU {i}"));
    let per_rank = format!(
        "rank {rank} ({on}): planes {z0}..{z1}, {} bytes, read and decoded {dec_s:.3} s, wrote {:.3} s",
        bytes.len(),
        t_write.elapsed().as_secs_f64()
    );
    let lines = gather_lines(world, &per_rank);
    if rank == 0 {
        println!(
            "decompress --mpi: {} -> {} {:?} {} on {size} ranks",
            a.input.display(),
            a.output.display(),
            shape,
            h.elem.name(),
        );
        for l in lines {
            println!("  {l}");
        }
    }
    Ok(())
}

/// Writes an .npy of rows of `cols` values of `esize` bytes from every
/// rank, each rank its columns from `c0` of every row (`rows`), rank 0
/// also the header `head`.
fn write_rows<C: Communicator>(
    world: &C,
    path: &Path,
    head: &[u8],
    rows: &[Vec<u8>],
    (cols, c0, esize): (usize, usize, usize),
) -> Result<()> {
    let mut pieces: Vec<(u64, &[u8])> = rows
        .iter()
        .enumerate()
        .map(|(r, row)| {
            (
                head.len() as u64 + ((r * cols + c0) * esize) as u64,
                row.as_slice(),
            )
        })
        .collect();
    if world.rank() == 0 {
        pieces.push((0, head));
    }
    Ok(multires_mpi::write_shared(world, path, &pieces)?)
}

/// Decoded values as the .npy stores them: a float field's decoded vector
/// is written as it is (no float64 and byte copies of a slab of
/// gigabytes); integer fields are rounded into bytes on all cores.
enum NpyValues {
    F32(Vec<f32>),
    F64(Vec<f64>),
    Ints(Vec<u8>),
}

impl NpyValues {
    fn of(data: Values, elem: Elem) -> NpyValues {
        let int = |x: f64| codec::integer_value(x, elem);
        fn ints<T: Sync, const N: usize>(d: &[T], f: impl Fn(&T) -> [u8; N] + Sync) -> Vec<u8> {
            let mut out = vec![0u8; d.len() * N];
            out.par_chunks_mut(N)
                .zip(d.par_iter())
                .for_each(|(o, x)| o.copy_from_slice(&f(x)));
            out
        }
        fn cast<T: Copy + Into<f64> + Sync>(
            d: &[T],
            int: impl Fn(f64) -> f64 + Sync,
            elem: Elem,
        ) -> Vec<u8> {
            let v = |x: &T| int((*x).into());
            match elem {
                Elem::U8 => ints(d, |x| [v(x) as u8]),
                Elem::U16 => ints(d, |x| (v(x) as u16).to_le_bytes()),
                Elem::I16 => ints(d, |x| (v(x) as i16).to_le_bytes()),
                _ => ints(d, |x| (v(x) as i32).to_le_bytes()),
            }
        }
        let mut v = match (elem, data) {
            (Elem::F32, Values::F32(d)) => NpyValues::F32(d),
            (Elem::F64, Values::F64(d)) => NpyValues::F64(d),
            (Elem::F32, Values::F64(d)) => {
                NpyValues::F32(d.par_iter().map(|&x| x as f32).collect())
            }
            (Elem::F64, Values::F32(d)) => {
                NpyValues::F64(d.par_iter().map(|&x| x as f64).collect())
            }
            (_, Values::F32(d)) => NpyValues::Ints(cast(&d, int, elem)),
            (_, Values::F64(d)) => NpyValues::Ints(cast(&d, int, elem)),
        };
        if cfg!(target_endian = "big") {
            match &mut v {
                NpyValues::F32(d) => d.par_iter_mut().for_each(f32::swap_le),
                NpyValues::F64(d) => d.par_iter_mut().for_each(f64::swap_le),
                NpyValues::Ints(_) => {}
            }
        }
        v
    }

    fn bytes(&self) -> &[u8] {
        match self {
            NpyValues::F32(d) => bytemuck::cast_slice(d),
            NpyValues::F64(d) => bytemuck::cast_slice(d),
            NpyValues::Ints(d) => d,
        }
    }
}

pub fn fir(a: crate::cmd_fir::FirArgs) -> Result<()> {
    let universe = mpi_world()?;
    let r = fir_on(&universe.world(), &a);
    finish(universe, r)
}

/// A real 1-D signal's length, its sample type and where its samples start.
fn signal_input(path: &Path, raw: Option<RawType>) -> Result<(usize, DType, u64)> {
    match raw {
        Some(t) => {
            let size = if t == RawType::F32 { 4 } else { 8 };
            let len = std::fs::metadata(path)
                .with_context(|| format!("cannot read {}", path.display()))?
                .len();
            Ok((
                (len / size) as usize,
                if t == RawType::F32 {
                    DType::F32
                } else {
                    DType::F64
                },
                0,
            ))
        }
        None => {
            let h = io::read_npy_header(path)?;
            let dtype = if h.is_f32_c_order() {
                DType::F32
            } else if h.is_f64_c_order() {
                DType::F64
            } else {
                bail!("{}: --mpi reads 1-D float32 or float64 .npy signals (or raw with --raw); this one is {}", path.display(), h.descr);
            };
            if h.shape.len() != 1 {
                bail!(
                    "{}: --mpi filters one 1-D signal; this array has shape {:?}",
                    path.display(),
                    h.shape
                );
            }
            Ok((h.shape[0], dtype, h.data_offset))
        }
    }
}

/// Samples [a, b) of a shared signal file, as float64.
fn read_samples(
    path: &Path,
    (dtype, offset): (DType, u64),
    (a, b): (usize, usize),
) -> Result<Vec<f64>> {
    let size = dtype.size();
    let f = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let at = offset + (a * size) as u64;
    let what = || format!("{}: samples {a}..{b} cannot be read", path.display());
    Ok(match dtype {
        DType::F32 => read_le_at::<f32>(&f, at, b - a)
            .with_context(what)?
            .into_iter()
            .map(f64::from)
            .collect(),
        DType::F64 => read_le_at(&f, at, b - a).with_context(what)?,
    })
}

/// Samples [a, b) of a shared signal of `n` samples on every rank, `need`
/// giving each rank's range: each rank reads only its own block (an even
/// split) from the file, and the halos move between ranks in one
/// all-to-all exchange (a rank's range may reach past its neighbours'
/// blocks; the exchange takes the samples from whichever rank holds them).
fn exchange_segment<C: Communicator>(
    world: &C,
    path: &Path,
    (dtype, offset): (DType, u64),
    n: usize,
    need: &dyn Fn(usize) -> (usize, usize),
) -> Result<Vec<f64>> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let block = |r: usize| (n * r / size, n * (r + 1) / size);
    let (o0, o1) = block(rank);
    let own = agreed(world, read_samples(path, (dtype, offset), (o0, o1)))?;
    let overlap = |(a, b): (usize, usize), (c, d): (usize, usize)| (a.max(c), b.min(d));
    let count = |(a, b): (usize, usize)| -> Result<i32> {
        i32::try_from(b.saturating_sub(a)).map_err(|_| {
            anyhow::anyhow!("more than 2^31 samples move between two ranks: run more ranks")
        })
    };
    let mut send = Vec::new();
    let (mut scount, mut rcount) = (Vec::with_capacity(size), Vec::with_capacity(size));
    for r in 0..size {
        let (a, b) = overlap((o0, o1), need(r));
        if a < b {
            send.extend_from_slice(&own[a - o0..b - o0]);
        }
        scount.push(count((a, b))?);
        rcount.push(count(overlap(block(r), need(rank)))?);
    }
    let displs = |c: &[i32]| -> Vec<i32> {
        c.iter()
            .scan(0i32, |acc, &x| {
                let d = *acc;
                *acc += x;
                Some(d)
            })
            .collect()
    };
    let (sd, rd) = (displs(&scount), displs(&rcount));
    let total: i32 = rcount.iter().sum();
    let mut recv = vec![0f64; total as usize];
    {
        let sp = mpi::datatype::Partition::new(&send[..], &scount[..], &sd[..]);
        let mut rp = mpi::datatype::PartitionMut::new(&mut recv[..], &rcount[..], &rd[..]);
        world.all_to_all_varcount_into(&sp, &mut rp);
    }
    Ok(recv)
}

fn fir_on(world: &mpi::topology::SimpleCommunicator, a: &crate::cmd_fir::FirArgs) -> Result<()> {
    use multires::fir::{FilterBank, FirMode, FirOptions, FirValues};
    use multires::io::Matrix;
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let prepared = (|| -> Result<_> {
        if a.stream || a.explain {
            bail!("--mpi splits the signal over the ranks; drop --stream and --explain");
        }
        if a.post == multires::fir::FirPost::Derivative {
            bail!("--post derivative takes one-sided differences at the signal's two ends; on ranks use none, power or magnitude");
        }
        if a.device == multires::backend::Device::Cuda {
            bail!("--mpi filters on each rank's CPU cores; drop --device cuda");
        }
        if a.output.extension().and_then(|e| e.to_str()) != Some("npy") {
            bail!("{}: --mpi writes an .npy", a.output.display());
        }
        let bank = match io::read_matrix(&a.filters).context("reading --filters")? {
            Matrix::Real(m) => FilterBank::Real(m),
            Matrix::Complex(m) => FilterBank::Complex(m),
        };
        let (n, dtype, offset) = signal_input(&a.input, a.raw)?;
        Ok((bank, n, dtype, offset))
    })();
    let (bank, n, dtype, offset) = agreed(world, prepared)?;
    let (f, m) = match &bank {
        FilterBank::Real(h) => h.dim(),
        FilterBank::Complex(h) => h.dim(),
    };
    // numpy.convolve's output: the full convolution's columns from `off`.
    let (lo, hi) = (n.min(m), n.max(m));
    let (len, off) = match a.mode {
        FirMode::Full => (n + m - 1, 0),
        FirMode::Same => (hi, (lo - 1) / 2),
        FirMode::Valid => (hi - lo + 1, lo - 1),
    };
    // This rank's output columns [c0, c1), and the samples they reach:
    // column c is the full convolution's c + off, of samples c + off - (m - 1) ..= c + off.
    let reach = |r: usize| {
        let (c0, c1) = (len * r / size, len * (r + 1) / size);
        if c0 == c1 {
            return (0, 0);
        }
        ((c0 + off).saturating_sub(m - 1).min(n), (c1 + off).min(n))
    };
    let (c0, c1) = (len * rank / size, len * (rank + 1) / size);
    let (s0, s1) = reach(rank);
    let segment = exchange_segment(world, &a.input, (dtype, offset), n, &reach)?;
    let opts = FirOptions {
        mode: FirMode::Full,
        post: a.post,
        algorithm: a.algorithm,
        allow_nonfinite: a.allow_nonfinite,
        memory_limit: None,
    };
    let t = std::time::Instant::now();
    let computed = (|| -> Result<Option<FirValues>> {
        if c0 == c1 || s0 >= s1 {
            return Ok(None);
        }
        Ok(Some(
            multires::fir::fir(&multires::signal::Signal::real(segment), &bank, &opts)?.0,
        ))
    })();
    let y = agreed(world, computed)?;
    let secs = t.elapsed().as_secs_f64();
    let complex = matches!(bank, FilterBank::Complex(_)) && a.post == multires::fir::FirPost::None;
    let esize = if complex { 16 } else { 8 };
    // Row r of the output, this rank's columns: the segment's full
    // convolution from column c0 + off - s0.
    let from = (c0 + off).saturating_sub(s0);
    let rows: Vec<Vec<u8>> = (0..f)
        .map(|r| {
            let mut row = Vec::with_capacity((c1 - c0) * esize);
            for c in 0..c1 - c0 {
                let i = from + c;
                match &y {
                    Some(FirValues::Real(v)) => {
                        row.extend_from_slice(&v.get((r, i)).copied().unwrap_or(0.0).to_le_bytes())
                    }
                    Some(FirValues::Complex(v)) => {
                        let z = v.get((r, i)).copied().unwrap_or_default();
                        row.extend_from_slice(&z.re.to_le_bytes());
                        row.extend_from_slice(&z.im.to_le_bytes());
                    }
                    None if complex => row.extend_from_slice(&[0u8; 16]),
                    None => row.extend_from_slice(&0f64.to_le_bytes()),
                }
            }
            row
        })
        .collect();
    let head = npy_header(if complex { "<c16" } else { "<f8" }, &[f, len]);
    write_rows(world, &a.output, &head, &rows, (len, c0, esize))?;
    let line = format!("rank {rank}: columns {c0}..{c1} from samples {s0}..{s1} in {secs:.3} s");
    let lines = gather_lines(world, &line);
    if rank == 0 {
        eprintln!(
            "fir --mpi: {n} samples x {f} filters of {m} taps -> {} ({f} x {len}) on {size} ranks",
            a.output.display()
        );
        for l in lines {
            eprintln!("  {l}");
        }
    }
    Ok(())
}

pub fn cwt(a: crate::cmd_cwt::CwtArgs) -> Result<()> {
    let universe = mpi_world()?;
    let r = cwt_on(&universe.world(), &a);
    finish(universe, r)
}

fn cwt_on(world: &mpi::topology::SimpleCommunicator, a: &crate::cmd_cwt::CwtArgs) -> Result<()> {
    use multires::cwt::CwtValues;
    use multires::{Boundary, CwtPlan, Signal};
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let t = &a.transform;
    let prepared = (|| -> Result<_> {
        if a.plot.is_some() || a.coi_out.is_some() || a.stream || t.explain {
            bail!("--mpi writes the coefficients; drop --plot, --coi-out, --stream and --explain (one process writes those)");
        }
        if t.device == multires::backend::Device::Cuda {
            bail!("--mpi computes on each rank's CPU cores; drop --device cuda");
        }
        if t.boundary != Boundary::Zero || t.oversample != 1 {
            bail!("--mpi takes zero boundaries and no --oversample (the other extensions need the whole signal's ends)");
        }
        if a.output.extension().and_then(|e| e.to_str()) != Some("npy") {
            bail!("{}: --mpi writes an .npy", a.output.display());
        }
        let (n, dtype, offset) = signal_input(&a.input, a.raw)?;
        let options = crate::cmd_cwt::build_options(t, &Signal::real(Vec::new()))?;
        if options.half.is_some() {
            bail!("--mpi writes float32/float64 or complex coefficients; drop --output-dtype f16/bf16");
        }
        // The whole signal's plan: its masks' reach and columns.
        let whole = CwtPlan::new(options.clone(), n, false)?;
        Ok((
            n,
            dtype,
            offset,
            options,
            whole.halo(),
            whole.columns(),
            whole.output_dtype(),
        ))
    })();
    let (n, dtype, offset, options, halo, cols, out_dtype) = agreed(world, prepared)?;
    let hop = options.hop.max(1);
    let rows = options.scales.len();
    // Rank r's samples: from a whole number of hops before its first
    // column, as far as the widest mask reaches, so the segment's columns
    // fall on the whole signal's.
    let reach = |r: usize| {
        let (c0, c1) = (cols * r / size, cols * (r + 1) / size);
        if c0 == c1 {
            return (0, 0);
        }
        let s0 = (c0 * hop).saturating_sub(halo.div_ceil(hop) * hop);
        (s0, ((c1 - 1) * hop + halo + 1).min(n))
    };
    let (c0, c1) = (cols * rank / size, cols * (rank + 1) / size);
    let (s0, s1) = reach(rank);
    let segment = exchange_segment(world, &a.input, (dtype, offset), n, &reach)?;
    let t0 = std::time::Instant::now();
    let computed = (|| -> Result<Option<CwtValues>> {
        if c1 == c0 {
            return Ok(None);
        }
        let plan = CwtPlan::new(options.clone(), s1 - s0, false)?;
        let mut values = CwtValues::zeroed_for(&plan);
        plan.execute_into(&Signal::real(segment), &mut values, None)?;
        Ok(Some(values))
    })();
    let values = agreed(world, computed)?;
    let secs = t0.elapsed().as_secs_f64();
    let j0 = (c0 * hop - s0) / hop;
    let (descr, esize) = match out_dtype {
        "complex128" => ("<c16", 16),
        "complex64" => ("<c8", 8),
        "float64" => ("<f8", 8),
        _ => ("<f4", 4),
    };
    let row_bytes = |r: usize| -> Vec<u8> {
        let cols = j0..j0 + (c1 - c0);
        match &values {
            None => Vec::new(),
            Some(CwtValues::Complex64(v)) => cols
                .flat_map(|j| {
                    let z = v[(r, j)];
                    [z.re.to_le_bytes(), z.im.to_le_bytes()].concat()
                })
                .collect(),
            Some(CwtValues::Complex32(v)) => cols
                .flat_map(|j| {
                    let z = v[(r, j)];
                    [z.re.to_le_bytes(), z.im.to_le_bytes()].concat()
                })
                .collect(),
            Some(CwtValues::Real64(v)) => cols.flat_map(|j| v[(r, j)].to_le_bytes()).collect(),
            Some(CwtValues::Real32(v)) => cols.flat_map(|j| v[(r, j)].to_le_bytes()).collect(),
            Some(CwtValues::Half(v, _)) => cols.flat_map(|j| v[(r, j)].to_le_bytes()).collect(),
        }
    };
    let bytes: Vec<Vec<u8>> = (0..rows).map(row_bytes).collect();
    let head = npy_header(descr, &[rows, cols]);
    write_rows(world, &a.output, &head, &bytes, (cols, c0, esize))?;
    let line = format!("rank {rank}: columns {c0}..{c1} from samples {s0}..{s1} in {secs:.3} s");
    let lines = gather_lines(world, &line);
    if rank == 0 {
        eprintln!(
            "cwt --mpi: {n} samples x {rows} scales -> {} ({rows} x {cols} {out_dtype}) on {size} ranks",
            a.output.display()
        );
        for l in lines {
            eprintln!("  {l}");
        }
    }
    Ok(())
}
