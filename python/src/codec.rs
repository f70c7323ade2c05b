//! The error-bounded codec over numpy arrays: .mrz bytes in memory, and
//! .mrz files read by region (only the bricks a region meets are decoded).

use crate::{codec_err, cuda_err, parse, value_err};
use multires::codec::{
    self, CodecOptions, DType, ErrorBound, FieldView, MrzReader, Region, Values, ValuesRef, Volume,
};
use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Mutex;

fn bound(kind: &str, value: f64) -> PyResult<ErrorBound> {
    parse(&format!("{kind}:{value}"))
}

fn options(kind: &str, value: f64, transform: &str, ndim: usize) -> PyResult<CodecOptions> {
    if !(2..=3).contains(&ndim) {
        return Err(value_err(format!(
            "the codec takes 2-D or 3-D arrays, got {ndim} dimensions (reshape a 1-D signal to (1, N))"
        )));
    }
    Ok(CodecOptions::new(parse(transform)?, bound(kind, value)?))
}

/// Compresses a C-contiguous float32/float64 array (2-D or 3-D) into the
/// bytes of a .mrz file. The CPU codes the array where it lies; the GPU
/// codec takes a copy of it (its pinned staging reads a host Volume).
#[pyfunction]
fn compress<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    kind: &str,
    value: f64,
    transform: &str,
    device: &str,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    macro_rules! go {
        ($arr:expr, $variant:ident) => {{
            let arr = $arr;
            let shape = arr.shape().to_vec();
            let data = arr
                .as_slice()
                .map_err(|_| crate::type_err("the array must be C-contiguous"))?;
            let opts = options(kind, value, transform, shape.len())?;
            let view = FieldView::of(&shape, ValuesRef::$variant(data)).map_err(codec_err)?;
            let (d, _) = crate::backend(device)?;
            let on_gpu = d.name() == "cuda";
            let (bytes, stats) = crate::run(py, || -> PyResult<_> {
                if on_gpu {
                    let v =
                        Volume::of(&shape, Values::$variant(data.to_vec())).map_err(codec_err)?;
                    let g = multires_cuda::gpu().map_err(cuda_err)?;
                    let (parts, s, _) =
                        multires_cuda::codec::compress(&v, &opts, &[g], None, &|_| {})
                            .map_err(cuda_err)?;
                    Ok((parts.to_vec(), s))
                } else {
                    codec::compress_view(view, &opts, &|_| {}).map_err(codec_err)
                }
            })?;
            let info = PyDict::new(py);
            info.set_item("abs_bound", stats.abs_bound)?;
            info.set_item("max_error", stats.max_error)?;
            info.set_item("psnr", stats.psnr)?;
            info.set_item("bytes", stats.bytes)?;
            info.set_item("ratio", stats.ratio)?;
            info.set_item("device", if on_gpu { "cuda" } else { "cpu" })?;
            Ok((PyBytes::new(py, &bytes), info))
        }};
    }
    if let Ok(arr) = a.extract::<PyReadonlyArrayDyn<f32>>() {
        go!(arr, F32)
    } else if let Ok(arr) = a.extract::<PyReadonlyArrayDyn<f64>>() {
        go!(arr, F64)
    } else {
        Err(crate::type_err(
            "expected a float32 or float64 array (the Python layer converts others)",
        ))
    }
}

fn header_dict<'py>(py: Python<'py>, r: &MrzReader) -> PyResult<Bound<'py, PyDict>> {
    let h = r.header();
    let d = PyDict::new(py);
    d.set_item("shape", h.shape())?;
    d.set_item("dtype", h.dtype.name())?;
    d.set_item("transform", h.transform.name())?;
    d.set_item("bound", h.bound.to_string())?;
    d.set_item("abs_bound", h.abs_bound)?;
    d.set_item("brick", h.brick[3 - h.ndim..].to_vec())?;
    d.set_item("bricks", r.grid().len())?;
    d.set_item("value_range", h.value_range)?;
    d.set_item("version", h.version)?;
    d.set_item("file_bytes", r.file_len())?;
    d.set_item("ratio", h.raw_bytes() as f64 / r.file_len().max(1) as f64)?;
    Ok(d)
}

/// Decodes `region` (all of it when None) straight into a new numpy array.
fn decode<'py>(
    py: Python<'py>,
    r: &mut MrzReader,
    region: Option<Region>,
) -> PyResult<Bound<'py, PyAny>> {
    let h = r.header().clone();
    let region = region.unwrap_or(codec::full_region(h.dims));
    let shape: Vec<usize> = region.map(|(a, b)| b.saturating_sub(a))[3 - h.ndim..].to_vec();
    macro_rules! go {
        ($t:ty) => {{
            let out = PyArrayDyn::<$t>::zeros(py, shape.as_slice(), false);
            {
                let mut w = out.readwrite();
                let o = w.as_slice_mut().map_err(value_err)?;
                crate::run(py, || codec::decompress_into(r, Some(region), o, &|_| {}))
                    .map_err(codec_err)?;
            }
            Ok(out.into_any())
        }};
    }
    match h.dtype {
        DType::F32 => go!(f32),
        DType::F64 => go!(f64),
    }
}

/// The values of .mrz bytes.
#[pyfunction]
fn decompress<'py>(py: Python<'py>, b: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let mut r = MrzReader::from_bytes(b.to_vec(), "<bytes>").map_err(codec_err)?;
    decode(py, &mut r, None)
}

/// An open .mrz file: header read and checked, bricks decoded on demand.
#[pyclass(module = "multires._multires", name = "MrzFileCore", frozen)]
struct MrzFileCore {
    reader: Mutex<MrzReader>,
}

#[pymethods]
impl MrzFileCore {
    #[new]
    fn new(path: std::path::PathBuf) -> PyResult<Self> {
        Ok(MrzFileCore {
            reader: Mutex::new(MrzReader::open(&path).map_err(codec_err)?),
        })
    }

    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        header_dict(py, &self.reader.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Decodes the box [start, stop) per axis (of the stored shape).
    fn read<'py>(
        &self,
        py: Python<'py>,
        starts: Vec<usize>,
        stops: Vec<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut r = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        let h = r.header().clone();
        if starts.len() != h.ndim || stops.len() != h.ndim {
            return Err(value_err(format!(
                "a region of this file has {} axes",
                h.ndim
            )));
        }
        let mut region = codec::full_region(h.dims);
        for k in 0..h.ndim {
            let ax = 3 - h.ndim + k;
            if starts[k] > stops[k] || stops[k] > h.dims[ax] {
                return Err(value_err(format!(
                    "axis {k}: {}:{} is not inside 0:{}",
                    starts[k], stops[k], h.dims[ax]
                )));
            }
            region[ax] = (starts[k], stops[k]);
        }
        decode(py, &mut r, Some(region))
    }
}

/// Writes bytes to `path` through a temporary file renamed into place, so
/// that an error or an interrupt never leaves a half-written file.
#[pyfunction]
fn write_atomic(py: Python<'_>, path: std::path::PathBuf, b: &[u8]) -> PyResult<()> {
    crate::run(py, || {
        multires::io::write_atomic(&path, |w| w.write_all(b).map_err(|e| e.to_string()))
    })
    .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MrzFileCore>()?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(decompress, m)?)?;
    m.add_function(wrap_pyfunction!(write_atomic, m)?)?;
    Ok(())
}
