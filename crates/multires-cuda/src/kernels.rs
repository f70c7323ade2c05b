//! The `.cu` sources, embedded, and their compilation by NVRTC. NVRTC has no
//! in-memory headers, so common.cuh is prepended; each program instantiates
//! only the one template the caller needs, so compiles stay short; the
//! results are kept on disk (`cache_dir`) so later processes skip NVRTC.

use crate::error::{Context, CudaError};
use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;
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
    /// The undecimated transforms' level (atrous.cu), without FMA
    /// contraction: equal to the CPU bit for bit.
    Atrous,
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
            Kernel::Atrous => "atrous.cu",
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
            Kernel::Atrous => include_str!("../kernels/atrous.cu"),
        }
    }
}

/// The codec's kernels, one program in five files by what they hold
/// (tools/kernel_syntax and tools/kernel_emu join them in this order).
pub(crate) const CODEC_SOURCE: &str = concat!(
    include_str!("../kernels/codec_transform.cu"),
    include_str!("../kernels/codec_rice.cu"),
    include_str!("../kernels/codec_rans.cu"),
    include_str!("../kernels/codec_checks.cu"),
    include_str!("../kernels/codec_fast.cu"),
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

/// Where compiled kernels are kept between processes: $MULTIRES_CACHE_DIR,
/// else $XDG_CACHE_HOME/multires/kernels, else ~/.cache/multires/kernels.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("MULTIRES_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("multires").join("kernels"))
}

/// How a kernel was had: from the disk cache, or compiled by NVRTC (and
/// then stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    Hit,
    Compiled,
}

/// What the first compile of a process is told to: the CLI and the Python
/// package print it, so a first run ever says why it takes a second.
type Notice = Box<dyn Fn(&str) + Send + Sync>;
static NOTICE: std::sync::OnceLock<Notice> = std::sync::OnceLock::new();
static NOTICED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets what hears "compiling GPU kernels ..." (once a process, on the
/// first kernel not found in the cache). Only the first call counts.
pub fn set_compile_notice(f: impl Fn(&str) + Send + Sync + 'static) {
    let _ = NOTICE.set(Box::new(f));
}

fn notice_compiling(arch: &str) {
    if NOTICED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    if let Some(f) = NOTICE.get() {
        let place = cache_dir().map_or("no cache directory".to_string(), |d| {
            format!(
                "kept in {} for later runs; MULTIRES_CACHE_DIR moves it",
                d.display()
            )
        });
        f(&format!(
            "compiling GPU kernels for {arch} (a first run; {place})"
        ));
    }
}

/// The driver's and NVRTC's versions: a cached binary is only reused by
/// the toolchain that made it.
fn toolchain() -> (i32, i32, i32) {
    static V: std::sync::OnceLock<(i32, i32, i32)> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        let mut driver = 0;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: plain out-parameters; the libraries were found by the probe.
        unsafe {
            let _ = cudarc::driver::sys::cuDriverGetVersion(&mut driver);
            let _ = cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor);
        }
        (driver, major, minor)
    })
}

/// A compiled kernel as the cache keeps it: a cubin for the device's own
/// architecture (loaded without JIT), or PTX where this NVRTC cannot
/// target the device (a GPU newer than the toolkit).
enum Image {
    Cubin(Vec<u8>),
    Ptx(String),
}

impl Image {
    fn to_ptx(&self) -> Ptx {
        match self {
            Image::Cubin(b) => Ptx::from_binary(b.clone()),
            Image::Ptx(s) => Ptx::from_src(s.clone()),
        }
    }
}

fn cache_path(key: u64) -> Option<PathBuf> {
    Some(cache_dir()?.join(format!("{key:016x}.bin")))
}

/// A cached image: one byte of kind ('C' cubin, 'P' PTX), then the image.
/// The cache is best effort: anything unreadable is compiled again.
fn cached(key: u64) -> Option<Image> {
    let bytes = std::fs::read(cache_path(key)?).ok()?;
    match bytes.split_first()? {
        (b'C', rest) if !rest.is_empty() => Some(Image::Cubin(rest.to_vec())),
        (b'P', rest) if !rest.is_empty() => String::from_utf8(rest.to_vec()).ok().map(Image::Ptx),
        _ => None,
    }
}

fn store(key: u64, image: &Image) {
    let Some(path) = cache_path(key) else { return };
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let (kind, body): (u8, &[u8]) = match image {
        Image::Cubin(b) => (b'C', b),
        Image::Ptx(s) => (b'P', s.as_bytes()),
    };
    // Written under a temporary name and renamed: readers never see half a file.
    if let Ok(mut f) = tempfile::NamedTempFile::new_in(dir) {
        if f.write_all(&[kind]).is_ok() && f.write_all(body).is_ok() {
            let _ = f.persist(&path);
        }
    }
}

/// NVRTC on `src` with `options`: the cubin (`cubin`) or the PTX.
fn nvrtc(src: &str, name: &str, options: &[String], cubin: bool) -> Result<Image, String> {
    use cudarc::nvrtc::{result, sys};
    let src = std::ffi::CString::new(src).map_err(|e| e.to_string())?;
    let name = std::ffi::CString::new(name).map_err(|e| e.to_string())?;
    let prog = result::create_program(&src, Some(&name)).map_err(|e| e.to_string())?;
    // SAFETY: `prog` is live until destroyed at the end; the buffers are
    // sized by NVRTC's own size queries.
    let image = unsafe {
        let out = (|| {
            if let Err(e) = result::compile_program(prog, options) {
                let log = result::get_program_log(prog)
                    .map(|l| {
                        let bytes: Vec<u8> =
                            l.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
                        String::from_utf8_lossy(&bytes).into_owned()
                    })
                    .unwrap_or_default();
                return Err(format!("{e}\n{log}"));
            }
            if cubin {
                let mut size = 0usize;
                sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| e.to_string())?;
                let mut buf = vec![0u8; size];
                sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut _)
                    .result()
                    .map_err(|e| e.to_string())?;
                Ok(Image::Cubin(buf))
            } else {
                let ptx = result::get_ptx(prog).map_err(|e| e.to_string())?;
                let bytes: Vec<u8> = ptx
                    .iter()
                    .map(|&c| c as u8)
                    .take_while(|&b| b != 0)
                    .collect();
                Ok(Image::Ptx(String::from_utf8_lossy(&bytes).into_owned()))
            }
        })();
        let _ = result::destroy_program(prog);
        out
    };
    image
}

/// `instance` of `kernel` for the device of compute capability
/// (major, minor): from the disk cache (keyed by the source, the instance,
/// the options, the architecture and the driver's and NVRTC's versions),
/// else compiled by NVRTC to a cubin for the device and stored.
pub fn compile(
    ctx: &Arc<CudaContext>,
    kernel: Kernel,
    instance: &str,
    cc: (i32, i32),
) -> Result<(CudaFunction, CacheOutcome), CudaError> {
    let (major, minor) = cc;
    let entry = entry_name(instance);
    let named = instance.replacen(&format!("({ENTRY}"), &format!("({entry}"), 1);
    let src = format!("{COMMON}\n{}\n{named}\n", kernel.embedded());
    let mut options = vec!["-std=c++17".to_string()];
    if matches!(kernel, Kernel::Codec | Kernel::Atrous) {
        options.push("--fmad=false".to_string());
    }
    let key = {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (&src, &options, cc, toolchain(), env!("CARGO_PKG_VERSION")).hash(&mut h);
        h.finish()
    };
    let load = |image: &Image| -> Result<CudaFunction, CudaError> {
        let module = ctx
            .load_module(image.to_ptx())
            .during(|| format!("loading the module of {} [{instance}]", kernel.file()))?;
        module
            .load_function(&entry)
            .during(|| format!("finding the entry of {} [{instance}]", kernel.file()))
    };
    if let Some(image) = cached(key) {
        if let Ok(f) = load(&image) {
            return Ok((f, CacheOutcome::Hit));
        }
    }
    let sm = format!("sm_{major}{minor}");
    notice_compiling(&sm);
    let with = |arch: String| {
        let mut o = options.clone();
        o.insert(0, format!("--gpu-architecture={arch}"));
        o
    };
    let image = match nvrtc(&src, kernel.file(), &with(sm), true) {
        Ok(i) => i,
        // An NVRTC older than the device compiles to PTX for the driver to finish.
        Err(_) => nvrtc(
            &src,
            kernel.file(),
            &with(format!("compute_{major}{minor}")),
            false,
        )
        .map_err(|log| CudaError::Compile {
            kernel: format!("{} [{instance}]", kernel.file()),
            options: with(format!("compute_{major}{minor}")).join(" "),
            log,
        })?,
    };
    let f = load(&image)?;
    store(key, &image);
    Ok((f, CacheOutcome::Compiled))
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
