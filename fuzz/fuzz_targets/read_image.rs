//! Any bytes as a grey image (.pgm, .png), as `compress` reads them.
//!
//!     cargo +nightly fuzz run read_image corpus/read_image seeds/image -- -max_total_time=600
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for ext in ["pgm", "png"] {
        let p = common::file_with(ext, data);
        let _ = multires::io::read_grey_image(&p);
    }
});
