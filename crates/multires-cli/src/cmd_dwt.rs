//! `multires wavedec`, `waverec`, `wavedecn`, `waverecn`: PyWavelets'
//! multilevel transforms, with its file layout (npz keys arr_0 ... arr_L;
//! for n-D, arr_0 and d{i}_{key}).
use anyhow::{bail, Context, Result};
use clap::Args;
use multires::backend::Device;
use multires::dwt::{
    self, Algorithm, DiscreteWavelet, Granularity, Mode, NdCoefficients, Transform,
};
use multires::io::{self, RawType, ReadOptions};
use multires::real::Real;
use ndarray::ArrayD;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PrecisionArg {
    F32,
    F64,
}

#[derive(Args, Clone)]
pub struct TransformOpts {
    /// Discrete wavelet (PyWavelets' names: haar, db1-38, sym2-20, coif1-17, bior*, rbio*, dmey).
    #[arg(long, short)]
    pub wavelet: String,
    /// Signal extension: zero, constant, symmetric, reflect, periodic, smooth,
    /// antisymmetric, antireflect, periodization (PyWavelets' nine modes).
    #[arg(long, default_value = "symmetric")]
    pub mode: Mode,
    /// auto, matrix, matrix-nowrap, lattice, lattice-nowrap (orthogonal wavelets whose lattice
    /// factorization is exact: haar, db1-13, coif1-8, ...) or lifting (filters up to 10 taps).
    #[arg(long, default_value = "auto")]
    pub algorithm: Algorithm,
    /// Outputs per step of the matrix form: 1, 2 or 4 (the seed's m1/m2/m4).
    #[arg(long, default_value = "2")]
    pub granularity: Granularity,
    /// Working precision (default: that of the input file).
    #[arg(long, value_enum)]
    pub precision: Option<PrecisionArg>,
    /// auto, cpu or cuda (auto: the GPU when there is one). On the GPU,
    /// wavedec and waverec run the seed's variants by --algorithm
    /// matrix|matrix-nowrap|lattice|lattice-nowrap and --granularity;
    /// wavedecn and waverecn run the matrix form.
    #[arg(long, default_value = "auto")]
    pub device: Device,
}

#[derive(Args)]
pub struct WavedecArgs {
    /// Input: .npy (any shape; the transform runs along --axis), .wav, .csv/.txt, or raw with --raw.
    pub input: PathBuf,
    /// Output .npz: arr_0 (approximation), arr_1 (coarsest detail) ... arr_L (finest), as pywt.wavedec.
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub t: TransformOpts,
    /// Levels (default: dwt_max_level). Above the maximum it still runs, as PyWavelets does, with a warning.
    #[arg(long)]
    pub level: Option<usize>,
    /// Axis of the input array to transform.
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub axis: isize,
    /// Read the input as raw little-endian samples of this type.
    #[arg(long, value_name = "f32|f64")]
    pub raw: Option<RawType>,
    /// Device memory the GPU may use, e.g. 512MiB or 2GB (default: 4/5 of
    /// what is free). Larger inputs stream through in batches of rows on two
    /// streams, copies overlapping kernels; the results are the same.
    #[arg(long, value_name = "SIZE", value_parser = parse_mem_size)]
    pub gpu_mem_limit: Option<usize>,
    /// Let NaN/Inf samples propagate instead of refusing them.
    #[arg(long)]
    pub allow_nonfinite: bool,
    /// Also draw the coefficients, one row per level over time, to this PNG (1-D input).
    #[arg(long, value_name = "PNG")]
    pub plot: Option<PathBuf>,
}

#[derive(Args)]
pub struct WaverecArgs {
    /// Coefficients .npz with arr_0 ... arr_L (as `multires wavedec` or numpy.savez(*pywt.wavedec(...)) write).
    pub input: PathBuf,
    /// Output .npy.
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub t: TransformOpts,
    /// Axis the coefficients were computed along.
    #[arg(long, default_value_t = -1, allow_hyphen_values = true)]
    pub axis: isize,
    /// Device memory the GPU may use, e.g. 512MiB or 2GB (default: 4/5 of
    /// what is free). Larger inputs stream through in batches of rows on two
    /// streams, copies overlapping kernels; the results are the same.
    #[arg(long, value_name = "SIZE", value_parser = parse_mem_size)]
    pub gpu_mem_limit: Option<usize>,
}

#[derive(Args)]
pub struct WavedecnArgs {
    /// Input .npy array (2-D, 3-D, any).
    pub input: PathBuf,
    /// Output .npz: arr_0 (approximation) and d{i}_{key} for pywt.wavedecn's i-th detail dict (i = 1 coarsest).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub t: TransformOpts,
    /// Levels (default: the largest every transformed axis allows).
    #[arg(long)]
    pub level: Option<usize>,
    /// Axes to transform, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub axes: Option<Vec<isize>>,
    /// Let NaN/Inf values propagate instead of refusing them.
    #[arg(long)]
    pub allow_nonfinite: bool,
}

#[derive(Args)]
pub struct WaverecnArgs {
    /// Coefficients .npz with arr_0 and d{i}_{key} (as `multires wavedecn` writes).
    pub input: PathBuf,
    /// Output .npy.
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub t: TransformOpts,
    /// Axes that were transformed, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub axes: Option<Vec<isize>>,
}

/// A byte count as people write it: 512MiB, 2GB, 1.5GiB, 1048576.
pub fn parse_mem_size(s: &str) -> Result<usize, String> {
    let v = parse_size::parse_size(s)
        .map_err(|e| format!("{e}: give a size such as 512MiB, 2GB or a number of bytes"))?;
    match usize::try_from(v) {
        Ok(0) | Err(_) => Err(format!(
            "{s}: give a size above zero that this machine can address, such as 512MiB"
        )),
        Ok(v) => Ok(v),
    }
}

/// The GPU for wavedec/waverec: asked for (an error naming why when there
/// is none), or found by auto (which says where the job runs).
pub(crate) fn dwt_gpu(device: Device) -> Result<Option<std::sync::Arc<multires_cuda::Gpu>>> {
    match device {
        Device::Cpu => Ok(None),
        Device::Cuda => Ok(Some(
            multires_cuda::gpu().context("--device cuda: no usable GPU")?,
        )),
        Device::Auto => match multires_cuda::gpu() {
            Ok(g) => {
                eprintln!("device auto: running on the GPU ({})", g.info.name);
                Ok(Some(g))
            }
            Err(e) => {
                if let Some(note) = multires_cuda::auto_fallback_note(&e) {
                    eprintln!("{note}");
                }
                Ok(None)
            }
        },
    }
}

/// The seed's GPU variant for --algorithm and --granularity.
fn gpu_variant(o: &TransformOpts) -> Result<multires_cuda::dwt::GpuDwtVariant> {
    use multires_cuda::dwt::GpuDwtVariant as V;
    Ok(match (o.algorithm, o.granularity) {
        (Algorithm::Auto, _) => V::Auto,
        (Algorithm::Matrix, Granularity::One) => V::M1Wrap,
        (Algorithm::Matrix, Granularity::Two) => V::M2Wrap,
        (Algorithm::Matrix, Granularity::Four) => V::M4Wrap,
        (Algorithm::MatrixNoWrap, Granularity::Four) => V::M4NoWrap,
        (Algorithm::MatrixNoWrap, _) => V::M2NoWrap,
        (Algorithm::Lattice, _) => V::L2Wrap,
        (Algorithm::LatticeNoWrap, _) => V::L2NoWrap,
        (other, _) => bail!(
            "--algorithm {other} is not on the GPU (auto, matrix, matrix-nowrap, lattice and lattice-nowrap are); use --device cpu"
        ),
    })
}

/// The n-D GPU transform has one algorithm (matrix, coalesced axis passes,
/// the 2-D level fused); other choices are refused rather than ignored.
fn nd_variant(o: &TransformOpts) -> Result<multires_cuda::dwt::GpuDwtVariant> {
    match o.algorithm {
        Algorithm::Auto | Algorithm::Matrix => Ok(multires_cuda::dwt::GpuDwtVariant::Auto),
        other => bail!(
            "--algorithm {other}: the n-D transform on the GPU runs the matrix form only; use --algorithm auto or --device cpu"
        ),
    }
}

/// Moves `axis` last: (the array as rows x n, the permutation, n).
pub(crate) fn axis_last<T: Clone>(x: &ArrayD<T>, ax: usize) -> (Vec<T>, Vec<usize>, usize) {
    let nd = x.ndim();
    let mut perm: Vec<usize> = (0..nd).filter(|&i| i != ax).collect();
    perm.push(ax);
    let moved = x.view().permuted_axes(perm.clone());
    let n = x.shape()[ax];
    (moved.iter().cloned().collect(), perm, n)
}

/// Undoes `axis_last` for a block of rows x len.
pub(crate) fn axis_back<T: Clone>(
    v: Vec<T>,
    outer: &[usize],
    len: usize,
    perm: &[usize],
) -> Result<ArrayD<T>> {
    let mut shape = outer.to_vec();
    shape.push(len);
    let a = ArrayD::from_shape_vec(ndarray::IxDyn(&shape), v)?;
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    Ok(a.permuted_axes(inv).as_standard_layout().into_owned())
}

fn f32_wanted(p: Option<PrecisionArg>, input_f32: bool) -> bool {
    match p {
        Some(PrecisionArg::F32) => true,
        Some(PrecisionArg::F64) => false,
        None => input_f32,
    }
}

fn transform<T: Real>(o: &TransformOpts) -> Result<Transform<T>> {
    let w = DiscreteWavelet::from_name(&o.wavelet)?;
    Ok(Transform::new(&w, o.mode, o.algorithm, o.granularity)?)
}

fn check_finite(a: &ArrayD<f64>, allow: bool, path: &Path) -> Result<()> {
    if allow {
        return Ok(());
    }
    refuse_nonfinite(a, path, "pass --allow-nonfinite to let it propagate")
}

/// An error naming the first NaN/Inf of `a` (read from `path`) and what to do.
pub(crate) fn refuse_nonfinite(a: &ArrayD<f64>, path: &Path, remedy: &str) -> Result<()> {
    if let Some((i, v)) = a.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        bail!(
            "'{}': element {i} (flat index) is {v} (not finite); {remedy}",
            path.display()
        );
    }
    Ok(())
}

/// The real array of `path` (its notes said), refused if it holds NaN/Inf
/// (`remedy` says what to do about them).
pub(crate) fn read_finite(path: &Path, remedy: &str) -> Result<io::RealArray> {
    let x = io::read_real_array(
        path,
        &ReadOptions {
            raw: None,
            channel: 0,
        },
    )?;
    crate::paths::say(&x.notes);
    refuse_nonfinite(&x.values, path, remedy)?;
    Ok(x)
}

fn cast<T: Real>(a: &ArrayD<f64>) -> ArrayD<T> {
    a.mapv(T::of)
}

fn warn_level(level: Option<usize>, lens: &[usize], f: usize) {
    // Levels beyond what the transform accepts are refused by it; a
    // warning that they are "computed anyway" would be wrong.
    if let Some(l) = level.filter(|&l| l <= dwt::MAX_LEVELS) {
        let max = lens
            .iter()
            .map(|&n| dwt::max_level(n, f))
            .min()
            .unwrap_or(0);
        if l > max {
            eprintln!(
                "warning: level {l} is above dwt_max_level = {max} for length {lens:?} and a {f}-tap filter; \
                 every coefficient of the deeper levels feels the boundary. Computed anyway, as PyWavelets does."
            );
        }
    }
}

pub fn wavedec(a: WavedecArgs) -> Result<()> {
    let mut outputs = vec![crate::paths::Output::new(&a.output, "-o", &["npz"])];
    if let Some(p) = &a.plot {
        outputs.push(crate::paths::Output::new(p, "--plot", &["png"]));
    }
    crate::paths::check(&[&a.input], &outputs)?;
    let opts = ReadOptions {
        raw: a.raw,
        channel: 0,
    };
    let x = io::read_real_array(&a.input, &opts)?;
    crate::paths::say(&x.notes);
    check_finite(&x.values, a.allow_nonfinite, &a.input)?;
    let t0 = Instant::now();
    let f32_ = f32_wanted(a.t.precision, x.was_f32);
    fn go<T: multires_cuda::GpuReal + ndarray_npy::WritableElement>(
        a: &WavedecArgs,
        x: &ArrayD<f64>,
        gpu: Option<std::sync::Arc<multires_cuda::Gpu>>,
    ) -> Result<usize> {
        let t = transform::<T>(&a.t)?;
        if a.plot.is_some() && x.ndim() != 1 {
            bail!(
                "--plot draws 1-D transforms; the input has shape {:?}",
                x.shape()
            );
        }
        let ax = dwt::nd::axis_index(a.axis, x.ndim())?;
        warn_level(a.level, &[x.shape()[ax]], t.filter_len());
        let c = match gpu {
            None => dwt::wavedec(cast::<T>(x).view(), &t, a.level, a.axis)?,
            Some(gpu) => {
                if x.is_empty() {
                    return Err(dwt::DwtError::EmptySignal.into());
                }
                let (rows_x, perm, n) = axis_last(&cast::<T>(x), ax);
                let level = a.level.unwrap_or_else(|| dwt::max_level(n, t.filter_len()));
                if level > dwt::multilevel::MAX_LEVELS {
                    bail!(
                        "level {level}: at most {} levels are accepted",
                        dwt::multilevel::MAX_LEVELS
                    );
                }
                t.check_len(n)?;
                let outer: Vec<usize> = perm[..perm.len() - 1]
                    .iter()
                    .map(|&i| x.shape()[i])
                    .collect();
                let rows = outer.iter().product::<usize>();
                let mut plan = multires_cuda::dwt::GpuDwt::<T>::new(
                    gpu,
                    &t.wavelet,
                    a.t.mode,
                    gpu_variant(&a.t)?,
                )?;
                plan.mem_limit = a.gpu_mem_limit;
                let blocks = multires_cuda::dwt::wavedec(&plan, &rows_x, rows, level)?;
                blocks
                    .into_iter()
                    .map(|b| {
                        let len = b.len() / rows.max(1);
                        axis_back(b, &outer, len, &perm)
                    })
                    .collect::<Result<Vec<_>>>()?
            }
        };
        let named: Vec<(String, ndarray::ArrayViewD<T>)> = c
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("arr_{i}"), v.view()))
            .collect();
        io::write_npz(&a.output, &named)?;
        if let Some(png) = &a.plot {
            let l = c.len() - 1;
            let rows: Vec<(String, Vec<f64>)> = c
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let name = if i == 0 {
                        format!("a{l}")
                    } else {
                        format!("d{}", l + 1 - i)
                    };
                    (name, v.iter().map(|&s| s.f64()).collect())
                })
                .collect();
            let title = format!("wavedec: {}, mode {}, {l} levels", a.t.wavelet, a.t.mode);
            // Both outputs or neither: a failed plot takes the npz with it.
            if let Err(e) = multires::plot::dwt_levels_png(&rows, x.len(), png, &title) {
                let _ = std::fs::remove_file(&a.output);
                return Err(e.into());
            }
        }
        Ok(c.len() - 1)
    }
    let gpu = dwt_gpu(a.t.device)?;
    let levels = if f32_ {
        go::<f32>(&a, &x.values, gpu)?
    } else {
        go::<f64>(&a, &x.values, gpu)?
    };
    eprintln!(
        "wavedec: {:?} {} along axis {}, {} levels, wavelet {}, mode {} -> {} in {:.3} s",
        x.values.shape(),
        if f32_ { "float32" } else { "float64" },
        a.axis,
        levels,
        a.t.wavelet,
        a.t.mode,
        a.output.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// arr_0 ... arr_L in order; anything else is an error naming the key.
fn ordered(arrays: Vec<(String, ArrayD<f64>)>, path: &Path) -> Result<Vec<ArrayD<f64>>> {
    let mut by: BTreeMap<usize, ArrayD<f64>> = BTreeMap::new();
    for (k, v) in arrays {
        let i = k
            .strip_prefix("arr_")
            .and_then(|s| s.parse::<usize>().ok())
            .with_context(|| {
                format!(
                    "'{}': unexpected array '{k}'; expected arr_0 ... arr_L",
                    path.display()
                )
            })?;
        by.insert(i, v);
    }
    if by.is_empty() {
        bail!("'{}' holds no arrays", path.display());
    }
    let n = by.len();
    if by.keys().copied().ne(0..n) {
        bail!(
            "'{}': arrays must be arr_0 ... arr_{} with none missing",
            path.display(),
            n - 1
        );
    }
    Ok(by.into_values().collect())
}

pub fn waverec(a: WaverecArgs) -> Result<()> {
    crate::paths::check(
        &[&a.input],
        &[crate::paths::Output::new(&a.output, "-o", &["npy"])],
    )?;
    let gpu = dwt_gpu(a.t.device)?;
    let (arrays, any_f32) = io::read_npz(&a.input)?;
    let coeffs = ordered(arrays, &a.input)?;
    let f32_ = f32_wanted(a.t.precision, any_f32);
    fn go<T: multires_cuda::GpuReal + ndarray_npy::WritableElement>(
        a: &WaverecArgs,
        c: &[ArrayD<f64>],
        gpu: Option<std::sync::Arc<multires_cuda::Gpu>>,
    ) -> Result<Vec<usize>> {
        let t = transform::<T>(&a.t)?;
        let c: Vec<ArrayD<T>> = c.iter().map(cast::<T>).collect();
        let r = match gpu {
            None => dwt::waverec(&c, &t, a.axis)?,
            Some(gpu) => {
                let nd = c[0].ndim();
                let ax = dwt::nd::axis_index(a.axis, nd)?;
                let mut outer: Option<Vec<usize>> = None;
                let mut perm = Vec::new();
                let mut blocks = Vec::with_capacity(c.len());
                for (i, arr) in c.iter().enumerate() {
                    if arr.ndim() != nd {
                        bail!("arr_{i} has {} dimensions, arr_0 has {nd}", arr.ndim());
                    }
                    let (v, p, _) = axis_last(arr, ax);
                    let o: Vec<usize> = p[..nd - 1].iter().map(|&k| arr.shape()[k]).collect();
                    match &outer {
                        None => outer = Some(o),
                        Some(first) if *first != o => bail!(
                            "arr_{i} has shape {:?}; every array must match arr_0 ({:?}) off axis {}",
                            arr.shape(),
                            c[0].shape(),
                            a.axis
                        ),
                        _ => {}
                    }
                    perm = p;
                    blocks.push(v);
                }
                let outer = outer.unwrap_or_default();
                let rows = outer.iter().product::<usize>();
                if rows == 0 {
                    return Err(dwt::DwtError::EmptySignal.into());
                }
                let mut plan = multires_cuda::dwt::GpuDwt::<T>::new(
                    gpu,
                    &t.wavelet,
                    a.t.mode,
                    gpu_variant(&a.t)?,
                )?;
                plan.mem_limit = a.gpu_mem_limit;
                let (y, len) = multires_cuda::dwt::waverec(&plan, &blocks, rows)?;
                axis_back(y, &outer, len, &perm)?
            }
        };
        io::write_npy(&a.output, &r)?;
        Ok(r.shape().to_vec())
    }
    let shape = if f32_ {
        go::<f32>(&a, &coeffs, gpu)?
    } else {
        go::<f64>(&a, &coeffs, gpu)?
    };
    eprintln!(
        "waverec: {} levels -> {} {:?}",
        coeffs.len() - 1,
        a.output.display(),
        shape
    );
    Ok(())
}

fn all_axes(axes: &Option<Vec<isize>>, ndim: usize) -> Vec<isize> {
    axes.clone().unwrap_or_else(|| (0..ndim as isize).collect())
}

pub fn wavedecn(a: WavedecnArgs) -> Result<()> {
    crate::paths::check(
        &[&a.input],
        &[crate::paths::Output::new(&a.output, "-o", &["npz"])],
    )?;
    let gpu = dwt_gpu(a.t.device)?;
    let x = io::read_real_array(&a.input, &ReadOptions::default())?;
    check_finite(&x.values, a.allow_nonfinite, &a.input)?;
    let f32_ = f32_wanted(a.t.precision, x.was_f32);
    let axes = all_axes(&a.axes, x.values.ndim());
    fn go<T: Real + ndarray_npy::WritableElement + multires_cuda::GpuReal>(
        a: &WavedecnArgs,
        x: &ArrayD<f64>,
        axes: &[isize],
        gpu: Option<std::sync::Arc<multires_cuda::Gpu>>,
    ) -> Result<usize> {
        let t = transform::<T>(&a.t)?;
        let lens: Vec<usize> = axes
            .iter()
            .map(|&ax| dwt::nd::axis_index(ax, x.ndim()).map(|i| x.shape()[i]))
            .collect::<Result<_, _>>()?;
        warn_level(a.level, &lens, t.filter_len());
        let c = match gpu {
            None => dwt::wavedecn(cast::<T>(x).view(), &t, a.level, axes)?,
            Some(gpu) => {
                let plan = multires_cuda::dwt::GpuDwt::<T>::new(
                    gpu,
                    &t.wavelet,
                    a.t.mode,
                    nd_variant(&a.t)?,
                )?;
                multires_cuda::dwtn::wavedecn(&plan, &cast::<T>(x), a.level, axes)?
            }
        };
        let mut named = vec![("arr_0".to_string(), c.approx.view())];
        for (i, d) in c.details.iter().enumerate() {
            for (k, v) in d {
                named.push((format!("d{}_{k}", i + 1), v.view()));
            }
        }
        io::write_npz(&a.output, &named)?;
        Ok(c.details.len())
    }
    let levels = if f32_ {
        go::<f32>(&a, &x.values, &axes, gpu)?
    } else {
        go::<f64>(&a, &x.values, &axes, gpu)?
    };
    eprintln!(
        "wavedecn: {:?} over axes {axes:?}, {levels} levels, wavelet {}, mode {} -> {}",
        x.values.shape(),
        a.t.wavelet,
        a.t.mode,
        a.output.display()
    );
    Ok(())
}

pub fn waverecn(a: WaverecnArgs) -> Result<()> {
    crate::paths::check(
        &[&a.input],
        &[crate::paths::Output::new(&a.output, "-o", &["npy"])],
    )?;
    let gpu = dwt_gpu(a.t.device)?;
    let (arrays, any_f32) = io::read_npz(&a.input)?;
    let mut approx = None;
    let mut details: BTreeMap<usize, BTreeMap<String, ArrayD<f64>>> = BTreeMap::new();
    for (k, v) in arrays {
        if k == "arr_0" {
            approx = Some(v);
            continue;
        }
        let parsed = k
            .strip_prefix('d')
            .and_then(|r| r.split_once('_'))
            .and_then(|(i, key)| {
                let ok = !key.is_empty() && key.chars().all(|c| c == 'a' || c == 'd');
                i.parse::<usize>()
                    .ok()
                    .filter(|&i| i >= 1 && ok)
                    .map(|i| (i, key.to_string()))
            });
        let Some((i, key)) = parsed else {
            bail!(
                "'{}': unexpected array '{k}'; expected arr_0 and d{{i}}_{{key}} (like d1_ad)",
                a.input.display()
            );
        };
        details.entry(i).or_default().insert(key, v);
    }
    let approx = approx
        .with_context(|| format!("'{}' has no arr_0 (the approximation)", a.input.display()))?;
    let n = details.len();
    if details.keys().copied().ne(1..=n) {
        bail!(
            "'{}': detail levels must be d1 ... d{n} with none missing",
            a.input.display()
        );
    }
    let ndim = approx.ndim();
    let axes = all_axes(&a.axes, ndim);
    for (i, d) in &details {
        for key in dwt::nd::keys(axes.len()).into_iter().skip(1) {
            if !d.contains_key(&key) {
                bail!(
                    "'{}': level {i} lacks detail '{key}' for {} axes",
                    a.input.display(),
                    axes.len()
                );
            }
        }
        if d.len() != (1 << axes.len()) - 1 {
            bail!(
                "'{}': level {i} has {} details; {} axes need {}",
                a.input.display(),
                d.len(),
                axes.len(),
                (1 << axes.len()) - 1
            );
        }
    }
    let f32_ = f32_wanted(a.t.precision, any_f32);
    fn go<T: Real + ndarray_npy::WritableElement + multires_cuda::GpuReal>(
        a: &WaverecnArgs,
        approx: &ArrayD<f64>,
        details: &BTreeMap<usize, BTreeMap<String, ArrayD<f64>>>,
        axes: &[isize],
        gpu: Option<std::sync::Arc<multires_cuda::Gpu>>,
    ) -> Result<Vec<usize>> {
        let t = transform::<T>(&a.t)?;
        let c = NdCoefficients {
            approx: cast::<T>(approx),
            details: details
                .values()
                .map(|d| d.iter().map(|(k, v)| (k.clone(), cast::<T>(v))).collect())
                .collect(),
        };
        let r = match gpu {
            None => dwt::waverecn(&c, &t, axes)?,
            Some(gpu) => {
                let plan = multires_cuda::dwt::GpuDwt::<T>::new(
                    gpu,
                    &t.wavelet,
                    a.t.mode,
                    nd_variant(&a.t)?,
                )?;
                multires_cuda::dwtn::waverecn(&plan, &c, axes)?
            }
        };
        io::write_npy(&a.output, &r)?;
        Ok(r.shape().to_vec())
    }
    let shape = if f32_ {
        go::<f32>(&a, &approx, &details, &axes, gpu)?
    } else {
        go::<f64>(&a, &approx, &details, &axes, gpu)?
    };
    eprintln!(
        "waverecn: {n} levels over axes {axes:?} -> {} {shape:?}",
        a.output.display()
    );
    Ok(())
}

/// The discrete wavelets table of `multires wavelets`.
pub fn list_discrete() {
    println!("discrete wavelets (for wavedec/waverec/wavedecn/waverecn --wavelet NAME):");
    println!(
        "  {:<9} {:<34} {:>6}  {:<14} {:<15} {:>7}",
        "name", "family", "taps", "orthogonality", "symmetry", "support"
    );
    for w in DiscreteWavelet::all() {
        println!(
            "  {:<9} {:<34} {:>6}  {:<14} {:<15} {:>7}",
            w.name,
            w.family,
            w.filter_len(),
            if w.orthogonal {
                "orthogonal"
            } else {
                "biorthogonal"
            },
            w.symmetry.name(),
            w.support_width()
        );
    }
}
