//! Readers and writers: .npy (f32/f64/complex, integers), .wav, .csv/.txt,
//! raw little-endian f32/f64 in; .npy/.npz out. Writes go to a temporary file
//! beside the target and are renamed into place only when complete, so an
//! error never leaves a half-written output behind.

mod chunks;
mod npy;
mod read;
mod write;

pub use chunks::SignalChunks;
pub use npy::{
    check_f32_npy, check_npy_file, read_f32_npy_at, read_f32_npy_vec, read_npy_header,
    write_f32_npy, write_npy_mapped, MappedF32, MappedValues, NpyHeader,
};

pub use read::{
    read_grey_image, read_matrix, read_npz, read_raw_f32, read_real_array, read_signal, Matrix,
    RawType, ReadOptions, RealArray,
};
pub use write::{
    remove_pending_outputs, write_atomic, write_npy, write_npz, write_png, Float16Bits, HalfArray,
    NpyArray,
};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IoError {
    /// The reason is in the message, not a source, so that a chain of
    /// errors names it once.
    #[error("cannot read '{path}': {why}")]
    Open { path: String, why: std::io::Error },
    #[error("'{path}': {why}")]
    Format { path: String, why: String },
    #[error("'{path}' has an extension multires cannot read ({ext}); use .npy, .wav, .csv, .txt, or --raw f32|f64 for raw little-endian samples")]
    UnknownExtension { path: String, ext: String },
    #[error("cannot write '{path}': {why}")]
    Write { path: String, why: String },
}
