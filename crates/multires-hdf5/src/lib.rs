//! The codec as an HDF5 filter plugin: each chunk of a chunked dataset is
//! one .mrz stream. HDF5 finds the library in HDF5_PLUGIN_PATH (or a path
//! h5py adds) and calls `H5PLget_plugin_info`; the library links no HDF5:
//! the few functions `set_local` needs are looked up in the HDF5 already
//! loaded into the process (h5py's own copy or the system's), so one .so
//! serves both.
//!
//! `cd_values` (what h5py's `compression_opts` or `h5repack -f UD=...`
//! gives, then what `set_local` adds):
//!
//! ```text
//! [0] layout 1 | [1] bound: 0 abs, 1 rel, 2 psnr, 3 lossless |
//! [2], [3] the bound as f64 bits, low word first | [4] transform:
//! 0 haar, 1 cdf53, 2 cdf97, 3 interp | set_local: [5] element type
//! (0 f32, 1 f64, 2 u8, 3 u16, 4 i16, 5 i32) | [6] chunk axes | [7..] chunk
//! ```
//!
//! With no values the filter codes at rel 1e-3 by interpolation. A
//! relative bound is relative to each chunk's own range.

mod chunk;
mod hdf5;

pub use chunk::{decode_chunk, encode_chunk, ChunkError, ChunkSpec, LAYOUT};

/// The filter's ID, in HDF5's range for testing (256-511) until one is
/// registered with The HDF Group.
pub const FILTER_ID: i32 = 333;
