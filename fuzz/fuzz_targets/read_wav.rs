//! Any bytes as a .wav, channel 0 and 1 (cwt, fir, wavedec inputs).
//!
//!     cargo +nightly fuzz run read_wav corpus/read_wav seeds/wav -- -max_total_time=600
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use multires::io::{read_signal, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let p = common::file_with("wav", data);
    for channel in [0, 1] {
        let _ = read_signal(&p, &ReadOptions { raw: None, channel });
    }
});
