//! `compress --mpi` and `decompress --mpi` under `mpirun` (Open MPI, ranks
//! oversubscribed on this machine's cores): the files equal one process's
//! byte for byte, on shapes whose slabs split unevenly; a rank that fails
//! is named and leaves no file. Built with `--features mpi`.
#![cfg(feature = "mpi")]
mod common;
use common::{fails_with, multires, ok};
use ndarray::Dimension;
use std::path::Path;
use std::process::{Command, Output};

fn mpirun(dir: &Path, ranks: usize, args: &[&str]) -> Output {
    let have = Command::new("mpirun").arg("--version").output().is_ok();
    assert!(
        have,
        "mpirun is missing: apt install openmpi-bin libopenmpi-dev (.ci/run does)"
    );
    Command::new("mpirun")
        .args(["-np", &ranks.to_string(), "--oversubscribe"])
        .arg(env!("CARGO_BIN_EXE_multires"))
        .args(args)
        .current_dir(dir)
        // Containers and CI often run as root, which Open MPI refuses unless told.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .expect("run mpirun")
}

fn field(shape: &[usize], seed: u64) -> ndarray::ArrayD<f32> {
    let mut s = seed;
    ndarray::ArrayD::from_shape_fn(shape.to_vec(), |i| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let noise = ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5;
        let t: usize = i
            .as_array_view()
            .iter()
            .enumerate()
            .map(|(k, &v)| v * (k + 1))
            .sum();
        (t as f32 * 0.05).sin() * 10.0 + noise
    })
}

/// Compresses `input` in one process (on the CPU) and over `ranks` ranks
/// with `args`, then decodes each file, one by one process and the other
/// by the ranks: the files and the decoded .npy must be byte-identical.
/// Leaves one.mrz and many.mrz in `d`.
fn ranks_code_as_one_process(d: &Path, input: &str, ranks: usize, args: &[&str], what: &str) {
    let one = [
        &["compress", input, "-o", "one.mrz", "--device", "cpu"][..],
        args,
    ]
    .concat();
    ok(&multires(d, &one));
    let many = [&["compress", "--mpi", input, "-o", "many.mrz"][..], args].concat();
    let o = mpirun(d, ranks, &many);
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("on {ranks} ranks")), "{what}: {out}");
    let read = |f: &str| std::fs::read(d.join(f)).unwrap();
    assert!(
        read("one.mrz") == read("many.mrz"),
        "{what} coded on {ranks} ranks"
    );
    ok(&multires(
        d,
        &["decompress", "one.mrz", "-o", "one.npy", "--device", "cpu"],
    ));
    ok(&mpirun(
        d,
        ranks,
        &["decompress", "--mpi", "many.mrz", "-o", "many.npy"],
    ));
    assert!(
        read("one.npy") == read("many.npy"),
        "{what} decoded on {ranks} ranks"
    );
}

#[test]
fn mpi_files_equal_one_process_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // (shape, brick, ranks, bound): slabs of 4, 3 and 2 layers, uneven.
    let cases: &[(&[usize], &str, usize, &str)] = &[
        (&[50, 40, 30], "16", 2, "rel:1e-3"),
        (&[50, 40, 30], "16", 3, "abs:0.01"),
        (&[70, 33], "16", 3, "rel:1e-4"),
        (&[33, 20, 17], "8,16,16", 4, "psnr:60"),
    ];
    for (i, (shape, brick, ranks, bound)) in cases.iter().enumerate() {
        let mut x = field(shape, i as u64);
        x.as_slice_mut().unwrap()[123] = f32::NAN;
        let input = format!("x{i}.npy");
        ndarray_npy::write_npy(d.join(&input), &x).unwrap();
        let common = ["--brick", brick, "--error-bound", bound];
        ranks_code_as_one_process(d, &input, *ranks, &common, &format!("{shape:?}"));
        // A region read by rank: each rank its planes of it.
        let region = if shape.len() == 3 {
            "5:30,3:18,:"
        } else {
            "9:60,4:"
        };
        ok(&multires(
            d,
            &[
                "decompress",
                "one.mrz",
                "-o",
                "r1.npy",
                "--region",
                region,
                "--device",
                "cpu",
            ],
        ));
        ok(&mpirun(
            d,
            *ranks,
            &[
                "decompress",
                "--mpi",
                "many.mrz",
                "-o",
                "r2.npy",
                "--region",
                region,
            ],
        ));
        assert_eq!(
            std::fs::read(d.join("r1.npy")).unwrap(),
            std::fs::read(d.join("r2.npy")).unwrap(),
            "{shape:?} region {region} on {ranks} ranks"
        );
    }
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("part"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn float64_and_integer_files_over_ranks_equal_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = field(&[40, 24, 20], 11);
    // float64 is read and coded by ranks; the integer fields are coded in
    // one process (--mpi codes floats) and decoded by ranks, rounded back
    // to their type.
    ndarray_npy::write_npy(d.join("f64.npy"), &x.mapv(|v| v as f64 * 1.5)).unwrap();
    ndarray_npy::write_npy(d.join("u16.npy"), &x.mapv(|v| (v * 100.0 + 1500.0) as u16)).unwrap();
    ndarray_npy::write_npy(d.join("i16.npy"), &x.mapv(|v| (v * 100.0) as i16)).unwrap();
    ndarray_npy::write_npy(d.join("u8.npy"), &x.mapv(|v| (v * 5.0 + 60.0) as u8)).unwrap();
    let args = |i: &str, o: &str| {
        ["--brick", "8", "--error-bound", "abs:0.5"]
            .map(String::from)
            .into_iter()
            .chain([i.into(), "-o".into(), o.into()])
            .collect::<Vec<String>>()
    };
    for t in ["f64", "u16", "i16", "u8"] {
        let (input, one) = (format!("{t}.npy"), format!("{t}.mrz"));
        let mut c = vec!["compress".to_string()];
        c.extend(args(&input, &one));
        c.extend(["--device".into(), "cpu".into()]);
        let c: Vec<&str> = c.iter().map(String::as_str).collect();
        ok(&multires(d, &c));
        if t == "f64" {
            let mut m = vec!["compress".to_string(), "--mpi".into()];
            m.extend(args(&input, "many.mrz"));
            let m: Vec<&str> = m.iter().map(String::as_str).collect();
            ok(&mpirun(d, 3, &m));
            assert_eq!(
                std::fs::read(d.join(&one)).unwrap(),
                std::fs::read(d.join("many.mrz")).unwrap(),
                "{t} coded on 3 ranks"
            );
        }
        ok(&multires(
            d,
            &["decompress", &one, "-o", "one.npy", "--device", "cpu"],
        ));
        ok(&mpirun(
            d,
            3,
            &["decompress", "--mpi", &one, "-o", "many.npy"],
        ));
        let (a, b) = (
            std::fs::read(d.join("one.npy")).unwrap(),
            std::fs::read(d.join("many.npy")).unwrap(),
        );
        assert_eq!(a, b, "{t} decoded on 3 ranks");
        let descr = match t {
            "f64" => "<f8",
            "u16" => "<u2",
            "i16" => "<i2",
            _ => "|u1",
        };
        assert!(String::from_utf8_lossy(&b[..128]).contains(descr), "{t}");
    }
}

#[test]
fn a_failing_rank_is_named_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Raw float32 samples for 50 planes of 40 x 30, but only 40 planes in
    // the file: rank 0 reads planes 0..32, rank 1 32..50 fails.
    let x = field(&[40, 40, 30], 7);
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(d.join("short.f32"), bytes).unwrap();
    let o = mpirun(
        d,
        2,
        &[
            "compress",
            "--mpi",
            "short.f32",
            "--raw",
            "f32",
            "--shape",
            "50,40,30",
            "-o",
            "out.mrz",
            "--brick",
            "16",
        ],
    );
    fails_with(&o, "rank 1 of 2 failed");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("planes 32..50"), "{err}");
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["short.f32"], "{names:?}");
    // More ranks than brick layers: said before anything is read.
    ndarray_npy::write_npy(d.join("thin.npy"), &field(&[20, 8, 8], 1)).unwrap();
    let o = mpirun(
        d,
        3,
        &[
            "compress", "--mpi", "thin.npy", "-o", "t.mrz", "--brick", "16",
        ],
    );
    fails_with(&o, "at most 2 ranks");
    assert!(!d.join("t.mrz").exists());
}

/// Ranks on GPUs (`--device cuda`, the host's GPUs in turn: both ranks on
/// one GPU on a one-GPU host) write the file one CPU process writes and
/// decode the values it decodes; without a GPU every rank stops and
/// names why, leaving no file.
#[test]
fn gpu_ranks_equal_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gpu = Path::new("/dev/nvidia0").exists();
    assert!(
        gpu || std::env::var_os("MULTIRES_REQUIRE_GPU").is_none(),
        "MULTIRES_REQUIRE_GPU is set and this machine has no GPU"
    );
    ndarray_npy::write_npy(d.join("x.npy"), &field(&[70, 48, 40], 3)).unwrap();
    let cuda = ["--device", "cuda"];
    if !gpu {
        let o = mpirun(
            d,
            2,
            &[
                &["compress", "--mpi", "x.npy", "-o", "g.mrz", "--brick", "16"][..],
                &cuda,
            ]
            .concat(),
        );
        fails_with(&o, "rank 0 of 2 failed");
        fails_with(&o, "no usable GPU");
        assert!(!d.join("g.mrz").exists() && !d.join("g.mrz.mpi-part").exists());
        ok(&multires(
            d,
            &[
                "compress", "x.npy", "-o", "c.mrz", "--device", "cpu", "--brick", "16",
            ],
        ));
        let o = mpirun(
            d,
            2,
            &[&["decompress", "--mpi", "c.mrz", "-o", "g.npy"][..], &cuda].concat(),
        );
        fails_with(&o, "no usable GPU");
        assert!(!d.join("g.npy").exists());
        return;
    }
    let mut nan = field(&[40, 33, 20], 4);
    nan.as_slice_mut().unwrap()[40 * 33 * 20 - 7] = f32::NAN;
    ndarray_npy::write_npy(d.join("nan.npy"), &nan).unwrap();
    ndarray_npy::write_npy(d.join("flat.npy"), &field(&[90, 61], 5)).unwrap();
    let cases: &[(&str, &str, &str, &str)] = &[
        ("x.npy", "16", "rel:1e-3", "cuda"),
        ("x.npy", "8,16,32", "abs:0.002", "cuda"),
        ("flat.npy", "16", "rel:1e-4", "cuda"),
        // The rank holding the NaN codes on its CPU under auto.
        ("nan.npy", "8", "rel:1e-3", "auto"),
    ];
    for (input, brick, bound, device) in cases {
        let common = ["--brick", brick, "--error-bound", bound];
        let one = [
            &["compress", input, "-o", "one.mrz", "--device", "cpu"][..],
            &common,
        ]
        .concat();
        ok(&multires(d, &one));
        let many = [
            &[
                "compress", "--mpi", input, "-o", "many.mrz", "--device", device,
            ][..],
            &common,
        ]
        .concat();
        let o = mpirun(d, 2, &many);
        ok(&o);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("rank 0 (GPU 0)"), "{out}");
        assert_eq!(
            std::fs::read(d.join("one.mrz")).unwrap(),
            std::fs::read(d.join("many.mrz")).unwrap(),
            "{input} {brick} {bound}: GPU ranks wrote other bytes"
        );
        ok(&multires(
            d,
            &["decompress", "one.mrz", "-o", "one.npy", "--device", "cpu"],
        ));
        let o = mpirun(
            d,
            2,
            &[
                &["decompress", "--mpi", "many.mrz", "-o", "many.npy"][..],
                &cuda,
            ]
            .concat(),
        );
        ok(&o);
        assert!(String::from_utf8_lossy(&o.stdout).contains("(GPU 0)"));
        assert_eq!(
            std::fs::read(d.join("one.npy")).unwrap(),
            std::fs::read(d.join("many.npy")).unwrap(),
            "{input} {brick} {bound}: GPU ranks decoded other values"
        );
    }
    // Under --device cuda the NaN is refused by its rank, named.
    let o = mpirun(
        d,
        2,
        &[
            &[
                "compress", "--mpi", "nan.npy", "-o", "n.mrz", "--brick", "8",
            ][..],
            &cuda,
        ]
        .concat(),
    );
    fails_with(&o, "rank 1 of 2 failed");
    fails_with(&o, "NaN");
    assert!(!d.join("n.mrz").exists());
}

#[test]
fn fir_over_ranks_equals_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = field(&[10007], 3);
    let x64 = x.mapv(f64::from);
    ndarray_npy::write_npy(d.join("x.npy"), &x64).unwrap();
    ndarray_npy::write_npy(d.join("x32.npy"), &x).unwrap();
    let real = field(&[5, 129], 4).mapv(f64::from);
    ndarray_npy::write_npy(d.join("h.npy"), &real).unwrap();
    let c = ndarray::Array2::from_shape_fn((3, 64), |(i, j)| {
        num_complex::Complex64::new(
            ((i * 64 + j) as f64 * 0.3).sin(),
            ((i + j) as f64 * 0.7).cos(),
        )
    });
    ndarray_npy::write_npy(d.join("hc.npy"), &c).unwrap();
    for input in ["x.npy", "x32.npy"] {
        for bank in ["h.npy", "hc.npy"] {
            for (mode, post, ranks) in [
                ("full", "none", 2),
                ("same", "power", 3),
                ("valid", "magnitude", 4),
            ] {
                let flags = [
                    "--filters",
                    bank,
                    "--mode",
                    mode,
                    "--post",
                    post,
                    "--algorithm",
                    "direct",
                ];
                ok(&multires(
                    d,
                    &[
                        &["fir", input, "-o", "one.npy", "--device", "cpu"][..],
                        &flags,
                    ]
                    .concat(),
                ));
                ok(&mpirun(
                    d,
                    ranks,
                    &[&["fir", "--mpi", input, "-o", "many.npy"][..], &flags].concat(),
                ));
                assert_eq!(
                    std::fs::read(d.join("one.npy")).unwrap(),
                    std::fs::read(d.join("many.npy")).unwrap(),
                    "{input} {bank} {mode} {post} on {ranks} ranks"
                );
            }
        }
    }
    let o = mpirun(
        d,
        2,
        &[
            "fir",
            "--mpi",
            "x.npy",
            "--filters",
            "h.npy",
            "-o",
            "d.npy",
            "--post",
            "derivative",
        ],
    );
    fails_with(&o, "one-sided differences");
    assert!(!d.join("d.npy").exists());
}

#[test]
fn cwt_over_ranks_equals_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ndarray_npy::write_npy(d.join("x.npy"), &field(&[6007], 5).mapv(f64::from)).unwrap();
    let cases: &[(&[&str], usize)] = &[
        (&["--wavelet", "cmor1.5-1.0", "--scales-log", "1:120:12"], 2),
        (
            &[
                "--wavelet",
                "morl",
                "--scales",
                "1:40",
                "--output-kind",
                "power",
                "--hop",
                "3",
            ],
            3,
        ),
        (
            &[
                "--wavelet",
                "mexh",
                "--scales-log",
                "2:60:8",
                "--output-kind",
                "magnitude",
                "--precision",
                "f32",
            ],
            4,
        ),
    ];
    for (flags, ranks) in cases {
        let flags = [*flags, &["--algorithm", "direct"][..]].concat();
        ok(&multires(
            d,
            &[
                &["cwt", "x.npy", "-o", "one.npy", "--device", "cpu"][..],
                &flags,
            ]
            .concat(),
        ));
        ok(&mpirun(
            d,
            *ranks,
            &[&["cwt", "--mpi", "x.npy", "-o", "many.npy"][..], &flags].concat(),
        ));
        assert_eq!(
            std::fs::read(d.join("one.npy")).unwrap(),
            std::fs::read(d.join("many.npy")).unwrap(),
            "{flags:?} on {ranks} ranks"
        );
    }
    let o = mpirun(
        d,
        2,
        &[
            "cwt",
            "--mpi",
            "x.npy",
            "-o",
            "b.npy",
            "--boundary",
            "reflect",
        ],
    );
    fails_with(&o, "zero boundaries");
    assert!(!d.join("b.npy").exists());
}

#[test]
fn fast_profile_over_ranks_equals_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut x = field(&[37, 20, 26], 21);
    x.as_slice_mut().unwrap()[500] = f32::NAN;
    ndarray_npy::write_npy(d.join("x.npy"), &x).unwrap();
    let args = [
        "--profile",
        "fast",
        "--brick",
        "8",
        "--error-bound",
        "rel:1e-3",
    ];
    ranks_code_as_one_process(d, "x.npy", 3, &args, "fast profile");
}
