//! The DWT commands of the real `multires` binary: wavedec/waverec and
//! wavedecn/waverecn round trips, PyWavelets' file layout, bad input.
mod common;
use common::{fails_with, multires, ok};
use ndarray::{ArrayD, IxDyn};
use ndarray_npy::{read_npy, write_npy, NpzReader, NpzWriter};
use std::fs::File;

fn signal(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7919) % 101) as f64 / 50.0 - 1.0 + (i as f64 * 0.1).sin())
        .collect()
}

#[test]
fn wavedec_waverec_round_trip_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = ArrayD::from_shape_vec(IxDyn(&[1000]), signal(1000)).unwrap();
    write_npy(d.join("x.npy"), &x).unwrap();
    for alg in [
        "auto",
        "matrix",
        "matrix-nowrap",
        "lattice",
        "lattice-nowrap",
    ] {
        ok(&multires(
            d,
            &[
                "wavedec",
                "x.npy",
                "-o",
                "c.npz",
                "--wavelet",
                "db4",
                "--level",
                "5",
                "--mode",
                "periodization",
                "--algorithm",
                alg,
            ],
        ));
        let mut npz = NpzReader::new(File::open(d.join("c.npz")).unwrap()).unwrap();
        let mut names = npz.names().unwrap();
        names.sort();
        assert_eq!(
            names,
            ["arr_0", "arr_1", "arr_2", "arr_3", "arr_4", "arr_5"]
        );
        let a0: ArrayD<f64> = npz.by_name("arr_0").unwrap();
        let a5: ArrayD<f64> = npz.by_name("arr_5").unwrap();
        assert_eq!(
            (a0.len(), a5.len()),
            (32, 500),
            "arr_0 coarsest approximation, arr_5 finest detail"
        );
        ok(&multires(
            d,
            &[
                "waverec",
                "c.npz",
                "-o",
                "r.npy",
                "--wavelet",
                "db4",
                "--mode",
                "periodization",
                "--algorithm",
                alg,
            ],
        ));
        let r: ArrayD<f64> = read_npy(d.join("r.npy")).unwrap();
        let e = r
            .iter()
            .zip(x.iter())
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(e < 1e-12, "{alg}: {e}");
    }
    // float32 input stays float32.
    let x32 = x.mapv(|v| v as f32);
    write_npy(d.join("x32.npy"), &x32).unwrap();
    ok(&multires(
        d,
        &[
            "wavedec",
            "x32.npy",
            "-o",
            "c32.npz",
            "--wavelet",
            "haar",
            "--mode",
            "zero",
            "--algorithm",
            "lifting",
        ],
    ));
    let mut npz = NpzReader::new(File::open(d.join("c32.npz")).unwrap()).unwrap();
    let a: ArrayD<f32> = npz.by_name("arr_0").unwrap();
    assert_eq!(
        a.len(),
        2,
        "default level is dwt_max_level: 1000 samples, haar -> 9 levels, 2 coefficients"
    );
    // --plot draws the levels; the PNG is a real image of the stated size.
    ok(&multires(
        d,
        &[
            "wavedec",
            "x.npy",
            "-o",
            "p.npz",
            "--wavelet",
            "sym4",
            "--level",
            "6",
            "--plot",
            "levels.png",
        ],
    ));
    let img = image::open(d.join("levels.png")).unwrap().to_rgb8();
    assert_eq!(img.width(), 1200);
    let distinct: std::collections::HashSet<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    assert!(
        distinct.len() > 50,
        "the plot should show a colormap, got {} colours",
        distinct.len()
    );
    // A level above the maximum is computed with a warning.
    let o = multires(
        d,
        &[
            "wavedec",
            "x.npy",
            "-o",
            "deep.npz",
            "--wavelet",
            "db4",
            "--level",
            "12",
        ],
    );
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("above dwt_max_level"));
}

#[test]
fn wavedecn_waverecn_round_trip_and_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let img = ArrayD::from_shape_vec(IxDyn(&[40, 24]), signal(960)).unwrap();
    write_npy(d.join("img.npy"), &img).unwrap();
    ok(&multires(
        d,
        &[
            "wavedecn",
            "img.npy",
            "-o",
            "c.npz",
            "--wavelet",
            "haar",
            "--level",
            "2",
            "--mode",
            "periodization",
            "--axes",
            "0,1",
        ],
    ));
    let mut npz = NpzReader::new(File::open(d.join("c.npz")).unwrap()).unwrap();
    let mut names = npz.names().unwrap();
    names.sort();
    assert_eq!(
        names,
        ["arr_0", "d1_ad", "d1_da", "d1_dd", "d2_ad", "d2_da", "d2_dd"]
    );
    let a: ArrayD<f64> = npz.by_name("arr_0").unwrap();
    assert_eq!(a.shape(), &[10, 6]);
    ok(&multires(
        d,
        &[
            "waverecn",
            "c.npz",
            "-o",
            "r.npy",
            "--wavelet",
            "haar",
            "--mode",
            "periodization",
            "--axes",
            "0,1",
        ],
    ));
    let r: ArrayD<f64> = read_npy(d.join("r.npy")).unwrap();
    assert_eq!(r.shape(), img.shape());
    let e = r
        .iter()
        .zip(img.iter())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(e < 1e-12);
    // One axis of a 3-D volume.
    let vol = ArrayD::from_shape_vec(IxDyn(&[6, 5, 9]), signal(270)).unwrap();
    write_npy(d.join("vol.npy"), &vol).unwrap();
    ok(&multires(
        d,
        &[
            "wavedecn",
            "vol.npy",
            "-o",
            "v.npz",
            "--wavelet",
            "sym3",
            "--level",
            "1",
            "--axes",
            "-1",
        ],
    ));
    ok(&multires(
        d,
        &[
            "waverecn",
            "v.npz",
            "-o",
            "vr.npy",
            "--wavelet",
            "sym3",
            "--axes",
            "-1",
        ],
    ));
}

#[test]
fn dwt_bad_input_gives_clear_errors_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = ArrayD::from_shape_vec(IxDyn(&[64]), signal(64)).unwrap();
    write_npy(d.join("x.npy"), &x).unwrap();
    fails_with(
        &multires(d, &["wavedec", "x.npy", "-o", "c.npz", "--wavelet", "db99"]),
        "unknown discrete wavelet 'db99'",
    );
    fails_with(
        &multires(
            d,
            &[
                "wavedec",
                "x.npy",
                "-o",
                "c.npz",
                "--wavelet",
                "db2",
                "--mode",
                "mirror",
            ],
        ),
        "unknown mode 'mirror'",
    );
    fails_with(
        &multires(
            d,
            &[
                "wavedec",
                "x.npy",
                "-o",
                "c.npz",
                "--wavelet",
                "bior2.2",
                "--algorithm",
                "lattice",
            ],
        ),
        "orthogonal",
    );
    let mut bad = x.clone();
    bad[3] = f64::NAN;
    write_npy(d.join("nan.npy"), &bad).unwrap();
    fails_with(
        &multires(
            d,
            &["wavedec", "nan.npy", "-o", "c.npz", "--wavelet", "db2"],
        ),
        "not finite",
    );
    ok(&multires(
        d,
        &[
            "wavedec",
            "nan.npy",
            "-o",
            "c.npz",
            "--wavelet",
            "db2",
            "--allow-nonfinite",
        ],
    ));
    std::fs::write(d.join("junk.npz"), b"not a zip").unwrap();
    fails_with(
        &multires(
            d,
            &["waverec", "junk.npz", "-o", "r.npy", "--wavelet", "db2"],
        ),
        "junk.npz",
    );
    // Mismatched coefficient lengths.
    let mut w = NpzWriter::new(File::create(d.join("mis.npz")).unwrap());
    w.add_array("arr_0", &ndarray::Array1::<f64>::zeros(9))
        .unwrap();
    w.add_array("arr_1", &ndarray::Array1::<f64>::zeros(4))
        .unwrap();
    w.finish().unwrap();
    fails_with(
        &multires(
            d,
            &["waverec", "mis.npz", "-o", "r.npy", "--wavelet", "db2"],
        ),
        "approximation",
    );
    let mut w = NpzWriter::new(File::create(d.join("gap.npz")).unwrap());
    w.add_array("arr_0", &ndarray::Array1::<f64>::zeros(9))
        .unwrap();
    w.add_array("arr_2", &ndarray::Array1::<f64>::zeros(9))
        .unwrap();
    w.finish().unwrap();
    fails_with(
        &multires(
            d,
            &["waverec", "gap.npz", "-o", "r.npy", "--wavelet", "db2"],
        ),
        "none missing",
    );
    fails_with(
        &multires(
            d,
            &[
                "wavedec",
                "x.npy",
                "-o",
                "c.npz",
                "--wavelet",
                "db2",
                "--device",
                "cuda",
            ],
        ),
        "CUDA",
    );
    // A memory limit that is not a size is refused with an example of one.
    for bad in ["banana", "0", "-5MiB"] {
        let arg = format!("--gpu-mem-limit={bad}");
        fails_with(
            &multires(
                d,
                &["wavedec", "x.npy", "-o", "m.npz", "--wavelet", "db2", &arg],
            ),
            "512MiB",
        );
    }
    if std::env::var_os("MULTIRES_REQUIRE_GPU").is_none() && multires_has_no_gpu() {
        fails_with(
            &multires(
                d,
                &[
                    "wavedecn",
                    "x.npy",
                    "-o",
                    "n.npz",
                    "--wavelet",
                    "db2",
                    "--device",
                    "cuda",
                ],
            ),
            "--device cuda",
        );
        assert!(
            !d.join("n.npz").exists(),
            "partial output n.npz left behind"
        );
    }
    for f in ["c.npz", "r.npy"] {
        // c.npz exists from the --allow-nonfinite run only; r.npy never.
        if f == "r.npy" {
            assert!(!d.join(f).exists(), "partial output {f} left behind");
        }
    }
    let listing = multires(d, &["wavelets"]);
    ok(&listing);
    let text = String::from_utf8_lossy(&listing.stdout);
    for name in [
        "db38", "sym20", "coif17", "bior6.8", "rbio3.9", "dmey", "haar",
    ] {
        assert!(text.contains(name), "wavelets lacks {name}");
    }
}

/// CI and the development machine have no GPU; where one is, the CUDA error
/// cases above do not apply.
fn multires_has_no_gpu() -> bool {
    !std::path::Path::new("/dev/nvidia0").exists()
}
