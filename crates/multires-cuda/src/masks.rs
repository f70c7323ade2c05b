//! Seed 000 III-A on the device: the host makes only the lengths and their
//! exclusive scan; the GPU samples every mask element (one thread each) into
//! the packed array, copies the direct path's masks out in the working
//! precision, and turns the overlap-save masks into band-pruned spectra
//! (pad, cuFFT, flag the bins above the floor, pack). Nothing of size
//! taps or scales x segment crosses the bus but one bit per spectrum bin.

use crate::cwt::{check_free, upload};
use crate::device::Gpu;
use crate::error::{Context, CudaError};
use crate::kernels::Kernel;
use crate::GpuReal;
use cudarc::cufft::sys::cufftType;
use cudarc::cufft::CudaFft;
use cudarc::driver::{CudaSlice, DevicePtrMut, LaunchConfig, PushKernelArg};
use multires::cwt::CwtPlan;
use multires::wavelets::Formula;
use rayon::prelude::*;

/// The packed masks on the device, in float64, with the host's layout.
pub(crate) struct DeviceMasks {
    re: CudaSlice<f64>,
    im: CudaSlice<f64>,
    /// Per packed mask (ascending length): where it starts, and its half-length.
    offsets: Vec<usize>,
    halves: Vec<usize>,
}

/// Band-pruned correlation spectra, laid out as the overlap-save kernels
/// read them: per filter an offset (complex units), the band's first bin and
/// its length, or -L for a band stored whole in bit-reversed order.
pub(crate) struct DeviceBands<T: GpuReal> {
    pub h: CudaSlice<T>,
    pub hoff: CudaSlice<i64>,
    pub blo: CudaSlice<i32>,
    pub blen: CudaSlice<i32>,
}

impl<T: GpuReal> DeviceBands<T> {
    /// Bands computed on the host (the FIR bank's filters come from the
    /// user), uploaded in order, none dense.
    pub fn upload_banded(gpu: &Gpu, bands: &[crate::spectra::Band]) -> Result<Self, CudaError> {
        let (mut hv, mut hoff, mut blo, mut blen) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for b in bands {
            hoff.push((hv.len() / 2) as i64);
            blo.push(b.lo as i32);
            blen.push(b.values.len() as i32);
            for c in &b.values {
                hv.push(T::of(c.re));
                hv.push(T::of(c.im));
            }
        }
        Ok(DeviceBands {
            h: upload(gpu, &hv)?,
            hoff: upload(gpu, &hoff)?,
            blo: upload(gpu, &blo)?,
            blen: upload(gpu, &blen)?,
        })
    }
}

/// The family code and numbers of ψ for cwt_masks.cu's `psi<FAM>`.
fn psi_code(f: Formula<'_>) -> (i32, Vec<f64>, Vec<f64>, i32) {
    let interleave = |v: &[num_complex::Complex64]| -> Vec<f64> {
        v.iter().flat_map(|c| [c.re, c.im]).collect()
    };
    match f {
        Formula::Morlet => (0, vec![], vec![], 0),
        Formula::ComplexMorlet { bandwidth, center } => (1, vec![bandwidth, center], vec![], 0),
        Formula::MexicanHat => (2, vec![], vec![], 0),
        Formula::GaussianPolynomial { poly, a, c, real } => (
            3,
            vec![a, c, if real { 1.0 } else { 0.0 }],
            interleave(poly),
            poly.len() as i32,
        ),
        Formula::Shannon { bandwidth, center } => (4, vec![bandwidth, center], vec![], 0),
        Formula::FrequencyBSpline {
            order,
            bandwidth,
            center,
        } => (5, vec![order as f64, bandwidth, center], vec![], 0),
        Formula::Paul { order } => {
            let m = order as i32;
            let fact = |n: u32| (1..=n).fold(1.0f64, |a, k| a * k as f64);
            let norm = 2f64.powi(m) * fact(order) / (std::f64::consts::PI * fact(2 * order)).sqrt();
            let i_m = num_complex::Complex64::i().powi(m) * norm;
            (6, vec![order as f64, i_m.re, i_m.im], vec![], 0)
        }
        Formula::FourierSum { weights, step } => {
            (7, vec![step], weights.to_vec(), weights.len() as i32)
        }
        Formula::Sampled {
            samples,
            half_support,
        } => (
            8,
            vec![half_support],
            interleave(samples),
            samples.len() as i32,
        ),
        // generate() uploads the host's masks before asking for a code.
        Formula::TimeDerivative(_) => (9, vec![], vec![], 0),
    }
}

fn grid_1d(n: usize) -> Result<u32, CudaError> {
    u32::try_from(n.div_ceil(256))
        .map_err(|_| CudaError::Unsupported(format!("{n} mask elements exceed one launch's grid")))
}

impl DeviceMasks {
    /// Every mask of `plan`, sampled on the GPU.
    pub fn generate(gpu: &Gpu, plan: &CwtPlan) -> Result<Self, CudaError> {
        let layout = plan.mask_layout();
        let total = layout.total_taps();
        let n = layout.lengths.len();
        check_free(gpu, total as u128 * 16)?;
        if let Formula::TimeDerivative(_) = plan.options().wavelet.formula() {
            // No device formula for dψ/dt: the host's masks, uploaded.
            let v = &plan.masks().values;
            let re: Vec<f64> = v.iter().map(|c| c.re).chain(std::iter::once(0.0)).collect();
            let im: Vec<f64> = v.iter().map(|c| c.im).chain(std::iter::once(0.0)).collect();
            return Ok(DeviceMasks {
                re: upload(gpu, &re)?,
                im: upload(gpu, &im)?,
                offsets: layout.offsets.clone(),
                halves: layout.lengths.iter().map(|l| l / 2).collect(),
            });
        }
        let sampling: Vec<f64> = layout
            .sampling(plan.options(), plan.work_scales())
            .iter()
            .flat_map(|s| [s.numerator, s.denominator, s.skew, s.shift, s.amplitude])
            .collect();
        let (fam, p, table, ntable) = psi_code(plan.options().wavelet.formula());
        let offsets: Vec<i64> = layout.offsets.iter().map(|&o| o as i64).collect();
        let halves: Vec<usize> = layout.lengths.iter().map(|l| l / 2).collect();
        let half: Vec<i32> = halves.iter().map(|&h| h as i32).collect();
        let alloc = |what: &str| {
            gpu.stream
                .alloc_zeros::<f64>(total.max(1))
                .during(|| format!("allocating the packed masks' {what} parts ({total} taps)"))
        };
        let (re, im) = (alloc("real")?, alloc("imaginary")?);
        let (d_off, d_half) = (upload(gpu, &offsets)?, upload(gpu, &half)?);
        let (d_s, d_p, d_t) = (
            upload(gpu, &sampling)?,
            upload(gpu, &p)?,
            upload(gpu, &table)?,
        );
        let inst = format!("MASKS(kernel, {fam})");
        let f = gpu.function(Kernel::CwtMasks, &inst, 0)?;
        let (total_i, n_i) = (total as i64, n as i32);
        let cfg = LaunchConfig {
            grid_dim: (grid_1d(total)?, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = gpu.stream.launch_builder(&f);
        b.arg(&total_i)
            .arg(&n_i)
            .arg(&d_off)
            .arg(&d_half)
            .arg(&d_s)
            .arg(&d_p)
            .arg(&d_t)
            .arg(&ntable)
            .arg(&re)
            .arg(&im);
        if total > 0 {
            // SAFETY: matches MASKS; re and im hold `total` values, the
            // per-mask arrays `n` entries, the table `ntable` entries.
            unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        }
        Ok(DeviceMasks {
            re,
            im,
            offsets: layout.offsets.clone(),
            halves,
        })
    }

    /// The packed array back on the host (for tests and inspection).
    pub fn download(&self, gpu: &Gpu) -> Result<Vec<num_complex::Complex64>, CudaError> {
        let n =
            self.offsets.last().copied().unwrap_or(0) + self.halves.last().map_or(0, |h| 2 * h + 1);
        let mut re = vec![0.0; self.re.len()];
        let mut im = vec![0.0; self.im.len()];
        gpu.stream
            .memcpy_dtoh(&self.re, &mut re)
            .during(|| "reading the masks".into())?;
        gpu.stream
            .memcpy_dtoh(&self.im, &mut im)
            .during(|| "reading the masks".into())?;
        gpu.synchronize()?;
        Ok(re[..n]
            .iter()
            .zip(&im[..n])
            .map(|(&r, &i)| num_complex::Complex64::new(r, i))
            .collect())
    }

    /// The masks `ps` (packed indices) one after another in the working
    /// precision, as the direct kernel reads them.
    pub fn to_direct<T: GpuReal>(
        &self,
        gpu: &Gpu,
        ps: &[usize],
    ) -> Result<(CudaSlice<T>, CudaSlice<T>), CudaError> {
        let mut dst = Vec::with_capacity(ps.len());
        let mut src = Vec::with_capacity(ps.len());
        let mut total = 0usize;
        for &p in ps {
            dst.push(total as i64);
            src.push(self.offsets[p] as i64);
            total += 2 * self.halves[p] + 1;
        }
        let alloc = || {
            gpu.stream
                .alloc_zeros::<T>(total.max(1))
                .during(|| format!("allocating the direct masks ({total} taps)"))
        };
        let (mr, mi) = (alloc()?, alloc()?);
        if total == 0 {
            return Ok((mr, mi));
        }
        let (d_dst, d_src) = (upload(gpu, &dst)?, upload(gpu, &src)?);
        let inst = format!("TO_DIRECT(kernel, {})", T::CUDA);
        let f = gpu.function(Kernel::CwtMasks, &inst, 0)?;
        let (total_i, n_i) = (total as i64, ps.len() as i32);
        let cfg = LaunchConfig {
            grid_dim: (grid_1d(total)?, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = gpu.stream.launch_builder(&f);
        b.arg(&total_i)
            .arg(&n_i)
            .arg(&d_dst)
            .arg(&d_src)
            .arg(&self.re)
            .arg(&self.im)
            .arg(&mr)
            .arg(&mi);
        // SAFETY: matches TO_DIRECT; every source range lies in the packed array.
        unsafe { b.launch(cfg) }.during(|| format!("launching {inst}"))?;
        Ok((mr, mi))
    }

    /// Correlation spectra of the masks `ps` for segments of `l` points
    /// (each mask centred at `hg`, the group's largest half-length), pruned
    /// at `rel_floor` of each peak; bands wider than `dense_above` bins are
    /// stored whole in bit-reversed order. Same numbers as
    /// `spectra::correlation_band` and `PackedBands::push` on the host.
    pub fn spectra<T: GpuReal>(
        &self,
        gpu: &Gpu,
        ps: &[usize],
        l: usize,
        hg: usize,
        rel_floor: f64,
        dense_above: usize,
    ) -> Result<DeviceBands<T>, CudaError> {
        let nf = ps.len();
        let per = l * 16;
        let budget = (gpu.free_mem()? / 4).min(512 << 20);
        let chunk = (budget / per).clamp(1, nf.max(1));
        check_free(gpu, (chunk * per) as u128)?;
        let words = l.div_ceil(32);
        let mut buf = gpu
            .stream
            .alloc_zeros::<f64>(chunk * l * 2)
            .during(|| format!("allocating {chunk} spectra of {l} points"))?;
        let flags_d = gpu
            .stream
            .alloc_zeros::<u32>(chunk * words)
            .during(|| "allocating the spectrum flags".into())?;
        let src: Vec<i64> = ps.iter().map(|&p| self.offsets[p] as i64).collect();
        let half: Vec<i32> = ps.iter().map(|&p| self.halves[p] as i32).collect();
        let (d_src, d_half) = (upload(gpu, &src)?, upload(gpu, &half)?);
        let pad = gpu.function(Kernel::CwtMasks, "MASK_PAD(kernel)", 0)?;
        let flag = gpu.function(Kernel::CwtMasks, "SPECTRUM_FLAGS(kernel)", 0)?;
        let pack_inst = format!("SPECTRUM_PACK(kernel, {})", T::CUDA);
        let pack = gpu.function(Kernel::CwtMasks, &pack_inst, 0)?;
        let cufft = |batch: usize| {
            CudaFft::plan_1d(
                l as i32,
                cufftType::CUFFT_Z2Z,
                batch as i32,
                gpu.stream.clone(),
            )
            .map_err(|e| CudaError::Cufft {
                what: format!("planning {batch} mask spectra of {l} points"),
                detail: format!("{e:?}"),
            })
        };
        let mut plans: Vec<(usize, CudaFft)> = Vec::new();
        let (mut hoff, mut blo, mut blen) = (Vec::new(), Vec::new(), Vec::new());
        let mut parts: Vec<CudaSlice<T>> = Vec::new();
        let mut base = 0usize;
        let (li, hgi) = (l as i32, hg as i32);
        let mut f0 = 0usize;
        while f0 < nf {
            let nb = chunk.min(nf - f0);
            let f0i = f0 as i32;
            let cfg = LaunchConfig {
                grid_dim: (l.div_ceil(256) as u32, nb as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = gpu.stream.launch_builder(&pad);
            b.arg(&li)
                .arg(&hgi)
                .arg(&d_src)
                .arg(&d_half)
                .arg(&f0i)
                .arg(&self.re)
                .arg(&self.im)
                .arg(&buf);
            // SAFETY: matches MASK_PAD; nb filters of l points fit `buf`.
            unsafe { b.launch(cfg) }.during(|| "launching MASK_PAD".into())?;
            if !plans.iter().any(|(n, _)| *n == nb) {
                plans.push((nb, cufft(nb)?));
            }
            let fft = plans
                .iter()
                .find(|(n, _)| *n == nb)
                .map(|(_, p)| p)
                .ok_or_else(|| CudaError::Unsupported("lost a cuFFT plan".into()))?;
            {
                let (ptr, _sync) = buf.device_ptr_mut(&gpu.stream);
                // SAFETY: in place over nb * l complex doubles of `buf`, on the plan's stream.
                unsafe {
                    cudarc::cufft::result::exec_z2z(fft.handle(), ptr as *mut _, ptr as *mut _, -1)
                }
                .map_err(|e| CudaError::Cufft {
                    what: "transforming the masks".into(),
                    detail: format!("{e:?}"),
                })?;
            }
            let cfg = LaunchConfig {
                grid_dim: (nb as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = gpu.stream.launch_builder(&flag);
            b.arg(&li).arg(&rel_floor).arg(&buf).arg(&flags_d);
            // SAFETY: matches SPECTRUM_FLAGS; nb blocks, words per filter fit.
            unsafe { b.launch(cfg) }.during(|| "launching SPECTRUM_FLAGS".into())?;
            let mut flags = vec![0u32; chunk * words];
            gpu.stream
                .memcpy_dtoh(&flags_d, &mut flags)
                .during(|| "reading the spectrum flags".into())?;
            gpu.synchronize()?;
            let bands: Vec<(usize, usize)> = flags[..nb * words]
                .par_chunks(words)
                .map(|w| band_of(w, l))
                .collect();
            let (mut c_lo, mut c_len, mut c_dense, mut c_off) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let mut size = 0usize;
            let mut widest = 1usize;
            for &(lo, len) in &bands {
                let dense = len > dense_above;
                c_lo.push(lo as i32);
                c_len.push(len as i32);
                c_dense.push(dense as i32);
                c_off.push(size as i64);
                hoff.push((base + size) as i64);
                blo.push(if dense { 0 } else { lo as i32 });
                blen.push(if dense { -(l as i32) } else { len as i32 });
                let stored = if dense { l } else { len };
                widest = widest.max(stored);
                size += stored;
            }
            let part = gpu
                .stream
                .alloc_zeros::<T>(2 * size.max(1))
                .during(|| format!("allocating {size} spectrum bins"))?;
            let (d_lo, d_len, d_dense, d_off) = (
                upload(gpu, &c_lo)?,
                upload(gpu, &c_len)?,
                upload(gpu, &c_dense)?,
                upload(gpu, &c_off)?,
            );
            let zero = 0i32;
            let cfg = LaunchConfig {
                grid_dim: (widest.div_ceil(256) as u32, nb as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = gpu.stream.launch_builder(&pack);
            b.arg(&li)
                .arg(&zero)
                .arg(&buf)
                .arg(&d_lo)
                .arg(&d_len)
                .arg(&d_dense)
                .arg(&d_off)
                .arg(&part);
            // SAFETY: matches SPECTRUM_PACK; every band fits its slot of `part`.
            unsafe { b.launch(cfg) }.during(|| format!("launching {pack_inst}"))?;
            // The chunk's small uploads must outlive the launch.
            gpu.synchronize()?;
            base += size;
            parts.push(part);
            f0 += nb;
        }
        let h = if parts.len() == 1 {
            parts
                .pop()
                .ok_or_else(|| CudaError::Unsupported("no spectra".into()))?
        } else {
            let mut all = gpu
                .stream
                .alloc_zeros::<T>(2 * base.max(1))
                .during(|| format!("allocating {base} spectrum bins"))?;
            let mut at = 0usize;
            for p in &parts {
                let n = p.len().min(2 * base - at);
                let mut dst = all.slice_mut(at..at + n);
                gpu.stream
                    .memcpy_dtod(&p.slice(0..n), &mut dst)
                    .during(|| "gathering the spectra".into())?;
                at += n;
            }
            all
        };
        Ok(DeviceBands {
            h,
            hoff: upload(gpu, &hoff)?,
            blo: upload(gpu, &blo)?,
            blen: upload(gpu, &blen)?,
        })
    }
}

/// The kept band of one spectrum from its flag bits: the complement of the
/// longest circular run of dropped bins, as (first bin, length); a spectrum
/// with nothing kept gives the one bin (0, 1), as on the host.
pub(crate) fn band_of(words: &[u32], l: usize) -> (usize, usize) {
    let keep = |i: usize| words[i / 32] >> (i % 32) & 1 == 1;
    let Some(first) = (0..l).find(|&i| keep(i)) else {
        return (0, 1);
    };
    let (mut best_len, mut best_start, mut run) = (0usize, 0usize, 0usize);
    for step in 1..=l {
        let i = (first + step) % l;
        if keep(i) {
            if run > best_len {
                best_len = run;
                best_start = (i + l - run) % l;
            }
            run = 0;
        } else {
            run += 1;
        }
    }
    ((best_start + best_len) % l, l - best_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn band_of_flags_matches_the_host_band() {
        use crate::spectra::correlation_band;
        use num_complex::Complex64;
        let l = 256;
        let mut planner = rustfft::FftPlanner::new();
        for (width, shift) in [(3.0, 0.0), (10.0, 0.0), (10.0, 1.3), (0.7, 2.9)] {
            let conj_g: Vec<Complex64> = (0..64)
                .map(|i| {
                    let t = (i as f64 - 31.5) / width;
                    Complex64::from_polar((-t * t).exp(), shift * i as f64)
                })
                .collect();
            let floor = 1e-6;
            let band = correlation_band(&conj_g, l, floor, &mut planner);
            // The flags the GPU would set, from the same spectrum.
            let mut x = vec![Complex64::new(0.0, 0.0); l];
            x[..64].copy_from_slice(&conj_g);
            planner.plan_fft_forward(l).process(&mut x);
            let peak = x.iter().map(|v| v.norm_sqr()).fold(0.0, f64::max);
            let mut words = vec![0u32; l / 32];
            for (k, v) in x.iter().enumerate() {
                if v.norm_sqr() > peak * floor * floor {
                    words[k / 32] |= 1 << (k % 32);
                }
            }
            assert_eq!(band_of(&words, l), (band.lo, band.values.len()));
        }
        assert_eq!(band_of(&[0u32; 8], l), (0, 1));
    }
}
