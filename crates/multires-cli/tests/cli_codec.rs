//! The codec from the command line: compress / decompress / info /
//! make-field, the bound on every value, regions, the seed's table on a
//! real image, and clear errors that leave no output behind.
mod common;
use common::{fails_with, multires, ok};
use ndarray::ArrayD;
use ndarray_npy::{read_npy, write_npy};

fn rocket() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/rocket.pgm")
}

#[test]
fn compress_decompress_info_and_regions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&multires(
        d,
        &[
            "make-field",
            "--kind",
            "turbulent",
            "--size",
            "40",
            "-o",
            "t.npy",
        ],
    ));
    let x: ArrayD<f32> = read_npy(d.join("t.npy")).unwrap();
    assert_eq!(x.shape(), &[40, 40, 40]);
    let (lo, hi) = x
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    for (bound, tr) in [
        ("rel:1e-3", "cdf97"),
        ("abs:0.05", "haar"),
        ("psnr:70", "cdf53"),
    ] {
        ok(&multires(
            d,
            &[
                "compress",
                "t.npy",
                "-o",
                "t.mrz",
                "--error-bound",
                bound,
                "--transform",
                tr,
                "--brick",
                "16",
            ],
        ));
        ok(&multires(d, &["decompress", "t.mrz", "-o", "back.npy"]));
        let y: ArrayD<f32> = read_npy(d.join("back.npy")).unwrap();
        assert_eq!(y.shape(), x.shape());
        let e = match bound {
            "rel:1e-3" => 1e-3 * (hi - lo) as f64,
            "abs:0.05" => 0.05,
            _ => (hi - lo) as f64 * 10f64.powf(-70.0 / 20.0),
        };
        let m = x
            .iter()
            .zip(y.iter())
            .map(|(a, b)| (a - b).abs() as f64)
            .fold(0.0, f64::max);
        assert!(m <= e, "{bound} {tr}: max error {m} over {e}");
        let info = multires(d, &["info", "t.mrz"]);
        ok(&info);
        let text = String::from_utf8_lossy(&info.stdout);
        assert!(text.contains("[40, 40, 40] float32"), "{text}");
        assert!(
            text.contains(tr) && text.contains("bricks:     27"),
            "{text}"
        );
    }
    // A region equals the crop of the full decode.
    ok(&multires(
        d,
        &[
            "decompress",
            "t.mrz",
            "-o",
            "part.npy",
            "--region",
            "5:21,0:40,30:",
        ],
    ));
    let full: ArrayD<f32> = read_npy(d.join("back.npy")).unwrap();
    let part: ArrayD<f32> = read_npy(d.join("part.npy")).unwrap();
    assert_eq!(part.shape(), &[16, 40, 10]);
    for z in 0..16 {
        for y in 0..40 {
            for x in 0..10 {
                assert_eq!(part[[z, y, x]], full[[z + 5, y, x + 30]]);
            }
        }
    }
}

#[test]
fn float64_and_raw_inputs_and_images() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = ArrayD::from_shape_fn(vec![33, 50], |i| {
        ((i[0] * 50 + i[1]) as f64 * 0.37).sin() * 1e3
    });
    write_npy(d.join("x.npy"), &x).unwrap();
    ok(&multires(
        d,
        &[
            "compress",
            "x.npy",
            "-o",
            "x.mrz",
            "--error-bound",
            "abs:1e-6",
        ],
    ));
    ok(&multires(d, &["decompress", "x.mrz", "-o", "y.npy"]));
    let y: ArrayD<f64> = read_npy(d.join("y.npy")).unwrap();
    let m = x
        .iter()
        .zip(y.iter())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(m <= 1e-6, "{m}");
    // Coded where it lies (mapped, above), as raw float64, and as read
    // into memory (which --plot asks for): the same file.
    let raw64: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(d.join("x.raw"), raw64).unwrap();
    let bound = ["--error-bound", "abs:1e-6"];
    let raw_args = [
        "compress", "x.raw", "--raw", "f64", "--shape", "33,50", "-o", "xr.mrz",
    ];
    ok(&multires(d, &[&raw_args[..], &bound].concat()));
    let plot_args = ["compress", "x.npy", "-o", "xp.mrz", "--plot", "xp.png"];
    ok(&multires(d, &[&plot_args[..], &bound].concat()));
    // A 3-D field with --plot is refused before anything is coded or
    // written.
    let cube = ArrayD::from_shape_fn(vec![6, 7, 8], |i| (i[0] + i[1] * i[2]) as f32);
    write_npy(d.join("cube.npy"), &cube).unwrap();
    let cube_args = ["compress", "cube.npy", "-o", "cube.mrz", "--plot", "c.png"];
    fails_with(
        &multires(d, &cube_args),
        "draws 2-D fields, and cube.npy is 3-D",
    );
    assert!(!d.join("cube.mrz").exists() && !d.join("c.png").exists());
    let x_mrz = std::fs::read(d.join("x.mrz")).unwrap();
    assert_eq!(
        x_mrz,
        std::fs::read(d.join("xr.mrz")).unwrap(),
        "raw float64"
    );
    assert_eq!(
        x_mrz,
        std::fs::read(d.join("xp.mrz")).unwrap(),
        "read, not mapped"
    );
    // Raw float32 with --shape.
    let raw: Vec<u8> = (0..6 * 7 * 8)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    std::fs::write(d.join("v.raw"), raw).unwrap();
    ok(&multires(
        d,
        &[
            "compress",
            "v.raw",
            "--raw",
            "f32",
            "--shape",
            "6,7,8",
            "-o",
            "v.mrz",
            "--error-bound",
            "abs:0.01",
        ],
    ));
    // The same values as a float32 .npy give the same file, and both
    // decode to float32.
    let v32 = ArrayD::from_shape_fn(vec![6, 7, 8], |i| {
        ((i[0] * 7 + i[1]) * 8 + i[2]) as f32 * 0.5
    });
    write_npy(d.join("v.npy"), &v32).unwrap();
    ok(&multires(
        d,
        &[
            "compress",
            "v.npy",
            "-o",
            "v2.mrz",
            "--error-bound",
            "abs:0.01",
        ],
    ));
    assert_eq!(
        std::fs::read(d.join("v.mrz")).unwrap(),
        std::fs::read(d.join("v2.mrz")).unwrap(),
        "raw float32 and .npy float32 give different files"
    );
    ok(&multires(d, &["decompress", "v.mrz", "-o", "v.back.npy"]));
    let back: ArrayD<f32> = read_npy(d.join("v.back.npy")).unwrap();
    assert_eq!(back.shape(), &[6, 7, 8]);
    assert!(back
        .iter()
        .zip(v32.iter())
        .all(|(a, b)| (a - b).abs() <= 0.01));
    fails_with(
        &multires(
            d,
            &[
                "compress", "v.raw", "--raw", "f32", "--shape", "6,7,9", "-o", "w.mrz",
            ],
        ),
        "--shape",
    );
    assert!(!d.join("w.mrz").exists());
    // A real image: compress with a plot, decode to PNG.
    let img = rocket();
    let img = img.to_str().unwrap();
    ok(&multires(
        d,
        &[
            "compress",
            img,
            "-o",
            "r.mrz",
            "--error-bound",
            "abs:2",
            "--plot",
            "r.png",
        ],
    ));
    ok(&multires(d, &["decompress", "r.mrz", "-o", "r_back.png"]));
    let back = image::open(d.join("r_back.png")).unwrap().into_luma8();
    assert_eq!(back.dimensions(), (640, 427));
    // Three titled panels (original, decoded, error) and two colour bars.
    let plot = image::open(d.join("r.png")).unwrap();
    assert!(
        plot.width() > 3 * 480 && plot.height() > 300,
        "{:?}",
        (plot.width(), plot.height())
    );
    // The seed's experiment prints its table.
    let o = multires(
        d,
        &[
            "compress",
            img,
            "--seed-thresholds",
            "100",
            "--seed-sizes",
            "256,512",
        ],
    );
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("| 256 x 256 |") && text.contains("| 512 x 512 |"),
        "{text}"
    );
}

#[test]
fn bad_inputs_give_clear_errors_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = ArrayD::from_shape_fn(vec![8, 8], |i| (i[0] + i[1]) as f32);
    write_npy(d.join("x.npy"), &x).unwrap();
    let five = ArrayD::from_shape_fn(vec![2, 2, 2, 2, 2], |i| i[0] as f32);
    write_npy(d.join("five.npy"), &five).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["compress", "x.npy", "-o", "o.mrz", "--error-bound", "abs"],
            "abs:E",
        ),
        (
            &[
                "compress",
                "x.npy",
                "-o",
                "o.mrz",
                "--error-bound",
                "abs:-1",
            ],
            "not negative",
        ),
        (
            &["compress", "x.npy", "-o", "o.mrz", "--transform", "db4"],
            "cdf97",
        ),
        (&["compress", "five.npy", "-o", "o.mrz"], "1 to 4 axes"),
        (&["compress", "missing.npy", "-o", "o.mrz"], "missing.npy"),
        (
            &["compress", "x.npy", "-o", "o.mrz", "--rans-chunk", "1000"],
            "2048",
        ),
        (
            &[
                "compress", "x.npy", "-o", "o.mrz", "--device", "cpu", "--gpus", "2",
            ],
            "--gpus",
        ),
        (
            &["compress", "x.npy", "-o", "o.mrz", "--brick", "4,4,4"],
            "--brick",
        ),
        (&["decompress", "x.npy", "-o", "o.npy"], "not a .mrz"),
        (&["info", "nothing.mrz"], "nothing.mrz"),
    ];
    for (args, needle) in cases {
        fails_with(&multires(d, args), needle);
        assert!(
            !d.join("o.mrz").exists() && !d.join("o.npy").exists(),
            "{args:?} left output"
        );
    }
    // The reason a file cannot be read is given once.
    let o = multires(d, &["compress", "missing.npy", "-o", "o.mrz"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("os error").count(), 1, "{err}");
    // A corrupt brick is named; a truncated file is refused.
    ok(&multires(
        d,
        &["compress", "x.npy", "-o", "x.mrz", "--brick", "4"],
    ));
    let mut b = std::fs::read(d.join("x.mrz")).unwrap();
    b[120] ^= 0xff;
    std::fs::write(d.join("bad.mrz"), &b).unwrap();
    fails_with(
        &multires(d, &["decompress", "bad.mrz", "-o", "o.npy"]),
        "brick 0",
    );
    let b = std::fs::read(d.join("x.mrz")).unwrap();
    std::fs::write(d.join("cut.mrz"), &b[..b.len() - 9]).unwrap();
    fails_with(
        &multires(d, &["decompress", "cut.mrz", "-o", "o.npy"]),
        "truncated",
    );
    fails_with(
        &multires(
            d,
            &["decompress", "x.mrz", "-o", "o.npy", "--region", "0:9,0:4"],
        ),
        "within 0:8",
    );
    assert!(!d.join("o.npy").exists());
    // A NaN in a float32 .npy coded on the CPU (where it lies, mapped)
    // comes back where it was, the other values within the bound.
    let mut bad: Vec<f32> = (0..8 * 8 * 8).map(|i| i as f32).collect();
    bad[300] = f32::NAN;
    let a = ndarray::Array3::from_shape_vec((8, 8, 8), bad.clone()).unwrap();
    write_npy(d.join("nan.npy"), &a).unwrap();
    ok(&multires(
        d,
        &[
            "compress",
            "nan.npy",
            "-o",
            "nan.mrz",
            "--device",
            "cpu",
            "--error-bound",
            "abs:0.5",
        ],
    ));
    ok(&multires(
        d,
        &["decompress", "nan.mrz", "-o", "nan2.npy", "--device", "cpu"],
    ));
    let back: ndarray::Array3<f32> = ndarray_npy::read_npy(d.join("nan2.npy")).unwrap();
    for (k, (&w, &g)) in bad.iter().zip(back.iter()).enumerate() {
        assert!(
            (k == 300 && g.is_nan()) || (w - g).abs() <= 0.5,
            "value {k}: {w} -> {g}"
        );
    }
    // Nor is a temporary file left behind by the failed decodes.
    let parts: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .collect();
    assert!(parts.is_empty(), "{parts:?}");
}

/// `bench --codec-field-cache` writes the field that `make-field` makes
/// with seed 1 and reads it back in the next run; `--codec-depth` mirrors
/// planes past the last, and an empty axis is refused.
#[test]
fn bench_keeps_its_fields_and_reads_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bench = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "--config",
            "codec-3d",
            "--device",
            "cpu",
            "--codec-size",
            "16",
            "--codec-field",
            "turbulent",
            "--codec-rel",
            "1e-2",
            "--codec-field-cache",
            "cache",
        ];
        args.extend_from_slice(extra);
        let o = multires(d, &args);
        ok(&o);
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        // The row up to its timings.
        out.lines()
            .find(|l| l.starts_with("codec-3d"))
            .and_then(|l| l.split(" | compress").next())
            .unwrap_or_default()
            .to_string()
    };
    let first = bench(&[]);
    ok(&multires(
        d,
        &[
            "make-field",
            "--kind",
            "turbulent",
            "--size",
            "16",
            "-o",
            "made.npy",
        ],
    ));
    let cached: ArrayD<f32> = read_npy(d.join("cache/turbulent-16.npy")).unwrap();
    let made: ArrayD<f32> = read_npy(d.join("made.npy")).unwrap();
    assert_eq!(cached, made);
    // Read back: a field that differs in one value gives another row.
    assert_eq!(bench(&[]), first);
    let mut changed = made.clone();
    changed[[3, 4, 5]] += 10.0;
    write_npy(d.join("cache/turbulent-16.npy"), &changed).unwrap();
    assert_ne!(bench(&[]), first);
    assert!(bench(&["--codec-depth", "20"]).contains("Turbulent 20x16^2"));
    fails_with(
        &multires(
            d,
            &[
                "bench",
                "--config",
                "codec-3d",
                "--device",
                "cpu",
                "--codec-size",
                "16",
                "--codec-depth",
                "0",
            ],
        ),
        "at least one point along each axis",
    );
}

/// A zero bound from the command line: a constant float64 field (a
/// relative bound on a range of 0) codes small and comes back bit for bit;
/// a noisy float64 field at `abs:0` comes back bit for bit too, larger
/// than the input, and the note says why and what bound codes it, as it
/// does for a positive bound too tight for the codes.
#[test]
fn zero_bounds_are_exact_and_say_when_the_file_grows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ones = ArrayD::<f64>::from_elem(ndarray::IxDyn(&[30, 31, 32]), 1.0);
    write_npy(d.join("ones.npy"), &ones).unwrap();
    let noisy = ArrayD::<f64>::from_shape_fn(ndarray::IxDyn(&[30, 31, 32]), |i| {
        ((i[0] * 997 + i[1] * 31 + i[2]) as f64 * 0.7).sin() * 1e3
    });
    write_npy(d.join("noisy.npy"), &noisy).unwrap();
    let compress = |input: &str, out: &str, bound: &str| {
        let o = multires(
            d,
            &[
                "compress",
                input,
                "-o",
                out,
                "--error-bound",
                bound,
                "--device",
                "cpu",
            ],
        );
        ok(&o);
        o
    };
    for (name, bound, x) in [("ones", "rel:1e-3", &ones), ("noisy", "abs:0", &noisy)] {
        let o = compress(&format!("{name}.npy"), &format!("{name}.mrz"), bound);
        let err = String::from_utf8_lossy(&o.stderr);
        let size = std::fs::metadata(d.join(format!("{name}.mrz")))
            .unwrap()
            .len() as usize;
        if name == "ones" {
            assert!(size * 500 < 8 * x.len(), "{size} bytes");
            assert!(!err.contains("larger than the input"), "{err}");
        } else {
            assert!(size > 8 * x.len(), "{size} bytes");
            assert!(
                err.contains("larger than the input")
                    && err.contains("zero bound")
                    && err.contains("rel:1e-9"),
                "{err}"
            );
        }
        ok(&multires(
            d,
            &[
                "decompress",
                &format!("{name}.mrz"),
                "-o",
                &format!("{name}_back.npy"),
                "--device",
                "cpu",
            ],
        ));
        let back: ArrayD<f64> = read_npy(d.join(format!("{name}_back.npy"))).unwrap();
        assert!(
            back.iter()
                .zip(x.iter())
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{name}: not bit for bit"
        );
    }
    // A positive bound too tight for the codes: the note says so.
    let o = compress("noisy.npy", "tight.mrz", "rel:1e-13");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("larger than the input")
            && err.contains("too tight")
            && err.contains("at most 2^30 steps"),
        "{err}"
    );
    // A field so small that its headers outweigh it: the note says why.
    write_npy(
        d.join("tiny.npy"),
        &ArrayD::<f32>::from_shape_fn(ndarray::IxDyn(&[3, 4]), |i| (i[0] * 4 + i[1]) as f32),
    )
    .unwrap();
    let o = compress("tiny.npy", "tiny.mrz", "rel:1e-3");
    assert!(std::fs::metadata(d.join("tiny.mrz")).unwrap().len() > 48);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("larger than the input") && err.contains("headers"),
        "{err}"
    );
}

/// `multires info F.mrz | head -1`: a reader that leaves early ends the
/// process quietly, not with a panic from `println!`. The pipe's reading
/// end is closed before the process starts, so its first line meets it.
#[cfg(unix)]
#[test]
fn info_into_a_closed_pipe_ends_quietly() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/golden/v7_interp_f32_chunks.mrz");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_multires"))
        .arg("info")
        .arg(&file)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.is_empty(), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}
