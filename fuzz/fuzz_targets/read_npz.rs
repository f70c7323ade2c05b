//! Any bytes as an .npz of coefficients (waverec, waverecn).
//!
//!     cargo +nightly fuzz run read_npz corpus/read_npz seeds/npz -- -max_total_time=600
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let p = common::file_with("npz", data);
    let _ = multires::io::read_npz(&p);
});
