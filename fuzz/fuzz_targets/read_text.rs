//! Any bytes as a .csv or .txt column, first and second column.
//!
//!     cargo +nightly fuzz run read_text corpus/read_text seeds/text -- -max_total_time=600
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use multires::io::{read_signal, ReadOptions};

fuzz_target!(|data: &[u8]| {
    for ext in ["csv", "txt"] {
        let p = common::file_with(ext, data);
        for channel in [0, 1] {
            let _ = read_signal(&p, &ReadOptions { raw: None, channel });
        }
    }
});
