//! Any bytes as a user wavelet file (`--wavelet user:F.npy`), with a
//! half-support chosen by the length (so that the seeds stay whole .npy
//! files): sampled into the masks of a small plan, or refused.
//!
//!     cargo +nightly fuzz run user_wavelet corpus/user_wavelet seeds/npy -- -max_total_time=600
#![no_main]
mod common;
use libfuzzer_sys::fuzz_target;
use multires::{CwtOptions, CwtPlan, Scale, Wavelet};

fuzz_target!(|data: &[u8]| {
    let p = common::file_with("npy", data);
    let support = [0.0, 0.5, 3.0, 8.0, 1e9, f64::NAN][data.len() % 6];
    if let Ok(w) = Wavelet::from_user_file(&p, support) {
        let o = CwtOptions::new(w, vec![Scale::new(1.0), Scale::new(3.5)]);
        let _ = CwtPlan::new(o, 64, false);
    }
});
