use super::IoError;
use crate::signal::{Samples, Signal};
use ndarray::{Array1, Array2, Ix1, Ix2};
use ndarray_npy::{ReadNpyError, ReadNpyExt};
use num_complex::{Complex32, Complex64};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawType {
    F32,
    F64,
}

impl FromStr for RawType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" | "float32" => Ok(RawType::F32),
            "f64" | "float64" => Ok(RawType::F64),
            _ => Err(format!(
                "unknown raw sample type '{s}': expected f32 or f64"
            )),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Read the file as raw little-endian samples of this type, whatever its extension.
    pub raw: Option<RawType>,
    /// WAV channel to take (default 0); CSV column (default 0).
    pub channel: usize,
}

fn fmt_err(path: &Path, why: impl Into<String>) -> IoError {
    IoError::Format {
        path: path.display().to_string(),
        why: why.into(),
    }
}

fn open(path: &Path) -> Result<File, IoError> {
    File::open(path).map_err(|source| IoError::Open {
        path: path.display().to_string(),
        why: source,
    })
}

pub fn read_signal(path: &Path, options: &ReadOptions) -> Result<Signal, IoError> {
    if let Some(raw) = options.raw {
        return read_raw(path, raw);
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "npy" => read_npy_signal(path),
        "wav" => read_wav(path, options.channel),
        "csv" | "txt" | "dat" => read_text(path, options.channel),
        "f32" => read_raw(path, RawType::F32),
        "f64" | "raw" => read_raw(path, RawType::F64),
        _ => Err(IoError::UnknownExtension {
            path: path.display().to_string(),
            ext: if ext.is_empty() {
                "none".into()
            } else {
                format!(".{ext}")
            },
        }),
    }
}

/// Tries each supported dtype in turn; only a dtype mismatch moves on.
macro_rules! try_npy {
    ($path:expr, $arr:ty, $map:expr) => {{
        let file = open($path)?;
        match <$arr>::read_npy(file) {
            Ok(a) => return $map(a),
            Err(ReadNpyError::WrongDescriptor(_)) => {}
            Err(ReadNpyError::WrongNdim(_, got)) => {
                return Err(fmt_err(
                    $path,
                    format!("expected a 1-D array (or 2-D with one row or column), got {got} dimensions"),
                ))
            }
            Err(e) => return Err(fmt_err($path, format!("not a valid .npy file: {e}"))),
        }
    }};
}

fn flatten_vector<T: Clone>(a: ndarray::ArrayD<T>, path: &Path) -> Result<Vec<T>, IoError> {
    let shape = a.shape().to_vec();
    let non_unit = shape.iter().filter(|&&d| d != 1).count();
    if shape.len() > 2 || (shape.len() == 2 && non_unit > 1) {
        return Err(fmt_err(
            path,
            format!("expected a 1-D signal, got an array of shape {shape:?}"),
        ));
    }
    Ok(a.iter().cloned().collect())
}

fn read_npy_signal(path: &Path) -> Result<Signal, IoError> {
    super::npy::check_npy_file(path)?;
    let real = |v: Vec<f64>| Signal::real(v);
    let res = (|| -> Result<Signal, IoError> {
        try_npy!(path, ndarray::ArrayD<f64>, |a| flatten_vector(a, path)
            .map(real));
        try_npy!(path, ndarray::ArrayD<f32>, |a: ndarray::ArrayD<f32>| {
            flatten_vector(a.mapv(|v| v as f64), path).map(real)
        });
        try_npy!(path, ndarray::ArrayD<Complex64>, |a| flatten_vector(
            a, path
        )
        .map(Signal::complex));
        try_npy!(path, ndarray::ArrayD<Complex32>, |a: ndarray::ArrayD<
            Complex32,
        >| {
            flatten_vector(a.mapv(|c| Complex64::new(c.re as f64, c.im as f64)), path)
                .map(Signal::complex)
        });
        // Integers as the DWT reads them (a uint8 recording, int16 audio).
        macro_rules! ints {
            ($($t:ty),*) => {$(
                try_npy!(path, ndarray::ArrayD<$t>, |a: ndarray::ArrayD<$t>| {
                    flatten_vector(a.mapv(|v| v as f64), path).map(real)
                });
            )*};
        }
        ints!(i8, i16, i32, i64, u8, u16, u32, u64);
        Err(fmt_err(
            path,
            "unsupported dtype: expected float32, float64, complex64, complex128 or (u)int8/16/32/64",
        ))
    })();
    res
}

/// A 2-D array of real or complex values (filter banks, coefficient tables).
#[derive(Debug, Clone)]
pub enum Matrix {
    Real(Array2<f64>),
    Complex(Array2<Complex64>),
}

pub fn read_matrix(path: &Path) -> Result<Matrix, IoError> {
    let to2 = |a: ndarray::ArrayD<f64>| -> Result<Array2<f64>, IoError> {
        match a.ndim() {
            1 => {
                let n = a.len();
                Ok(a.into_dimensionality::<Ix1>()
                    .map_err(|e| fmt_err(path, e.to_string()))?
                    .into_shape_with_order((1, n))
                    .map_err(|e| fmt_err(path, e.to_string()))?)
            }
            2 => a
                .into_dimensionality::<Ix2>()
                .map_err(|e| fmt_err(path, e.to_string())),
            d => Err(fmt_err(
                path,
                format!("expected a 2-D array (F, M), got {d} dimensions"),
            )),
        }
    };
    let to2c = |a: ndarray::ArrayD<Complex64>| -> Result<Array2<Complex64>, IoError> {
        match a.ndim() {
            1 => {
                let n = a.len();
                Ok(Array1::from_iter(a.iter().cloned())
                    .into_shape_with_order((1, n))
                    .map_err(|e| fmt_err(path, e.to_string()))?)
            }
            2 => a
                .into_dimensionality::<Ix2>()
                .map_err(|e| fmt_err(path, e.to_string())),
            d => Err(fmt_err(
                path,
                format!("expected a 2-D array (F, M), got {d} dimensions"),
            )),
        }
    };
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !ext.eq_ignore_ascii_case("npy") {
        return Err(fmt_err(
            path,
            format!(
                "a matrix (a filter bank of shape (F, M)) is read from .npy only, not {}; save it with numpy.save",
                if ext.is_empty() { "a file without extension".to_string() } else { format!(".{ext}") }
            ),
        ));
    }
    super::npy::check_npy_file(path)?;
    let res = (|| -> Result<Matrix, IoError> {
        try_npy!(path, ndarray::ArrayD<f64>, |a| to2(a).map(Matrix::Real));
        try_npy!(path, ndarray::ArrayD<f32>, |a: ndarray::ArrayD<f32>| to2(
            a.mapv(|v| v as f64)
        )
        .map(Matrix::Real));
        try_npy!(path, ndarray::ArrayD<Complex64>, |a| to2c(a)
            .map(Matrix::Complex));
        try_npy!(path, ndarray::ArrayD<Complex32>, |a: ndarray::ArrayD<
            Complex32,
        >| to2c(
            a.mapv(|c| Complex64::new(c.re as f64, c.im as f64))
        )
        .map(Matrix::Complex));
        Err(fmt_err(
            path,
            "unsupported dtype: expected float32, float64, complex64 or complex128",
        ))
    })();
    res
}

/// The highest sampling rate a WAV header may state.
const MAX_WAV_RATE: u32 = 1_000_000_000;

fn read_wav(path: &Path, channel: usize) -> Result<Signal, IoError> {
    let reader = hound::WavReader::open(path)
        .map_err(|e| fmt_err(path, format!("not a readable WAV file: {e}")))?;
    let spec = reader.spec();
    // 0 Hz (or an absurd rate) would make every time and frequency axis
    // infinite; no recorder writes more than 1 GHz into a WAV.
    if spec.sample_rate == 0 || spec.sample_rate > MAX_WAV_RATE {
        return Err(fmt_err(
            path,
            format!(
                "its header says {} Hz; a WAV's sampling rate must be 1 Hz to {MAX_WAV_RATE} Hz (read it as raw samples with --raw and pass --fs if the header is wrong)",
                spec.sample_rate
            ),
        ));
    }
    if spec.channels == 0 {
        return Err(fmt_err(path, "its header says 0 channels"));
    }
    let channels = spec.channels as usize;
    if channel >= channels {
        return Err(fmt_err(
            path,
            format!("channel {channel} requested but the file has {channels} channel(s) (0-based)"),
        ));
    }
    let wav_err = |e: hound::Error| fmt_err(path, format!("corrupt WAV data: {e}"));
    let all: Vec<f64> = match spec.sample_format {
        hound::SampleFormat::Float => reader
            .into_samples::<f32>()
            .map(|s| s.map(|v| v as f64))
            .collect::<Result<_, _>>()
            .map_err(wav_err)?,
        hound::SampleFormat::Int if !(1..=32).contains(&spec.bits_per_sample) => {
            return Err(fmt_err(
                path,
                format!(
                    "{} bits a sample: integer WAV samples have 1 to 32",
                    spec.bits_per_sample
                ),
            ))
        }
        hound::SampleFormat::Int => {
            let full = (1u64 << (spec.bits_per_sample - 1)) as f64;
            reader
                .into_samples::<i32>()
                .map(|s| s.map(|v| v as f64 / full))
                .collect::<Result<_, _>>()
                .map_err(wav_err)?
        }
    };
    let samples: Vec<f64> = all
        .iter()
        .skip(channel)
        .step_by(channels)
        .copied()
        .collect();
    Ok(Signal {
        samples: Samples::Real(samples),
        sample_rate: Some(spec.sample_rate as f64),
        notes: Vec::new(),
    })
}

/// Whether a text line is a column header ("time,value"): every field
/// starts with a letter or a quote and none is a number.
fn is_header(fields: &[&str]) -> bool {
    fields.iter().all(|f| {
        let f = f.trim();
        f.parse::<f64>().is_err()
            && f.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '"' || c == '\'')
    })
}

fn read_text(path: &Path, column: usize) -> Result<Signal, IoError> {
    let reader = BufReader::new(open(path)?);
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut first = true;
    for (lineno, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| fmt_err(path, format!("line {}: {e}", lineno + 1)))?;
        // Spreadsheets write UTF-8 files with a byte-order mark.
        let line = if lineno == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            &line
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line
            .split([',', ';', '\t', ' '])
            .filter(|f| !f.is_empty())
            .collect();
        if std::mem::take(&mut first) && is_header(&fields) {
            notes.push(format!(
                "{}: line {} ('{line}') read as a column header and skipped",
                path.display(),
                lineno + 1
            ));
            continue;
        }
        let field = fields.get(column).ok_or_else(|| {
            fmt_err(
                path,
                format!(
                    "line {}: no column {column} (found {} columns)",
                    lineno + 1,
                    fields.len()
                ),
            )
        })?;
        match field.trim().parse::<f64>() {
            Ok(v) => out.push(v),
            Err(_) => {
                return Err(fmt_err(
                    path,
                    format!("line {}: '{field}' is not a number", lineno + 1),
                ))
            }
        }
    }
    let mut s = Signal::real(out);
    s.notes = notes;
    Ok(s)
}

fn read_raw(path: &Path, raw: RawType) -> Result<Signal, IoError> {
    let v = match raw {
        RawType::F32 => read_raw_f32(path)?.into_iter().map(f64::from).collect(),
        RawType::F64 => raw_bytes(path, raw)?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
    };
    Ok(Signal::real(v))
}

/// Raw little-endian float32 samples as they are stored (no widened copy:
/// the codec keeps float32 fields in float32).
pub fn read_raw_f32(path: &Path) -> Result<Vec<f32>, IoError> {
    Ok(raw_bytes(path, RawType::F32)?
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// A raw file's bytes, checked to hold whole samples of `raw`.
fn raw_bytes(path: &Path, raw: RawType) -> Result<Vec<u8>, IoError> {
    let mut bytes = Vec::new();
    open(path)?
        .read_to_end(&mut bytes)
        .map_err(|e| fmt_err(path, e.to_string()))?;
    let width = match raw {
        RawType::F32 => 4,
        RawType::F64 => 8,
    };
    if bytes.len() % width != 0 {
        return Err(fmt_err(
            path,
            format!(
                "{} bytes is not a whole number of {}-byte samples; is the sample type right?",
                bytes.len(),
                width
            ),
        ));
    }
    Ok(bytes)
}

/// A real n-D array read for the DWT, with the precision it was stored in.
#[derive(Debug, Clone)]
pub struct RealArray {
    pub values: ndarray::ArrayD<f64>,
    /// The file held float32 samples.
    pub was_f32: bool,
    /// Bytes a value took in the file (1 for uint8, 8 for float64).
    pub stored_size: usize,
    /// Integers of the file that float64 cannot hold exactly (beyond
    /// 2^53), read rounded.
    pub inexact_integers: usize,
    /// What the reader assumed (`Signal::notes`).
    pub notes: Vec<String>,
}

/// A real n-D array: any .npy of floats or integers, or a 1-D signal from
/// .wav, .csv/.txt or raw samples. Complex data is refused (the DWT here is real).
pub fn read_real_array(path: &Path, options: &ReadOptions) -> Result<RealArray, IoError> {
    let is_npy = options.raw.is_none()
        && path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if is_npy {
        super::npy::check_npy_file(path)?;
        let real = |a: ndarray::ArrayD<f64>, was_f32: bool, inexact_integers| {
            Ok(RealArray {
                values: a,
                was_f32,
                stored_size: if was_f32 { 4 } else { 8 },
                inexact_integers,
                notes: Vec::new(),
            })
        };
        let complex = || {
            Err(fmt_err(path, "holds complex values, and this command takes real arrays: give the real and imaginary parts as two arrays (numpy's x.real and x.imag)"))
        };
        try_npy!(path, ndarray::ArrayD<f64>, |a| real(a, false, 0));
        try_npy!(path, ndarray::ArrayD<f32>, |a: ndarray::ArrayD<f32>| real(
            a.mapv(|v| v as f64),
            true,
            0
        ));
        macro_rules! ints {
            ($($t:ty),*) => {$(
                try_npy!(path, ndarray::ArrayD<$t>, |a: ndarray::ArrayD<$t>| {
                    let inexact = a.iter().filter(|&&v| (v as f64) as $t != v || v as f64 == <$t>::MAX as f64 && <$t>::BITS > 53).count();
                    Ok(RealArray {
                        values: a.mapv(|v| v as f64),
                        was_f32: false,
                        stored_size: std::mem::size_of::<$t>(),
                        inexact_integers: inexact,
                        notes: Vec::new(),
                    })
                });
            )*};
        }
        ints!(i8, i16, i32, i64, u8, u16, u32, u64);
        try_npy!(path, ndarray::ArrayD<Complex64>, |_| complex());
        try_npy!(path, ndarray::ArrayD<Complex32>, |_| complex());
        return Err(fmt_err(
            path,
            "unsupported dtype: expected floats or integers",
        ));
    }
    let s = read_signal(path, options)?;
    match s.samples {
        Samples::Real(v) => {
            let notes = s.notes;
            let n = v.len();
            let was_f32 = options.raw == Some(RawType::F32);
            Ok(RealArray {
                values: ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[n]), v)
                    .map_err(|e| fmt_err(path, e.to_string()))?,
                was_f32,
                stored_size: if was_f32 { 4 } else { 8 },
                inexact_integers: 0,
                notes,
            })
        }
        Samples::Complex(_) => Err(fmt_err(
            path,
            "holds complex values, and this command takes real arrays: give the real and imaginary parts as two arrays",
        )),
    }
}

/// Every array of an .npz, by name (without ".npy"), as f64; float32 arrays
/// are widened and reported.
/// Named arrays of an .npz, in file order.
pub type NamedArrays = Vec<(String, ndarray::ArrayD<f64>)>;

pub fn read_npz(path: &Path) -> Result<(NamedArrays, bool), IoError> {
    check_npz_members(path)?;
    let mut npz = ndarray_npy::NpzReader::new(open(path)?)
        .map_err(|e| fmt_err(path, format!("is not a readable .npz: {e}")))?;
    let names = npz
        .names()
        .map_err(|e| fmt_err(path, format!("is not a readable .npz: {e}")))?;
    let mut out = Vec::new();
    let mut any_f32 = false;
    for n in names {
        let key = n.trim_end_matches(".npy").to_string();
        let a = match npz.by_name::<ndarray::OwnedRepr<f64>, ndarray::IxDyn>(&n) {
            Ok(a) => a,
            Err(_) => match npz.by_name::<ndarray::OwnedRepr<f32>, ndarray::IxDyn>(&n) {
                Ok(a) => {
                    any_f32 = true;
                    a.mapv(|v| v as f64)
                }
                Err(e) => {
                    return Err(fmt_err(
                        path,
                        format!("array '{key}' is not float32 or float64: {e}"),
                    ))
                }
            },
        };
        out.push((key, a));
    }
    Ok((out, any_f32))
}

/// Deflate expands at most about 1032:1, so a member claiming more than
/// that over its compressed bytes is a forged size.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// Checks every .npz member's .npy header against the member's size and
/// against memory before ndarray-npy allocates what the header claims.
fn check_npz_members(path: &Path) -> Result<(), IoError> {
    let not_npz = |e: zip::result::ZipError| fmt_err(path, format!("is not a readable .npz: {e}"));
    let mut zip = zip::ZipArchive::new(open(path)?).map_err(not_npz)?;
    let mut memory = crate::memory::default_limit();
    for i in 0..zip.len() {
        let mut member = zip.by_index(i).map_err(not_npz)?;
        let name = member.name().to_string();
        let label = format!("{}: member '{name}'", path.display());
        let size = member.size();
        let most = member.compressed_size().saturating_mul(DEFLATE_MAX_RATIO);
        if member.compression() != zip::CompressionMethod::Stored && size > most {
            return Err(fmt_err(
                path,
                format!(
                    "member '{name}' claims {size} bytes from {} compressed: corrupt",
                    member.compressed_size()
                ),
            ));
        }
        let h = super::npy::parse_npy_header(&mut member, size, &label)?;
        super::npy::check_npy_claim(&h, &label, memory)?;
        // Every member is held at once.
        let n = h.len().unwrap_or(0) as u64;
        memory = memory.saturating_sub(n.saturating_mul(8));
    }
    Ok(())
}

/// The widest and tallest image read (a 32768^2 grey image is 1 GiB), and
/// the most the decoder may allocate for one: the header is checked
/// against them before any pixel is decoded.
const MAX_IMAGE_SIDE: u32 = 32768;
const MAX_IMAGE_BYTES: u64 = 4 << 30;

/// A grey image (.pgm/.pnm/.png; colour is converted to grey) as rows of
/// values 0-255: (height, width, values).
pub fn read_grey_image(path: &Path) -> Result<(usize, usize, Vec<f64>), IoError> {
    let bad = |e: image::ImageError| fmt_err(path, format!("not a readable image: {e}"));
    let mut reader = image::io::Reader::open(path)
        .map_err(|why| IoError::Open {
            path: path.display().to_string(),
            why,
        })?
        .with_guessed_format()
        .map_err(|e| fmt_err(path, format!("not a readable image: {e}")))?;
    let mut limits = image::io::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(MAX_IMAGE_BYTES);
    reader.limits(limits);
    let img = reader.decode().map_err(bad)?.into_luma8();
    let (w, h) = img.dimensions();
    Ok((
        h as usize,
        w as usize,
        img.pixels().map(|p| p.0[0] as f64).collect(),
    ))
}
