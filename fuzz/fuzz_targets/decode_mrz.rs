//! Any bytes given to the .mrz reader and decoder: an error or a field,
//! never a panic, a hang or an allocation the file cannot justify.
//!
//!     cd fuzz && mkdir -p corpus/decode_mrz
//!     cargo +nightly fuzz run decode_mrz corpus/decode_mrz seeds -- -max_total_time=600
#![no_main]
use libfuzzer_sys::fuzz_target;
use multires::codec::{decompress, parse_region, MrzReader};

fuzz_target!(|data: &[u8]| {
    let Ok(mut r) = MrzReader::from_bytes(data.to_vec(), "fuzz") else {
        return;
    };
    let h = r.header().clone();
    // Keep each input cheap: the decoder allocates the field it decodes.
    if h.dims.iter().product::<usize>() > 1 << 22 {
        return;
    }
    let _ = decompress(&mut r, None, &|_| {});
    let shape = h.shape();
    let spec: Vec<String> = shape
        .iter()
        .map(|&n| format!("0:{}", n.div_ceil(2)))
        .collect();
    if let Ok(reg) = parse_region(&spec.join(","), &shape) {
        let _ = decompress(&mut r, Some(reg), &|_| {});
    }
});
