//! n-D DWT on the GPU: PyWavelets' dwtn / wavedecn / waverecn (and so dwt2,
//! wavedec2 over the last two axes), separable over any axes, float32 and
//! float64. Every axis pass reads and writes with consecutive threads on
//! consecutive innermost elements (coalesced on every axis); a level over
//! the last two axes runs as one fused kernel (rows, then columns, in
//! shared memory), so its input is read once and its four sub-bands
//! written once.

use crate::cwt::check_free;
use crate::device::Gpu;
use crate::dwt::{mode_code, GpuDwt};
use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use crate::GpuReal;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use multires::dwt::{
    coeff_len, max_level, rec_len, synthesis_shift, DwtError, Mode, NdCoefficients,
};
use ndarray::ArrayD;
use std::collections::BTreeMap;

/// An array on the device, row-major.
pub struct DevArray<T> {
    pub data: CudaSlice<T>,
    pub shape: Vec<usize>,
}

impl<T: GpuReal> DevArray<T> {
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn upload(gpu: &Gpu, a: &ArrayD<T>) -> Result<Self, CudaError> {
        let v = a.as_standard_layout();
        let v = v.as_slice().ok_or_else(|| {
            CudaError::Unsupported("the array is not contiguous after as_standard_layout".into())
        })?;
        check_free(gpu, std::mem::size_of_val(v) as u128)?;
        Ok(DevArray {
            data: crate::cwt::upload(gpu, v)?,
            shape: a.shape().to_vec(),
        })
    }
    /// A copy on the device (wavedecn and waverecn at level 0).
    pub fn duplicate(&self, gpu: &Gpu) -> Result<Self, CudaError> {
        let mut data = alloc::<T>(gpu, self.len())?;
        gpu.stream
            .memcpy_dtod(
                &self.data.slice(0..self.len()),
                &mut data.slice_mut(0..self.len()),
            )
            .during(|| "copying an array on the device".into())?;
        Ok(DevArray {
            data,
            shape: self.shape.clone(),
        })
    }
    pub fn download(&self, gpu: &Gpu) -> Result<ArrayD<T>, CudaError> {
        // Huge pages: a fresh 1 GB array faulted in 4 KiB pages took 181 ms
        // to fill from the ring (6 GB/s) on the H200 machine.
        let mut host = multires::memory::zeroed_vec::<T>(self.len());
        crate::transfer::download_into(gpu, &gpu.stream, &self.data, 0, &mut host)?;
        gpu.synchronize()?;
        ArrayD::from_shape_vec(ndarray::IxDyn(&self.shape), host)
            .map_err(|e| CudaError::Unsupported(format!("shape: {e}")))
    }
}

/// Uninitialized device memory for `n` values every kernel below overwrites.
fn alloc<T: GpuReal>(gpu: &Gpu, n: usize) -> Result<CudaSlice<T>, CudaError> {
    check_free(gpu, (n.max(1) * std::mem::size_of::<T>()) as u128)?;
    // SAFETY: every element is written by the kernel the buffer is made for
    // before anything reads it.
    unsafe { gpu.stream.alloc::<T>(n.max(1)) }.during(|| "allocating DWT output".into())
}

fn split(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    )
}

const MAX_GRID_Z: usize = 65535;

impl<T: GpuReal> GpuDwt<T> {
    /// (cA, cD) of `x` along `axis`.
    pub fn dwt_axis(
        &self,
        x: &DevArray<T>,
        axis: usize,
    ) -> Result<(DevArray<T>, DevArray<T>), CudaError> {
        let gpu = self.gpu();
        let f = self.wavelet.filter_len();
        let (outer, n, inner) = split(&x.shape, axis);
        let no = coeff_len(n, f, self.mode);
        let mut shape = x.shape.clone();
        shape[axis] = no;
        let total = outer * no * inner;
        let ca = alloc::<T>(gpu, total)?;
        let cd = alloc::<T>(gpu, total)?;
        let inst = format!("DWT_AX(kernel, {}, {})", T::CUDA, mode_code(self.mode));
        let func = gpu.function(Kernel::Dwt, &inst, 0)?;
        let (n_i, no_i, f_i, s0) = (n as i64, no as i64, f as i32, self.s0());
        // x: 32 columns a block (fewer when the axis is innermost), y: outputs.
        let bx = inner.min(32);
        let by = 256 / bx;
        for o0 in (0..outer).step_by(MAX_GRID_Z) {
            let rows = (outer - o0).min(MAX_GRID_Z);
            let xs = x.data.slice(o0 * n * inner..(o0 + rows) * n * inner);
            let (a_lo, a_hi) = (o0 * no * inner, (o0 + rows) * no * inner);
            let (sa, sd) = (ca.slice(a_lo..a_hi), cd.slice(a_lo..a_hi));
            let inner_i = inner as i64;
            let cfg = LaunchConfig {
                grid_dim: (
                    inner.div_ceil(bx) as u32,
                    no.div_ceil(by).clamp(1, 65535) as u32,
                    rows as u32,
                ),
                block_dim: (bx as u32, by as u32, 1),
                shared_mem_bytes: 0,
            };
            let mut b = gpu.stream.launch_builder(&func);
            b.arg(&xs)
                .arg(&n_i)
                .arg(&no_i)
                .arg(&inner_i)
                .arg(&s0)
                .arg(self.dec())
                .arg(&f_i)
                .arg(&sa)
                .arg(&sd);
            // SAFETY: matches DWT_AX; rows x n x inner in, rows x no x inner out.
            unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        }
        Ok((
            DevArray {
                data: ca,
                shape: shape.clone(),
            },
            DevArray { data: cd, shape },
        ))
    }

    /// The synthesis of (a, d) along `axis` (equal shapes).
    pub fn idwt_axis(
        &self,
        a: &DevArray<T>,
        d: &DevArray<T>,
        axis: usize,
    ) -> Result<DevArray<T>, CudaError> {
        if a.shape != d.shape {
            return Err(DwtError::CoefficientMismatch(format!(
                "approximation shape {:?} and detail shape {:?} differ",
                a.shape, d.shape
            ))
            .into());
        }
        let gpu = self.gpu();
        let f = self.wavelet.filter_len();
        let (outer, nc, inner) = split(&a.shape, axis);
        let nout = rec_len(nc, f, self.mode);
        let mut shape = a.shape.clone();
        shape[axis] = nout;
        let out = alloc::<T>(gpu, outer * nout * inner)?;
        let inst = format!("IDWT_AX(kernel, {})", T::CUDA);
        let func = gpu.function(Kernel::Dwt, &inst, 0)?;
        let shift = synthesis_shift(f, self.mode) as i32;
        let periodic = i32::from(self.mode == Mode::Periodization);
        let (nc_i, inner_i, nout_i, f_i) = (nc as i64, inner as i64, nout as i64, f as i32);
        let bx = inner.min(32);
        let by = 256 / bx;
        for o0 in (0..outer).step_by(MAX_GRID_Z) {
            let rows = (outer - o0).min(MAX_GRID_Z);
            let (c_lo, c_hi) = (o0 * nc * inner, (o0 + rows) * nc * inner);
            let (sa, sd) = (a.data.slice(c_lo..c_hi), d.data.slice(c_lo..c_hi));
            let so = out.slice(o0 * nout * inner..(o0 + rows) * nout * inner);
            let cfg = LaunchConfig {
                grid_dim: (
                    inner.div_ceil(bx) as u32,
                    nout.div_ceil(by).clamp(1, 65535) as u32,
                    rows as u32,
                ),
                block_dim: (bx as u32, by as u32, 1),
                shared_mem_bytes: 0,
            };
            let mut b = gpu.stream.launch_builder(&func);
            b.arg(&sa)
                .arg(&sd)
                .arg(&nc_i)
                .arg(&inner_i)
                .arg(&nout_i)
                .arg(&shift)
                .arg(&periodic)
                .arg(self.rec())
                .arg(&f_i)
                .arg(&so);
            // SAFETY: matches IDWT_AX; rows x nc x inner in, rows x nout x inner out.
            unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        }
        Ok(DevArray { data: out, shape })
    }

    /// One synthesis level over the last two axes in one kernel (IDWT2):
    /// the same sums as the two axis passes, without the intermediate.
    fn idwt2_fused(&self, bands: [&DevArray<T>; 4]) -> Result<DevArray<T>, CudaError> {
        let [aa, ad, da, dd] = bands;
        if let Some(b) = [ad, da, dd].iter().find(|b| b.shape != aa.shape) {
            return Err(DwtError::CoefficientMismatch(format!(
                "sub-band shapes {:?} and {:?} differ",
                aa.shape, b.shape
            ))
            .into());
        }
        let gpu = self.gpu();
        let f = self.wavelet.filter_len();
        let nd = aa.shape.len();
        let (nc0, nc1) = (aa.shape[nd - 2], aa.shape[nd - 1]);
        let outer: usize = aa.shape[..nd - 2].iter().product();
        let (n0, n1) = (rec_len(nc0, f, self.mode), rec_len(nc1, f, self.mode));
        let mut shape = aa.shape.clone();
        shape[nd - 2] = n0;
        shape[nd - 1] = n1;
        let out = alloc::<T>(gpu, outer * n0 * n1)?;
        let inst = format!("IDWT2(kernel, {})", T::CUDA);
        let func = gpu.function(Kernel::Dwt, &inst, 0)?;
        let shift = synthesis_shift(f, self.mode) as i32;
        let periodic = i32::from(self.mode == Mode::Periodization);
        let (nc0_i, nc1_i, n0_i, n1_i, f_i) =
            (nc0 as i64, nc1 as i64, n0 as i64, n1 as i64, f as i32);
        let (bx, by) = (32usize, 8usize);
        for o0 in (0..outer).step_by(MAX_GRID_Z) {
            let rows = (outer - o0).min(MAX_GRID_Z);
            let (c_lo, c_hi) = (o0 * nc0 * nc1, (o0 + rows) * nc0 * nc1);
            let (saa, sad) = (aa.data.slice(c_lo..c_hi), ad.data.slice(c_lo..c_hi));
            let (sda, sdd) = (da.data.slice(c_lo..c_hi), dd.data.slice(c_lo..c_hi));
            let so = out.slice(o0 * n0 * n1..(o0 + rows) * n0 * n1);
            let cfg = LaunchConfig {
                grid_dim: (
                    n1.div_ceil(bx) as u32,
                    n0.div_ceil(by).clamp(1, 65535) as u32,
                    rows as u32,
                ),
                block_dim: (bx as u32, by as u32, 1),
                shared_mem_bytes: 0,
            };
            let mut b = gpu.stream.launch_builder(&func);
            b.arg(&saa)
                .arg(&sad)
                .arg(&sda)
                .arg(&sdd)
                .arg(&nc0_i)
                .arg(&nc1_i)
                .arg(&n0_i)
                .arg(&n1_i)
                .arg(&shift)
                .arg(&periodic)
                .arg(self.rec())
                .arg(&f_i)
                .arg(&so);
            // SAFETY: matches IDWT2; four rows x nc0 x nc1 in, rows x n0 x n1 out.
            unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        }
        Ok(DevArray { data: out, shape })
    }

    /// `x` cut to `want` (each axis equal or one shorter); None when equal.
    fn crop(&self, x: &DevArray<T>, want: &[usize]) -> Result<Option<DevArray<T>>, CudaError> {
        let mut out: Option<DevArray<T>> = None;
        for axis in 0..want.len() {
            let src = out.as_ref().unwrap_or(x);
            if src.shape[axis] == want[axis] {
                continue;
            }
            let gpu = self.gpu();
            let (outer, s, inner) = split(&src.shape, axis);
            let w = want[axis];
            let total = outer * w * inner;
            let y = alloc::<T>(gpu, total)?;
            let inst = format!("CROP(kernel, {})", T::CUDA);
            let func = gpu.function(Kernel::Dwt, &inst, 0)?;
            let (t_i, s_i, in_i, w_i) = (total as i64, s as i64, inner as i64, w as i64);
            let mut b = gpu.stream.launch_builder(&func);
            b.arg(&src.data)
                .arg(&t_i)
                .arg(&s_i)
                .arg(&in_i)
                .arg(&w_i)
                .arg(&y);
            let cfg = LaunchConfig::for_num_elems(total.max(1) as u32);
            // SAFETY: matches CROP; y holds total values.
            unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
            drop(b);
            let mut shape = src.shape.clone();
            shape[axis] = w;
            out = Some(DevArray { data: y, shape });
        }
        Ok(out)
    }

    /// One level over the last two axes in one kernel: [aa, ad, da, dd];
    /// None when the filter's tile does not fit in shared memory.
    fn dwt2_fused(&self, x: &DevArray<T>) -> Result<Option<[DevArray<T>; 4]>, CudaError> {
        let gpu = self.gpu();
        let f = self.wavelet.filter_len();
        let nd = x.shape.len();
        let (n0, n1) = (x.shape[nd - 2], x.shape[nd - 1]);
        let outer: usize = x.shape[..nd - 2].iter().product();
        let r = 2 * 32 + f - 2;
        let smem = (r * (r + 1) + 2 * r * 32) * std::mem::size_of::<T>();
        if smem > gpu.info.smem_per_block_optin.saturating_sub(2048) {
            return Ok(None);
        }
        let (no0, no1) = (coeff_len(n0, f, self.mode), coeff_len(n1, f, self.mode));
        let mut shape = x.shape.clone();
        shape[nd - 2] = no0;
        shape[nd - 1] = no1;
        let total = outer * no0 * no1;
        let bands = [(); 4].map(|_| alloc::<T>(gpu, total));
        let [aa, ad, da, dd] = bands;
        let (aa, ad, da, dd) = (aa?, ad?, da?, dd?);
        let inst = format!(
            "DWT2_TILE(kernel, {}, {}, {f})",
            T::CUDA,
            mode_code(self.mode)
        );
        let func = gpu.function(Kernel::Dwt, &inst, smem)?;
        let (n0_i, n1_i, no0_i, no1_i, s0) =
            (n0 as i64, n1 as i64, no0 as i64, no1 as i64, self.s0());
        for o0 in (0..outer).step_by(MAX_GRID_Z) {
            let rows = (outer - o0).min(MAX_GRID_Z);
            let xs = x.data.slice(o0 * n0 * n1..(o0 + rows) * n0 * n1);
            let (lo, hi) = (o0 * no0 * no1, (o0 + rows) * no0 * no1);
            let (saa, sad, sda, sdd) = (
                aa.slice(lo..hi),
                ad.slice(lo..hi),
                da.slice(lo..hi),
                dd.slice(lo..hi),
            );
            let cfg = LaunchConfig {
                grid_dim: (
                    no1.div_ceil(32) as u32,
                    no0.div_ceil(32) as u32,
                    rows as u32,
                ),
                block_dim: (256, 1, 1),
                shared_mem_bytes: smem as u32,
            };
            let mut b = gpu.stream.launch_builder(&func);
            b.arg(&xs)
                .arg(&n0_i)
                .arg(&n1_i)
                .arg(&no0_i)
                .arg(&no1_i)
                .arg(&s0)
                .arg(self.dec())
                .arg(&saa)
                .arg(&sad)
                .arg(&sda)
                .arg(&sdd);
            // SAFETY: matches DWT2_TILE; rows x n0 x n1 in, four rows x no0 x no1 out.
            unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        }
        let arr = |data| DevArray {
            data,
            shape: shape.clone(),
        };
        Ok(Some([arr(aa), arr(ad), arr(da), arr(dd)]))
    }

    /// `pywt.dwtn` on the device: every key over `axes` (indices, no repeats).
    pub fn dwtn_on_device(
        &self,
        x: &DevArray<T>,
        axes: &[usize],
    ) -> Result<BTreeMap<String, DevArray<T>>, CudaError> {
        let nd = x.shape.len();
        if axes.len() == 2 && nd >= 2 && axes[0] == nd - 2 && axes[1] == nd - 1 {
            if let Some([aa, ad, da, dd]) = self.dwt2_fused(x)? {
                return Ok([("aa", aa), ("ad", ad), ("da", da), ("dd", dd)]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect());
            }
        }
        let mut cur: Vec<(String, DevArray<T>)> = Vec::new();
        for (k, &axis) in axes.iter().enumerate() {
            let mut next = Vec::with_capacity(2 << k);
            if k == 0 {
                let (a, d) = self.dwt_axis(x, axis)?;
                next.push(("a".to_string(), a));
                next.push(("d".to_string(), d));
            } else {
                for (key, c) in &cur {
                    let (a, d) = self.dwt_axis(c, axis)?;
                    next.push((format!("{key}a"), a));
                    next.push((format!("{key}d"), d));
                }
            }
            cur = next;
        }
        Ok(cur.into_iter().collect())
    }

    /// `pywt.idwtn` on the device, every key of `level` with one shape.
    pub fn idwtn_on_device(
        &self,
        level: &BTreeMap<String, &DevArray<T>>,
        axes: &[usize],
    ) -> Result<DevArray<T>, CudaError> {
        // Fused for two-tap filters only: per output it sums (F/2)^2 terms
        // of each sub-band where the passes sum F/2 twice, so the saved
        // traffic wins for haar (dwt2-16k waverec2 5.12 -> 3.67 ms on an
        // H200) and loses for db4 (18.8 ms).
        if let ([a0, a1], 2) = (axes, self.wavelet.filter_len()) {
            let nd = level.values().next().map_or(0, |v| v.shape.len());
            if nd >= 2 && *a0 == nd - 2 && *a1 == nd - 1 {
                if let (Some(aa), Some(ad), Some(da), Some(dd)) = (
                    level.get("aa"),
                    level.get("ad"),
                    level.get("da"),
                    level.get("dd"),
                ) {
                    return self.idwt2_fused([aa, ad, da, dd]);
                }
            }
        }
        let mut owned: BTreeMap<String, DevArray<T>> = BTreeMap::new();
        for (k, &axis) in axes.iter().enumerate().rev() {
            let mut next = BTreeMap::new();
            for key in multires::dwt::nd::keys(k) {
                let (ka, kd) = (format!("{key}a"), format!("{key}d"));
                let get = |k: &String| owned.get(k).or_else(|| level.get(k).copied());
                let (Some(a), Some(d)) = (get(&ka), get(&kd)) else {
                    return Err(DwtError::CoefficientMismatch(format!(
                        "coefficient '{ka}' or '{kd}' is missing"
                    ))
                    .into());
                };
                next.insert(key, self.idwt_axis(a, d, axis)?);
            }
            owned = next;
        }
        owned
            .remove("")
            .ok_or_else(|| DwtError::CoefficientMismatch("no coefficients".into()).into())
    }

    /// `pywt.waverecn` on the device: details coarsest first, the
    /// approximation cut to each level's details' shape.
    pub fn waverecn_on_device(
        &self,
        approx: &DevArray<T>,
        details: &[BTreeMap<String, DevArray<T>>],
        axes: &[usize],
    ) -> Result<DevArray<T>, CudaError> {
        let all_a = "a".repeat(axes.len());
        let mut a: Option<DevArray<T>> = None;
        for (lvl, d) in details.iter().enumerate() {
            let Some(first) = d.values().next() else {
                return Err(DwtError::CoefficientMismatch(format!(
                    "detail level {} is empty",
                    lvl + 1
                ))
                .into());
            };
            let want = first.shape.clone();
            if let Some((k, v)) = d.iter().find(|(_, v)| v.shape != want) {
                return Err(DwtError::CoefficientMismatch(format!(
                    "level {}: detail '{k}' has shape {:?}, others {:?}",
                    lvl + 1,
                    v.shape,
                    want
                ))
                .into());
            }
            let cur = a.as_ref().unwrap_or(approx);
            multires::dwt::nd::check_approx_fits(lvl + 1, &cur.shape, &want)?;
            let cut = self.crop(cur, &want)?;
            let mut level: BTreeMap<String, &DevArray<T>> =
                d.iter().map(|(k, v)| (k.clone(), v)).collect();
            level.insert(all_a.clone(), cut.as_ref().unwrap_or(cur));
            a = Some(self.idwtn_on_device(&level, axes)?);
        }
        match a {
            Some(a) => Ok(a),
            None => approx.duplicate(self.gpu()),
        }
    }

    /// `pywt.wavedecn` on the device: (approximation, details coarsest first).
    #[allow(clippy::type_complexity)]
    pub fn wavedecn_on_device(
        &self,
        x: &DevArray<T>,
        axes: &[usize],
        level: usize,
    ) -> Result<(DevArray<T>, Vec<BTreeMap<String, DevArray<T>>>), CudaError> {
        let all_a = "a".repeat(axes.len());
        let mut details = Vec::with_capacity(level);
        let mut a: Option<DevArray<T>> = None;
        for _ in 0..level {
            let mut c = self.dwtn_on_device(a.as_ref().unwrap_or(x), axes)?;
            a = c.remove(&all_a);
            details.push(c);
        }
        details.reverse();
        // Level 0: the input itself.
        let a = match a {
            Some(a) => a,
            None => x.duplicate(self.gpu())?,
        };
        Ok((a, details))
    }
}

/// `pywt.wavedecn` of a host array on the GPU; `level` None is the largest
/// every axis allows (as the CPU's).
pub fn wavedecn<T: GpuReal>(
    plan: &GpuDwt<T>,
    x: &ArrayD<T>,
    level: Option<usize>,
    axes: &[isize],
) -> Result<NdCoefficients<T>, CudaError> {
    let ax = multires::dwt::nd::check_axes(axes, x.ndim())?;
    if x.is_empty() {
        return Err(DwtError::EmptySignal.into());
    }
    let f = plan.wavelet.filter_len();
    let level = level.unwrap_or_else(|| {
        ax.iter()
            .map(|&a| max_level(x.shape()[a], f))
            .min()
            .unwrap_or(0)
    });
    multires::dwt::multilevel::check_level(level)?;
    let gpu = plan.gpu();
    let xd = DevArray::upload(gpu, x)?;
    let (a, details) = plan.wavedecn_on_device(&xd, &ax, level)?;
    Ok(NdCoefficients {
        approx: a.download(gpu)?,
        details: details
            .iter()
            .map(|d| {
                d.iter()
                    .map(|(k, v)| Ok((k.clone(), v.download(gpu)?)))
                    .collect::<Result<BTreeMap<_, _>, CudaError>>()
            })
            .collect::<Result<_, _>>()?,
    })
}

/// `pywt.waverecn` on the GPU (the approximation cut to each level's
/// details, as PyWavelets does).
pub fn waverecn<T: GpuReal>(
    plan: &GpuDwt<T>,
    c: &NdCoefficients<T>,
    axes: &[isize],
) -> Result<ArrayD<T>, CudaError> {
    let ax = multires::dwt::nd::check_axes(axes, c.approx.ndim())?;
    let gpu = plan.gpu();
    let approx = DevArray::upload(gpu, &c.approx)?;
    let details = c
        .details
        .iter()
        .map(|d| {
            d.iter()
                .map(|(k, v)| Ok((k.clone(), DevArray::upload(gpu, v)?)))
                .collect::<Result<BTreeMap<_, _>, CudaError>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    plan.waverecn_on_device(&approx, &details, &ax)?
        .download(gpu)
}
