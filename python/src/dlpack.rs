//! DLPack both ways, for arrays that live on the GPU (CuPy, PyTorch, JAX):
//! an input's device address is read from its capsule and copied on the
//! device into the engine's buffers; a result is handed out as a capsule
//! over device memory the engine allocated, freed when the consumer is done.

use crate::{cuda_err, value_err};
use cudarc::driver::{CudaSlice, DevicePtr};
use pyo3::ffi;
use pyo3::prelude::*;
use std::any::Any;
use std::ffi::{c_void, CStr};
use std::sync::Arc;

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

const DL_CUDA: i32 = 2;
const DL_FLOAT: u8 = 2;
const DL_COMPLEX: u8 = 5;
const NAME: &CStr = c"dltensor";

/// The element types the engine hands out: float32/64, complex64/128.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DType {
    F32,
    F64,
    C64,
    C128,
}

impl DType {
    fn dl(self) -> DLDataType {
        let (code, bits) = match self {
            DType::F32 => (DL_FLOAT, 32),
            DType::F64 => (DL_FLOAT, 64),
            DType::C64 => (DL_COMPLEX, 64),
            DType::C128 => (DL_COMPLEX, 128),
        };
        DLDataType {
            code,
            bits,
            lanes: 1,
        }
    }
    fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }
}

/// A C-contiguous real array on a CUDA device, read from a `__dlpack__`
/// capsule (kept alive while the address is in use).
pub(crate) struct DeviceInput<'py> {
    _capsule: Bound<'py, PyAny>,
    pub ptr: u64,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

impl<'py> DeviceInput<'py> {
    /// Reads `obj.__dlpack__()`; the producer must have finished writing
    /// (the Python layer synchronizes its device first).
    pub(crate) fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let cap = obj.call_method0("__dlpack__")?;
        // SAFETY: a capsule named "dltensor" holds a DLManagedTensor that
        // stays valid while the capsule lives (the DLPack protocol).
        let t = unsafe {
            let p =
                ffi::PyCapsule_GetPointer(cap.as_ptr(), NAME.as_ptr()) as *const DLManagedTensor;
            if p.is_null() {
                return Err(PyErr::fetch(obj.py()));
            }
            &(*p).dl_tensor
        };
        if t.device.device_type != DL_CUDA {
            return Err(value_err(format!(
                "the array is on DLPack device type {}, not CUDA (2)",
                t.device.device_type
            )));
        }
        let gpu = multires_cuda::gpu().map_err(cuda_err)?;
        if t.device.device_id != gpu.ctx.ordinal() as i32 {
            return Err(value_err(format!(
                "the array is on CUDA device {}; multires runs on device {}",
                t.device.device_id,
                gpu.ctx.ordinal()
            )));
        }
        let dtype = match (t.dtype.code, t.dtype.bits, t.dtype.lanes) {
            (DL_FLOAT, 32, 1) => DType::F32,
            (DL_FLOAT, 64, 1) => DType::F64,
            (c, b, _) => {
                return Err(crate::type_err(format!(
                    "a device array of DLPack type code {c}, {b} bits: the device path reads float32 and float64"
                )))
            }
        };
        let ndim = usize::try_from(t.ndim).map_err(value_err)?;
        // SAFETY: shape (and strides when not null) hold ndim values.
        let shape: Vec<usize> = (0..ndim)
            .map(|i| unsafe { *t.shape.add(i) } as usize)
            .collect();
        if !t.strides.is_null() {
            let mut want = 1i64;
            for i in (0..ndim).rev() {
                let s = unsafe { *t.strides.add(i) };
                if shape[i] > 1 && s != want {
                    return Err(value_err("the device array is not C-contiguous"));
                }
                want *= shape[i] as i64;
            }
        }
        Ok(DeviceInput {
            _capsule: cap,
            ptr: t.data as u64 + t.byte_offset,
            shape,
            dtype,
        })
    }
}

/// What a capsule's manager keeps: the device buffer and the shape the
/// tensor points into.
struct Holder {
    _keep: Arc<dyn Any + Send + Sync>,
    shape: Vec<i64>,
}

unsafe extern "C" fn managed_deleter(m: *mut DLManagedTensor) {
    if m.is_null() {
        return;
    }
    // SAFETY: both boxes were made by `DeviceArray::__dlpack__`.
    let m = Box::from_raw(m);
    drop(Box::from_raw(m.manager_ctx as *mut Holder));
}

unsafe extern "C" fn capsule_destructor(cap: *mut ffi::PyObject) {
    // A consumer renames the capsule to "used_dltensor" and deletes the
    // tensor itself; one never consumed is deleted here.
    if ffi::PyCapsule_IsValid(cap, NAME.as_ptr()) == 1 {
        let m = ffi::PyCapsule_GetPointer(cap, NAME.as_ptr()) as *mut DLManagedTensor;
        if let Some(d) = (!m.is_null()).then(|| (*m).deleter).flatten() {
            d(m);
        }
    }
}

/// A device buffer the engine wrote, offered through DLPack; pass it to
/// `cupy.from_dlpack`, `torch.from_dlpack` or `jax.dlpack.from_dlpack`.
#[pyclass(module = "multires._multires", name = "DeviceArray", frozen)]
pub(crate) struct DeviceArray {
    keep: Arc<dyn Any + Send + Sync>,
    ptr: u64,
    shape: Vec<usize>,
    dtype: DType,
    device_id: i32,
}

/// A CudaSlice as the owner a DeviceArray keeps alive.
struct Owned<T>(#[allow(dead_code)] CudaSlice<T>);
// SAFETY: the slice is only dropped (freed on its stream) through this
// wrapper and never accessed from two threads at once.
unsafe impl<T> Sync for Owned<T> {}
unsafe impl<T> Send for Owned<T> {}

impl DeviceArray {
    /// Wraps `buf` (at byte `offset`, `shape` of `dtype`).
    pub(crate) fn new<T: 'static>(
        buf: CudaSlice<T>,
        offset: usize,
        shape: Vec<usize>,
        dtype: DType,
    ) -> PyResult<Self> {
        let gpu = multires_cuda::gpu().map_err(cuda_err)?;
        let ptr = {
            let (p, _sync) = buf.device_ptr(&gpu.stream);
            p + offset as u64
        };
        Ok(DeviceArray {
            keep: Arc::new(Owned(buf)),
            ptr,
            shape,
            dtype,
            device_id: gpu.ctx.ordinal() as i32,
        })
    }

    /// Another view of the same buffer (a block of a wavedec's layout).
    pub(crate) fn view(&self, offset: usize, shape: Vec<usize>) -> DeviceArray {
        DeviceArray {
            keep: Arc::clone(&self.keep),
            ptr: self.ptr + offset as u64,
            shape,
            dtype: self.dtype,
            device_id: self.device_id,
        }
    }
}

#[pymethods]
impl DeviceArray {
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name()
    }

    /// (device type, device id): (2, n) for CUDA device n.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (DL_CUDA, self.device_id)
    }

    /// A DLPack capsule over the buffer. The engine finished writing it
    /// before handing it out, so any consumer stream may read it at once.
    #[pyo3(signature = (stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<Bound<'py, PyAny>>,
        dl_device: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = (stream, max_version, dl_device);
        if copy == Some(true) {
            return Err(crate::type_err(
                "copy=True is not supported: the buffer is handed out as it is",
            ));
        }
        let holder = Box::new(Holder {
            _keep: Arc::clone(&self.keep),
            shape: self.shape.iter().map(|&s| s as i64).collect(),
        });
        let holder = Box::into_raw(holder);
        // SAFETY: `holder` lives until the deleter frees it; the shape
        // pointer points into it.
        let m = Box::new(DLManagedTensor {
            dl_tensor: DLTensor {
                data: self.ptr as *mut c_void,
                device: DLDevice {
                    device_type: DL_CUDA,
                    device_id: self.device_id,
                },
                ndim: self.shape.len() as i32,
                dtype: self.dtype.dl(),
                shape: unsafe { (*holder).shape.as_mut_ptr() },
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: holder as *mut c_void,
            deleter: Some(managed_deleter),
        });
        let m = Box::into_raw(m);
        unsafe {
            let cap = ffi::PyCapsule_New(m as *mut c_void, NAME.as_ptr(), Some(capsule_destructor));
            if cap.is_null() {
                managed_deleter(m);
                return Err(PyErr::fetch(py));
            }
            Ok(Bound::from_owned_ptr(py, cap))
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DeviceArray>()?;
    Ok(())
}
