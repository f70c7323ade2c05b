//! The error-bounded codec over numpy arrays: .mrz bytes in memory, and
//! .mrz files read by region (only the bricks a region meets are decoded).

use crate::{codec_err, cuda_err, parse, value_err};
use multires::backend::Device;
use multires::codec::{
    self, CodecOptions, DType, Elem, ErrorBound, FieldView, MrzReader, Region, Values, ValuesRef,
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
    // The GPU codes float fields under a lossy bound; NaN and infinities
    // it finds in its range's pass, before any coding, and the CPU (which
    // keeps them exactly) then codes the field.
    // The fast profile codes float32 fields on the GPU.
    let gpu_can = !elem.is_integer()
        && opts.bound != ErrorBound::Lossless
        && (opts.transform != codec::Lifting::Lorenzo || elem == Elem::F32);
    let on_gpu =
        match asked {
            Device::Cpu => false,
            Device::Cuda if !gpu_can => return Err(value_err(
                "device='cuda' codes float fields under a lossy bound (the fast profile float32 \
                 ones); integers, lossless coding and float64 fields of the fast profile are \
                 coded on the CPU (device='cpu' or 'auto')",
            )),
            _ if !gpu_can => false,
            _ => crate::backend(device)?.1,
        };
    let (coded, stats) = crate::run(py, || -> PyResult<_> {
        if on_gpu {
            let g = multires_cuda::gpu().map_err(cuda_err)?;
            // The values go up from the caller's array, not a copy.
            match multires_cuda::codec::compress_view(view, &opts, &[g], None, &|_| {}) {
                Ok((parts, s, _)) => return Ok((Coded::Parts(parts), s)),
                Err(multires_cuda::CudaError::Codec(codec::CodecError::NonFinite {
                    index,
                    value,
                })) if asked == Device::Cuda => {
                    return Err(value_err(format!(
                        "device='cuda' codes fields with finite values; value {index} is {value} \
                         (device='cpu' or 'auto' keep NaN and infinities exactly)"
                    )))
                }
                Err(multires_cuda::CudaError::Codec(codec::CodecError::NonFinite { .. })) => {}
                Err(e) => return Err(cuda_err(e)),
            }
        }
        codec::compress_view(view, &opts, &|_| {})
            .map(|(b, s)| (Coded::Joined(b), s))
            .map_err(codec_err)
    })?;
    let on_gpu = matches!(coded, Coded::Parts(_));
    let info = PyDict::new(py);
    info.set_item("abs_bound", stats.abs_bound)?;
    info.set_item("max_error", stats.max_error)?;
    info.set_item("psnr", stats.psnr)?;
    info.set_item("bytes", stats.bytes)?;
    info.set_item("ratio", stats.ratio)?;
    info.set_item("device", if on_gpu { "cuda" } else { "cpu" })?;
    Ok((coded.into_bytes(py)?, info))
}

/// A compressed file as the CPU (joined) or the GPU (in parts where its
/// batches came down) gives it.
enum Coded {
    Joined(Vec<u8>),
    Parts(multires_cuda::codec::GpuMrz),
}

impl Coded {
    /// The file as Python bytes, its parts copied straight in (on every
    /// core), without joining them first.
    fn into_bytes(self, py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
        match self {
            Coded::Joined(b) => Ok(PyBytes::new(py, &b)),
            Coded::Parts(p) => {
                use rayon::prelude::*;
                let pieces: Vec<&[u8]> = std::iter::once(p.head.as_slice())
                    .chain(p.payloads.iter().map(|x| x.as_ref()))
                    .chain(std::iter::once(p.index.as_slice()))
                    .collect();
                let len: usize = pieces.iter().map(|x| x.len()).sum();
                // A bytes object left unfilled by CPython, then filled on
                // every core: `PyBytes::new_with` zeroes it first on one
                // thread, whose page faults on a 600 MB file cost more
                // than the copy.
                let size = pyo3::ffi::Py_ssize_t::try_from(len)
                    .map_err(|_| value_err("the file is too large for a bytes object"))?;
                // SAFETY: a null source asks CPython for `len` bytes it does
                // not fill; every one is written below before the object is
                // handed to Python, and the pointer is its own buffer.
                let b = unsafe {
                    let o = pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), size);
                    Bound::from_owned_ptr_or_err(py, o)?.cast_into_unchecked::<PyBytes>()
                };
                // SAFETY: the new object's buffer, `len` bytes, not yet shared.
                let buf = unsafe {
                    let at = pyo3::ffi::PyBytes_AsString(b.as_ptr()) as *mut u8;
                    std::slice::from_raw_parts_mut(at, len)
                };
                let mut dsts = Vec::with_capacity(pieces.len());
                let mut rest = buf;
                for x in &pieces {
                    let (d, tail) = rest.split_at_mut(x.len());
                    dsts.push(d);
                    rest = tail;
                }
                py.detach(|| {
                    dsts.into_par_iter()
                        .zip(pieces.par_iter())
                        .for_each(|(d, x)| d.copy_from_slice(x))
                });
                Ok(b)
            }
        }
    }
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
    let out = match h.dtype {
        DType::F32 => PyArrayDyn::<f32>::zeros(py, shape.as_slice(), false).into_any(),
        DType::F64 => PyArrayDyn::<f64>::zeros(py, shape.as_slice(), false).into_any(),
    };
    decode_into_out(py, &out, r, Some(region))?;
    Ok(out)
}

/// Python bytes lent to a reader without a copy: a bytes object never
/// changes, and the reference held keeps its buffer alive.
struct LentBytes {
    _owner: Py<PyBytes>,
    at: *const u8,
    len: usize,
}

// SAFETY: the buffer of a bytes object is immutable and lives as long as
// the object, which `_owner` keeps; reading it needs no interpreter lock.
unsafe impl Send for LentBytes {}
unsafe impl Sync for LentBytes {}

impl AsRef<[u8]> for LentBytes {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: see above; `at` and `len` are the object's own.
        unsafe { std::slice::from_raw_parts(self.at, self.len) }
    }
}

/// The values of .mrz bytes (in the coded shape and float type) and the
/// header (the Python layer gives them the field's shape and type). On
/// the GPU (`device`) a float32 file decodes into `out` when given (a
/// float array of the file's shape and type), else into a new array.
#[pyfunction]
#[pyo3(signature = (b, device = "cpu", out = None))]
fn decompress<'py>(
    py: Python<'py>,
    b: &Bound<'py, PyBytes>,
    device: &str,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    let lent = LentBytes {
        at: b.as_bytes().as_ptr(),
        len: b.as_bytes().len(),
        _owner: b.clone().unbind(),
    };
    let mut r = MrzReader::from_shared(std::sync::Arc::new(lent), "<bytes>").map_err(codec_err)?;
    let d = header_dict(py, &r)?;
    let h = r.header().clone();
    let asked: Device = parse(device)?;
    // The GPU decodes lossy files, of the fast profile the float32 ones.
    let lorenzo64 = h.transform == codec::Lifting::Lorenzo && h.dtype == DType::F64;
    let gpu_can = !h.is_lossless() && !lorenzo64;
    let on_gpu = match asked {
        Device::Cpu => false,
        Device::Cuda if !gpu_can => {
            return Err(value_err(if lorenzo64 {
                "device='cuda': a float64 file of the fast profile decodes on the CPU (device='cpu' or 'auto')"
            } else {
                "device='cuda': a lossless file decodes on the CPU (device='cpu' or 'auto')"
            }))
        }
        _ if !gpu_can => false,
        _ => crate::backend(device)?.1,
    };
    let target = match out {
        None => None,
        Some(o) => Some(out_array(o, &h)?),
    };
    if !on_gpu {
        let y = match target {
            Some(t) => {
                decode_into_out(py, &t, &mut r, None)?;
                t
            }
            None => decode(py, &mut r, None)?,
        };
        return Ok((y, d));
    }
    let g = multires_cuda::gpu().map_err(cuda_err)?;
    let shape = h.coded_shape();
    let y = match h.dtype {
        DType::F32 => {
            let decode = |o: &mut [f32]| {
                crate::run(py, || {
                    multires_cuda::codec::decompress_into(&mut r, o, &[g], &|_| {})
                })
                .map_err(cuda_err)
            };
            match target {
                Some(t) => {
                    {
                        let arr = t
                            .cast::<PyArrayDyn<f32>>()
                            .map_err(|e| value_err(e.to_string()))?;
                        let mut w = arr.readwrite();
                        decode(w.as_slice_mut().map_err(value_err)?)?;
                    }
                    t
                }
                None => {
                    // Untouched pages marked for huge pages: far fewer page
                    // faults than numpy's own zeroed array takes.
                    let mut v = multires::memory::zeroed_vec::<f32>(shape.iter().product());
                    decode(&mut v)?;
                    numpy::PyArray1::from_vec(py, v)
                        .reshape(shape.as_slice())?
                        .into_any()
                }
            }
        }
        DType::F64 => {
            let v = crate::run(py, || {
                multires_cuda::codec::decompress(&mut r, None, &[g], &|_| {})
            })
            .map_err(cuda_err)?;
            let Values::F64(vals) = v.data else {
                return Err(value_err("a float64 file decoded to float32"));
            };
            match target {
                Some(t) => {
                    let arr = t
                        .cast::<PyArrayDyn<f64>>()
                        .map_err(|e| value_err(e.to_string()))?;
                    arr.readwrite()
                        .as_slice_mut()
                        .map_err(value_err)?
                        .copy_from_slice(&vals);
                    t
                }
                None => numpy::PyArray1::from_vec(py, vals)
                    .reshape(shape.as_slice())?
                    .into_any(),
            }
        }
    };
    Ok((y, d))
}

/// Whether `o` is a writable, C-contiguous array of `T` and `shape`.
fn fits_as<T: numpy::Element>(o: &Bound<'_, PyAny>, shape: &[usize]) -> bool {
    o.cast::<PyArrayDyn<T>>()
        .map(|a| a.is_c_contiguous() && a.shape() == shape && a.try_readwrite().is_ok())
        .unwrap_or(false)
}

/// `o` checked as the array a file of header `h` decodes into: C-contiguous
/// and writable, of the file's (float) type and as many values as it holds.
fn out_array<'py>(o: &Bound<'py, PyAny>, h: &codec::MrzHeader) -> PyResult<Bound<'py, PyAny>> {
    let shape = h.shape();
    let want = match h.dtype {
        DType::F32 => "float32",
        DType::F64 => "float64",
    };
    let fits = match h.dtype {
        DType::F32 => fits_as::<f32>(o, &shape),
        DType::F64 => fits_as::<f64>(o, &shape),
    };
    if h.elem.is_integer() || !fits {
        return Err(value_err(format!(
            "out must be a writable, C-contiguous {} array of shape {:?} (this file's values){}",
            if h.elem.is_integer() {
                h.elem.name()
            } else {
                want
            },
            h.shape(),
            if h.elem.is_integer() {
                "; out= takes files of float values, decompress this one without it"
            } else {
                ""
            }
        )));
    }
    Ok(o.clone())
}

/// Decodes `region` (all of it when None) on the CPU into `t`, an array
/// of the file's float type and the region's number of values.
fn decode_into_out(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    r: &mut MrzReader,
    region: Option<Region>,
) -> PyResult<()> {
    macro_rules! go {
        ($t:ty) => {{
            let arr = t
                .cast::<PyArrayDyn<$t>>()
                .map_err(|e| value_err(e.to_string()))?;
            let mut w = arr.readwrite();
            let o = w.as_slice_mut().map_err(value_err)?;
            crate::run(py, || codec::decompress_into(r, region, o, &|_| {})).map_err(codec_err)
        }};
    }
    match r.header().dtype {
        DType::F32 => go!(f32),
        DType::F64 => go!(f64),
    }
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
