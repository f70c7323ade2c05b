//! The error-bounded codec over numpy arrays: .mrz bytes in memory, and
//! .mrz files read by region (only the bricks a region meets are decoded).

use crate::{codec_err, cuda_err, parse, value_err};
use multires::backend::Device;
use multires::codec::{
    self, CodecOptions, DType, Elem, ErrorBound, FieldView, MrzReader, Region, Values, ValuesRef,
    Volume,
};
use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Mutex;

fn bound(kind: &str, value: f64) -> PyResult<ErrorBound> {
    if kind == "lossless" {
        return Ok(ErrorBound::Lossless);
    }
    parse(&format!("{kind}:{value}"))
}

/// The options for a field of `shape` given as `elem`, and the shape it
/// is coded as (a 1-D signal as 1 x N, a 4-D field's first two axes as one).
fn options(
    kind: &str,
    value: f64,
    transform: &str,
    shape: &[usize],
    elem: Elem,
) -> PyResult<(CodecOptions, Vec<usize>)> {
    let coded = codec::coded_shape(shape).map_err(codec_err)?;
    let mut o = CodecOptions::new(parse(transform)?, bound(kind, value)?);
    if coded != shape {
        o.axes = Some(shape.to_vec());
    }
    if elem.is_integer() {
        o.elem = Some(elem);
    }
    Ok((o, coded))
}

/// Compresses a C-contiguous array (1 to 4 axes; float32, float64 or
/// uint8/uint16/int16/int32) into the bytes of a .mrz file. The CPU codes
/// the array where it lies (integers are first widened to their coding
/// float); the GPU codec takes a copy of a float field under a lossy
/// bound with finite values, and `auto` leaves the rest to the CPU.
#[pyfunction]
fn compress<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    kind: &str,
    value: f64,
    transform: &str,
    device: &str,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let shape: Vec<usize>;
    let widened: Values;
    let (data, elem): (ValuesRef, Elem);
    // Kept alive while `data` borrows them.
    let (f32s, f64s);
    if let Ok(arr) = a.extract::<PyReadonlyArrayDyn<f32>>() {
        shape = arr.shape().to_vec();
        f32s = Some(arr);
        let v = f32s.as_ref().map(|a| a.as_slice());
        data = ValuesRef::F32(v.and_then(|r| r.ok()).ok_or_else(contiguous)?);
        elem = Elem::F32;
    } else if let Ok(arr) = a.extract::<PyReadonlyArrayDyn<f64>>() {
        shape = arr.shape().to_vec();
        f64s = Some(arr);
        let v = f64s.as_ref().map(|a| a.as_slice());
        data = ValuesRef::F64(v.and_then(|r| r.ok()).ok_or_else(contiguous)?);
        elem = Elem::F64;
    } else {
        macro_rules! ints {
            ($($t:ty => $e:ident),*) => {{
                $(if let Ok(arr) = a.extract::<PyReadonlyArrayDyn<$t>>() {
                    let d = arr.as_slice().map_err(|_| contiguous())?;
                    let e = Elem::$e;
                    let v = match e.coding() {
                        DType::F32 => Values::F32(d.iter().map(|&x| x as f32).collect()),
                        DType::F64 => Values::F64(d.iter().map(|&x| x as f64).collect()),
                    };
                    Some((arr.shape().to_vec(), v, e))
                } else)* { None }
            }};
        }
        let Some((sh, v, e)) = ints!(u8 => U8, u16 => U16, i16 => I16, i32 => I32) else {
            return Err(crate::type_err(
                "expected a float32, float64, uint8, uint16, int16 or int32 array (the Python layer converts others)",
            ));
        };
        shape = sh;
        widened = v;
        data = match &widened {
            Values::F32(d) => ValuesRef::F32(d),
            Values::F64(d) => ValuesRef::F64(d),
        };
        elem = e;
    }
    let (opts, coded) = options(kind, value, transform, &shape, elem)?;
    let view = FieldView::of(&coded, data).map_err(codec_err)?;
    let asked: Device = parse(device)?;
    // The GPU codes float fields under a lossy bound with finite values.
    let gpu_can = !elem.is_integer() && opts.bound != ErrorBound::Lossless && {
        let (lo, hi, nan) = match data {
            ValuesRef::F32(d) => codec::scan(d),
            ValuesRef::F64(d) => codec::scan(d),
        };
        !nan && lo.is_finite() && hi.is_finite()
    };
    let on_gpu = match asked {
        Device::Cpu => false,
        Device::Cuda if !gpu_can => {
            return Err(value_err(
                "device='cuda' codes float fields with finite values under a lossy bound; \
                 integers, lossless coding and fields with NaN or Inf are coded on the CPU (device='cpu' or 'auto')",
            ))
        }
        _ if !gpu_can => false,
        _ => crate::backend(device)?.1,
    };
    let (bytes, stats) = crate::run(py, || -> PyResult<_> {
        if on_gpu {
            let values = match data {
                ValuesRef::F32(d) => Values::F32(d.to_vec()),
                ValuesRef::F64(d) => Values::F64(d.to_vec()),
            };
            let v = Volume::of(&coded, values).map_err(codec_err)?;
            let g = multires_cuda::gpu().map_err(cuda_err)?;
            let (parts, s, _) =
                multires_cuda::codec::compress(&v, &opts, &[g], None, &|_| {}).map_err(cuda_err)?;
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
}

fn contiguous() -> PyErr {
    crate::type_err("the array must be C-contiguous")
}

fn header_dict<'py>(py: Python<'py>, r: &MrzReader) -> PyResult<Bound<'py, PyDict>> {
    let h = r.header();
    let d = PyDict::new(py);
    d.set_item("shape", h.shape())?;
    d.set_item("dtype", h.elem.name())?;
    d.set_item("coded_shape", h.coded_shape())?;
    d.set_item("transform", h.transform.name())?;
    d.set_item("bound", h.bound.to_string())?;
    d.set_item("abs_bound", h.abs_bound)?;
    d.set_item("brick", h.brick[3 - h.ndim..].to_vec())?;
    d.set_item("lossless", h.bound == ErrorBound::Lossless)?;
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

/// The values of .mrz bytes (in the coded shape and float type) and the
/// header (the Python layer gives them the field's shape and type).
#[pyfunction]
fn decompress<'py>(py: Python<'py>, b: &[u8]) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    let mut r = MrzReader::from_bytes(b.to_vec(), "<bytes>").map_err(codec_err)?;
    let d = header_dict(py, &r)?;
    Ok((decode(py, &mut r, None)?, d))
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

    /// The coarse view at `level` of the box [start, stop) per axis of the
    /// coded shape: the values (coded shape, float type) and the kept
    /// positions per axis.
    fn read_coarse<'py>(
        &self,
        py: Python<'py>,
        starts: Vec<usize>,
        stops: Vec<usize>,
        level: usize,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<Vec<usize>>)> {
        let mut r = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        let h = r.header().clone();
        let region = region_of(&h, &starts, &stops)?;
        let reader: &mut MrzReader = &mut r;
        let (v, pos) = crate::run(py, || {
            codec::decompress_coarse(reader, Some(region), level, &|_| {})
        })
        .map_err(codec_err)?;
        let shape = v.shape();
        let arr = match v.data {
            Values::F32(d) => numpy::PyArray1::from_vec(py, d).reshape(shape)?.into_any(),
            Values::F64(d) => numpy::PyArray1::from_vec(py, d).reshape(shape)?.into_any(),
        };
        Ok((arr, pos[3 - h.ndim..].to_vec()))
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
        let region = region_of(&h, &starts, &stops)?;
        decode(py, &mut r, Some(region))
    }
}

/// The box [start, stop) per axis of the coded shape of a file of header
/// `h`, checked against it.
fn region_of(h: &codec::MrzHeader, starts: &[usize], stops: &[usize]) -> PyResult<Region> {
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
    Ok(region)
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

/// The HDF5 filter plugin's ID (crates/multires-hdf5).
#[pyfunction]
fn hdf5_filter_id() -> i32 {
    h5multires::FILTER_ID
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<MrzFileCore>()?;
    m.add_function(wrap_pyfunction!(hdf5_filter_id, m)?)?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(decompress, m)?)?;
    m.add_function(wrap_pyfunction!(write_atomic, m)?)?;
    Ok(())
}
