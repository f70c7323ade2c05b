//! The plugin's C interface: `H5PLget_plugin_type`, `H5PLget_plugin_info`
//! and the filter class HDF5 calls, with the HDF5 functions `set_local`
//! needs found at run time in the HDF5 library the process has loaded.

use crate::chunk::{self, ChunkSpec};
use multires::codec::Elem;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

type Hid = i64;
type Herr = c_int;
type Htri = c_int;

#[repr(C)]
pub struct H5ZClass2 {
    version: c_int,
    id: c_int,
    encoder_present: c_uint,
    decoder_present: c_uint,
    name: *const c_char,
    can_apply: Option<unsafe extern "C" fn(Hid, Hid, Hid) -> Htri>,
    set_local: Option<unsafe extern "C" fn(Hid, Hid, Hid) -> Herr>,
    filter: Option<
        unsafe extern "C" fn(
            c_uint,
            usize,
            *const c_uint,
            usize,
            *mut usize,
            *mut *mut c_void,
        ) -> usize,
    >,
}

// SAFETY: the class is immutable and its name a static string.
unsafe impl Sync for H5ZClass2 {}

static CLASS: H5ZClass2 = H5ZClass2 {
    version: 1, // H5Z_CLASS_T_VERS
    id: crate::FILTER_ID,
    encoder_present: 1,
    decoder_present: 1,
    name: c"multires: error-bounded and lossless wavelet codec (.mrz)".as_ptr(),
    can_apply: Some(can_apply),
    set_local: Some(set_local),
    filter: Some(filter),
};

/// H5PL_TYPE_FILTER.
#[no_mangle]
pub extern "C" fn H5PLget_plugin_type() -> c_int {
    0
}

#[no_mangle]
pub extern "C" fn H5PLget_plugin_info() -> *const c_void {
    &CLASS as *const H5ZClass2 as *const c_void
}

/// The HDF5 functions the filter calls.
struct Api {
    get_chunk: unsafe extern "C" fn(Hid, c_int, *mut u64) -> c_int,
    get_class: unsafe extern "C" fn(Hid) -> c_int,
    get_size: unsafe extern "C" fn(Hid) -> usize,
    get_sign: unsafe extern "C" fn(Hid) -> c_int,
    get_order: unsafe extern "C" fn(Hid) -> c_int,
    get_filter: unsafe extern "C" fn(
        Hid,
        c_int,
        *mut c_uint,
        *mut usize,
        *mut c_uint,
        usize,
        *mut c_char,
        *mut c_uint,
    ) -> Herr,
    modify_filter: unsafe extern "C" fn(Hid, c_int, c_uint, usize, *const c_uint) -> Herr,
    allocate: Option<unsafe extern "C" fn(usize, bool) -> *mut c_void>,
    free: Option<unsafe extern "C" fn(*mut c_void) -> Herr>,
}

/// Looks `name` up in `handle`.
unsafe fn sym(handle: *mut c_void, name: &CStr) -> Option<*mut c_void> {
    let p = libc::dlsym(handle, name.as_ptr());
    (!p.is_null()).then_some(p)
}

unsafe extern "C" fn each_object(
    info: *mut libc::dl_phdr_info,
    _: usize,
    data: *mut c_void,
) -> c_int {
    let names = &mut *(data as *mut Vec<std::ffi::CString>);
    let n = (*info).dlpi_name;
    if !n.is_null() {
        let name = CStr::from_ptr(n);
        let s = name.to_string_lossy();
        let file = s.rsplit('/').next().unwrap_or("");
        if file.starts_with("libhdf5") && !file.starts_with("libhdf5_hl") {
            names.push(name.to_owned());
        }
    }
    0
}

/// The HDF5 library of this process: the global namespace first (a
/// program linked with it), else the loaded objects named libhdf5*
/// (h5py loads its own copy privately).
fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| unsafe {
        let mut handles = vec![libc::RTLD_DEFAULT];
        let mut names: Vec<std::ffi::CString> = Vec::new();
        libc::dl_iterate_phdr(Some(each_object), &mut names as *mut _ as *mut c_void);
        for n in &names {
            let h = libc::dlopen(n.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
            if !h.is_null() {
                handles.push(h);
            }
        }
        handles.into_iter().find_map(|h| {
            macro_rules! f {
                ($n:literal) => {
                    fn_of(sym(h, $n)?)
                };
            }
            Some(Api {
                get_chunk: f!(c"H5Pget_chunk"),
                get_class: f!(c"H5Tget_class"),
                get_size: f!(c"H5Tget_size"),
                get_sign: f!(c"H5Tget_sign"),
                get_order: f!(c"H5Tget_order"),
                get_filter: f!(c"H5Pget_filter_by_id2"),
                modify_filter: f!(c"H5Pmodify_filter"),
                allocate: sym(h, c"H5allocate_memory").map(|p| fn_of(p)),
                free: sym(h, c"H5free_memory").map(|p| fn_of(p)),
            })
        })
    })
    .as_ref()
}

/// A symbol's address as the function pointer type `F` its C declaration
/// gives (the caller names the type in `Api`).
unsafe fn fn_of<F: Copy>(p: *mut c_void) -> F {
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    std::mem::transmute_copy(&p)
}

fn complain(what: &str) {
    eprintln!("multires HDF5 filter: {what}");
}

/// The element type of an HDF5 datatype, if the codec takes it.
unsafe fn elem_of(a: &Api, t: Hid) -> Result<Elem, String> {
    let (class, size, order) = ((a.get_class)(t), (a.get_size)(t), (a.get_order)(t));
    if order != 0 && size > 1 {
        return Err("big-endian values: store them little-endian".into());
    }
    match (class, size, (a.get_sign)(t)) {
        (1, 4, _) => Ok(Elem::F32),
        (1, 8, _) => Ok(Elem::F64),
        (0, 1, 0) => Ok(Elem::U8),
        (0, 2, 0) => Ok(Elem::U16),
        (0, 2, 1) => Ok(Elem::I16),
        (0, 4, 1) => Ok(Elem::I32),
        (c, s, g) => Err(format!(
            "a datatype of class {c}, {s} bytes, sign {g}: the codec takes float32, float64, uint8, uint16, int16 and int32"
        )),
    }
}

unsafe extern "C" fn can_apply(_dcpl: Hid, t: Hid, _space: Hid) -> Htri {
    let Some(a) = api() else {
        complain("the HDF5 library of this process was not found");
        return -1;
    };
    match elem_of(a, t) {
        Ok(_) => 1,
        Err(e) => {
            complain(&e);
            0
        }
    }
}

/// Fills in the element type and the chunk's shape after the user's
/// bound and transform.
unsafe extern "C" fn set_local(dcpl: Hid, t: Hid, _space: Hid) -> Herr {
    let ok =
        std::panic::catch_unwind(|| set_local_checked(dcpl, t).map_err(|e| complain(&e)).is_ok());
    if ok.unwrap_or(false) {
        0
    } else {
        -1
    }
}

unsafe fn set_local_checked(dcpl: Hid, t: Hid) -> Result<(), String> {
    let a = api().ok_or("the HDF5 library of this process was not found")?;
    let (mut flags, mut n) = (0 as c_uint, 16usize);
    let mut cd = [0 as c_uint; 16];
    let mut conf = 0 as c_uint;
    if (a.get_filter)(
        dcpl,
        crate::FILTER_ID,
        &mut flags,
        &mut n,
        cd.as_mut_ptr(),
        0,
        std::ptr::null_mut(),
        &mut conf,
    ) < 0
    {
        return Err("reading the filter's values".into());
    }
    let (bound, transform) = chunk::parse_user(&cd[..n.min(5)]).map_err(|e| e.to_string())?;
    let elem = elem_of(a, t)?;
    let mut dims = [0u64; 32];
    let nd = (a.get_chunk)(dcpl, 32, dims.as_mut_ptr());
    if nd <= 0 {
        return Err("the dataset is not chunked: the filter codes chunks".into());
    }
    let chunk = dims[..nd as usize].iter().map(|&d| d as usize).collect();
    let values = ChunkSpec {
        bound,
        transform,
        elem,
        chunk,
    }
    .values();
    if (a.modify_filter)(dcpl, crate::FILTER_ID, flags, values.len(), values.as_ptr()) < 0 {
        return Err("storing the filter's values".into());
    }
    Ok(())
}

/// H5Z_FLAG_REVERSE: decoding.
const REVERSE: c_uint = 0x0100;

unsafe extern "C" fn filter(
    flags: c_uint,
    cd_n: usize,
    cd: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    std::panic::catch_unwind(|| {
        let values = if cd.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(cd, cd_n)
        };
        let input = std::slice::from_raw_parts(*buf as *const u8, nbytes);
        let out = ChunkSpec::parse(values).and_then(|spec| {
            if flags & REVERSE != 0 {
                chunk::decode_chunk(&spec, input)
            } else {
                chunk::encode_chunk(&spec, input)
            }
        });
        match out {
            Ok(out) => {
                let a = api();
                let p = match a.and_then(|a| a.allocate) {
                    Some(alloc) => alloc(out.len().max(1), false),
                    None => libc::malloc(out.len().max(1)),
                };
                if p.is_null() {
                    complain(&format!("no memory for {} bytes", out.len()));
                    return 0;
                }
                std::ptr::copy_nonoverlapping(out.as_ptr(), p as *mut u8, out.len());
                match a.and_then(|a| a.free) {
                    Some(free) => {
                        free(*buf);
                    }
                    None => libc::free(*buf),
                }
                *buf = p;
                *buf_size = out.len();
                out.len()
            }
            Err(e) => {
                complain(&e.to_string());
                0
            }
        }
    })
    .unwrap_or(0)
}
