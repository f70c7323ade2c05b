//! The undecimated transforms on the GPU: pywt's `swt` and MATLAB's
//! `modwt`, `imodwt`, `modwtmra` of batches of rows, equal to the CPU's
//! (multires::dwt::swt, multires::dwt::modwt) bit for bit in float64: each
//! output is the same ascending sum of products (atrous.cu, no FMA
//! contraction). Batches larger than the device's memory (or `mem_limit`)
//! run a block of rows at a time, each block through every level on the
//! device before its coefficients come back.

use crate::cwt::check_free;
use crate::device::Gpu;
use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use crate::GpuReal;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use multires::dwt::modwt::modwt_max_level;
use multires::dwt::swt::{check_swt_levels, scaled_bank, SwtLevel};
use multires::dwt::{DiscreteWavelet, DwtError};
use std::f64::consts::FRAC_1_SQRT_2;
use std::sync::Arc;

const MAX_GRID_Y: usize = 65535;
const THREADS: u32 = 256;

fn alloc<T: GpuReal>(gpu: &Gpu, n: usize) -> Result<CudaSlice<T>, CudaError> {
    check_free(gpu, (n.max(1) * std::mem::size_of::<T>()) as u128)?;
    // SAFETY: every element is written by the kernel before it is read.
    unsafe { gpu.stream.alloc::<T>(n.max(1)) }
        .during(|| "allocating undecimated coefficients".into())
}

fn filters<T: GpuReal>(gpu: &Gpu, f: &[f64]) -> Result<CudaSlice<T>, CudaError> {
    let v: Vec<T> = f.iter().map(|&c| T::of(c)).collect();
    crate::cwt::upload(gpu, &v)
}

/// Rows of `n` per block so that `arrays` arrays of a block fit.
fn rows_per_block<T>(
    gpu: &Gpu,
    n: usize,
    arrays: usize,
    mem_limit: Option<usize>,
) -> Result<usize, CudaError> {
    let budget = match mem_limit {
        Some(m) => m,
        None => gpu.free_mem()? / 5 * 4,
    };
    let row = (n * arrays * std::mem::size_of::<T>()).max(1);
    Ok((budget / row).max(1))
}

/// Calls `launch(span, cfg)` for each chunk of at most 65535 rows of `n`
/// (one block row of threads per row of samples).
fn by_row_chunks(
    rows: usize,
    n: usize,
    mut launch: impl FnMut(std::ops::Range<usize>, LaunchConfig) -> Result<(), CudaError>,
) -> Result<(), CudaError> {
    for r0 in (0..rows).step_by(MAX_GRID_Y) {
        let r = (rows - r0).min(MAX_GRID_Y);
        let cfg = LaunchConfig {
            grid_dim: ((n as u32).div_ceil(THREADS), r as u32, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        launch(r0 * n..(r0 + r) * n, cfg)?;
    }
    Ok(())
}

/// `a, d` of `x` (rows x n) by the bank (lo, hi) upsampled by `s` at `off`.
#[allow(clippy::too_many_arguments)]
fn level<T: GpuReal>(
    gpu: &Gpu,
    x: &CudaSlice<T>,
    rows: usize,
    n: usize,
    off: usize,
    s: usize,
    (lo, hi): (&CudaSlice<T>, &CudaSlice<T>),
    taps: usize,
    a: &mut CudaSlice<T>,
    d: &mut CudaSlice<T>,
) -> Result<(), CudaError> {
    let inst = format!("ATROUS(kernel, {})", T::CUDA);
    let func = gpu.function(Kernel::Atrous, &inst, 0)?;
    let (n_i, off_i, s_i, taps_i) = (n as i64, off as i64, s as i64, taps as i32);
    by_row_chunks(rows, n, |span, cfg| {
        let xs = x.slice(span.clone());
        let (mut sa, mut sd) = (a.slice_mut(span.clone()), d.slice_mut(span));
        let mut b = gpu.stream.launch_builder(&func);
        b.arg(&xs)
            .arg(&n_i)
            .arg(&off_i)
            .arg(&s_i)
            .arg(lo)
            .arg(hi)
            .arg(&taps_i)
            .arg(&mut sa)
            .arg(&mut sd);
        // SAFETY: matches ATROUS; a chunk of rows of n in, two outputs alike.
        unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        Ok(())
    })
}

/// `y = Σ f v + Σ g w` (the MODWT's inverse level) over rows x n.
#[allow(clippy::too_many_arguments)]
fn level_sum<T: GpuReal>(
    gpu: &Gpu,
    (v, w): (&CudaSlice<T>, &CudaSlice<T>),
    rows: usize,
    n: usize,
    off: usize,
    s: usize,
    (f, g): (&CudaSlice<T>, &CudaSlice<T>),
    taps: usize,
    y: &mut CudaSlice<T>,
) -> Result<(), CudaError> {
    let inst = format!("ATROUS_SUM(kernel, {})", T::CUDA);
    let func = gpu.function(Kernel::Atrous, &inst, 0)?;
    let (n_i, off_i, s_i, taps_i) = (n as i64, off as i64, s as i64, taps as i32);
    by_row_chunks(rows, n, |span, cfg| {
        let (vs, ws) = (v.slice(span.clone()), w.slice(span.clone()));
        let mut ys = y.slice_mut(span);
        let mut b = gpu.stream.launch_builder(&func);
        b.arg(&vs)
            .arg(&ws)
            .arg(&n_i)
            .arg(&off_i)
            .arg(&s_i)
            .arg(f)
            .arg(g)
            .arg(&taps_i)
            .arg(&mut ys);
        // SAFETY: matches ATROUS_SUM; two inputs and one output of a chunk of rows.
        unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        Ok(())
    })
}

/// The first `dst.len()` values of `src`, after the stream's earlier work.
fn download_into<T: GpuReal>(
    gpu: &Gpu,
    src: &CudaSlice<T>,
    dst: &mut [T],
) -> Result<(), CudaError> {
    crate::transfer::download_into(gpu, &gpu.stream, src, 0, dst)?;
    gpu.synchronize()
}

/// `pywt.swt` of every row of `x` (rows of `n`), as multires::dwt::swt::swt.
#[allow(clippy::too_many_arguments)] // swt's own arguments, the device and its memory limit
pub fn swt<T: GpuReal>(
    gpu: &Arc<Gpu>,
    x: &[T],
    n: usize,
    w: &DiscreteWavelet,
    levels: usize,
    start_level: usize,
    norm: bool,
    mem_limit: Option<usize>,
) -> Result<Vec<SwtLevel<T>>, CudaError> {
    check_swt_levels(n, levels, start_level)?;
    let w = if norm {
        scaled_bank(w, 1.0 / std::f64::consts::SQRT_2)
    } else {
        w.clone()
    };
    let rows = x.len() / n;
    let (lo, hi) = (filters::<T>(gpu, &w.dec_lo)?, filters::<T>(gpu, &w.dec_hi)?);
    let taps = w.dec_lo.len();
    let mut out: Vec<SwtLevel<T>> = (0..levels)
        .map(|_| {
            (
                multires::memory::zeroed_vec::<T>(x.len()),
                multires::memory::zeroed_vec::<T>(x.len()),
            )
        })
        .collect();
    let block = rows_per_block::<T>(gpu, n, 3, mem_limit)?;
    for r0 in (0..rows).step_by(block) {
        let r = (rows - r0).min(block);
        let span = r0 * n..(r0 + r) * n;
        let mut cur = crate::cwt::upload(gpu, &x[span.clone()])?;
        let (mut a, mut d) = (alloc::<T>(gpu, r * n)?, alloc::<T>(gpu, r * n)?);
        for (i, j) in (start_level..start_level + levels).enumerate() {
            let s = 1usize << j;
            level(
                gpu,
                &cur,
                r,
                n,
                taps * s / 2,
                s,
                (&lo, &hi),
                taps,
                &mut a,
                &mut d,
            )?;
            let (ha, hd) = &mut out[levels - 1 - i];
            download_into(gpu, &a, &mut ha[span.clone()])?;
            download_into(gpu, &d, &mut hd[span.clone()])?;
            std::mem::swap(&mut cur, &mut a);
        }
    }
    Ok(out)
}

fn check_modwt(n: usize, levels: usize, w: &DiscreteWavelet) -> Result<(), CudaError> {
    let max = modwt_max_level(n);
    if n == 0 {
        return Err(DwtError::EmptySignal.into());
    }
    if !w.orthogonal {
        return Err(DwtError::NotAvailable(format!(
            "the MODWT needs an orthogonal wavelet; {} is biorthogonal",
            w.name
        ))
        .into());
    }
    if levels == 0 || levels > max {
        return Err(DwtError::BadLevel {
            level: levels,
            why: format!("the MODWT of {n} samples has levels 1..={max}"),
        }
        .into());
    }
    Ok(())
}

fn modwt_bank<T: GpuReal>(
    gpu: &Gpu,
    w: &DiscreteWavelet,
    reversed: bool,
) -> Result<(CudaSlice<T>, CudaSlice<T>), CudaError> {
    let scale = |f: &[f64]| -> Vec<f64> {
        let v: Vec<f64> = f.iter().map(|c| c * FRAC_1_SQRT_2).collect();
        if reversed {
            v.into_iter().rev().collect()
        } else {
            v
        }
    };
    Ok((
        filters::<T>(gpu, &scale(&w.rec_lo))?,
        filters::<T>(gpu, &scale(&w.rec_hi))?,
    ))
}

/// MATLAB's `modwt` of every row (rows of `n`): W_1 ... W_levels, V_levels.
pub fn modwt<T: GpuReal>(
    gpu: &Arc<Gpu>,
    x: &[T],
    n: usize,
    w: &DiscreteWavelet,
    levels: usize,
    mem_limit: Option<usize>,
) -> Result<Vec<Vec<T>>, CudaError> {
    check_modwt(n, levels, w)?;
    let rows = x.len() / n;
    let (g, h) = modwt_bank::<T>(gpu, w, false)?;
    let taps = w.rec_lo.len();
    let mut out: Vec<Vec<T>> = (0..=levels)
        .map(|_| multires::memory::zeroed_vec::<T>(x.len()))
        .collect();
    let block = rows_per_block::<T>(gpu, n, 3, mem_limit)?;
    for r0 in (0..rows).step_by(block) {
        let r = (rows - r0).min(block);
        let span = r0 * n..(r0 + r) * n;
        let mut v = crate::cwt::upload(gpu, &x[span.clone()])?;
        let (mut vn, mut wj) = (alloc::<T>(gpu, r * n)?, alloc::<T>(gpu, r * n)?);
        for j in 1..=levels {
            level(
                gpu,
                &v,
                r,
                n,
                0,
                1 << (j - 1),
                (&g, &h),
                taps,
                &mut vn,
                &mut wj,
            )?;
            download_into(gpu, &wj, &mut out[j - 1][span.clone()])?;
            std::mem::swap(&mut v, &mut vn);
        }
        download_into(gpu, &v, &mut out[levels][span])?;
    }
    Ok(out)
}

/// The planes' rows, each block of rows through the inverse from level
/// `from` (with `keep(j)` choosing which detail planes take part, the
/// smooth included when `smooth`), into `dst`.
#[allow(clippy::too_many_arguments)]
fn inverse_into<T: GpuReal>(
    gpu: &Arc<Gpu>,
    planes: &[Vec<T>],
    n: usize,
    w: &DiscreteWavelet,
    from: usize,
    keep: &dyn Fn(usize) -> bool,
    smooth: bool,
    mem_limit: Option<usize>,
    dst: &mut [T],
) -> Result<(), CudaError> {
    let len = planes[0].len();
    let rows = len / n;
    let (gr, hr) = modwt_bank::<T>(gpu, w, true)?;
    let taps = w.rec_lo.len();
    let zeros = vec![T::zero(); len.min(rows_per_block::<T>(gpu, n, 4, mem_limit)? * n)];
    let block = rows_per_block::<T>(gpu, n, 4, mem_limit)?;
    for r0 in (0..rows).step_by(block) {
        let r = (rows - r0).min(block);
        let span = r0 * n..(r0 + r) * n;
        let z = &zeros[..r * n];
        let top = if smooth {
            &planes[planes.len() - 1][span.clone()]
        } else {
            z
        };
        let mut v = crate::cwt::upload(gpu, top)?;
        let mut y = alloc::<T>(gpu, r * n)?;
        for j in (1..=from).rev() {
            let wj = crate::cwt::upload(
                gpu,
                if keep(j) {
                    &planes[j - 1][span.clone()]
                } else {
                    z
                },
            )?;
            let s = 1usize << (j - 1);
            level_sum(
                gpu,
                (&v, &wj),
                r,
                n,
                (taps - 1) * s,
                s,
                (&gr, &hr),
                taps,
                &mut y,
            )?;
            std::mem::swap(&mut v, &mut y);
        }
        download_into(gpu, &v, &mut dst[span])?;
    }
    Ok(())
}

fn check_planes<T>(planes: &[Vec<T>], n: usize) -> Result<usize, CudaError> {
    let levels = planes.len().saturating_sub(1);
    if levels == 0
        || n == 0
        || planes
            .iter()
            .any(|p| p.len() != planes[0].len() || p.len() % n != 0)
    {
        return Err(DwtError::CoefficientMismatch(format!(
            "a MODWT is at least two planes (W_1 and V_J) of whole rows of {n}, all one size"
        ))
        .into());
    }
    Ok(levels)
}

/// MATLAB's `imodwt`: the rows of `modwt`'s planes.
pub fn imodwt<T: GpuReal>(
    gpu: &Arc<Gpu>,
    planes: &[Vec<T>],
    n: usize,
    w: &DiscreteWavelet,
    mem_limit: Option<usize>,
) -> Result<Vec<T>, CudaError> {
    let levels = check_planes(planes, n)?;
    check_modwt(n, levels, w)?;
    let mut out = multires::memory::zeroed_vec::<T>(planes[0].len());
    inverse_into(
        gpu,
        planes,
        n,
        w,
        levels,
        &|_| true,
        true,
        mem_limit,
        &mut out,
    )?;
    Ok(out)
}

/// MATLAB's `modwtmra`: D_1 ... D_J and S_J of `modwt`'s planes.
pub fn modwtmra<T: GpuReal>(
    gpu: &Arc<Gpu>,
    planes: &[Vec<T>],
    n: usize,
    w: &DiscreteWavelet,
    mem_limit: Option<usize>,
) -> Result<Vec<Vec<T>>, CudaError> {
    let levels = check_planes(planes, n)?;
    check_modwt(n, levels, w)?;
    let mut out = Vec::with_capacity(levels + 1);
    for j in 1..=levels {
        let mut d = multires::memory::zeroed_vec::<T>(planes[0].len());
        inverse_into(gpu, planes, n, w, j, &|k| k == j, false, mem_limit, &mut d)?;
        out.push(d);
    }
    let mut s = multires::memory::zeroed_vec::<T>(planes[0].len());
    inverse_into(
        gpu,
        planes,
        n,
        w,
        levels,
        &|_| false,
        true,
        mem_limit,
        &mut s,
    )?;
    out.push(s);
    Ok(out)
}

/// skimage's denoise_wavelet with the transforms on the GPU (wavedecn and
/// waverecn in `plan`'s mode, symmetric for skimage's results) and the
/// thresholds on the host (multires::dwt::denoise::shrink, as the CPU's).
pub fn denoise<T: GpuReal>(
    plan: &crate::dwt::GpuDwt<T>,
    x: &ndarray::ArrayD<T>,
    o: &multires::dwt::denoise::DenoiseOptions,
) -> Result<(ndarray::ArrayD<T>, f64), CudaError> {
    use multires::dwt::denoise as dn;
    dn::check_input(&x.view())?;
    let axes: Vec<isize> = (0..x.ndim() as isize).collect();
    let levels = o
        .levels
        .unwrap_or_else(|| dn::default_levels(x.shape(), plan.wavelet.filter_len()));
    let mut c = crate::dwtn::wavedecn(plan, x, Some(levels), &axes)?;
    let sigma = dn::shrink(&mut c, x.len(), o)?;
    Ok((
        dn::cut_to(crate::dwtn::waverecn(plan, &c, &axes)?, x.shape()),
        sigma,
    ))
}

/// One level of `swt_from_device`: (cA, cD) on the device.
pub type DeviceLevel<T> = (CudaSlice<T>, CudaSlice<T>);

/// `swt` of rows already on the device (CUDA arrays through DLPack): the
/// levels' (cA, cD) stay on the device, each its own buffer, coarsest first.
///
/// # Safety
/// `src` must be the device address of `rows` x `n` values of T,
/// C-contiguous, readable in this GPU's primary context until this returns.
#[allow(clippy::too_many_arguments)] // swt's own arguments and the device input
pub unsafe fn swt_from_device<T: GpuReal>(
    gpu: &Arc<Gpu>,
    src: u64,
    rows: usize,
    n: usize,
    w: &DiscreteWavelet,
    levels: usize,
    start_level: usize,
    norm: bool,
) -> Result<Vec<DeviceLevel<T>>, CudaError> {
    check_swt_levels(n, levels, start_level)?;
    if rows == 0 {
        return Err(DwtError::EmptySignal.into());
    }
    let w = if norm {
        scaled_bank(w, 1.0 / std::f64::consts::SQRT_2)
    } else {
        w.clone()
    };
    let (lo, hi) = (filters::<T>(gpu, &w.dec_lo)?, filters::<T>(gpu, &w.dec_hi)?);
    let taps = w.dec_lo.len();
    let mut x = alloc::<T>(gpu, rows * n)?;
    {
        use cudarc::driver::DevicePtrMut;
        let (dst, _sync) = x.device_ptr_mut(&gpu.stream);
        cudarc::driver::result::memcpy_dtod_async(
            dst,
            src,
            rows * n * std::mem::size_of::<T>(),
            gpu.stream.cu_stream(),
        )
        .during(|| "copying the device signal".into())?;
    }
    let mut out: Vec<DeviceLevel<T>> = Vec::with_capacity(levels);
    for j in start_level..start_level + levels {
        let s = 1usize << j;
        let (mut a, mut d) = (alloc::<T>(gpu, rows * n)?, alloc::<T>(gpu, rows * n)?);
        let input = out.last().map_or(&x, |(ca, _)| ca);
        level(
            gpu,
            input,
            rows,
            n,
            taps * s / 2,
            s,
            (&lo, &hi),
            taps,
            &mut a,
            &mut d,
        )?;
        out.push((a, d));
    }
    gpu.synchronize()?;
    drop(x);
    out.reverse();
    Ok(out)
}
