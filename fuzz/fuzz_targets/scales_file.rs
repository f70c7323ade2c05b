//! Any bytes as a --scales-file (.npy or .txt): scales are made of what
//! it holds, or it is refused; never a panic or a huge allocation.
//!
//!     cargo +nightly fuzz run scales_file corpus/scales_file seeds/npy -- -max_total_time=600
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use multires::io::{read_signal, ReadOptions};
use multires::{ScaleSpec, Wavelet};

fuzz_target!(|data: &[u8]| {
    let Ok(w) = Wavelet::from_name("morl") else {
        return;
    };
    for ext in ["npy", "txt"] {
        let p = common::file_with(ext, data);
        if let Ok(s) = read_signal(&p, &ReadOptions::default()) {
            let list = s.to_complex().iter().map(|c| c.re).collect();
            let _ = ScaleSpec::List(list).scales(&w);
        }
    }
});
