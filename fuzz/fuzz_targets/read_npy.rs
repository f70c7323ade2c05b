//! Any bytes as an .npy (header and data) through every .npy reader: the
//! signal reader (cwt, fir), the matrix reader (--filters), the n-D reader
//! (wavedec), the header reader and the float32 reader of the codec.
//!
//!     cargo +nightly fuzz run read_npy corpus/read_npy seeds/npy -- -max_total_time=600
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use multires::io;

fuzz_target!(|data: &[u8]| {
    let p = common::file_with("npy", data);
    let _ = io::read_signal(&p, &io::ReadOptions::default());
    let _ = io::read_matrix(&p);
    let _ = io::read_real_array(&p, &io::ReadOptions::default());
    if let Ok(h) = io::read_npy_header(&p) {
        let _ = io::check_f32_npy(&p, &h);
    }
    let _ = io::read_f32_npy_vec(&p);
});
