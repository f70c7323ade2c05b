//! The readers take paths, as the CLI gives them: each input is written to
//! a file of this process first (tmpfs where /tmp is one).
use std::path::PathBuf;

pub fn file_with(ext: &str, data: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("multires-fuzz-{}.{ext}", std::process::id()));
    std::fs::write(&p, data).expect("write the fuzz input");
    p
}
