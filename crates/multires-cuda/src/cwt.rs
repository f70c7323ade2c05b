//! The CWT on the GPU: seed 000's engine. Masks come from the CPU plan's
//! packed array (generated in float64, shortest first); each scale is
//! computed either directly (short masks together, long masks in pieces) or
//! by the fused shared-memory overlap-save, the same engine as the FIR bank,
//! as the cost model chooses. Every path computes DESIGN.md's exact sum.

use crate::cufft_ols::CufftGroup;
use crate::device::Gpu;
use crate::device::Registered;
use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use crate::masks::DeviceMasks;
use crate::spectra::twiddles;
use crate::GpuReal;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use multires::cwt::{Algorithm, CwtValues, HalfFloat, OutputKind};
use multires::{CwtPlan, Signal};
use num_complex::Complex64;
use rayon::prelude::*;
use std::fmt;
use std::sync::Arc;

/// Threads and outputs per thread of cwt_direct.cu (BLOCK, OPT).
const DIRECT_BLOCK: usize = 128;
const DIRECT_OPT: usize = 8;
const DIRECT_TILE: usize = DIRECT_BLOCK * DIRECT_OPT;
/// Taps one direct work item may hold (short masks together, or one piece of a long one).
const ITEM_TAPS: usize = 2048;

/// How one scale is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuScale {
    Direct { pieces: usize },
    Ols { segment: usize },
    Cufft { segment: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Direct,
    Sm(usize),
    Cufft,
}

/// What the GPU planner chose, for `--explain`.
#[derive(Debug, Clone)]
pub struct GpuRecipe {
    pub device: String,
    /// Per user scale.
    pub per_scale: Vec<GpuScale>,
    pub direct_items: usize,
    /// (segment size, filters, segments, filters per block) of each overlap-save
    /// group; filters per block 0 marks the cuFFT group.
    pub groups: Vec<(usize, usize, usize, usize)>,
}

impl fmt::Display for GpuRecipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let direct = self
            .per_scale
            .iter()
            .filter(|s| matches!(s, GpuScale::Direct { .. }))
            .count();
        let pieces: usize = self
            .per_scale
            .iter()
            .map(|s| match s {
                GpuScale::Direct { pieces } if *pieces > 1 => *pieces,
                _ => 0,
            })
            .sum();
        writeln!(f, "GPU plan on {}:", self.device)?;
        writeln!(
            f,
            "  direct: {direct} scales in {} work items (one shared-memory tile per item; {pieces} pieces of long masks added in order)",
            self.direct_items
        )?;
        for (l, nf, seg, fg) in &self.groups {
            if *fg == 0 {
                writeln!(
                    f,
                    "  cuFFT overlap-save: {nf} scales too long for shared memory, segment size {l}: {seg} segments"
                )?;
                continue;
            }
            writeln!(
                f,
                "  SM-OLS: {nf} scales with segment size {l}: {seg} segments, {fg} filters per block"
            )?;
        }
        Ok(())
    }
}

struct DirectPart<T: GpuReal> {
    mr: CudaSlice<T>,
    mi: CudaSlice<T>,
    centre: CudaSlice<i64>,
    half: CudaSlice<i32>,
    row: CudaSlice<i32>,
    items: CudaSlice<i32>,
    n_items: usize,
    smem_span: usize,
    partial: CudaSlice<T>,
    reds: CudaSlice<i32>,
    n_reds: usize,
}

pub(crate) struct OlsGroup<T: GpuReal> {
    pub l: usize,
    pub stride: usize,
    pub u0: usize,
    pub count: usize,
    pub segments: usize,
    pub origin: i64,
    pub h: CudaSlice<T>,
    pub hoff: CudaSlice<i64>,
    pub blo: CudaSlice<i32>,
    pub blen: CudaSlice<i32>,
    pub frow: CudaSlice<i32>,
    pub nf: usize,
    pub fg: usize,
}

pub(crate) struct SignalOnGpu<T: GpuReal> {
    pub(crate) re: CudaSlice<T>,
    pub(crate) im: Option<CudaSlice<T>>,
}

/// A CWT planned on the GPU; the signal and the output stay on the device
/// between `upload`, `launch` and `download`.
pub struct CudaCwt<T: GpuReal> {
    gpu: Arc<Gpu>,
    /// The stream its launches and per-run copies go to (windows of a
    /// chunked run use two, so copies overlap compute).
    stream: Arc<CudaStream>,
    rows: usize,
    cols: usize,
    hop: usize,
    pad: usize,
    /// Windows only: extra samples beyond `pad` on each side, so every
    /// overlap-save group can start its segments where the in-memory run's
    /// segments start (the longest segment stride).
    lead: usize,
    /// Windows only: the window's first work column in the whole transform.
    shift: usize,
    kind: OutputKind,
    /// Magnitude or power stored as 16-bit floats.
    half: Option<HalfFloat>,
    complex_masks: bool,
    direct: Option<DirectPart<T>>,
    groups: Vec<OlsGroup<T>>,
    cufft: Option<CufftGroup<T>>,
    tw: CudaSlice<T>,
    twl: usize,
    signal: Option<SignalOnGpu<T>>,
    out: CudaSlice<T>,
    recipe: GpuRecipe,
}

/// The store step's code in common.cuh (OUT_*).
pub(crate) fn out_code(kind: OutputKind, half: Option<HalfFloat>) -> i32 {
    match (kind, half) {
        (OutputKind::Magnitude, Some(HalfFloat::F16)) => 5,
        (OutputKind::Power, Some(HalfFloat::F16)) => 6,
        (OutputKind::Magnitude, Some(HalfFloat::BF16)) => 7,
        (OutputKind::Power, Some(HalfFloat::BF16)) => 8,
        (OutputKind::Complex, _) => 0,
        (OutputKind::Magnitude, _) => 1,
        (OutputKind::Power, _) => 2,
        (OutputKind::Phase, _) => 3,
    }
}

/// Largest overlap-save segment the device's shared memory holds (two complex buffers).
pub(crate) fn max_segment<T: GpuReal>(gpu: &Gpu) -> usize {
    // Two complex buffers: the segment spectrum and the product.
    let need = |l: usize| 2 * l * 2 * std::mem::size_of::<T>();
    let mut l = 256;
    while need(2 * l) <= gpu.info.smem_per_block_optin && l < (1 << 14) {
        l *= 2;
    }
    l
}

/// Segment size for a filter spanning `span` samples: about four times its
/// length, within what shared memory holds.
pub(crate) fn segment_for(span: usize, lmax: usize) -> Option<usize> {
    if span > lmax / 2 {
        return None;
    }
    Some((4 * span).next_power_of_two().clamp(256, lmax))
}

/// Relative cost per output of the two paths (a model; `--explain` shows the choice).
fn direct_cost(taps: usize, complex_mask: bool) -> f64 {
    taps as f64 * if complex_mask { 0.25 } else { 0.125 }
}
fn ols_cost(taps: usize, l: usize) -> f64 {
    let v = (l - (taps - 1)) as f64;
    l as f64 / v * ((l as f64).log2() * 1.0 + 6.0)
}

pub(crate) fn upload<
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + bytemuck::Pod,
>(
    gpu: &Gpu,
    v: &[T],
) -> Result<CudaSlice<T>, CudaError> {
    crate::transfer::upload(gpu, &gpu.stream, v)
}

pub(crate) fn check_free(gpu: &Gpu, need: u128) -> Result<(), CudaError> {
    let free = gpu.free_mem()? as u128;
    if need > free {
        return Err(CudaError::OutOfMemory { need, free });
    }
    Ok(())
}

impl<T: GpuReal> CudaCwt<T> {
    pub fn new(gpu: Arc<Gpu>, plan: &CwtPlan) -> Result<Self, CudaError> {
        Self::window(gpu, plan, None)
    }

    /// A plan for a window of `columns` output columns (a chunk of a longer
    /// run, fed by `upload_extended`), or the whole transform for None.
    pub fn window(
        gpu: Arc<Gpu>,
        plan: &CwtPlan,
        columns: Option<usize>,
    ) -> Result<Self, CudaError> {
        let stream = gpu.stream.clone();
        Self::window_on(gpu, plan, columns, stream)
    }

    /// `window` with launches on `stream`. Constant data (masks, spectra)
    /// is uploaded on the GPU's default stream and waited for here.
    pub fn window_on(
        gpu: Arc<Gpu>,
        plan: &CwtPlan,
        columns: Option<usize>,
        stream: Arc<CudaStream>,
    ) -> Result<Self, CudaError> {
        let opts = plan.options();
        let masks = plan.mask_layout();
        let rows = opts.scales.len();
        let cols = columns.unwrap_or_else(|| plan.columns());
        let hop = opts.hop;
        let kind = opts.output;
        let complex_masks = opts.wavelet.is_complex();
        // Seed 000 III-A: the host has only the lengths and offsets; the
        // GPU samples every tap.
        let on_gpu = DeviceMasks::generate(&gpu, plan)?;
        let lmax = max_segment::<T>(&gpu);
        let np = masks.lengths.len();
        // Per packed mask: direct, shared-memory overlap-save with segment
        // L, or (masks too long for shared memory) overlap-save through cuFFT.
        let choice: Vec<Path> = (0..np)
            .map(|p| {
                let taps = masks.lengths[p];
                let seg = segment_for(taps - 1, lmax);
                match (opts.algorithm, seg) {
                    (Algorithm::Direct, _) => Path::Direct,
                    (Algorithm::Fft, Some(l)) => Path::Sm(l),
                    (Algorithm::Fft, None) => Path::Cufft,
                    (Algorithm::Auto, None) => {
                        if taps > ITEM_TAPS {
                            Path::Cufft
                        } else {
                            Path::Direct
                        }
                    }
                    (Algorithm::Auto, Some(l)) => {
                        if hop == 1 && ols_cost(taps, l) < direct_cost(taps, complex_masks) {
                            Path::Sm(l)
                        } else {
                            Path::Direct
                        }
                    }
                }
            })
            .collect();
        let pad = masks.lengths.iter().map(|l| l / 2).max().unwrap_or(0);
        let mut per_scale = vec![GpuScale::Direct { pieces: 1 }; rows];

        // Direct part: runs of short masks, pieces of long ones.
        let direct_ps: Vec<usize> = (0..np).filter(|&p| choice[p] == Path::Direct).collect();
        let direct = if direct_ps.is_empty() {
            None
        } else {
            let (mut centre, mut half, mut row) = (Vec::new(), Vec::new(), Vec::new());
            let mut taps_so_far = 0usize;
            for &p in &direct_ps {
                let taps = masks.lengths[p];
                centre.push((taps_so_far + taps / 2) as i64);
                half.push((taps / 2) as i32);
                row.push(masks.scale_index[p] as i32);
                taps_so_far += taps;
            }
            let (mut items, mut reds) = (Vec::<i32>::new(), Vec::<i32>::new());
            let mut slots = 0usize;
            let mut span_max = 0usize;
            let mut m = 0usize;
            // Enough work items that the grid covers the GPU several times:
            // short masks share a tile only while the items stay numerous.
            let tiles = cols.div_ceil(DIRECT_TILE).max(1);
            let want_items = (4 * gpu.info.sms.max(1) as usize).div_ceil(tiles);
            let per_item = direct_ps.len().div_ceil(want_items).max(1);
            while m < direct_ps.len() {
                let taps = 2 * half[m] as usize + 1;
                if taps > ITEM_TAPS {
                    let pieces = taps.div_ceil(ITEM_TAPS);
                    let each = taps.div_ceil(pieces);
                    let h = half[m] as i64;
                    reds.extend([slots as i32, pieces as i32, row[m]]);
                    for i in 0..pieces {
                        let klo = -h + (i * each) as i64;
                        let khi = (klo + each as i64 - 1).min(h);
                        items.extend([m as i32, 1, klo as i32, khi as i32, slots as i32]);
                        slots += 1;
                        span_max = span_max.max((khi - klo + 1) as usize);
                    }
                    per_scale[masks.scale_index[direct_ps[m]]] = GpuScale::Direct { pieces };
                    m += 1;
                    continue;
                }
                // Consecutive masks (ascending length) while their taps fit one item.
                let first = m;
                let mut sum = 0usize;
                while m < direct_ps.len() {
                    let t = 2 * half[m] as usize + 1;
                    if t > ITEM_TAPS
                        || (m > first && (sum + t > ITEM_TAPS || m - first >= per_item))
                    {
                        break;
                    }
                    sum += t;
                    m += 1;
                }
                let h = half[m - 1];
                items.extend([first as i32, (m - first) as i32, -h, h, -1]);
                span_max = span_max.max(2 * h as usize + 1);
            }
            let n_items = items.len() / 5;
            if n_items > 65535 {
                return Err(CudaError::Unsupported(format!(
                    "{n_items} direct work items exceed the grid's 65535; use fewer scales per run"
                )));
            }
            let partial_len = (slots * cols * 2).max(2);
            check_free(
                &gpu,
                (partial_len + 2 * taps_so_far) as u128 * std::mem::size_of::<T>() as u128,
            )?;
            let (mr, mi) = on_gpu.to_direct::<T>(&gpu, &direct_ps)?;
            let partial = gpu
                .stream
                .alloc_zeros::<T>(partial_len)
                .during(|| "allocating the partial sums of long masks".into())?;
            Some(DirectPart {
                mr,
                mi,
                centre: upload(&gpu, &centre)?,
                half: upload(&gpu, &half)?,
                row: upload(&gpu, &row)?,
                items: upload(&gpu, &items)?,
                n_items,
                smem_span: span_max,
                partial,
                n_reds: reds.len() / 3,
                reds: upload(&gpu, &reds)?,
            })
        };

        // Overlap-save groups, one per segment size.
        let floor = if std::mem::size_of::<T>() == 4 {
            f32::EPSILON as f64 * 1e-3
        } else {
            f64::EPSILON * 1e-3
        };
        let mut sizes: Vec<usize> = choice
            .iter()
            .filter_map(|c| match c {
                Path::Sm(l) => Some(*l),
                _ => None,
            })
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        let mut groups = Vec::new();
        let mut recipe_groups = Vec::new();
        let work_len = match columns {
            Some(c) => c * hop,
            None => plan.work_len(),
        };
        let half_of = |ps: &[usize]| ps.iter().map(|&p| masks.lengths[p] / 2).max().unwrap_or(0);
        let long: Vec<usize> = (0..np).filter(|&p| choice[p] == Path::Cufft).collect();
        let cufft_l = (8 * half_of(&long).max(1)).next_power_of_two();
        // A window's segments sit on the in-memory run's segment grid, so a
        // window reproduces the in-memory run bit for bit: it reads up to
        // one stride more on each side and runs one segment more.
        let lead = if columns.is_some() {
            let mut strides: Vec<usize> = sizes
                .iter()
                .map(|&l| {
                    let ps: Vec<usize> = (0..np).filter(|&p| choice[p] == Path::Sm(l)).collect();
                    l - 2 * half_of(&ps)
                })
                .collect();
            if !long.is_empty() {
                strides.push(cufft_l - 2 * half_of(&long));
            }
            strides.into_iter().max().unwrap_or(0)
        } else {
            0
        };
        let extra_segment = usize::from(lead > 0);
        for &l in &sizes {
            let ps: Vec<usize> = (0..np).filter(|&p| choice[p] == Path::Sm(l)).collect();
            let hg = ps.iter().map(|&p| masks.lengths[p] / 2).max().unwrap_or(0);
            let v = l - 2 * hg;
            let segments = work_len.div_ceil(v) + extra_segment;
            let bands = on_gpu.spectra::<T>(&gpu, &ps, l, hg, floor, l / 4)?;
            let mut frow = Vec::new();
            for &p in &ps {
                frow.push(masks.scale_index[p] as i32);
                per_scale[masks.scale_index[p]] = GpuScale::Ols { segment: l };
            }
            let nf = ps.len();
            // Filters per block as in the in-memory run (the same pairs).
            let fg = filters_per_block::<T>(&gpu, l, plan.work_len().div_ceil(v), nf);
            recipe_groups.push((l, nf, segments, fg));
            groups.push(OlsGroup {
                l,
                stride: v,
                u0: 0,
                count: v,
                segments,
                origin: (pad + lead) as i64 - hg as i64,
                h: bands.h,
                hoff: bands.hoff,
                blo: bands.blo,
                blen: bands.blen,
                frow: upload(&gpu, &frow)?,
                nf,
                fg,
            });
        }
        // Masks beyond shared memory: one cuFFT group.
        let cufft = if long.is_empty() {
            None
        } else {
            let hg = long
                .iter()
                .map(|&p| masks.lengths[p] / 2)
                .max()
                .unwrap_or(0);
            let l = cufft_l;
            let bands = on_gpu.spectra::<T>(&gpu, &long, l, hg, floor, usize::MAX)?;
            let mut rows = Vec::new();
            for &p in &long {
                rows.push(masks.scale_index[p] as i32);
                per_scale[masks.scale_index[p]] = GpuScale::Cufft { segment: l };
            }
            let g = CufftGroup::new(
                &gpu,
                stream.clone(),
                l,
                l - 2 * hg,
                work_len + extra_segment * (l - 2 * hg),
                (pad + lead) as i64 - hg as i64,
                bands,
                &rows,
            )?;
            recipe_groups.push((l, g.nf, g.segments(), 0));
            Some(g)
        };
        let twl = sizes.last().copied().unwrap_or(2);
        let tw: Vec<T> = twiddles(twl).into_iter().map(T::of).collect();
        let elem = if kind == OutputKind::Complex { 2 } else { 1 };
        let half = opts.half;
        // 16-bit outputs: the buffer's T values hold two (f32) or four.
        let out_len = match half {
            Some(_) => (rows * cols * 2).div_ceil(std::mem::size_of::<T>()),
            None => rows * cols * elem,
        };
        check_free(&gpu, out_len as u128 * std::mem::size_of::<T>() as u128)?;
        // Safety of contents is not needed: every element is written by a launch.
        let out = gpu
            .stream
            .alloc_zeros::<T>(out_len.max(1))
            .during(|| format!("allocating the {rows} x {cols} output"))?;
        let recipe = GpuRecipe {
            device: gpu.info.name.clone(),
            per_scale,
            direct_items: direct.as_ref().map_or(0, |d| d.n_items),
            groups: recipe_groups,
        };
        let tw = upload(&gpu, &tw)?;
        gpu.synchronize()?;
        Ok(CudaCwt {
            tw,
            twl,
            gpu,
            stream,
            rows,
            cols,
            hop,
            pad,
            lead,
            shift: 0,
            kind,
            half,
            complex_masks,
            direct,
            groups,
            cufft,
            signal: None,
            out,
            recipe,
        })
    }

    pub fn recipe(&self) -> &GpuRecipe {
        &self.recipe
    }

    /// Checks, oversamples and extends the signal on the host and copies it to the device.
    pub fn upload(&mut self, plan: &CwtPlan, signal: &Signal) -> Result<(), CudaError> {
        let o = plan.options();
        if let (multires::signal::Samples::Real(x), 1) = (&signal.samples, o.oversampling) {
            plan.check_signal(signal)?;
            let x: Vec<T> = x.par_iter().map(|&v| T::of(v)).collect();
            return self.upload_real(plan, &x);
        }
        let xe = plan.extended_signal(signal, self.pad)?;
        let re: Vec<T> = xe.par_iter().map(|c| T::of(c.re)).collect();
        let im = if signal.is_complex() {
            let v: Vec<T> = xe.par_iter().map(|c| T::of(c.im)).collect();
            Some(crate::transfer::upload(&self.gpu, &self.stream, &v)?)
        } else {
            None
        };
        self.signal = Some(SignalOnGpu {
            re: crate::transfer::upload(&self.gpu, &self.stream, &re)?,
            im,
        });
        Ok(())
    }

    /// A real signal in the plan's precision (a float32 array stays
    /// float32): extended by the boundary rule on the host and copied up
    /// through the page-locked ring. No oversampling.
    pub fn upload_real(&mut self, plan: &CwtPlan, x: &[T]) -> Result<(), CudaError> {
        let o = plan.options();
        if o.oversampling != 1 || x.len() != plan.signal_len() {
            return Err(CudaError::Unsupported(format!(
                "upload_real takes the plan's {} samples without oversampling (got {}, oversampling {})",
                plan.signal_len(),
                x.len(),
                o.oversampling
            )));
        }
        if let Some(index) = x.par_iter().position_first(|v| !v.is_finite()) {
            let value = format!("{}", x[index].f64());
            if !o.allow_nonfinite {
                return Err(multires::cwt::CwtError::NonFinite { index, value }.into());
            }
            if o.algorithm != multires::cwt::Algorithm::Direct {
                return Err(multires::cwt::CwtError::NonFiniteFft { index, value }.into());
            }
        }
        let (n, pad, boundary) = (x.len(), self.pad, o.boundary);
        let mut xe = multires::memory::touched_vec::<T>(n + 2 * pad);
        xe.par_iter_mut().enumerate().for_each(|(i, v)| {
            if let Some(k) = boundary.fold(i as i64 - pad as i64, n) {
                *v = x[k];
            }
        });
        self.signal = Some(SignalOnGpu {
            re: crate::transfer::upload(&self.gpu, &self.stream, &xe)?,
            im: None,
        });
        Ok(())
    }

    /// C real signals of the plan's length (rows of `x`, the plan's
    /// precision) into C transforms (rows of `out`, `output_bytes()` each):
    /// each row up, its kernels, its coefficients down through the ring,
    /// reusing the plan's buffers.
    pub fn transform_rows(
        &mut self,
        plan: &CwtPlan,
        x: &[T],
        out: &mut [T],
    ) -> Result<(), CudaError> {
        let n = plan.signal_len();
        let per = self.out.len();
        crate::check_rows(n, per, x.len(), out.len())?;
        for (row, dst) in x.chunks(n).zip(out.chunks_mut(per)) {
            self.upload_real(plan, row)?;
            self.launch()?;
            self.download_raw(dst)?;
        }
        Ok(())
    }

    /// Samples a window needs beyond its columns on each side.
    pub fn halo(&self) -> usize {
        self.pad + self.lead
    }

    /// The mask half-length the boundary extends the signal by.
    pub(crate) fn pad(&self) -> usize {
        self.pad
    }

    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Elements of the output (complex interleaved), rows of `columns()`.
    pub(crate) fn output_len(&self) -> usize {
        self.out.len()
    }

    /// The window's input on the device (a stream assembles it there).
    pub(crate) fn input_mut(&mut self) -> Option<&mut SignalOnGpu<T>> {
        self.signal.as_mut()
    }

    /// Puts `other` in as the input, and the input where `other` was.
    pub(crate) fn swap_input(&mut self, other: &mut Option<SignalOnGpu<T>>) {
        std::mem::swap(&mut self.signal, other);
    }

    /// Where the next window starts: its first work column (column x hop)
    /// in the whole transform.
    pub fn set_window_start(&mut self, work_column: usize) {
        self.shift = work_column;
    }

    pub fn columns(&self) -> usize {
        self.cols
    }

    /// Copies an already extended signal (the window's columns times hop plus
    /// `halo()` samples each side; shorter slices are zero-filled) to the device.
    pub fn upload_extended(&mut self, xe: &[Complex64], complex: bool) -> Result<(), CudaError> {
        let len = self.cols * self.hop + 2 * self.halo();
        let mut re = vec![T::of(0.0); len];
        for (d, s) in re.iter_mut().zip(xe) {
            *d = T::of(s.re);
        }
        let im = if complex {
            let mut v = vec![T::of(0.0); len];
            for (d, s) in v.iter_mut().zip(xe) {
                *d = T::of(s.im);
            }
            Some(upload(&self.gpu, &v)?)
        } else {
            None
        };
        self.signal = Some(SignalOnGpu {
            re: upload(&self.gpu, &re)?,
            im,
        });
        Ok(())
    }

    /// The signal from device memory (an array another library holds on
    /// this GPU, through DLPack), extended by zeros on the device: no host
    /// round trip. Real signals with the 'zero' boundary and no
    /// oversampling only; other cases go through `upload`.
    ///
    /// # Safety
    /// `src` must be the device address of `plan.signal_len()` values of T,
    /// readable in this GPU's primary context, and stay valid until the
    /// stream has run the copy (`launch` and a download wait for it).
    pub unsafe fn upload_from_device(&mut self, plan: &CwtPlan, src: u64) -> Result<(), CudaError> {
        let o = plan.options();
        if o.boundary != multires::Boundary::Zero || o.oversampling != 1 {
            return Err(CudaError::Unsupported(
                "a device-resident signal is read on the device with boundary 'zero' and no oversampling".into(),
            ));
        }
        let n = plan.signal_len();
        let size = std::mem::size_of::<T>();
        let mut re = self
            .stream
            .alloc_zeros::<T>(n + 2 * self.pad)
            .during(|| "allocating the extended signal".into())?;
        {
            use cudarc::driver::DevicePtrMut;
            let (dst, _sync) = re.device_ptr_mut(&self.stream);
            cudarc::driver::result::memcpy_dtod_async(
                dst + (self.pad * size) as u64,
                src,
                n * size,
                self.stream.cu_stream(),
            )
            .during(|| "copying the device signal".into())?;
        }
        self.signal = Some(SignalOnGpu { re, im: None });
        Ok(())
    }

    /// Queues a copy of the output (rows of `columns()`, complex
    /// interleaved; `output_bytes()` in all) to device address `dst`.
    ///
    /// # Safety
    /// `dst` must be writable device memory of `output_bytes()` in this
    /// GPU's context, valid until `synchronize` returns.
    pub unsafe fn copy_output_to(&self, dst: u64) -> Result<(), CudaError> {
        use cudarc::driver::DevicePtr;
        let (src, _sync) = self.out.device_ptr(&self.stream);
        cudarc::driver::result::memcpy_dtod_async(
            dst,
            src,
            self.output_bytes(),
            self.stream.cu_stream(),
        )
        .during(|| "copying the coefficients on the device".into())
    }

    /// The output buffer itself, handed to the caller (a DLPack consumer)
    /// after the stream's work, and a fresh one put in its place: no copy.
    pub fn take_output(&mut self) -> Result<CudaSlice<T>, CudaError> {
        // Every kernel writes every element (the poison test), so the new
        // buffer need not be zeroed.
        let fresh = unsafe { self.stream.alloc::<T>(self.out.len()) }
            .during(|| "allocating the next output".into())?;
        self.synchronize()?;
        Ok(std::mem::replace(&mut self.out, fresh))
    }

    /// Waits for everything queued on the plan's stream.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.stream
            .synchronize()
            .during(|| "waiting for the GPU".into())
    }

    /// The output as plain elements (complex interleaved), rows of `columns()`.
    /// A 16-bit output (planned with `half`) as its bits, rows of
    /// `columns()`, through the ring straight into `host`.
    pub fn download_half(&self, host: &mut [u16]) -> Result<(), CudaError> {
        let n = self.rows * self.cols;
        if self.half.is_none() || host.len() != n {
            return Err(CudaError::Unsupported(format!(
                "{} 16-bit values given for a {} output of {n}",
                host.len(),
                self.half.map_or("float32 or float64", |h| h.numpy_name())
            )));
        }
        use cudarc::driver::DevicePtr;
        let (src, _sync) = self.out.device_ptr(&self.stream);
        // SAFETY: the buffer holds at least n 16-bit values (sized in
        // `window_on`) and is borrowed until the copy has completed.
        unsafe {
            crate::transfer::to_host_bytes(
                &self.gpu,
                &self.stream,
                src,
                bytemuck::cast_slice_mut(host),
            )
        }
    }

    /// Through the page-locked ring (`transfer`), straight into `host`.
    pub fn download_raw(&self, host: &mut [T]) -> Result<(), CudaError> {
        if self.half.is_some() {
            return Err(CudaError::Unsupported(
                "a 16-bit output is read with download_half".into(),
            ));
        }
        if host.len() != self.out.len() {
            return Err(CudaError::Unsupported(format!(
                "{} values given for an output of {}",
                host.len(),
                self.out.len()
            )));
        }
        crate::transfer::download_into(&self.gpu, &self.stream, &self.out, 0, host)
    }

    /// Fills the output with a value no kernel produces (tests: every element must be written).
    pub fn poison(&mut self) -> Result<(), CudaError> {
        use cudarc::driver::DevicePtrMut;
        let bytes = self.out.len() * std::mem::size_of::<T>();
        let (p, _sync) = self.out.device_ptr_mut(&self.stream);
        // All ones: a NaN in float16, bfloat16, float32 and float64 alike.
        unsafe { cudarc::driver::result::memset_d8_async(p, 0xFF, bytes, self.stream.cu_stream()) }
            .during(|| "poisoning the output".into())?;
        self.stream
            .synchronize()
            .during(|| "waiting for the GPU".into())
    }

    /// Queues every kernel of the transform on the stream (no wait).
    pub fn launch(&mut self) -> Result<(), CudaError> {
        let Some(sig) = &self.signal else {
            return Err(CudaError::Unsupported(
                "no signal on the GPU: call upload first".into(),
            ));
        };
        let gpu = &self.gpu;
        let cx = sig.im.is_some() as i32;
        let xi = sig.im.as_ref().unwrap_or(&sig.re);
        let xlen = sig.re.len() as i64;
        let oc = out_code(self.kind, self.half);
        let ncols = self.cols as i32;
        let hop = self.hop as i32;
        if let Some(d) = &self.direct {
            let elem = std::mem::size_of::<T>() * if cx == 1 { 2 } else { 1 };
            let smem = if self.hop == 1 {
                DIRECT_OPT * (DIRECT_BLOCK + d.smem_span.div_ceil(DIRECT_OPT) + 4) * elem
            } else {
                ((DIRECT_TILE - 1) * self.hop + d.smem_span) * elem
            };
            let inst = format!(
                "DIRECT(kernel, {}, {cx}, {}, {oc})",
                T::CUDA,
                self.complex_masks as i32
            );
            let f = gpu.function(Kernel::CwtDirect, &inst, smem).map_err(|e| match e {
                CudaError::Unsupported(_) if self.hop > 1 => CudaError::Unsupported(format!(
                    "--hop {} leaves the direct kernel's signal tile larger than shared memory; use a smaller hop or --device cpu",
                    self.hop
                )),
                e => e,
            })?;
            let xoff = (self.pad + self.lead) as i64;
            let cfg = LaunchConfig {
                grid_dim: (self.cols.div_ceil(DIRECT_TILE) as u32, d.n_items as u32, 1),
                block_dim: (DIRECT_BLOCK as u32, 1, 1),
                shared_mem_bytes: smem as u32,
            };
            let mut b = self.stream.launch_builder(&f);
            b.arg(&sig.re)
                .arg(xi)
                .arg(&xlen)
                .arg(&xoff)
                .arg(&d.mr)
                .arg(&d.mi)
                .arg(&d.centre)
                .arg(&d.half)
                .arg(&d.row)
                .arg(&d.items)
                .arg(&ncols)
                .arg(&hop)
                .arg(&self.out)
                .arg(&d.partial);
            // SAFETY: argument list matches cwt_direct.cu's DIRECT signature;
            // every index the kernel forms is bounded by the arrays built in `new`.
            unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
            if d.n_reds > 0 {
                let inst = format!("REDUCE(kernel, {}, {oc})", T::CUDA);
                let f = gpu.function(Kernel::CwtDirect, &inst, 0)?;
                let cfg = LaunchConfig {
                    grid_dim: (self.cols.div_ceil(256) as u32, d.n_reds as u32, 1),
                    block_dim: (256, 1, 1),
                    shared_mem_bytes: 0,
                };
                let mut b = self.stream.launch_builder(&f);
                b.arg(&d.partial).arg(&d.reds).arg(&ncols).arg(&self.out);
                // SAFETY: matches REDUCE's signature; slots were sized in `new`.
                unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
            }
        }
        let col_hi = (self.cols.saturating_sub(1) * self.hop + 1) as i64;
        for g in &self.groups {
            // Segments on the whole run's grid: start delta columns early.
            let delta = (self.shift % g.stride) as i64;
            launch_ols(
                gpu,
                &self.stream,
                g,
                (&sig.re, xi, cx == 1),
                oc,
                (false, cx == 0 && !self.complex_masks),
                (g.origin - delta, delta, delta + col_hi),
                self.hop,
                self.cols,
                (&self.tw, self.twl),
                &self.out,
            )?;
        }
        if let Some(g) = &mut self.cufft {
            let delta = (self.shift % g.stride()) as i64;
            g.launch(
                gpu,
                (&sig.re, xi, cx == 1),
                oc,
                (delta, delta + col_hi),
                self.hop,
                self.cols,
                &self.out,
            )?;
        }
        Ok(())
    }

    /// Copies the output into `values` (shape and dtype as planned).
    pub fn download(&self, values: &mut CwtValues) -> Result<(), CudaError> {
        let want = (self.rows, self.cols);
        if values.shape() != want {
            return Err(CudaError::Unsupported(format!(
                "output of shape {:?} given for a {} x {} transform",
                values.shape(),
                want.0,
                want.1
            )));
        }
        if let CwtValues::Half(a, _) = values {
            return self.download_half(a.as_slice_mut().ok_or_else(crate::strided)?);
        }
        let dst: &mut [T] = T::values_slice(values, self.kind == OutputKind::Complex)?;
        self.download_raw(dst)
    }

    /// Bytes of the coefficients (what a download copies).
    pub fn output_bytes(&self) -> usize {
        match self.half {
            Some(_) => self.rows * self.cols * 2,
            None => self.out.len() * std::mem::size_of::<T>(),
        }
    }
}

/// Filters per block of an overlap-save group. More filters share one
/// segment FFT, fewer give more blocks; the count is chosen so the grid
/// fills whole waves of the GPU (a last, mostly idle wave costs as much as
/// a full one): minimize waves x time per block.
pub(crate) fn filters_per_block<T: GpuReal>(
    gpu: &Gpu,
    l: usize,
    segments: usize,
    nf: usize,
) -> usize {
    let sms = gpu.info.sms.max(1) as usize;
    let mut best = (f64::INFINITY, 1usize);
    for fg in 1..=nf.min(16) {
        // Even groups (or one block for all): filters pair up the same way
        // whatever the number of segments, so windows equal the whole run.
        if fg % 2 == 1 && fg < nf {
            continue;
        }
        let (u, groups) = ols_block(l, fg);
        let threads = u * groups;
        let smem = (1 + groups) * l * 2 * std::mem::size_of::<T>();
        // Resident blocks per SM: shared memory, 2048 threads, and registers
        // (about 64 a thread).
        let per_sm = (gpu.info.smem_per_sm / (smem + 1024))
            .min(2048 / threads)
            .min(65536 / (64 * threads))
            .max(1);
        let blocks = segments * nf.div_ceil(fg);
        let waves = blocks.div_ceil(sms * per_sm) as f64;
        // Time per block, in inverse FFTs by one thread group: its rounds
        // of `groups` filters at once, plus the segment's forward FFT done
        // by all of the block's threads.
        let cost = waves * (fg.div_ceil(groups) as f64 + 1.0 / groups as f64);
        if cost < best.0 {
            best = (cost, fg);
        }
    }
    best.1
}

/// Threads per filter (one radix-8 unit each, 32 to 1024) and filters
/// transformed at once in a block (their buffers beside the segment's).
pub(crate) fn ols_block(l: usize, fg: usize) -> (usize, usize) {
    let u = (l / 8).clamp(32, 1024);
    let groups = (256 / u).clamp(1, 8).min(fg.max(1));
    (u, groups)
}

/// One overlap-save group: grid (segments, filter blocks).
#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_ols<T: GpuReal>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    g: &OlsGroup<T>,
    (xr, xi, cx): (&CudaSlice<T>, &CudaSlice<T>, bool),
    oc: i32,
    (deriv, pair): (bool, bool),
    (origin, col_lo, col_hi): (i64, i64, i64),
    hop: usize,
    ncols_out: usize,
    (tw, twl): (&CudaSlice<T>, usize),
    out: &CudaSlice<T>,
) -> Result<(), CudaError> {
    let inst = format!(
        "OLS(kernel, {}, {}, {oc}, {}, {})",
        T::CUDA,
        cx as i32,
        deriv as i32,
        pair as i32
    );
    let (u, groups) = ols_block(g.l, g.fg);
    let smem = (1 + groups) * g.l * 2 * std::mem::size_of::<T>();
    let f = gpu.function(Kernel::OlsFft, &inst, smem)?;
    let cfg = LaunchConfig {
        grid_dim: (g.segments as u32, g.nf.div_ceil(g.fg) as u32, 1),
        block_dim: (u as u32, groups as u32, 1),
        shared_mem_bytes: smem as u32,
    };
    let xlen = xr.len() as i64;
    let (l, log2l) = (g.l as i32, g.l.trailing_zeros() as i32);
    let (stride, u0, count) = (g.stride as i32, g.u0 as i32, g.count as i32);
    let (nf, fg) = (g.nf as i32, g.fg as i32);
    let (hop, ncols_out, twl) = (hop as i32, ncols_out as i64, twl as i32);
    let mut b = stream.launch_builder(&f);
    b.arg(xr)
        .arg(xi)
        .arg(&xlen)
        .arg(&origin)
        .arg(&l)
        .arg(&log2l)
        .arg(&stride)
        .arg(&u0)
        .arg(&count)
        .arg(&g.h)
        .arg(&g.hoff)
        .arg(&g.blo)
        .arg(&g.blen)
        .arg(&g.frow)
        .arg(&nf)
        .arg(&fg)
        .arg(&col_lo)
        .arg(&col_hi)
        .arg(&hop)
        .arg(&ncols_out)
        .arg(tw)
        .arg(&twl)
        .arg(out);
    // SAFETY: argument list matches ols_fft.cu's OLS signature; band offsets
    // and lengths index the spectra uploaded with them.
    unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
    Ok(())
}

/// The whole transform in windows of `chunk` output columns, for outputs
/// larger than the GPU's memory. Two windows alternate on two streams with
/// pinned host buffers, so one window's copies (signal slice up, columns
/// down) overlap the other's kernels; each window gets its slice of the
/// extended signal with the masks' halo, and its columns are copied into
/// place. Every scale is bit-identical to the in-memory run: overlap-save
/// segments are laid on the same grid and filters paired the same way.
pub fn cwt_chunked<T: GpuReal>(
    gpu: Arc<Gpu>,
    plan: &CwtPlan,
    signal: &Signal,
    values: &mut CwtValues,
    chunk: usize,
) -> Result<(), CudaError> {
    no_half_windows(plan)?;
    let complex_out = plan.options().output == OutputKind::Complex;
    cwt_chunked_into(
        gpu,
        plan,
        signal,
        T::values_slice(values, complex_out)?,
        chunk,
    )
}

fn no_half_windows(plan: &CwtPlan) -> Result<(), CudaError> {
    match plan.options().half {
        Some(h) => Err(CudaError::Unsupported(format!(
            "a {} output larger than the GPU's memory (in column windows) is not supported; ask for float32 or a shorter signal",
            h.numpy_name()
        ))),
        None => Ok(()),
    }
}

/// `cwt_chunked` into memory the caller owns (rows of `plan.columns()`,
/// complex interleaved): an output file's mapped pages, say.
pub fn cwt_chunked_into<T: GpuReal>(
    gpu: Arc<Gpu>,
    plan: &CwtPlan,
    signal: &Signal,
    dst: &mut [T],
    chunk: usize,
) -> Result<(), CudaError> {
    no_half_windows(plan)?;
    let opts = plan.options();
    let hop = opts.hop;
    let (rows, cols) = (opts.scales.len(), plan.columns());
    let chunk = chunk.clamp(1, cols);
    let complex_out = opts.output == OutputKind::Complex;
    let elem = if complex_out { 2 } else { 1 };
    let cx = signal.is_complex();
    if dst.len() != rows * cols * elem {
        return Err(CudaError::Unsupported(format!(
            "output of {} values given for a {rows} x {cols} transform",
            dst.len() / elem
        )));
    }
    struct Slot<T: GpuReal> {
        win: CudaCwt<T>,
        pin_re: Registered<T>,
        pin_im: Option<Registered<T>>,
        pin_out: Registered<T>,
        /// (first column, width) of the window whose columns wait in pin_out.
        pending: Option<(usize, usize)>,
    }
    let mut slots = Vec::with_capacity(2);
    for _ in 0..2.min(cols.div_ceil(chunk)) {
        let stream = gpu.ctx.new_stream().during(|| "creating a stream".into())?;
        let mut win = CudaCwt::<T>::window_on(gpu.clone(), plan, Some(chunk), stream)?;
        let len_in = chunk * hop + 2 * win.halo();
        let alloc_dev = |n: usize| {
            gpu.stream
                .alloc_zeros::<T>(n)
                .during(|| format!("allocating a window of {n} samples"))
        };
        win.signal = Some(SignalOnGpu {
            re: alloc_dev(len_in)?,
            im: if cx { Some(alloc_dev(len_in)?) } else { None },
        });
        // Page-locked by registration (faulted in on every core, not one
        // page at a time by cuMemHostAlloc); inputs are written before each
        // use, outputs by the device before they are read.
        let pin = |n: usize| Registered::<T>::zeroed(&gpu.ctx, n, 0);
        slots.push(Slot {
            pin_re: pin(len_in)?,
            pin_im: if cx { Some(pin(len_in)?) } else { None },
            pin_out: pin(win.out.len())?,
            win,
            pending: None,
        });
    }
    gpu.synchronize()?;
    let (pad, halo) = (slots[0].win.pad, slots[0].win.halo());
    let lead = halo - pad;
    let xe = plan.extended_signal(signal, pad)?;
    // Waits for the slot's last window (its copies in both directions: with
    // cudarc's event tracking off, pinned buffers do not wait by themselves)
    // and copies its columns into place.
    let scatter = |slot: &mut Slot<T>, dst: &mut [T]| -> Result<(), CudaError> {
        slot.win
            .stream
            .synchronize()
            .during(|| "waiting for a window".into())?;
        if let Some((c0, w)) = slot.pending.take() {
            let host = &slot.pin_out[..];
            dst.par_chunks_mut(cols * elem)
                .zip(host.par_chunks(chunk * elem))
                .take(rows)
                .for_each(|(d, s)| d[c0 * elem..(c0 + w) * elem].copy_from_slice(&s[..w * elem]));
        }
        Ok(())
    };
    let mut c0 = 0;
    let mut i = 0;
    while c0 < cols {
        let w = chunk.min(cols - c0);
        let n_slots = slots.len();
        let slot = &mut slots[i % n_slots];
        scatter(slot, dst)?;
        let start = c0 * hop;
        // Window sample j is xe[start + j - lead]; outside xe, zero.
        let fill = |buf: &mut [T], part: fn(&Complex64) -> f64| {
            let xe = &xe;
            buf.par_iter_mut().enumerate().for_each(|(j, d)| {
                *d = (start + j)
                    .checked_sub(lead)
                    .and_then(|k| xe.get(k))
                    .map_or(T::of(0.0), |c| T::of(part(c)));
            });
            Ok::<(), CudaError>(())
        };
        fill(&mut slot.pin_re[..], |c| c.re)?;
        if let Some(p) = slot.pin_im.as_mut() {
            fill(p, |c| c.im)?;
        }
        let stream = slot.win.stream.clone();
        if let Some(sig) = slot.win.signal.as_mut() {
            stream
                .memcpy_htod(&slot.pin_re[..], &mut sig.re)
                .during(|| "copying a window of the signal".into())?;
            if let (Some(p), Some(d)) = (slot.pin_im.as_ref(), sig.im.as_mut()) {
                stream
                    .memcpy_htod(&p[..], d)
                    .during(|| "copying a window of the signal".into())?;
            }
        }
        slot.win.set_window_start(start);
        slot.win.launch()?;
        stream
            .memcpy_dtoh(&slot.win.out, &mut slot.pin_out[..])
            .during(|| "copying a window's columns".into())?;
        slot.pending = Some((c0, w));
        c0 += w;
        i += 1;
    }
    for slot in slots.iter_mut() {
        scatter(slot, dst)?;
    }
    Ok(())
}
