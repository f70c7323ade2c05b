//! Runs the real `multires` binary in a temporary folder.
mod common;
use common::{fails_with, multires, ok};
use ndarray::{Array1, Array2};
use ndarray_npy::{read_npy, write_npy};
use num_complex::{Complex32, Complex64};
use std::path::Path;

fn only_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn demo_writes_a_png() {
    let d = tempfile::tempdir().unwrap();
    let o = multires(d.path(), &["demo", "--samples", "2048"]);
    ok(&o);
    let png = std::fs::read(d.path().join("doppler_scalogram.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    assert!(String::from_utf8_lossy(&o.stdout).contains("Doppler"));
}

#[test]
fn cwt_npy_to_npy_with_plot_and_explain() {
    let d = tempfile::tempdir().unwrap();
    let x = Array1::from(multires::signal::doppler(1000));
    write_npy(d.path().join("x.npy"), &x).unwrap();
    let o = multires(
        d.path(),
        &[
            "cwt",
            "x.npy",
            "-o",
            "w.npy",
            "--wavelet",
            "cmor1.5-1.0",
            "--scales",
            "1:20",
            "--precision",
            "f32",
            "--plot",
            "w.png",
            "--explain",
            "--coi-out",
            "coi.npy",
            "--device",
            "cpu",
        ],
    );
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("recipe for 20 scales"));
    let w: Array2<Complex32> = read_npy(d.path().join("w.npy")).unwrap();
    assert_eq!(w.dim(), (20, 1000));
    let coi: Array1<f64> = read_npy(d.path().join("coi.npy")).unwrap();
    assert_eq!(coi.len(), 1000);
    assert!(d.path().join("w.png").exists());
    // Same numbers as the library.
    let wav = multires::Wavelet::from_name("cmor1.5-1.0").unwrap();
    let scales = multires::ScaleSpec::parse_linear("1:20")
        .unwrap()
        .scales(&wav)
        .unwrap();
    let plan = multires::CwtPlan::new(multires::CwtOptions::new(wav, scales), 1000, false).unwrap();
    let lib = plan
        .execute(&multires::Signal::real(x.to_vec()), None)
        .unwrap()
        .values
        .to_complex64();
    let diff = w
        .iter()
        .zip(lib.iter())
        .map(|(a, b)| (Complex64::new(a.re as f64, a.im as f64) - b).norm())
        .fold(0.0, f64::max);
    assert!(diff < 1e-5, "{diff}");
}

#[test]
fn cwt_reads_csv_wav_and_raw_and_writes_real_outputs() {
    let d = tempfile::tempdir().unwrap();
    let x = multires::signal::noise(300, 2);
    std::fs::write(
        d.path().join("x.csv"),
        "value\n".to_string()
            + &x.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
    )
    .unwrap();
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 8000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut wr = hound::WavWriter::create(d.path().join("x.wav"), spec).unwrap();
    for v in &x {
        wr.write_sample((v * 10000.0) as i16).unwrap();
        wr.write_sample(0i16).unwrap();
    }
    wr.finalize().unwrap();
    let raw: Vec<u8> = x.iter().flat_map(|v| (*v as f32).to_le_bytes()).collect();
    std::fs::write(d.path().join("x.bin"), raw).unwrap();
    ok(&multires(
        d.path(),
        &[
            "cwt",
            "x.csv",
            "-o",
            "a.npy",
            "--scales-log",
            "1:64:10",
            "--output-kind",
            "power",
        ],
    ));
    ok(&multires(
        d.path(),
        &[
            "cwt",
            "x.wav",
            "-o",
            "b.npy",
            "--freqs",
            "100:3000:12",
            "--output-kind",
            "magnitude",
            "--precision",
            "f32",
        ],
    ));
    ok(&multires(
        d.path(),
        &[
            "cwt",
            "x.bin",
            "--raw",
            "f32",
            "-o",
            "c.npy",
            "--scales",
            "1/2:4:1/2",
            "--hop",
            "4",
            "--output-kind",
            "phase",
        ],
    ));
    let a: Array2<f64> = read_npy(d.path().join("a.npy")).unwrap();
    assert_eq!(a.dim(), (10, 300));
    let b: Array2<f32> = read_npy(d.path().join("b.npy")).unwrap();
    assert_eq!(b.dim(), (12, 300));
    let c: Array2<f64> = read_npy(d.path().join("c.npy")).unwrap();
    assert_eq!(c.dim(), (8, 75));
}

#[test]
fn bad_input_gives_clear_errors_and_no_output() {
    let d = tempfile::tempdir().unwrap();
    write_npy(
        d.path().join("nan.npy"),
        &Array1::from(vec![1.0, f64::NAN, 2.0]),
    )
    .unwrap();
    write_npy(
        d.path().join("ok.npy"),
        &Array1::from(vec![1.0, 0.5, 2.0, 0.1]),
    )
    .unwrap();
    write_npy(d.path().join("empty.npy"), &Array1::<f64>::zeros(0)).unwrap();
    write_npy(d.path().join("img.npy"), &Array2::<f64>::zeros((3, 3))).unwrap();
    std::fs::write(d.path().join("junk.npy"), b"not an npy").unwrap();
    std::fs::write(d.path().join("bad.csv"), "1\n2\nthree\n").unwrap();
    let before = only_files(d.path());
    fails_with(
        &multires(d.path(), &["cwt", "nan.npy", "-o", "o.npy"]),
        "non-finite",
    );
    fails_with(
        &multires(d.path(), &["cwt", "missing.npy", "-o", "o.npy"]),
        "missing.npy",
    );
    fails_with(
        &multires(d.path(), &["cwt", "empty.npy", "-o", "o.npy"]),
        "no samples",
    );
    fails_with(
        &multires(d.path(), &["cwt", "img.npy", "-o", "o.npy"]),
        "1-D",
    );
    fails_with(
        &multires(d.path(), &["cwt", "junk.npy", "-o", "o.npy"]),
        "junk.npy",
    );
    fails_with(
        &multires(d.path(), &["cwt", "bad.csv", "-o", "o.npy"]),
        "line 3",
    );
    fails_with(
        &multires(
            d.path(),
            &["cwt", "ok.npy", "-o", "o.npy", "--wavelet", "nope"],
        ),
        "unknown wavelet",
    );
    fails_with(
        &multires(
            d.path(),
            &["cwt", "ok.npy", "-o", "o.npy", "--scales", "0:5"],
        ),
        "start must be > 0",
    );
    fails_with(
        &multires(
            d.path(),
            &["cwt", "ok.npy", "-o", "o.npy", "--scales-log", "1:10:0"],
        ),
        "count",
    );
    fails_with(
        &multires(
            d.path(),
            &["cwt", "ok.npy", "-o", "o.npy", "--freqs", "1:10:5"],
        ),
        "--fs",
    );
    fails_with(
        &multires(
            d.path(),
            &["cwt", "ok.npy", "-o", "o.npy", "--device", "cuda"],
        ),
        "CUDA",
    );
    fails_with(
        &multires(
            d.path(),
            &[
                "cwt",
                "ok.npy",
                "-o",
                "o.npy",
                "--scales",
                "1e12:1e12",
                "--boundary",
                "symmetric",
            ],
        ),
        // Exponent notation parses; the mask of scale 1e12 does not fit
        // (with zero boundaries it would be cut to twice the signal).
        "TiB, more than the",
    );
    fails_with(
        &multires(
            d.path(),
            &[
                "cwt",
                "ok.npy",
                "-o",
                "o.npy",
                "--scales-log",
                "1e9:1e9:1",
                "--memory-limit",
                "64",
                "--boundary",
                "reflect",
            ],
        ),
        "GiB, more than the 64.0 MiB allowed",
    );
    fails_with(
        &multires(
            d.path(),
            &["cwt", "ok.npy", "-o", "o.npy", "--oversample", "3"],
        ),
        "oversampling",
    );
    fails_with(
        &multires(d.path(), &["cwt", "ok.npy", "-o", "no/such/dir/o.npy"]),
        "does not exist",
    );
    fails_with(
        &multires(
            d.path(),
            &["fir", "ok.npy", "--filters", "missing.npy", "-o", "o.npy"],
        ),
        "missing.npy",
    );
    fails_with(
        &multires(
            d.path(),
            &["fir", "nan.npy", "--filters", "ok.npy", "-o", "o.npy"],
        ),
        "non-finite",
    );
    assert_eq!(only_files(d.path()), before, "an output was left behind");
    // NaN allowed on request.
    ok(&multires(
        d.path(),
        &[
            "cwt",
            "nan.npy",
            "-o",
            "o.npy",
            "--allow-nonfinite",
            "--algorithm",
            "direct",
            "--scales",
            "1:2",
        ],
    ));
    // Without direct, the FFT path is refused rather than smearing the NaN.
    fails_with(
        &multires(
            d.path(),
            &[
                "cwt",
                "nan.npy",
                "-o",
                "o2.npy",
                "--allow-nonfinite",
                "--scales",
                "1:200",
            ],
        ),
        "--algorithm direct",
    );
}

#[test]
fn fir_writes_the_bank_output() {
    let d = tempfile::tempdir().unwrap();
    write_npy(
        d.path().join("x.npy"),
        &Array1::from(multires::signal::noise(500, 1)),
    )
    .unwrap();
    write_npy(
        d.path().join("h.npy"),
        &Array2::from_shape_vec((4, 33), multires::signal::noise(132, 2)).unwrap(),
    )
    .unwrap();
    let o = multires(
        d.path(),
        &[
            "fir",
            "x.npy",
            "--filters",
            "h.npy",
            "-o",
            "y.npy",
            "--mode",
            "same",
            "--post",
            "power",
            "--explain",
        ],
    );
    ok(&o);
    let y: Array2<f64> = read_npy(d.path().join("y.npy")).unwrap();
    assert_eq!(y.dim(), (4, 500));
    assert!(y.iter().all(|v| *v >= 0.0));
}

#[test]
fn help_and_wavelet_list() {
    let d = tempfile::tempdir().unwrap();
    let o = multires(d.path(), &["cwt", "--help"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("--scales-log"));
    let o = multires(d.path(), &["wavelets"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("cmorB-C"));
}
