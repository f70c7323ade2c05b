//! A signal read a chunk at a time, for inputs larger than memory: .npy and
//! raw files are memory-mapped (their pages are the page cache's, read as
//! the chunks pass), WAV files are decoded as they are read. Text files
//! and integer .npy files are small in practice and read whole.

use super::npy::{read_npy_header, MappedValues, NpyHeader};
use super::{read_signal, IoError, RawType, ReadOptions};
use crate::signal::{Samples, Signal};
use num_complex::{Complex32, Complex64};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

enum Source {
    F32(MappedValues<f32>),
    F64(MappedValues<f64>),
    C64(MappedValues<Complex32>),
    C128(MappedValues<Complex64>),
    Wav {
        reader: Box<hound::WavReader<BufReader<File>>>,
        channels: usize,
        channel: usize,
        /// None: float samples; Some(full scale) of integer ones.
        full: Option<f64>,
    },
    Whole(Signal),
}

/// The samples of one input file, in order, a chunk at a time.
pub struct SignalChunks {
    source: Source,
    len: usize,
    at: usize,
    complex: bool,
    sample_rate: Option<f64>,
    path: String,
}

fn fmt_err(path: &Path, why: impl Into<String>) -> IoError {
    IoError::Format {
        path: path.display().to_string(),
        why: why.into(),
    }
}

/// A 1-D signal's length from an .npy shape: (n,), (1, n) or (n, 1).
fn vector_len(path: &Path, h: &NpyHeader) -> Result<usize, IoError> {
    let non_unit = h.shape.iter().filter(|&&d| d != 1).count();
    if h.shape.len() > 2 || non_unit > 1 {
        return Err(fmt_err(
            path,
            format!("expected a 1-D signal, got an array of shape {:?}", h.shape),
        ));
    }
    h.len()
        .ok_or_else(|| fmt_err(path, format!("shape {:?} is too large", h.shape)))
}

impl SignalChunks {
    /// Opens `path` as `read_signal` would read it.
    pub fn open(path: &Path, options: &ReadOptions) -> Result<Self, IoError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let raw = options.raw.or(match ext.as_str() {
            "f32" => Some(RawType::F32),
            "f64" | "raw" => Some(RawType::F64),
            _ => None,
        });
        let name = path.display().to_string();
        let whole = |path: &Path| -> Result<Self, IoError> {
            let s = read_signal(path, options)?;
            Ok(SignalChunks {
                len: s.len(),
                at: 0,
                complex: s.is_complex(),
                sample_rate: s.sample_rate,
                source: Source::Whole(s),
                path: name.clone(),
            })
        };
        let mapped = |h: NpyHeader, len: usize| -> Result<Option<Self>, IoError> {
            let (source, complex) = match h.descr.as_str() {
                "<f4" | "=f4" => (MappedValues::open(path, &h)?.map(Source::F32), false),
                "<f8" | "=f8" => (MappedValues::open(path, &h)?.map(Source::F64), false),
                "<c8" | "=c8" => (MappedValues::open(path, &h)?.map(Source::C64), true),
                "<c16" | "=c16" => (MappedValues::open(path, &h)?.map(Source::C128), true),
                _ => (None, false),
            };
            Ok(source.map(|source| SignalChunks {
                source,
                len,
                at: 0,
                complex,
                sample_rate: None,
                path: name.clone(),
            }))
        };
        if let Some(raw) = raw {
            let file_len = std::fs::metadata(path)
                .map_err(|why| IoError::Open {
                    path: name.clone(),
                    why,
                })?
                .len();
            let (descr, width) = match raw {
                RawType::F32 => ("<f4", 4),
                RawType::F64 => ("<f8", 8),
            };
            if file_len % width != 0 {
                return Err(fmt_err(
                    path,
                    format!("{file_len} bytes is not a whole number of {width}-byte samples; is the sample type right?"),
                ));
            }
            let len = (file_len / width) as usize;
            let h = NpyHeader {
                descr: descr.into(),
                fortran_order: false,
                shape: vec![len],
                data_offset: 0,
                file_len,
            };
            return match mapped(h, len)? {
                Some(s) => Ok(s),
                None => whole(path),
            };
        }
        match ext.as_str() {
            "npy" => {
                let h = read_npy_header(path)?;
                let len = vector_len(path, &h)?;
                // (1, n) and (n, 1) hold their values in order either way.
                if h.fortran_order && h.shape.len() > 1 && h.shape.iter().all(|&d| d != 1) {
                    return whole(path);
                }
                match mapped(h, len)? {
                    Some(s) => Ok(s),
                    None => whole(path),
                }
            }
            "wav" => {
                // The header checks of the whole reader, then a decoder of our own.
                let reader = hound::WavReader::open(path)
                    .map_err(|e| fmt_err(path, format!("not a readable WAV file: {e}")))?;
                let spec = reader.spec();
                if spec.sample_rate == 0 || spec.channels == 0 {
                    return whole(path);
                }
                let channels = spec.channels as usize;
                if options.channel >= channels {
                    return Err(fmt_err(
                        path,
                        format!(
                            "channel {} requested but the file has {channels} channel(s) (0-based)",
                            options.channel
                        ),
                    ));
                }
                let full = match spec.sample_format {
                    hound::SampleFormat::Float => None,
                    hound::SampleFormat::Int if (1..=32).contains(&spec.bits_per_sample) => {
                        Some((1u64 << (spec.bits_per_sample - 1)) as f64)
                    }
                    hound::SampleFormat::Int => return whole(path),
                };
                let len = reader.duration() as usize;
                Ok(SignalChunks {
                    source: Source::Wav {
                        reader: Box::new(reader),
                        channels,
                        channel: options.channel,
                        full,
                    },
                    len,
                    at: 0,
                    complex: false,
                    sample_rate: Some(spec.sample_rate as f64),
                    path: name,
                })
            }
            _ => whole(path),
        }
    }

    /// Samples in the file.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_complex(&self) -> bool {
        self.complex
    }

    /// From the file (WAV), when it says.
    pub fn sample_rate(&self) -> Option<f64> {
        self.sample_rate
    }

    /// Samples read so far.
    pub fn position(&self) -> usize {
        self.at
    }

    /// The next at most `max` samples; None at the end.
    pub fn next_chunk(&mut self, max: usize) -> Result<Option<Signal>, IoError> {
        let take = max.max(1).min(self.len - self.at);
        if take == 0 {
            return Ok(None);
        }
        let (lo, hi) = (self.at, self.at + take);
        let signal = match &mut self.source {
            Source::F32(m) => Signal::real(m.values()[lo..hi].iter().map(|&v| v as f64).collect()),
            Source::F64(m) => Signal::real(m.values()[lo..hi].to_vec()),
            Source::C64(m) => Signal::complex(
                m.values()[lo..hi]
                    .iter()
                    .map(|c| Complex64::new(c.re as f64, c.im as f64))
                    .collect(),
            ),
            Source::C128(m) => Signal::complex(m.values()[lo..hi].to_vec()),
            Source::Whole(s) => match &s.samples {
                Samples::Real(v) => Signal::real(v[lo..hi].to_vec()),
                Samples::Complex(v) => Signal::complex(v[lo..hi].to_vec()),
            },
            Source::Wav {
                reader,
                channels,
                channel,
                full,
            } => {
                let path = &self.path;
                let bad = |e: hound::Error| IoError::Format {
                    path: path.clone(),
                    why: format!("corrupt WAV data: {e}"),
                };
                let frames = take * *channels;
                let mut v = Vec::with_capacity(take);
                match full {
                    None => {
                        for (i, s) in reader.samples::<f32>().take(frames).enumerate() {
                            let s = s.map_err(bad)?;
                            if i % *channels == *channel {
                                v.push(s as f64);
                            }
                        }
                    }
                    Some(full) => {
                        for (i, s) in reader.samples::<i32>().take(frames).enumerate() {
                            let s = s.map_err(bad)?;
                            if i % *channels == *channel {
                                v.push(s as f64 / *full);
                            }
                        }
                    }
                }
                if v.len() != take {
                    return Err(IoError::Format {
                        path: path.clone(),
                        why: format!(
                            "the header says {} samples a channel but the data end after {}",
                            self.len,
                            lo + v.len()
                        ),
                    });
                }
                Signal::real(v)
            }
        };
        self.at = hi;
        Ok(Some(signal))
    }
}
