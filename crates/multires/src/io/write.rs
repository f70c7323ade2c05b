use super::IoError;
use ndarray::{ArrayBase, Data, Dimension};
use ndarray_npy::{WritableElement, WriteNpyExt};
use std::io::{BufWriter, Write};
use std::path::Path;

/// Writes through `fill` into a temporary file next to `path`, then renames it
/// into place; on any error the temporary file is removed and `path` untouched.
pub fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) -> Result<(), IoError> {
    with_temp_file(path, |file| {
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        w.flush().map_err(|e| e.to_string())
    })
}

/// Temporary outputs being written now, so that a signal handler can
/// remove them (`remove_pending_outputs`) before the process exits.
static PENDING: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<std::path::PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every temporary output still being written: for a handler of
/// SIGINT/SIGTERM, since an interrupted process runs no destructors.
pub fn remove_pending_outputs() {
    for p in pending().drain(..) {
        let _ = std::fs::remove_file(p);
    }
}

/// The temporary-file-then-rename step shared by every writer.
pub(super) fn with_temp_file(
    path: &Path,
    fill: impl FnOnce(&std::fs::File) -> Result<(), String>,
) -> Result<(), IoError> {
    let err = |why: String| IoError::Write {
        path: path.display().to_string(),
        why,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // Created and registered under the registry's lock, so that a signal
    // between the two (whose handler takes the lock) cannot miss the file.
    let (tmp, tmp_path) = {
        let mut registry = pending();
        let tmp = tempfile::Builder::new()
            .prefix(".multires-")
            .suffix(".part")
            .tempfile_in(dir)
            .map_err(|e| err(format!("cannot create a file in '{}': {e}", dir.display())))?;
        let tmp_path = tmp.path().to_path_buf();
        registry.push(tmp_path.clone());
        (tmp, tmp_path)
    };
    let result = (|| {
        fill(tmp.as_file()).map_err(err)?;
        // Temporary files are private (0600); an output gets the usual 0644.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| err(e.to_string()))?;
        }
        tmp.persist(path).map_err(|e| err(e.error.to_string()))?;
        Ok(())
    })();
    pending().retain(|p| *p != tmp_path);
    result
}

/// Any array ndarray-npy can write.
pub trait NpyArray {
    fn write_to(&self, w: &mut dyn Write) -> Result<(), String>;
}

impl<A: WritableElement, S: Data<Elem = A>, D: Dimension> NpyArray for ArrayBase<S, D> {
    fn write_to(&self, w: &mut dyn Write) -> Result<(), String> {
        self.write_npy(w).map_err(|e| e.to_string())
    }
}

/// 16-bit floats' bits as numpy reads them: binary16 as `<f2` (float16);
/// bfloat16, which numpy has no type for, as `<u2` holding its bits
/// (`a.view(ml_dtypes.bfloat16)`, or `torch.from_numpy(a).view(torch.bfloat16)`).
pub struct HalfArray<'a>(pub &'a ndarray::Array2<u16>, pub crate::cwt::HalfFloat);

/// binary16 bits, written with numpy's `<f2` descriptor.
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct Float16Bits(pub u16);

// SAFETY: repr(transparent) over u16, which is Pod: every bit pattern is valid.
unsafe impl bytemuck::Zeroable for Float16Bits {}
// SAFETY: as above; no padding, Copy, 'static.
unsafe impl bytemuck::Pod for Float16Bits {}

impl WritableElement for Float16Bits {
    fn type_descriptor() -> py_literal::Value {
        py_literal::Value::String("<f2".into())
    }
    fn write<W: Write>(&self, w: W) -> Result<(), ndarray_npy::WriteDataError> {
        self.0.write(w)
    }
    fn write_slice<W: Write>(slice: &[Self], w: W) -> Result<(), ndarray_npy::WriteDataError> {
        // SAFETY: repr(transparent) over u16.
        let bits: &[u16] =
            unsafe { std::slice::from_raw_parts(slice.as_ptr().cast(), slice.len()) };
        u16::write_slice(bits, w)
    }
}

impl NpyArray for HalfArray<'_> {
    fn write_to(&self, w: &mut dyn Write) -> Result<(), String> {
        match self.1 {
            crate::cwt::HalfFloat::BF16 => self.0.write_to(w),
            crate::cwt::HalfFloat::F16 => {
                let a = self.0.as_standard_layout();
                let bits = a.as_slice().ok_or("a strided array")?;
                // SAFETY: repr(transparent) over u16.
                let v: &[Float16Bits] =
                    unsafe { std::slice::from_raw_parts(bits.as_ptr().cast(), bits.len()) };
                ndarray::ArrayView2::from_shape(a.dim(), v)
                    .map_err(|e| e.to_string())?
                    .write_npy(w)
                    .map_err(|e| e.to_string())
            }
        }
    }
}

/// Writes an 8-bit image (grey or RGB rows, `color` saying which) as PNG, atomically.
pub fn write_png(
    path: &Path,
    pixels: &[u8],
    w: u32,
    h: u32,
    color: image::ColorType,
) -> Result<(), IoError> {
    use image::ImageEncoder;
    write_atomic(path, |out| {
        image::codecs::png::PngEncoder::new(out)
            .write_image(pixels, w, h, color)
            .map_err(|e| e.to_string())
    })
}

pub fn write_npy(path: &Path, array: &dyn NpyArray) -> Result<(), IoError> {
    write_atomic(path, |w| array.write_to(w))
}

/// Writes named arrays into an .npz (a zip of .npy files), atomically.
pub fn write_npz<A: WritableElement>(
    path: &Path,
    arrays: &[(String, ndarray::ArrayViewD<A>)],
) -> Result<(), IoError> {
    with_temp_file(path, |file| {
        let file = file.try_clone().map_err(|e| e.to_string())?;
        let mut npz = ndarray_npy::NpzWriter::new(file);
        for (name, a) in arrays {
            // ndarray-npy appends ".npy" itself, as numpy names members
            // (np.load strips it again): pass the bare key.
            if let Err(e) = npz.add_array(name.as_str(), a) {
                // Dropping an unfinished zip writer tries to finish it and
                // prints "ZipWriter drop failed" beside our error (a full
                // disk); the temporary file is removed anyway.
                std::mem::forget(npz);
                return Err(e.to_string());
            }
        }
        npz.finish().map_err(|e| e.to_string())?;
        Ok(())
    })
}
