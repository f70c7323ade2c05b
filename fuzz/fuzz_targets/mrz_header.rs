//! Any bytes as an .mrz's header and brick index alone (`multires info`,
//! and what every decoder reads first): read and checked against the file,
//! brick sizes listed, the first brick read and verified.
//!
//!     cargo +nightly fuzz run mrz_header corpus/mrz_header seeds -- -max_total_time=600
#![no_main]
use libfuzzer_sys::fuzz_target;
use multires::codec::MrzReader;

fuzz_target!(|data: &[u8]| {
    let Ok(r) = MrzReader::from_bytes(data.to_vec(), "fuzz") else {
        return;
    };
    let h = r.header();
    let _ = (
        h.shape(),
        h.raw_bytes(),
        r.grid().len(),
        r.version(),
        r.file_len(),
    );
    let _ = r.brick_sizes();
    let _ = r.read_brick(0);
});
