//! Running the real `multires` binary from the CLI tests.
#![allow(dead_code)]
use std::path::Path;
use std::process::{Command, Output};

pub fn multires(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_multires"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run multires")
}

pub fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn fails_with(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "should have failed (wanted an error with '{needle}'): {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(err.contains(needle), "stderr lacks '{needle}': {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
}
