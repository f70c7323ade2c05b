//! The `.cu` sources, embedded, and their compilation by NVRTC. NVRTC has no
//! in-memory headers, so common.cuh is prepended; each program instantiates
//! only the one template the caller needs, so compiles stay short.

use crate::error::{Context, CudaError};
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

const COMMON: &str = include_str!("../kernels/common.cuh");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Seed 000: small masks together, long masks in pieces (cwt_direct.cu).
    CwtDirect,
    /// Seed 001: the fused shared-memory overlap-save (ols_fft.cu).
    OlsFft,
    /// The cuFFT-based overlap-save: gather, product, store (ols_cufft.cu).
    OlsCufft,
    /// Seed 000 III-A: masks sampled on the device, and their spectra (cwt_masks.cu).
    CwtMasks,
    /// Seed dwt-matrix-lattice 4.2: the GPU DWT variants (dwt.cu).
    Dwt,
    /// The error-bounded codec (codec_*.cu), compiled without FMA contraction
    /// so that its doubles equal the CPU's.
    Codec,
}

impl Kernel {
    pub fn file(self) -> &'static str {
        match self {
            Kernel::CwtDirect => "cwt_direct.cu",
            Kernel::OlsFft => "ols_fft.cu",
            Kernel::OlsCufft => "ols_cufft.cu",
            Kernel::CwtMasks => "cwt_masks.cu",
            Kernel::Dwt => "dwt.cu",
            Kernel::Codec => "codec_*.cu",
        }
    }
    fn embedded(self) -> &'static str {
        match self {
            Kernel::CwtDirect => include_str!("../kernels/cwt_direct.cu"),
            Kernel::OlsFft => include_str!("../kernels/ols_fft.cu"),
            Kernel::OlsCufft => include_str!("../kernels/ols_cufft.cu"),
            Kernel::CwtMasks => include_str!("../kernels/cwt_masks.cu"),
            Kernel::Dwt => include_str!("../kernels/dwt.cu"),
            Kernel::Codec => CODEC_SOURCE,
        }
    }
}

/// The codec's kernels, one program in four files by what they hold
/// (tools/kernel_syntax and tools/kernel_emu join them in this order).
pub(crate) const CODEC_SOURCE: &str = concat!(
    include_str!("../kernels/codec_transform.cu"),
    include_str!("../kernels/codec_rice.cu"),
    include_str!("../kernels/codec_rans.cu"),
    include_str!("../kernels/codec_checks.cu"),
);

/// The name every instantiation gives its kernel in the source.
pub const ENTRY: &str = "kernel";

/// The name an instance's kernel is compiled under: the macro and its
/// arguments ("INTERP(kernel, true)" becomes `k_INTERP_true`; the prefix
/// keeps it apart from the macros' own names), so that profilers such as
/// Nsight Compute tell the kernels apart.
fn entry_name(instance: &str) -> String {
    let mut name = String::from("k");
    for part in instance
        .replacen(ENTRY, "", 1)
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        name.push('_');
        name.push_str(part);
    }
    name
}

/// Where compiled PTX is kept between processes: $MULTIRES_CACHE_DIR, else
/// $XDG_CACHE_HOME/multires/kernels, else ~/.cache/multires/kernels.
fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("MULTIRES_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("multires").join("kernels"))
}

/// A first compile costs NVRTC a fraction of a second per kernel; later
/// processes load the PTX from the disk cache (keyed by source, instance
/// and options). The cache is best effort: any failure falls back to NVRTC.
fn cached_ptx(key: u64) -> Option<Ptx> {
    let path = cache_dir()?.join(format!("{key:016x}.ptx"));
    let text = std::fs::read_to_string(path).ok()?;
    (!text.is_empty()).then(|| Ptx::from_src(text))
}

fn store_ptx(key: u64, ptx: &Ptx) {
    let Some(dir) = cache_dir() else { return };
    let Some(bytes) = ptx.as_bytes() else { return };
    let bytes = bytes.split(|&b| b == 0).next().unwrap_or(bytes);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    // Written under a temporary name and renamed: readers never see half a file.
    if let Ok(mut f) = tempfile::NamedTempFile::new_in(&dir) {
        if f.write_all(bytes).is_ok() {
            let _ = f.persist(dir.join(format!("{key:016x}.ptx")));
        }
    }
}

pub fn compile(
    ctx: &Arc<CudaContext>,
    kernel: Kernel,
    instance: &str,
    (major, minor): (i32, i32),
) -> Result<CudaFunction, CudaError> {
    let entry = entry_name(instance);
    let named = instance.replacen(&format!("({ENTRY}"), &format!("({entry}"), 1);
    let src = format!("{COMMON}\n{}\n{named}\n", kernel.embedded());
    let mut options = vec![
        format!("--gpu-architecture=compute_{major}{minor}"),
        "-std=c++17".to_string(),
    ];
    if kernel == Kernel::Codec {
        options.push("--fmad=false".to_string());
    }
    let key = {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&src, &options, env!("CARGO_PKG_VERSION")).hash(&mut h);
        h.finish()
    };
    if let Some(ptx) = cached_ptx(key) {
        if let Ok(module) = ctx.load_module(ptx) {
            if let Ok(f) = module.load_function(&entry) {
                return Ok(f);
            }
        }
    }
    let opts = CompileOptions {
        options: options.clone(),
        name: Some(kernel.file().to_string()),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(src, opts).map_err(|e| match e {
        CompileError::CompileError { log, .. } => CudaError::Compile {
            kernel: format!("{} [{instance}]", kernel.file()),
            options: options.join(" "),
            log: log.to_string_lossy().into_owned(),
        },
        other => CudaError::Compile {
            kernel: format!("{} [{instance}]", kernel.file()),
            options: options.join(" "),
            log: other.to_string(),
        },
    })?;
    store_ptx(key, &ptx);
    let module = ctx
        .load_module(ptx)
        .during(|| format!("loading the PTX of {} [{instance}]", kernel.file()))?;
    module
        .load_function(&entry)
        .during(|| format!("finding the entry of {} [{instance}]", kernel.file()))
}

#[cfg(test)]
mod tests {
    use super::entry_name;

    #[test]
    fn every_instance_gets_a_name_of_its_own() {
        assert_eq!(entry_name("QUANT(kernel)"), "k_QUANT");
        assert_eq!(entry_name("INTERP(kernel, true)"), "k_INTERP_true");
        assert_eq!(
            entry_name("LIFT(kernel, float, -0.5, 1)"),
            "k_LIFT_float_0_5_1"
        );
        assert_ne!(
            entry_name("INTERP(kernel, true)"),
            entry_name("INTERP(kernel, false)")
        );
    }
}
