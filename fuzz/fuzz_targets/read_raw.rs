//! Any bytes as raw little-endian float32 or float64 samples with a shape
//! taken from the first bytes (`--raw f32|f64 --shape Z,Y,X`): the readers
//! and the codec's volume must agree on the count, or refuse it.
//!
//!     cargo +nightly fuzz run read_raw corpus/read_raw -- -max_total_time=600
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use multires::codec::{Values, Volume};
use multires::io::{read_raw_f32, read_signal, RawType, ReadOptions};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let shape: Vec<usize> = data[..3]
        .iter()
        .map(|&b| b as usize)
        .filter(|&d| d > 0)
        .collect();
    let p = common::file_with("raw", &data[3..]);
    if let Ok(v) = read_raw_f32(&p) {
        let _ = Volume::of(&shape, Values::F32(v));
    }
    let opts = ReadOptions {
        raw: Some(RawType::F64),
        channel: 0,
    };
    if let Ok(s) = read_signal(&p, &opts) {
        let v = s.to_complex().iter().map(|c| c.re).collect();
        let _ = Volume::of(&shape, Values::F64(v));
    }
});
