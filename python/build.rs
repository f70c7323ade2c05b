//! Builds the HDF5 filter plugin (crates/multires-hdf5, a C shared library
//! HDF5 loads on its own, which the Python extension cannot be) and puts
//! it into the package (multires/hdf5_plugin/), so that `pip install`
//! ships it. A nested cargo in its own target directory: the outer build
//! holds the workspace's.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let here =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = here
        .parent()
        .expect("python/ lies in the workspace")
        .to_path_buf();
    for p in [
        "crates/multires-hdf5/src",
        "crates/multires-hdf5/Cargo.toml",
        "crates/multires/src",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // target/<profile>/build/<pkg>/out -> target/
    let target = out
        .ancestors()
        .nth(4)
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| root.join("target"));
    let plugin_target = target.join("hdf5-plugin");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "-p",
            "multires-hdf5",
            "--lib",
            "--target-dir",
        ])
        .arg(&plugin_target)
        .current_dir(&root)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_MAKEFLAGS")
        // Under `cargo clippy` the outer build runs clippy-driver; the
        // plugin is linted as a workspace member, not here.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("RUSTC_WRAPPER")
        .status()
        .expect("running cargo for the HDF5 plugin");
    assert!(
        status.success(),
        "building the HDF5 filter plugin (crates/multires-hdf5) failed"
    );
    let lib = plugin_target.join("release").join("libh5multires.so");
    let dest = here.join("multires").join("hdf5_plugin");
    std::fs::create_dir_all(&dest).expect("making multires/hdf5_plugin");
    std::fs::copy(&lib, dest.join("libh5multires.so"))
        .expect("copying libh5multires.so into the package");
}
