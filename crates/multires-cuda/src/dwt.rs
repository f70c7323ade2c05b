//! The DWT on the GPU (seed dwt-matrix-lattice, section 4.2): PyWavelets'
//! wavedec and waverec over batches of rows, every wavelet and mode of the
//! CPU DWT, float32 and float64. The seed's variants are selectable; `auto`
//! runs m2_ww per level while a level is large and the small levels fused in
//! shared memory (one block per row, nothing back in device memory between
//! levels but the details).
//!
//! Coefficients live on the device in one buffer of blocks, each `rows` x
//! its length: cD_1, cD_2, ..., cD_L, then cA_L (the order the levels make
//! them); wavedec's output is waverec's input.

use crate::cwt::{check_free, upload};
use crate::device::Gpu;
use crate::device::Registered;
use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use crate::GpuReal;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use multires::dwt::{coeff_len, rec_len, synthesis_shift, DiscreteWavelet, Mode};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// The seed's GPU variants (section 4.2), plus `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GpuDwtVariant {
    /// m2_ww per large level, the small levels fused in shared memory.
    #[default]
    Auto,
    /// gpu_dwt_m1_ww_ref: one thread per output element, filter by parity.
    M1Wrap,
    /// gpu_dwt_m2_ww: one thread per (cA, cD) pair, edges by index arithmetic.
    M2Wrap,
    /// gpu_dwt_m4_ww: two pairs per thread.
    M4Wrap,
    /// gpu_dwt_m2_nw: the row extended on the device first, no tests in the loop.
    M2NoWrap,
    /// gpu_dwt_m4_nw.
    M4NoWrap,
    /// gpu_dwt_l2_ww: the lattice, one thread per pair, edges by index arithmetic
    /// (orthogonal wavelets only).
    L2Wrap,
    /// gpu_dwt_l2_nw: the lattice over the row extended on the device.
    L2NoWrap,
}

impl GpuDwtVariant {
    pub const ALL: [GpuDwtVariant; 8] = [
        GpuDwtVariant::Auto,
        GpuDwtVariant::M1Wrap,
        GpuDwtVariant::M2Wrap,
        GpuDwtVariant::M4Wrap,
        GpuDwtVariant::M2NoWrap,
        GpuDwtVariant::M4NoWrap,
        GpuDwtVariant::L2Wrap,
        GpuDwtVariant::L2NoWrap,
    ];
    pub fn is_lattice(self) -> bool {
        matches!(self, GpuDwtVariant::L2Wrap | GpuDwtVariant::L2NoWrap)
    }
    pub fn name(self) -> &'static str {
        match self {
            GpuDwtVariant::Auto => "auto",
            GpuDwtVariant::M1Wrap => "m1_ww",
            GpuDwtVariant::M2Wrap => "m2_ww",
            GpuDwtVariant::M4Wrap => "m4_ww",
            GpuDwtVariant::M2NoWrap => "m2_nw",
            GpuDwtVariant::M4NoWrap => "m4_nw",
            GpuDwtVariant::L2Wrap => "l2_ww",
            GpuDwtVariant::L2NoWrap => "l2_nw",
        }
    }
}

impl fmt::Display for GpuDwtVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GpuDwtVariant {
    type Err = CudaError;
    fn from_str(s: &str) -> Result<Self, CudaError> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.name() == s)
            .ok_or_else(|| {
                CudaError::Unsupported(format!(
                    "unknown GPU DWT variant '{s}'; expected one of auto, m1_ww, m2_ww, m4_ww, m2_nw, m4_nw, l2_ww, l2_nw"
                ))
            })
    }
}

pub(crate) fn mode_code(mode: Mode) -> i32 {
    Mode::ALL.iter().position(|&m| m == mode).unwrap_or(0) as i32
}

/// Where each coefficient block lies in the device buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct DwtLayout {
    pub rows: usize,
    /// Detail lengths per row, finest first: cD_1, ..., cD_L.
    pub detail_lens: Vec<usize>,
    /// Length of cA_L per row.
    pub approx_len: usize,
}

impl DwtLayout {
    /// The layout `wavedec` makes for `rows` signals of `n` samples.
    pub fn wavedec(rows: usize, n: usize, filter_len: usize, mode: Mode, level: usize) -> Self {
        let mut lens = Vec::with_capacity(level);
        let mut len = n;
        for _ in 0..level {
            len = coeff_len(len, filter_len, mode);
            lens.push(len);
        }
        DwtLayout {
            rows,
            detail_lens: lens,
            approx_len: len,
        }
    }
    pub fn levels(&self) -> usize {
        self.detail_lens.len()
    }
    /// Offset of cD_k's block (k = 1..=L).
    pub fn detail_offset(&self, k: usize) -> usize {
        self.detail_lens[..k - 1].iter().sum::<usize>() * self.rows
    }
    pub fn approx_offset(&self) -> usize {
        self.detail_lens.iter().sum::<usize>() * self.rows
    }
    pub fn total(&self) -> usize {
        self.approx_offset() + self.approx_len * self.rows
    }
    /// The layout of coefficient blocks given in pywt.wavedec's order,
    /// [cA_L, cD_L, ..., cD_1], `lens[i]` per row.
    pub fn from_blocks(rows: usize, lens: &[usize]) -> Self {
        DwtLayout {
            rows,
            detail_lens: lens[1..].iter().rev().copied().collect(),
            approx_len: lens[0],
        }
    }
    /// (offset, length per row) of each block in pywt.wavedec's order,
    /// [cA_L, cD_L, ..., cD_1]: where the host's arrays sit in the layout.
    pub fn blocks(&self) -> Vec<(usize, usize)> {
        let mut b = vec![(self.approx_offset(), self.approx_len)];
        for k in (1..=self.levels()).rev() {
            b.push((self.detail_offset(k), self.detail_lens[k - 1]));
        }
        b
    }
}

/// One wavelet and mode planned on a GPU: the filters on the device.
pub struct GpuDwt<T: GpuReal> {
    gpu: Arc<Gpu>,
    /// Where this plan's kernels and scratch go: the GPU's stream, or one of
    /// the streamed batches' two (`with_stream`).
    stream: Arc<CudaStream>,
    pub wavelet: DiscreteWavelet,
    pub mode: Mode,
    pub variant: GpuDwtVariant,
    /// Device memory `wavedec` and `waverec` may use (bytes); None: 4/5 of
    /// what is free. Inputs above it stream through in batches of rows.
    pub mem_limit: Option<usize>,
    /// Inputs above this many bytes (and of 4 rows or more) go through the
    /// streamed pipeline even when they fit: pinned copies overlapped with
    /// kernels beat pageable copies (32 MiB; usize::MAX keeps them in core).
    pub stream_above: usize,
    /// The streamed path's slots, kept for the next call of the same batch
    /// shape (allocating pinned memory costs more than the copies).
    slots: std::sync::Mutex<Vec<Slot<T>>>,
    f: usize,
    /// Reversed dec_lo then reversed dec_hi.
    dec: CudaSlice<T>,
    /// rec_lo then rec_hi.
    rec: CudaSlice<T>,
    /// Elements per row a fused level may hold (two buffers in shared memory).
    cap: usize,
    /// The lattice variants: stage counts and coefficients of E(z) and R(z)
    /// (M_0, then (u, v) per stage; see dwt.cu).
    lattice: Option<[(usize, CudaSlice<T>); 2]>,
}

/// A factorized lattice as the kernels read it.
fn lattice_coefficients(l: &multires::dwt::lattice::Lattice) -> (usize, Vec<f64>) {
    use multires::dwt::lattice::Butterfly;
    let mut c = vec![l.m0[0][0], l.m0[0][1], l.m0[1][0], l.m0[1][1]];
    for st in &l.stages {
        match *st {
            Butterfly::Tangent(t) => c.extend([1.0, t]),
            Butterfly::Cotangent(k) => c.extend([k, 1.0]),
        }
    }
    (l.stages.len(), c)
}

const BLOCK: usize = 256;
/// Rows per launch (the grid's y dimension).
const MAX_ROWS: usize = 65535;
/// Levels one tiled pass keeps in shared memory: after 4, the approximation
/// is 1/16 of the input and the next pass reads it mostly from L2.
const TILE_LEVELS: usize = 4;
/// Threads per block of the tiled kernels: 512 was slower than 256 at
/// every tile size (H100, db4 wavedec of 2^26 samples).
fn tile_threads() -> usize {
    256
}

/// Input samples per tile of a tiled wavedec pass (without the halo), and
/// output samples per tile of a tiled waverec pass: tiles of 2048, 4096,
/// 8192 and 16384 gave db4 wavedec 0.68, 0.55, 0.47 and 0.56 ms (H100).
fn tile_span() -> usize {
    8192
}

impl<T: GpuReal> GpuDwt<T> {
    pub fn new(
        gpu: Arc<Gpu>,
        wavelet: &DiscreteWavelet,
        mode: Mode,
        variant: GpuDwtVariant,
    ) -> Result<Self, CudaError> {
        let f = wavelet.filter_len();
        if f > 128 {
            return Err(CudaError::Unsupported(format!(
                "{} has {f} taps; the GPU DWT holds up to 128",
                wavelet.name
            )));
        }
        let dec: Vec<T> = wavelet
            .dec_lo
            .iter()
            .rev()
            .chain(wavelet.dec_hi.iter().rev())
            .map(|&v| T::of(v))
            .collect();
        let rec: Vec<T> = wavelet
            .rec_lo
            .iter()
            .chain(wavelet.rec_hi.iter())
            .map(|&v| T::of(v))
            .collect();
        let lattice = if variant.is_lattice() {
            use multires::dwt::{lattice::Lattice, polyphase};
            if !wavelet.orthogonal {
                return Err(multires::dwt::DwtError::NotAvailable(format!(
                    "the lattice needs an orthogonal wavelet and {} is biorthogonal; use the matrix variants (auto, m2_ww, ...)",
                    wavelet.name
                ))
                .into());
            }
            let e = Lattice::factorize(
                &polyphase::analysis(&wavelet.dec_lo, &wavelet.dec_hi),
                wavelet.name,
            )?;
            let r = Lattice::factorize(
                &polyphase::synthesis(&wavelet.rec_lo, &wavelet.rec_hi),
                wavelet.name,
            )?;
            let up = |l: &Lattice| -> Result<(usize, CudaSlice<T>), CudaError> {
                let (stages, c) = lattice_coefficients(l);
                let c: Vec<T> = c.iter().map(|&v| T::of(v)).collect();
                Ok((stages, upload(&gpu, &c)?))
            };
            Some([up(&e)?, up(&r)?])
        } else {
            None
        };
        let elem = std::mem::size_of::<T>();
        let cap = (96 * 1024 / (2 * elem))
            .min(gpu.info.smem_per_block_optin.saturating_sub(4096) / (2 * elem));
        Ok(GpuDwt {
            dec: upload(&gpu, &dec)?,
            rec: upload(&gpu, &rec)?,
            stream: gpu.stream.clone(),
            mem_limit: None,
            stream_above: 32 << 20,
            slots: std::sync::Mutex::new(Vec::new()),
            gpu,
            wavelet: wavelet.clone(),
            mode,
            variant,
            f,
            cap,
            lattice,
        })
    }

    pub(crate) fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }
    pub(crate) fn dec(&self) -> &CudaSlice<T> {
        &self.dec
    }
    pub(crate) fn rec(&self) -> &CudaSlice<T> {
        &self.rec
    }

    fn lattice_analysis(&self) -> Result<(usize, &CudaSlice<T>), CudaError> {
        match &self.lattice {
            Some([(stages, c), _]) => Ok((*stages, c)),
            None => Err(CudaError::Unsupported("no lattice factorization".into())),
        }
    }

    /// s0 of first(o) = 2o + s0 - (F - 1): F/2 for periodization, else 1.
    pub(crate) fn s0(&self) -> i32 {
        if self.mode == Mode::Periodization {
            (self.f / 2) as i32
        } else {
            1
        }
    }

    fn grid(&self, items: usize, rows: usize) -> Result<LaunchConfig, CudaError> {
        if rows > 65535 {
            return Err(CudaError::Unsupported(format!(
                "{rows} rows in one launch; the GPU DWT takes up to 65535 rows at a time"
            )));
        }
        Ok(LaunchConfig {
            grid_dim: (items.div_ceil(BLOCK).max(1) as u32, rows as u32, 1),
            block_dim: (BLOCK as u32, 1, 1),
            shared_mem_bytes: 0,
        })
    }

    /// One forward level of `rows` rows of n samples from `x` into (ca, cd),
    /// by this plan's variant (auto: m2_ww).
    fn level(
        &self,
        x: &cudarc::driver::CudaView<T>,
        rows: usize,
        n: usize,
        ca: &mut cudarc::driver::CudaViewMut<T>,
        cd: &mut cudarc::driver::CudaViewMut<T>,
        scratch: &mut Option<CudaSlice<T>>,
    ) -> Result<(), CudaError> {
        let no = coeff_len(n, self.f, self.mode);
        let (n_i, no_i, f_i) = (n as i64, no as i64, self.f as i32);
        let mode = mode_code(self.mode);
        let stream = &self.stream;
        match self.variant {
            GpuDwtVariant::Auto
            | GpuDwtVariant::M1Wrap
            | GpuDwtVariant::M2Wrap
            | GpuDwtVariant::M4Wrap => {
                let g = match self.variant {
                    GpuDwtVariant::M1Wrap => 1,
                    GpuDwtVariant::M4Wrap => 4,
                    _ => 2,
                };
                let items = match g {
                    1 => 2 * no,
                    2 => no,
                    _ => no.div_ceil(2),
                };
                let inst = format!("DWT_M(kernel, {}, {mode}, {g})", T::CUDA);
                let func = self.gpu.function(Kernel::Dwt, &inst, 0)?;
                let s0 = self.s0();
                let mut b = stream.launch_builder(&func);
                b.arg(x)
                    .arg(&n_i)
                    .arg(&no_i)
                    .arg(&s0)
                    .arg(&self.dec)
                    .arg(&f_i)
                    .arg(ca)
                    .arg(cd);
                // SAFETY: matches DWT_M; rows x n inputs, rows x no outputs.
                unsafe { b.launch(self.grid(items, rows)?) }
                    .during(|| format!("launching {inst}"))?;
            }
            GpuDwtVariant::L2Wrap => {
                let (stages, coef) = self.lattice_analysis()?;
                let inst = format!("LAT(kernel, {}, {mode}, {stages}, false)", T::CUDA);
                let func = self.gpu.function(Kernel::Dwt, &inst, 0)?;
                let s0 = self.s0();
                let mut b = stream.launch_builder(&func);
                b.arg(x)
                    .arg(&n_i)
                    .arg(&no_i)
                    .arg(&s0)
                    .arg(coef)
                    .arg(ca)
                    .arg(cd);
                // SAFETY: matches LAT; rows x n inputs, rows x no outputs.
                unsafe { b.launch(self.grid(no, rows)?) }.during(|| format!("launching {inst}"))?;
            }
            GpuDwtVariant::M2NoWrap | GpuDwtVariant::M4NoWrap | GpuDwtVariant::L2NoWrap => {
                let g = if self.variant == GpuDwtVariant::M4NoWrap {
                    4
                } else {
                    2
                };
                // The extended row: 2 no + F - 2 samples from first(0).
                let ne = 2 * no + self.f - 2;
                if scratch.as_ref().is_none_or(|s| s.len() < rows * ne) {
                    check_free(&self.gpu, (rows * ne * std::mem::size_of::<T>()) as u128)?;
                    *scratch = Some(
                        stream
                            .alloc_zeros::<T>(rows * ne)
                            .during(|| "allocating the extended rows".into())?,
                    );
                }
                let Some(xe) = scratch.as_mut() else {
                    return Err(CudaError::Unsupported("no scratch".into()));
                };
                let first = self.s0() as i64 - (self.f as i64 - 1);
                let ne_i = ne as i64;
                let inst = format!("DWT_EXTEND(kernel, {}, {mode})", T::CUDA);
                let func = self.gpu.function(Kernel::Dwt, &inst, 0)?;
                let mut b = stream.launch_builder(&func);
                b.arg(x).arg(&n_i).arg(&ne_i).arg(&first).arg(&*xe);
                // SAFETY: matches DWT_EXTEND; xe holds rows x ne values.
                unsafe { b.launch(self.grid(ne, rows)?) }.during(|| format!("launching {inst}"))?;
                if self.variant == GpuDwtVariant::L2NoWrap {
                    let (stages, coef) = self.lattice_analysis()?;
                    let inst = format!("LAT(kernel, {}, {mode}, {stages}, true)", T::CUDA);
                    let func = self.gpu.function(Kernel::Dwt, &inst, 0)?;
                    // Sample 2m + s0 of the row lies at 2m + F - 1 of the extended row.
                    let s0e = self.f as i32 - 1;
                    let mut b = stream.launch_builder(&func);
                    b.arg(&*xe)
                        .arg(&ne_i)
                        .arg(&no_i)
                        .arg(&s0e)
                        .arg(coef)
                        .arg(ca)
                        .arg(cd);
                    // SAFETY: matches LAT; rows x ne extended inputs, rows x no outputs.
                    unsafe { b.launch(self.grid(no, rows)?) }
                        .during(|| format!("launching {inst}"))?;
                    return Ok(());
                }
                let inst = format!("DWT_NW(kernel, {}, {g})", T::CUDA);
                let func = self.gpu.function(Kernel::Dwt, &inst, 0)?;
                let mut b = stream.launch_builder(&func);
                b.arg(&*xe)
                    .arg(&ne_i)
                    .arg(&no_i)
                    .arg(&self.dec)
                    .arg(&f_i)
                    .arg(ca)
                    .arg(cd);
                // SAFETY: matches DWT_NW; rows x ne extended inputs.
                unsafe { b.launch(self.grid(no.div_ceil(g / 2), rows)?) }
                    .during(|| format!("launching {inst}"))?;
            }
        }
        Ok(())
    }

    /// wavedec of the rows in `x` (rows x n, on the device) into `coeffs`
    /// (laid out as `layout`, from `DwtLayout::wavedec`).
    pub fn wavedec_on_device(
        &self,
        x: &CudaSlice<T>,
        layout: &DwtLayout,
        coeffs: &mut CudaSlice<T>,
        work: &mut DwtWork<T>,
    ) -> Result<(), CudaError> {
        let rows = layout.rows;
        let level = layout.levels();
        let n = x.len() / rows.max(1);
        if rows == 0 || n == 0 {
            return Err(CudaError::Unsupported("an empty batch".into()));
        }
        if coeffs.len() < layout.total() {
            return Err(CudaError::Unsupported(
                "coefficient buffer too small".into(),
            ));
        }
        if level == 0 {
            let mut dst = coeffs.slice_mut(0..rows * n);
            return self
                .stream
                .memcpy_dtod(x, &mut dst)
                .during(|| "copying the level-0 approximation".into());
        }
        let mut lens = vec![n];
        lens.extend(&layout.detail_lens);
        if self.variant == GpuDwtVariant::Auto {
            return self.wavedec_auto(x, layout, &lens, coeffs, work);
        }
        // The seed's variants: one launch (or two, no-wrap) per level.
        let fuse_from = level;
        // Ping-pong approximations of the global levels (not the last one).
        let need = if fuse_from > 0 { rows * lens[1] } else { 0 };
        work.ensure(&self.stream, &self.gpu, need)?;
        let mut src_is_x = true;
        let mut cur = 0usize; // which ping-pong buffer holds the current approximation
        for lv in 0..fuse_from {
            let no = lens[lv + 1];
            let last = lv + 1 == level;
            let (d0, d1) = (
                layout.detail_offset(lv + 1),
                layout.detail_offset(lv + 1) + rows * no,
            );
            let nxt = 1 - cur;
            // Split borrows: the source, the destination approximation and the details.
            let DwtWork { a, b, extended, .. } = &mut *work;
            let (pa, pb) = pair(a, b)?;
            let (src_buf, dst_buf) = if cur == 0 { (&*pa, pb) } else { (&*pb, pa) };
            let xin = if src_is_x {
                x.slice(0..rows * lens[lv])
            } else {
                src_buf.slice(0..rows * lens[lv])
            };
            if last {
                let (a0, a1) = (layout.approx_offset(), layout.approx_offset() + rows * no);
                let (mut lo, mut hi) = coeffs.split_at_mut(a0);
                let mut cd = lo.slice_mut(d0..d1);
                let mut ca = hi.slice_mut(0..a1 - a0);
                self.level(&xin, rows, lens[lv], &mut ca, &mut cd, extended)?;
            } else {
                let mut cd = coeffs.slice_mut(d0..d1);
                let mut ca = dst_buf.slice_mut(0..rows * no);
                self.level(&xin, rows, lens[lv], &mut ca, &mut cd, extended)?;
            }
            src_is_x = false;
            cur = nxt;
        }
        Ok(())
    }

    /// auto: levels longer than `cap` in tiled passes of up to TILE_LEVELS
    /// levels (DWT_TILE, then DWT_EDGES for the ends of the rows), the rest in
    /// one block per row (DWT_FUSED); only details and each pass's last
    /// approximation go back to device memory.
    fn wavedec_auto(
        &self,
        x: &CudaSlice<T>,
        layout: &DwtLayout,
        lens: &[usize],
        coeffs: &mut CudaSlice<T>,
        work: &mut DwtWork<T>,
    ) -> Result<(), CudaError> {
        let rows = layout.rows;
        let level = layout.levels();
        if rows > MAX_ROWS {
            return Err(CudaError::Unsupported(format!(
                "{rows} rows in one launch; the GPU DWT takes up to {MAX_ROWS} rows at a time"
            )));
        }
        work.ensure(
            &self.stream,
            &self.gpu,
            rows * lens.get(1).copied().unwrap_or(1),
        )?;
        let elem = std::mem::size_of::<T>();
        let (s0, f_i) = (self.s0(), self.f as i32);
        let f = self.f as i64;
        let mode = mode_code(self.mode);
        // Where the current approximation is: None = x, Some(i) = scratch i.
        let mut src: Option<usize> = None;
        let mut lv = 0;
        while lv < level {
            if lens[lv] <= self.cap {
                // The remaining levels in one block per row.
                let sub: Vec<i64> = lens[lv..].iter().map(|&l| l as i64).collect();
                let doff: Vec<i64> = (lv..level)
                    .map(|l| layout.detail_offset(l + 1) as i64)
                    .collect();
                let inst = format!("DWT_FUSED(kernel, {}, {mode})", T::CUDA);
                let smem = 2 * self.cap * elem;
                let func = self.gpu.function(Kernel::Dwt, &inst, smem)?;
                let keys: [&[i64]; 2] = [&sub, &doff];
                let consts = work.constants(&self.stream, &keys)?;
                let DwtWork { a, b, .. } = &mut *work;
                let (pa, pb) = pair(a, b)?;
                let xin = match src {
                    None => x.slice(0..rows * lens[lv]),
                    Some(0) => pa.slice(0..rows * lens[lv]),
                    Some(_) => pb.slice(0..rows * lens[lv]),
                };
                let (levels_i, aoff, cap_i) = (
                    (level - lv) as i32,
                    layout.approx_offset() as i64,
                    self.cap as i32,
                );
                let cfg = LaunchConfig {
                    grid_dim: (rows as u32, 1, 1),
                    block_dim: (BLOCK as u32, 1, 1),
                    shared_mem_bytes: smem as u32,
                };
                let mut bld = self.stream.launch_builder(&func);
                bld.arg(&xin)
                    .arg(&levels_i)
                    .arg(&consts[0])
                    .arg(&consts[1])
                    .arg(&aoff)
                    .arg(&s0)
                    .arg(&self.dec)
                    .arg(&f_i)
                    .arg(&cap_i)
                    .arg(&*coeffs);
                // SAFETY: matches DWT_FUSED; every level fits `cap` and its block in coeffs.
                unsafe { bld.launch(cfg) }.during(|| format!("launching {inst}"))?;
                drop(bld);
                work.keep(&keys, consts);
                return Ok(());
            }
            let k = (level - lv).min(TILE_LEVELS);
            let last = lv + k == level;
            let nk = lens[lv + k];
            let nxt = if src == Some(0) { 1 } else { 0 };
            let sub: Vec<i64> = lens[lv..=lv + k].iter().map(|&l| l as i64).collect();
            let doff: Vec<i64> = (lv..lv + k)
                .map(|l| layout.detail_offset(l + 1) as i64)
                .collect();
            let wins = edge_windows(&sub, f, s0 as i64);
            let keys: [&[i64]; 3] = [&sub, &doff, &wins];
            let consts = work.constants(&self.stream, &keys)?;
            let DwtWork { a, b, .. } = &mut *work;
            let (pa, pb) = pair(a, b)?;
            let (pa, pb) = (&*pa, &*pb);
            let xin = match src {
                None => x.slice(0..rows * lens[lv]),
                Some(0) => pa.slice(0..rows * lens[lv]),
                Some(_) => pb.slice(0..rows * lens[lv]),
            };
            let ca_out = if last {
                coeffs.slice(layout.approx_offset()..layout.approx_offset() + rows * nk)
            } else if nxt == 0 {
                pa.slice(0..rows * nk)
            } else {
                pb.slice(0..rows * nk)
            };
            // The tiles: level-lv span of tile_span() samples (plus the halo).
            let tk = (tile_span() >> k).max(1);
            let span = |l: usize| (tk << (k - l)) + ((1usize << (k - l)) - 1) * (self.f - 2) + 2;
            let (span0, span1) = (span(0), span(1.min(k)));
            let smem = (span0 + span1) * elem;
            let inst = format!("DWT_TILE(kernel, {}, {})", T::CUDA, self.f);
            let func = self.gpu.function(Kernel::Dwt, &inst, smem)?;
            let (k_i, tk_i, span0_i) = (k as i32, tk as i32, span0 as i32);
            let cfg = LaunchConfig {
                grid_dim: (nk.div_ceil(tk) as u32, rows as u32, 1),
                block_dim: (tile_threads() as u32, 1, 1),
                shared_mem_bytes: smem as u32,
            };
            let mut bld = self.stream.launch_builder(&func);
            bld.arg(&xin)
                .arg(&k_i)
                .arg(&consts[0])
                .arg(&consts[1])
                .arg(&*coeffs)
                .arg(&ca_out)
                .arg(&s0)
                .arg(&self.dec)
                .arg(&tk_i)
                .arg(&span0_i);
            // SAFETY: matches DWT_TILE; each block's ranges fit span0 + span1.
            unsafe { bld.launch(cfg) }.during(|| format!("launching {inst}"))?;
            drop(bld);
            let wmax = (0..=k)
                .map(|l| (wins[l] + wins[k + 1 + l]) as usize)
                .max()
                .unwrap_or(1);
            let smem = 2 * wmax * elem;
            let inst = format!("DWT_EDGES(kernel, {}, {mode})", T::CUDA);
            let func = self.gpu.function(Kernel::Dwt, &inst, smem)?;
            let wmax_i = wmax as i32;
            let cfg = LaunchConfig {
                grid_dim: (rows as u32, 1, 1),
                block_dim: (BLOCK as u32, 1, 1),
                shared_mem_bytes: smem as u32,
            };
            let mut bld = self.stream.launch_builder(&func);
            bld.arg(&xin)
                .arg(&k_i)
                .arg(&consts[0])
                .arg(&consts[2])
                .arg(&consts[1])
                .arg(&*coeffs)
                .arg(&ca_out)
                .arg(&s0)
                .arg(&self.dec)
                .arg(&f_i)
                .arg(&wmax_i);
            // SAFETY: matches DWT_EDGES; every level's two windows fit wmax.
            unsafe { bld.launch(cfg) }.during(|| format!("launching {inst}"))?;
            drop(bld);
            work.keep(&keys, consts);
            src = Some(nxt);
            lv += k;
        }
        Ok(())
    }

    /// waverec of `coeffs` (laid out as `layout`) into `out` (rows x the
    /// reconstructed length, `rec_lengths(layout).last()`).
    pub fn waverec_on_device(
        &self,
        coeffs: &CudaSlice<T>,
        layout: &DwtLayout,
        out: &mut CudaSlice<T>,
        work: &mut DwtWork<T>,
    ) -> Result<(), CudaError> {
        let rows = layout.rows;
        let level = layout.levels();
        let nouts = rec_lengths(layout, self.f, self.mode)?;
        let final_len = nouts.last().copied().unwrap_or(layout.approx_len);
        if out.len() < rows * final_len {
            return Err(CudaError::Unsupported("output buffer too small".into()));
        }
        if level == 0 {
            let mut dst = out.slice_mut(0..rows * final_len);
            return self
                .stream
                .memcpy_dtod(&coeffs.slice(0..rows * final_len), &mut dst)
                .during(|| "copying the approximation".into());
        }
        let shift = synthesis_shift(self.f, self.mode) as i32;
        let periodic = i32::from(self.mode == Mode::Periodization);
        let f_i = self.f as i32;
        // Coarsest first: step s combines cD_{L-s}.
        let fused = if self.variant == GpuDwtVariant::Auto {
            (0..level).take_while(|&s| nouts[s] <= self.cap).count()
        } else {
            0
        };
        work.ensure(
            &self.stream,
            &self.gpu,
            rows * nouts.iter().copied().max().unwrap_or(0),
        )?;
        let mut a_len = layout.approx_len;
        let mut cur = 0usize;
        let mut a_in_coeffs = true;
        if fused > 0 {
            let ncs: Vec<i64> = (0..fused)
                .map(|s| layout.detail_lens[level - 1 - s] as i64)
                .collect();
            let no: Vec<i64> = nouts[..fused].iter().map(|&v| v as i64).collect();
            let doff: Vec<i64> = (0..fused)
                .map(|s| layout.detail_offset(level - s) as i64)
                .collect();
            let keys: [&[i64]; 3] = [&ncs, &no, &doff];
            let consts = work.constants(&self.stream, &keys)?;
            let last = fused == level;
            let inst = format!("IDWT_FUSED(kernel, {})", T::CUDA);
            let smem = 2 * self.cap * std::mem::size_of::<T>();
            let func = self.gpu.function(Kernel::Dwt, &inst, smem)?;
            let ca = coeffs.slice(layout.approx_offset()..layout.approx_offset() + rows * a_len);
            let (na, levels_i, cap_i) = (a_len as i64, fused as i32, self.cap as i32);
            let cfg = LaunchConfig {
                grid_dim: (rows as u32, 1, 1),
                block_dim: (BLOCK as u32, 1, 1),
                shared_mem_bytes: smem as u32,
            };
            let DwtWork { a, b, .. } = &mut *work;
            let (pa, _) = pair(a, b)?;
            let (d_ncs, d_no, d_doff) = (&consts[0], &consts[1], &consts[2]);
            let dst: &CudaSlice<T> = if last { &*out } else { &*pa };
            let mut b = self.stream.launch_builder(&func);
            b.arg(&ca)
                .arg(&na)
                .arg(&levels_i)
                .arg(d_ncs)
                .arg(d_no)
                .arg(d_doff)
                .arg(coeffs)
                .arg(&shift)
                .arg(&periodic)
                .arg(&self.rec)
                .arg(&f_i)
                .arg(&cap_i)
                .arg(dst);
            // SAFETY: matches IDWT_FUSED; every step's output fits `cap`.
            unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
            work.keep(&keys, consts);
            a_len = nouts[fused - 1];
            a_in_coeffs = false;
            cur = 0;
        }
        if rows > MAX_ROWS {
            return Err(CudaError::Unsupported(format!(
                "{rows} rows in one launch; the GPU DWT takes up to {MAX_ROWS} rows at a time"
            )));
        }
        let mut s = fused;
        while s < level && self.variant == GpuDwtVariant::Auto {
            // Tiled passes of up to TILE_LEVELS steps; for periodization only
            // over steps whose output is the next step's whole input (the
            // tile's virtual indices are then periodic at every step).
            let mut k = 1;
            while k < TILE_LEVELS
                && s + k < level
                && (self.mode != Mode::Periodization
                    || nouts[s + k - 1] == layout.detail_lens[level - 1 - (s + k)])
            {
                k += 1;
            }
            let last = s + k == level;
            let ncs: Vec<i64> = (s..s + k)
                .map(|t| layout.detail_lens[level - 1 - t] as i64)
                .collect();
            let no: Vec<i64> = nouts[s..s + k].iter().map(|&v| v as i64).collect();
            let doff: Vec<i64> = (s..s + k)
                .map(|t| layout.detail_offset(level - t) as i64)
                .collect();
            let keys: [&[i64]; 3] = [&ncs, &no, &doff];
            let consts = work.constants(&self.stream, &keys)?;
            let elem = std::mem::size_of::<T>();
            // The largest range a step reads: the last step's input.
            let span = tile_span() / 2 + self.f / 2 + 4;
            let smem = 3 * span * elem;
            let inst = format!("IDWT_TILE(kernel, {}, {})", T::CUDA, self.f);
            let func = self.gpu.function(Kernel::Dwt, &inst, smem)?;
            let nfinal = nouts[s + k - 1];
            let DwtWork { a: wa, b: wb, .. } = &mut *work;
            let (pa, pb) = pair(wa, wb)?;
            let (pa, pb) = (&*pa, &*pb);
            let (src_buf, dst_buf) = if cur == 0 { (pa, pb) } else { (pb, pa) };
            let a = if a_in_coeffs {
                coeffs.slice(layout.approx_offset()..layout.approx_offset() + rows * a_len)
            } else {
                src_buf.slice(0..rows * a_len)
            };
            let dst: &CudaSlice<T> = if last { &*out } else { dst_buf };
            let (na, k_i, tile_i, span_i) =
                (a_len as i64, k as i32, tile_span() as i32, span as i32);
            let cfg = LaunchConfig {
                grid_dim: (nfinal.div_ceil(tile_span()) as u32, rows as u32, 1),
                block_dim: (tile_threads() as u32, 1, 1),
                shared_mem_bytes: smem as u32,
            };
            let mut bld = self.stream.launch_builder(&func);
            bld.arg(&a)
                .arg(&na)
                .arg(&k_i)
                .arg(&consts[0])
                .arg(&consts[1])
                .arg(&consts[2])
                .arg(coeffs)
                .arg(&shift)
                .arg(&periodic)
                .arg(&self.rec)
                .arg(&tile_i)
                .arg(&span_i)
                .arg(dst);
            // SAFETY: matches IDWT_TILE; every step's range fits `span`.
            unsafe { bld.launch(cfg) }.during(|| format!("launching {inst}"))?;
            drop(bld);
            work.keep(&keys, consts);
            a_len = nfinal;
            a_in_coeffs = false;
            cur = 1 - cur;
            s += k;
        }
        #[allow(clippy::needless_range_loop)]
        for s in s..level {
            let k = level - s;
            let nc = layout.detail_lens[k - 1];
            let nout = nouts[s];
            let last = s + 1 == level;
            let d = coeffs.slice(layout.detail_offset(k)..layout.detail_offset(k) + rows * nc);
            let DwtWork { a: wa, b: wb, .. } = &mut *work;
            let (pa, pb) = pair(wa, wb)?;
            let (src_buf, dst_buf) = if cur == 0 { (&*pa, pb) } else { (&*pb, pa) };
            let a = if a_in_coeffs {
                coeffs.slice(layout.approx_offset()..layout.approx_offset() + rows * a_len)
            } else {
                src_buf.slice(0..rows * a_len)
            };
            let (nc_i, astride, nout_i) = (nc as i64, a_len as i64, nout as i64);
            let dst: &CudaSlice<T> = if last { &*out } else { &*dst_buf };
            if let Some([_, (stages, coef)]) = &self.lattice {
                // Pairs i whose outputs 2i + {0, 1} - shift land in [0, nout).
                let (i0, count) = if periodic != 0 {
                    (0i64, nc as i64)
                } else {
                    let lo = (shift as i64).div_euclid(2);
                    (lo, (nout as i64 - 1 + shift as i64).div_euclid(2) + 1 - lo)
                };
                let inst = format!("ILAT(kernel, {}, {stages})", T::CUDA);
                let func = self.gpu.function(Kernel::Dwt, &inst, 0)?;
                let mut b = self.stream.launch_builder(&func);
                b.arg(&a)
                    .arg(&d)
                    .arg(&nc_i)
                    .arg(&astride)
                    .arg(&nout_i)
                    .arg(&shift)
                    .arg(&periodic)
                    .arg(&i0)
                    .arg(&count)
                    .arg(coef)
                    .arg(dst);
                // SAFETY: matches ILAT; a has rows x a_len, d rows x nc, dst rows x nout.
                unsafe { b.launch(self.grid(count.max(0) as usize, rows)?) }
                    .during(|| format!("launching {inst}"))?;
                drop(b);
                a_len = nout;
                a_in_coeffs = false;
                cur = 1 - cur;
                continue;
            }
            let inst = format!("IDWT(kernel, {}, 2)", T::CUDA);
            let func = self.gpu.function(Kernel::Dwt, &inst, 0)?;
            let mut b = self.stream.launch_builder(&func);
            b.arg(&a)
                .arg(&d)
                .arg(&nc_i)
                .arg(&astride)
                .arg(&nout_i)
                .arg(&shift)
                .arg(&periodic)
                .arg(&self.rec)
                .arg(&f_i)
                .arg(dst);
            // SAFETY: matches IDWT; a has rows x a_len, d rows x nc, dst rows x nout.
            unsafe { b.launch(self.grid(nout.div_ceil(2), rows)?) }
                .during(|| format!("launching {inst}"))?;
            a_len = nout;
            a_in_coeffs = false;
            cur = 1 - cur;
        }
        Ok(())
    }
}

/// Scratch a plan reuses between runs: two approximation buffers and the
/// extended rows of the no-wrap variants.
pub struct DwtWork<T: GpuReal> {
    a: Option<CudaSlice<T>>,
    b: Option<CudaSlice<T>>,
    extended: Option<CudaSlice<T>>,
    /// The fused kernels' small arrays (lengths, offsets), uploaded once.
    consts: std::collections::HashMap<Vec<i64>, CudaSlice<i64>>,
}

impl<T: GpuReal> Default for DwtWork<T> {
    fn default() -> Self {
        DwtWork {
            a: None,
            b: None,
            extended: None,
            consts: std::collections::HashMap::new(),
        }
    }
}

impl<T: GpuReal> DwtWork<T> {
    /// Device copies of `vs`, uploaded on first use and kept.
    fn constants(
        &mut self,
        stream: &Arc<CudaStream>,
        vs: &[&[i64]],
    ) -> Result<Vec<CudaSlice<i64>>, CudaError> {
        let mut out = Vec::with_capacity(vs.len());
        for v in vs {
            let d = match self.consts.remove(*v) {
                Some(d) => d,
                None => stream
                    .clone_htod(*v)
                    .during(|| "copying the fused levels' lengths".into())?,
            };
            out.push(d);
        }
        Ok(out)
    }
    fn keep(&mut self, vs: &[&[i64]], ds: Vec<CudaSlice<i64>>) {
        for (v, d) in vs.iter().zip(ds) {
            self.consts.insert(v.to_vec(), d);
        }
    }

    fn ensure(&mut self, stream: &Arc<CudaStream>, gpu: &Gpu, n: usize) -> Result<(), CudaError> {
        let n = n.max(1);
        for s in [&mut self.a, &mut self.b] {
            if s.as_ref().is_none_or(|v| v.len() < n) {
                check_free(gpu, (n * std::mem::size_of::<T>()) as u128)?;
                *s = Some(
                    stream
                        .alloc_zeros::<T>(n)
                        .during(|| "allocating DWT scratch".into())?,
                );
            }
        }
        Ok(())
    }
}

/// The two approximation buffers (made by `DwtWork::ensure`).
fn pair<'a, T>(
    a: &'a mut Option<CudaSlice<T>>,
    b: &'a mut Option<CudaSlice<T>>,
) -> Result<(&'a mut CudaSlice<T>, &'a mut CudaSlice<T>), CudaError> {
    match (a.as_mut(), b.as_mut()) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(CudaError::Unsupported("DWT scratch missing".into())),
    }
}

/// The edge pass's windows for K tiled levels of lengths `lens` (K + 1):
/// first and last samples kept per level ([wl_0..wl_K, wr_0..wr_K]). They
/// cover the outputs DWT_TILE cannot compute (the inputs leave the row),
/// every input those windows need, and the extension's reads (F samples
/// from each end).
fn edge_windows(lens: &[i64], f: i64, s0: i64) -> Vec<i64> {
    let k = lens.len() - 1;
    // What a tile with the whole row in reach computes: as in DWT_TILE.
    let (mut el, mut er) = (vec![0i64; k + 1], vec![0i64; k + 1]);
    let (mut vlo, mut vhi) = (0i64, lens[0]);
    for l in 1..=k {
        vlo = (vlo - s0 + f - 1 + 1).div_euclid(2);
        vhi = (vhi - 1 - s0).div_euclid(2) + 1;
        let n = lens[l];
        if vhi <= vlo {
            el[l] = n;
        } else {
            el[l] = vlo.clamp(0, n);
            er[l] = (n - vhi).clamp(0, n);
        }
    }
    let (mut wl, mut wr) = (vec![0i64; k + 1], vec![0i64; k + 1]);
    wl[k] = el[k];
    wr[k] = er[k];
    for l in (1..=k).rev() {
        wl[l - 1] = (2 * wl[l] + s0).max(f + 1).max(el[l - 1]);
        wr[l - 1] = (lens[l - 1] - 2 * (lens[l] - wr[l]) - s0 + f)
            .max(f + 1)
            .max(er[l - 1]);
    }
    for l in 0..=k {
        wl[l] = wl[l].min(lens[l]);
        wr[l] = wr[l].min(lens[l] - wl[l]);
    }
    wl.extend(wr);
    wl
}

/// Output length of each waverec step, coarsest first; errors like the
/// CPU's waverec when the lengths do not fit together.
pub fn rec_lengths(layout: &DwtLayout, f: usize, mode: Mode) -> Result<Vec<usize>, CudaError> {
    let level = layout.levels();
    let mut a = layout.approx_len;
    let mut out = Vec::with_capacity(level);
    for s in 0..level {
        let nc = layout.detail_lens[level - 1 - s];
        if a != nc && a != nc + 1 {
            return Err(multires::dwt::DwtError::CoefficientMismatch(format!(
                "an approximation of {a} coefficients cannot be combined with {nc} details (level {})",
                level - s
            ))
            .into());
        }
        a = rec_len(nc, f, mode);
        out.push(a);
    }
    Ok(out)
}

/// The same plan with its kernels and scratch on `stream` (the streamed
/// batches run two side by side).
impl<T: GpuReal> GpuDwt<T> {
    pub fn with_stream(&self, stream: Arc<CudaStream>) -> Result<Self, CudaError> {
        let mut p = GpuDwt::new(self.gpu.clone(), &self.wavelet, self.mode, self.variant)?;
        // The filters were copied on the GPU's stream; `stream` does not wait for it.
        self.gpu.synchronize()?;
        p.stream = stream;
        Ok(p)
    }

    /// Bytes this plan may use: its limit, within 4/5 of what is free.
    fn budget(&self) -> Result<usize, CudaError> {
        let free = self.gpu.free_mem()? * 4 / 5;
        Ok(self.mem_limit.map_or(free, |m| m.min(free)))
    }

    /// Rows per batch of the streamed path for `per_row` device bytes and
    /// `in_row` input bytes a row, or None to run in core: inputs that fit
    /// and are small. Batches hold about STREAM_BATCH_BYTES of input (two in
    /// flight within the budget), balanced so the last is not a sliver.
    fn batch_rows(
        &self,
        rows: usize,
        per_row: usize,
        in_row: usize,
    ) -> Result<Option<usize>, CudaError> {
        let budget = self.budget()?;
        let fit = budget / per_row.max(1);
        let large = rows >= 4 && rows.saturating_mul(in_row) > self.stream_above;
        if rows <= fit.min(MAX_ROWS) && !large {
            return Ok(None);
        }
        let fit = (fit / 2).min(MAX_ROWS);
        if fit == 0 {
            let need = 2 * per_row as u128;
            return Err(match self.mem_limit {
                Some(limit) if limit == budget => CudaError::MemoryLimit {
                    need,
                    limit: limit as u128,
                },
                _ => CudaError::OutOfMemory {
                    need,
                    free: budget as u128,
                },
            });
        }
        let cap = fit.min((STREAM_BATCH_BYTES / in_row.max(1)).max(1));
        let batches = rows.div_ceil(cap);
        Ok(Some(rows.div_ceil(batches)))
    }
}

/// Input bytes per batch of the streamed path: large enough that a batch's
/// kernels fill the GPU, small enough that pinned buffers stay cheap and the
/// pipeline's fill and drain are short.
const STREAM_BATCH_BYTES: usize = 8 << 20;

/// pywt.wavedec of `rows` signals of `n` samples (row-major in `x`) on the
/// GPU: [cA_L, cD_L, ..., cD_1], each rows x its length, row-major.
pub fn wavedec<T: GpuReal>(
    plan: &GpuDwt<T>,
    x: &[T],
    rows: usize,
    level: usize,
) -> Result<Vec<Vec<T>>, CudaError> {
    if rows == 0 || x.is_empty() {
        return Err(multires::dwt::DwtError::EmptySignal.into());
    }
    let n = x.len() / rows;
    // Device bytes per row: input, coefficients, two scratch approximations.
    let per_row = (3 * n + 2 * plan.f * level.max(1)) * std::mem::size_of::<T>();
    if let Some(batch) = plan.batch_rows(rows, per_row, n * std::mem::size_of::<T>())? {
        return wavedec_streamed(plan, x, rows, level, batch);
    }
    let layout = DwtLayout::wavedec(rows, n, plan.f, plan.mode, level);
    let gpu = &plan.gpu;
    check_free(
        gpu,
        ((x.len() + layout.total()) * std::mem::size_of::<T>()) as u128,
    )?;
    let xd = upload(gpu, x)?;
    let mut coeffs = gpu
        .stream
        .alloc_zeros::<T>(layout.total().max(1))
        .during(|| "allocating the coefficients".into())?;
    let mut work = DwtWork::default();
    plan.wavedec_on_device(&xd, &layout, &mut coeffs, &mut work)?;
    // Each block straight into its own vector through the page-locked ring.
    layout
        .blocks()
        .into_iter()
        .map(|(o, l)| {
            let mut v = multires::memory::zeroed_vec::<T>(rows * l);
            crate::transfer::download_into(gpu, &gpu.stream, &coeffs, o, &mut v)?;
            Ok(v)
        })
        .collect()
}

/// pywt.wavedec of `rows` signals of `n` samples at device address `src`
/// (another library's array, through DLPack) into coefficients that stay
/// on the device: the buffer and its layout ([cA_L, cD_L, ..., cD_1] at
/// `layout.blocks()`).
///
/// # Safety
/// `src` must be the device address of rows x n values of T, C-contiguous,
/// readable in this GPU's primary context until this returns.
pub unsafe fn wavedec_from_device<T: GpuReal>(
    plan: &GpuDwt<T>,
    src: u64,
    rows: usize,
    n: usize,
    level: usize,
) -> Result<(CudaSlice<T>, DwtLayout), CudaError> {
    if rows == 0 || n == 0 {
        return Err(multires::dwt::DwtError::EmptySignal.into());
    }
    let layout = DwtLayout::wavedec(rows, n, plan.f, plan.mode, level);
    let gpu = &plan.gpu;
    let size = std::mem::size_of::<T>();
    check_free(gpu, ((rows * n + layout.total()) * size) as u128)?;
    let mut xd = gpu
        .stream
        .alloc_zeros::<T>(rows * n)
        .during(|| "allocating the device signal".into())?;
    {
        use cudarc::driver::DevicePtrMut;
        let (dst, _sync) = xd.device_ptr_mut(&gpu.stream);
        cudarc::driver::result::memcpy_dtod_async(
            dst,
            src,
            rows * n * size,
            gpu.stream.cu_stream(),
        )
        .during(|| "copying the device signal".into())?;
    }
    let mut coeffs = gpu
        .stream
        .alloc_zeros::<T>(layout.total().max(1))
        .during(|| "allocating the coefficients".into())?;
    let mut work = DwtWork::default();
    plan.wavedec_on_device(&xd, &layout, &mut coeffs, &mut work)?;
    gpu.synchronize()?;
    Ok((coeffs, layout))
}

/// One of the two batches in flight of a streamed run: its stream (in its
/// plan), device buffers and pinned host buffers.
struct Slot<T: GpuReal> {
    plan: GpuDwt<T>,
    work: DwtWork<T>,
    dev_in: CudaSlice<T>,
    dev_out: CudaSlice<T>,
    pin_in: Registered<T>,
    pin_out: Registered<T>,
    /// (first row, rows) of the batch whose results wait in pin_out.
    pending: Option<(usize, usize)>,
}

impl<T: GpuReal> Slot<T> {
    fn new(plan: &GpuDwt<T>, len_in: usize, len_out: usize) -> Result<Self, CudaError> {
        let gpu = &plan.gpu;
        let stream = gpu.ctx.new_stream().during(|| "creating a stream".into())?;
        let plan = plan.with_stream(stream.clone())?;
        let dev = |n: usize| {
            stream
                .alloc_zeros::<T>(n.max(1))
                .during(|| format!("allocating a batch of {n} values"))
        };
        // The pinned inputs are written before each copy up and the outputs
        // read only after the stream that fills them is synchronized.
        // Registered, cached memory: the host reads the outputs back, and
        // cudarc's `alloc_pinned` is write-combined (uncached reads).
        let pin = |n: usize| Registered::<T>::zeroed(&gpu.ctx, n.max(1), 0);
        Ok(Slot {
            dev_in: dev(len_in)?,
            dev_out: dev(len_out)?,
            pin_in: pin(len_in)?,
            pin_out: pin(len_out)?,
            plan,
            work: DwtWork::default(),
            pending: None,
        })
    }

    /// Waits for the batch in flight and hands its results to `take`.
    fn finish(&mut self, mut take: impl FnMut(&[T], usize, usize)) -> Result<(), CudaError> {
        self.plan
            .stream
            .synchronize()
            .during(|| "waiting for a batch of rows".into())?;
        if let Some((r0, r)) = self.pending.take() {
            take(&self.pin_out, r0, r);
        }
        Ok(())
    }

    /// Copies the filled pinned input up, runs `compute` and copies the
    /// result down, all queued on the slot's stream.
    fn launch(
        &mut self,
        r0: usize,
        r: usize,
        compute: impl FnOnce(
            &GpuDwt<T>,
            &CudaSlice<T>,
            &mut CudaSlice<T>,
            &mut DwtWork<T>,
        ) -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let stream = self.plan.stream.clone();
        stream
            .memcpy_htod(&self.pin_in[..], &mut self.dev_in)
            .during(|| "copying a batch of rows to the GPU".into())?;
        compute(&self.plan, &self.dev_in, &mut self.dev_out, &mut self.work)?;
        stream
            .memcpy_dtoh(&self.dev_out, &mut self.pin_out[..])
            .during(|| "copying a batch's results to the host".into())?;
        self.pending = Some((r0, r));
        Ok(())
    }
}

impl<T: GpuReal> GpuDwt<T> {
    /// The kept slots when they have this shape, else new ones; idle either
    /// way (a run that failed midway leaves nothing pending).
    fn slots_for(
        &self,
        batches: usize,
        len_in: usize,
        len_out: usize,
    ) -> Result<std::sync::MutexGuard<'_, Vec<Slot<T>>>, CudaError> {
        let mut slots = self
            .slots
            .lock()
            .map_err(|_| CudaError::Unsupported("an earlier streamed run panicked".into()))?;
        let want = 2.min(batches);
        let fits =
            |s: &Slot<T>| s.pin_in.len() == len_in.max(1) && s.pin_out.len() == len_out.max(1);
        if slots.len() < want || !slots.iter().all(fits) {
            slots.clear();
            for _ in 0..want {
                slots.push(Slot::new(self, len_in, len_out)?);
            }
        }
        for s in slots.iter_mut() {
            s.plan
                .stream
                .synchronize()
                .during(|| "waiting for an earlier batch".into())?;
            s.pending = None;
        }
        Ok(slots)
    }
}

/// `dst.copy_from_slice(src)` on every core (the pinned staging copies are
/// otherwise slower than the bus).
fn par_copy<T: GpuReal>(dst: &mut [T], src: &[T]) {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 16;
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// Runs `batches` through two slots: batch i's copies and kernels are
/// queued on one stream while the other's run, and each slot's previous
/// results are handed to `take` before its pinned buffers are refilled.
fn stream_batches<T: GpuReal>(
    slots: &mut [Slot<T>],
    rows: usize,
    batch: usize,
    mut fill: impl FnMut(&mut [T], usize, usize),
    mut take: impl FnMut(&[T], usize, usize),
    compute: impl Fn(
        &GpuDwt<T>,
        &CudaSlice<T>,
        &mut CudaSlice<T>,
        &mut DwtWork<T>,
    ) -> Result<(), CudaError>,
) -> Result<(), CudaError> {
    let mut r0 = 0;
    let mut i = 0;
    while r0 < rows {
        let r = batch.min(rows - r0);
        let n_slots = slots.len();
        let slot = &mut slots[i % n_slots];
        slot.finish(&mut take)?;
        fill(&mut slot.pin_in, r0, r);
        slot.launch(r0, r, &compute)?;
        r0 += r;
        i += 1;
    }
    for slot in slots.iter_mut() {
        slot.finish(&mut take)?;
    }
    Ok(())
}

/// wavedec of inputs larger than the budget: batches of `batch` rows
/// through two slots (pinned buffers, two streams), so the copies of one
/// batch overlap the kernels of the other. Rows are independent, so every
/// coefficient is bit-identical to the in-core run. A short last batch
/// runs at full height over stale rows whose results are dropped.
fn wavedec_streamed<T: GpuReal>(
    plan: &GpuDwt<T>,
    x: &[T],
    rows: usize,
    level: usize,
    batch: usize,
) -> Result<Vec<Vec<T>>, CudaError> {
    let n = x.len() / rows;
    let lb = DwtLayout::wavedec(batch, n, plan.f, plan.mode, level);
    let blocks = lb.blocks();
    let mut out: Vec<Vec<T>> = blocks
        .iter()
        .map(|&(_, l)| multires::memory::touched_vec::<T>(rows * l))
        .collect();
    let mut slots = plan.slots_for(rows.div_ceil(batch), batch * n, lb.total())?;
    stream_batches(
        &mut slots,
        rows,
        batch,
        |buf, r0, r| par_copy(&mut buf[..r * n], &x[r0 * n..(r0 + r) * n]),
        |host, r0, r| {
            for (o, &(off, l)) in out.iter_mut().zip(&blocks) {
                par_copy(&mut o[r0 * l..(r0 + r) * l], &host[off..off + r * l]);
            }
        },
        |p, xd, cd, work| p.wavedec_on_device(xd, &lb, cd, work),
    )?;
    Ok(out)
}

/// pywt.waverec on the GPU of [cA_L, cD_L, ..., cD_1] given as rows x
/// length blocks (`lens[i]` per row): rows x the reconstructed length.
pub fn waverec<T: GpuReal>(
    plan: &GpuDwt<T>,
    coeffs: &[Vec<T>],
    rows: usize,
) -> Result<(Vec<T>, usize), CudaError> {
    if coeffs.is_empty() || rows == 0 {
        return Err(CudaError::Unsupported("no coefficients".into()));
    }
    let lens: Vec<usize> = coeffs.iter().map(|c| c.len() / rows).collect();
    if let Some((i, c)) = coeffs.iter().enumerate().find(|(_, c)| c.len() % rows != 0) {
        return Err(CudaError::Unsupported(format!(
            "coefficient block {i} holds {} values, not a multiple of {rows} rows",
            c.len()
        )));
    }
    let layout = DwtLayout::from_blocks(rows, &lens);
    let nouts = rec_lengths(&layout, plan.f, plan.mode)?;
    let final_len = nouts.last().copied().unwrap_or(layout.approx_len);
    // Device bytes per row: coefficients, reconstruction, two scratch rows.
    let per_row =
        (lens.iter().sum::<usize>() + 3 * final_len.max(lens[0])) * std::mem::size_of::<T>();
    let in_row = lens.iter().sum::<usize>() * std::mem::size_of::<T>();
    if let Some(batch) = plan.batch_rows(rows, per_row, in_row)? {
        let y = waverec_streamed(plan, coeffs, &layout, final_len, batch)?;
        return Ok((y, final_len));
    }
    let gpu = &plan.gpu;
    check_free(
        gpu,
        ((layout.total() + rows * final_len) * std::mem::size_of::<T>()) as u128,
    )?;
    // Each block straight from the caller's vector through the ring.
    let mut cd = unsafe { gpu.stream.alloc::<T>(layout.total().max(1)) }
        .during(|| "allocating the coefficients".into())?;
    for (c, (o, _)) in coeffs.iter().zip(layout.blocks()) {
        crate::transfer::upload_into(gpu, &gpu.stream, c, &mut cd, o)?;
    }
    let mut out = gpu
        .stream
        .alloc_zeros::<T>((rows * final_len).max(1))
        .during(|| "allocating the reconstruction".into())?;
    let mut work = DwtWork::default();
    plan.waverec_on_device(&cd, &layout, &mut out, &mut work)?;
    let mut host = multires::memory::zeroed_vec::<T>(rows * final_len);
    crate::transfer::download_into(gpu, &gpu.stream, &out, 0, &mut host)?;
    Ok((host, final_len))
}

/// waverec of inputs larger than the budget, streamed like `wavedec_streamed`.
fn waverec_streamed<T: GpuReal>(
    plan: &GpuDwt<T>,
    coeffs: &[Vec<T>],
    layout: &DwtLayout,
    final_len: usize,
    batch: usize,
) -> Result<Vec<T>, CudaError> {
    let rows = layout.rows;
    let lb = DwtLayout {
        rows: batch,
        ..layout.clone()
    };
    // Where each input block goes in a batch's layout.
    let blocks = lb.blocks();
    let mut out = multires::memory::touched_vec::<T>(rows * final_len);
    let mut slots = plan.slots_for(rows.div_ceil(batch), lb.total(), batch * final_len)?;
    stream_batches(
        &mut slots,
        rows,
        batch,
        |buf, r0, r| {
            for (c, &(off, l)) in coeffs.iter().zip(&blocks) {
                par_copy(&mut buf[off..off + r * l], &c[r0 * l..(r0 + r) * l]);
            }
        },
        |host, r0, r| {
            par_copy(
                &mut out[r0 * final_len..(r0 + r) * final_len],
                &host[..r * final_len],
            )
        },
        |p, cd, y, work| p.waverec_on_device(cd, &lb, y, work),
    )?;
    Ok(out)
}
