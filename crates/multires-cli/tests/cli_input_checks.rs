//! What a new user (or a hostile file) meets first: forged headers,
//! outputs that would overwrite inputs, interrupted runs, odd files and
//! flags. Each test runs the real binary.
mod common;
use common::{fails_with, multires, ok};
use ndarray::{Array1, Array2};
use ndarray_npy::write_npy;
use std::path::Path;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Files in `dir`, hidden temporary ones included.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn signal(dir: &Path, name: &str, n: usize) {
    write_npy(dir.join(name), &Array1::from(multires::signal::noise(n, 7))).unwrap();
}

/// An .npy whose header claims `shape` of `descr` over 16 bytes of data.
fn forged_npy(path: &Path, descr: &str, shape: &str) {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let mut header = dict.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(&[0u8; 16]);
    std::fs::write(path, bytes).unwrap();
}

/// A header claiming 1e15 values is refused by every reader before it
/// allocates: no abort, no backtrace.
#[test]
fn absurd_npy_headers_are_refused_by_every_reader() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    signal(d, "x.npy", 500);
    forged_npy(&d.join("huge.npy"), "<f8", "(1000000000000000,)");
    forged_npy(&d.join("huge2.npy"), "<f8", "(1, 1000000000000000)");
    let runs: [&[&str]; 8] = [
        &["cwt", "huge.npy", "-o", "W.npy"],
        &["fir", "huge.npy", "--filters", "huge2.npy", "-o", "y.npy"],
        &["fir", "x.npy", "--filters", "huge2.npy", "-o", "y.npy"],
        &["wavedec", "huge.npy", "-o", "c.npz", "-w", "db2"],
        &["wavedecn", "huge2.npy", "-o", "c.npz", "-w", "db2"],
        &["cwt", "x.npy", "-o", "W.npy", "--scales-file", "huge.npy"],
        &["cwt", "x.npy", "-o", "W.npy", "--wavelet", "user:huge.npy"],
        &[
            "cwt",
            "x.npy",
            "-o",
            "W.npy",
            "--amplitude-gain",
            "file:huge.npy",
        ],
    ];
    for args in runs {
        let o = multires(d, args);
        fails_with(&o, "holds only 16 bytes of data");
        assert!(
            !stderr(&o).contains("backtrace"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // An .npz member with such a header, for waverec.
    let mut zip = zip::ZipWriter::new(std::fs::File::create(d.join("c.npz")).unwrap());
    zip.start_file("arr_0.npy", zip::write::SimpleFileOptions::default())
        .unwrap();
    std::io::Write::write_all(&mut zip, &std::fs::read(d.join("huge.npy")).unwrap()).unwrap();
    zip.finish().unwrap();
    fails_with(
        &multires(d, &["waverec", "c.npz", "-o", "r.npy", "-w", "db2"]),
        "member 'arr_0.npy'",
    );
    fails_with(
        &multires(
            d,
            &[
                "bench",
                "--config",
                "codec-3d",
                "--codec-size",
                "100000",
                "--device",
                "cpu",
            ],
        ),
        "PiB of memory",
    );
}

/// A forged .mrz whose header claims a field of 64 TiB: refused before
/// any block is reserved, saying what it needs, with nothing left behind.
#[test]
fn a_forged_mrz_header_is_checked_against_the_disk_and_memory() {
    use multiro::*;
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    write_forged_mrz(
        &d.join("forged.mrz"),
        [1 << 14, 1 << 15, 1 << 15],
        [512, 512, 1024],
    );
    let before = names(d);
    let o = multires(
        d,
        &[
            "decompress",
            "forged.mrz",
            "-o",
            "out.npy",
            "--device",
            "cpu",
        ],
    );
    fails_with(&o, "it needs 64.0 TiB and the disk holding");
    assert_eq!(
        names(d),
        before,
        "an output or a temporary file was left behind"
    );
    fails_with(
        &multires(
            d,
            &[
                "decompress",
                "forged.mrz",
                "-o",
                "out.png",
                "--device",
                "cpu",
            ],
        ),
        "PNG holds 2-D fields",
    );
    // Bricks larger than any the codec writes are a corrupt file.
    write_forged_mrz(&d.join("brick.mrz"), [4096, 4096, 4096], [4096, 4096, 4096]);
    fails_with(
        &multires(d, &["info", "brick.mrz"]),
        "larger than any this codec writes",
    );
    assert_eq!(names(d).len(), before.len() + 1);
}

/// Builds forged containers with the library's own writer.
mod multiro {
    use multires::codec::{container, DType, ErrorBound, Lifting, MrzHeader};
    use std::path::Path;

    pub fn write_forged_mrz(path: &Path, dims: [usize; 3], brick: [usize; 3]) {
        let h = MrzHeader {
            version: container::PLAIN_VERSION,
            dtype: DType::F32,
            ndim: 3,
            dims,
            transform: Lifting::Interp,
            bound: ErrorBound::Abs(1.0),
            abs_bound: 1.0,
            brick,
            value_range: (0.0, 1.0),
            elem: multires::codec::Elem::F32,
            axes: dims.to_vec(),
        };
        let n = h.grid().len();
        let payload = [7u8; 16];
        let payloads = vec![&payload[..]; n];
        std::fs::write(path, container::write(&h, &payloads)).unwrap();
    }
}

/// An output that is one of the inputs (or another output) is refused by
/// its canonical path, and the input is left as it was; so are outputs
/// with an extension their writer does not make.
#[test]
fn outputs_never_overwrite_inputs_and_have_the_right_extension() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    signal(d, "x.npy", 300);
    write_npy(d.join("bank.npy"), &Array2::<f64>::ones((2, 5))).unwrap();
    let x = std::fs::read(d.join("x.npy")).unwrap();
    let bank = std::fs::read(d.join("bank.npy")).unwrap();
    fails_with(
        &multires(d, &["cwt", "x.npy", "-o", "./x.npy"]),
        "would destroy",
    );
    fails_with(
        &multires(
            d,
            &["fir", "x.npy", "--filters", "bank.npy", "-o", "bank.npy"],
        ),
        "is the input 'bank.npy'",
    );
    fails_with(
        &multires(d, &["cwt", "x.npy", "-o", "W.npy", "--coi-out", "W.npy"]),
        "both 'W.npy'",
    );
    fails_with(
        &multires(
            d,
            &[
                "wavedec", "x.npy", "-o", "x.npz", "-w", "db2", "--plot", "x.npy",
            ],
        ),
        "expected a .png file name, not .npy",
    );
    fails_with(
        &multires(d, &["compress", "x.npy", "-o", "x.npy"]),
        "expected a .mrz file name",
    );
    fails_with(
        &multires(d, &["cwt", "x.npy", "-o", "x.txt"]),
        "expected a .npy file name",
    );
    fails_with(
        &multires(
            d,
            &[
                "make-field",
                "--kind",
                "smooth",
                "--size",
                "8",
                "-o",
                "f.mrz",
            ],
        ),
        "expected a .npy file name",
    );
    fails_with(
        &multires(d, &["cwt", "x.npy", "-o", "W.npy", "--plot", "p.jpg"]),
        "expected a .png file name, not .jpg",
    );
    assert_eq!(std::fs::read(d.join("x.npy")).unwrap(), x);
    assert_eq!(std::fs::read(d.join("bank.npy")).unwrap(), bank);
    assert_eq!(names(d), ["bank.npy", "x.npy"]);
}

/// SIGINT or SIGTERM during a decompress removes its full-size hidden
/// temporary file and ends with 128 + the signal.
#[cfg(unix)]
#[test]
fn an_interrupted_decompress_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    ok(&multires(
        d,
        &[
            "make-field",
            "--kind",
            "turbulent",
            "--size",
            "192",
            "-o",
            "t.npy",
        ],
    ));
    ok(&multires(
        d,
        &[
            "compress",
            "t.npy",
            "-o",
            "t.mrz",
            "--error-bound",
            "rel:1e-5",
            "--device",
            "cpu",
        ],
    ));
    for (sig, status) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_multires"))
            .args([
                "--threads",
                "1",
                "decompress",
                "t.mrz",
                "-o",
                "back.npy",
                "--device",
                "cpu",
            ])
            .current_dir(d)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Signal once the temporary output exists.
        let start = std::time::Instant::now();
        while !names(d).iter().any(|n| n.ends_with(".part")) {
            assert!(start.elapsed().as_secs() < 60, "no temporary file appeared");
            if child.try_wait().unwrap().is_some() {
                panic!("decompress ended before it could be interrupted");
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        // SAFETY: a plain kill(2) of our own child process.
        unsafe { libc::kill(child.id() as libc::pid_t, sig) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(status), "{}", stderr(&out));
        assert_eq!(names(d), ["t.mrz", "t.npy"], "signal {sig}");
    }
}

/// A WAV header that states 0 Hz is refused (it made the plot spin).
#[test]
fn a_wav_of_zero_hertz_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 8000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(d.join("a.wav"), spec).unwrap();
    for i in 0..400 {
        w.write_sample(((i as f64 * 0.3).sin() * 1e4) as i16)
            .unwrap();
    }
    w.finalize().unwrap();
    let mut bytes = std::fs::read(d.join("a.wav")).unwrap();
    // The rate, and the byte rate that must agree with it.
    bytes[24..28].copy_from_slice(&0u32.to_le_bytes());
    bytes[28..32].copy_from_slice(&0u32.to_le_bytes());
    std::fs::write(d.join("zero.wav"), bytes).unwrap();
    fails_with(
        &multires(d, &["cwt", "zero.wav", "-o", "W.npy", "--plot", "p.png"]),
        "says 0 Hz",
    );
    ok(&multires(
        d,
        &[
            "cwt", "a.wav", "-o", "W.npy", "--scales", "1:4", "--plot", "p.png",
        ],
    ));
}

#[test]
fn thread_counts_beyond_the_cores_are_refused_or_clamped() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    signal(d, "x.npy", 200);
    fails_with(
        &multires(d, &["--threads", "4000", "wavelets"]),
        "give at most",
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_multires"))
        .args([
            "cwt", "x.npy", "-o", "W.npy", "--scales", "1:3", "--device", "cpu",
        ])
        .env("RAYON_NUM_THREADS", "4000")
        .current_dir(d)
        .output()
        .unwrap();
    ok(&o);
    assert!(
        stderr(&o).contains("RAYON_NUM_THREADS=4000 is more than"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_seed_tables_sizes_and_thresholds_are_checked() {
    let d = tempfile::tempdir().unwrap();
    let rocket = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/rocket.pgm");
    let r = rocket.to_str().unwrap();
    fails_with(
        &multires(d.path(), &["compress", r, "--seed-thresholds", "NaN"]),
        "give a finite threshold >= 0",
    );
    fails_with(
        &multires(d.path(), &["compress", r, "--seed-thresholds", "-3"]),
        "give a finite threshold >= 0",
    );
    fails_with(
        &multires(
            d.path(),
            &[
                "compress",
                r,
                "--seed-thresholds",
                "100",
                "--seed-sizes",
                "1000000",
            ],
        ),
        "of memory",
    );
}

#[test]
fn frequencies_above_nyquist_are_warned_about() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    signal(d, "x.npy", 400);
    let o = multires(
        d,
        &[
            "cwt", "x.npy", "-o", "W.npy", "--freqs", "10:600:8", "--fs", "1000",
        ],
    );
    ok(&o);
    assert!(
        stderr(&o).contains("Nyquist frequency 500 Hz"),
        "{}",
        stderr(&o)
    );
    let o = multires(
        d,
        &[
            "cwt", "x.npy", "-o", "W.npy", "--freqs", "10:400:8", "--fs", "1000",
        ],
    );
    ok(&o);
    assert!(!stderr(&o).contains("Nyquist"), "{}", stderr(&o));
}

/// Ratios are against the input's own bytes, and integers float64
/// cannot hold are refused rather than coded wrong.
#[test]
fn compress_reports_against_the_inputs_real_type() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    let img = Array2::<u8>::from_shape_fn((64, 64), |(i, j)| ((i * 7 + j * 3) % 251) as u8);
    write_npy(d.join("u8.npy"), &img).unwrap();
    let o = multires(
        d,
        &[
            "compress",
            "u8.npy",
            "-o",
            "u8.mrz",
            "--error-bound",
            "abs:0.4",
        ],
    );
    ok(&o);
    let size = std::fs::metadata(d.join("u8.mrz")).unwrap().len() as f64;
    let ratio = 4096.0 / size;
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(
        line.contains(&format!("ratio {ratio:.2}")),
        "{ratio:.2}: {line}"
    );
    if ratio < 1.0 {
        assert!(
            stderr(&o).contains("larger than the input (4096 bytes"),
            "{}",
            stderr(&o)
        );
    }
    let big = Array2::<i64>::from_shape_fn((16, 16), |(i, j)| (1i64 << 62) + (i * 16 + j) as i64);
    write_npy(d.join("i64.npy"), &big).unwrap();
    fails_with(
        &multires(
            d,
            &[
                "compress",
                "i64.npy",
                "-o",
                "i64.mrz",
                "--error-bound",
                "abs:1",
            ],
        ),
        "beyond 2^53",
    );
    assert!(!d.join("i64.mrz").exists());
}

/// `--plot` into a folder that does not exist: nothing is written.
#[test]
fn compress_writes_all_its_outputs_or_none() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    ok(&multires(
        d,
        &[
            "make-field",
            "--kind",
            "smooth",
            "--size",
            "32",
            "--2d",
            "-o",
            "f.npy",
        ],
    ));
    fails_with(
        &multires(
            d,
            &[
                "compress",
                "f.npy",
                "-o",
                "f.mrz",
                "--plot",
                "missing/p.png",
            ],
        ),
        "does not exist",
    );
    assert_eq!(names(d), ["f.npy"]);
}

#[test]
fn csv_byte_order_marks_and_header_lines() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    std::fs::write(d.join("bom.csv"), "\u{feff}1.5\n2\n3\n4\n").unwrap();
    std::fs::write(d.join("head.csv"), "time,value\n0,1.5\n1,2\n2,3\n3,4\n").unwrap();
    std::fs::write(d.join("typo.csv"), "1.5x\n2\n3\n4\n").unwrap();
    ok(&multires(
        d,
        &["cwt", "bom.csv", "-o", "a.npy", "--scales", "1:2"],
    ));
    let a: ndarray::Array2<num_complex::Complex64> =
        ndarray_npy::read_npy(d.join("a.npy")).unwrap();
    assert_eq!(a.dim(), (2, 4), "the BOM's line is a sample");
    let o = multires(
        d,
        &[
            "cwt",
            "head.csv",
            "-o",
            "b.npy",
            "--scales",
            "1:2",
            "--channel",
            "1",
        ],
    );
    ok(&o);
    assert!(
        stderr(&o).contains("read as a column header and skipped"),
        "{}",
        stderr(&o)
    );
    let b: ndarray::Array2<num_complex::Complex64> =
        ndarray_npy::read_npy(d.join("b.npy")).unwrap();
    assert_eq!(b, a);
    fails_with(
        &multires(d, &["cwt", "typo.csv", "-o", "c.npy"]),
        "line 1: '1.5x' is not a number",
    );
}

#[test]
fn bare_cmor_means_what_pywavelets_means() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    signal(d, "x.npy", 256);
    let o = multires(
        d,
        &[
            "cwt",
            "x.npy",
            "-o",
            "a.npy",
            "--wavelet",
            "cmor",
            "--scales",
            "2:4",
        ],
    );
    ok(&o);
    assert!(stderr(&o).contains("using cmor1.0-0.5"), "{}", stderr(&o));
    ok(&multires(
        d,
        &[
            "cwt",
            "x.npy",
            "-o",
            "b.npy",
            "--wavelet",
            "cmor1.0-0.5",
            "--scales",
            "2:4",
        ],
    ));
    assert_eq!(
        std::fs::read(d.join("a.npy")).unwrap(),
        std::fs::read(d.join("b.npy")).unwrap()
    );
    let o = multires(
        d,
        &[
            "cwt",
            "x.npy",
            "-o",
            "c.npy",
            "--wavelet",
            "fbsp",
            "--scales",
            "2:4",
        ],
    );
    ok(&o);
    assert!(stderr(&o).contains("using fbsp2-1.0-0.5"), "{}", stderr(&o));
}

/// The messages a first run meets: each names the fault once, in words.
#[test]
fn messages_say_what_is_wrong_once_and_plainly() {
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    signal(d, "x.npy", 300);
    std::fs::write(d.join("bank.wav"), b"RIFF").unwrap();
    fails_with(
        &multires(d, &["cwt", "x.npy", "-o", "W.npy", "--wavelet", "nope"]),
        "(see `multires wavelets`)",
    );
    let o = multires(d, &["fir", "x.npy", "--filters", "bank.wav", "-o", "y.npy"]);
    fails_with(&o, "read from .npy only, not .wav");
    ok(&multires(
        d,
        &["cwt", "x.npy", "-o", "W.npy", "--scales", "1e1:2e1:5e0"],
    ));
    write_npy(d.join("empty.npy"), &Array1::<f64>::zeros(0)).unwrap();
    let o = multires(
        d,
        &["cwt", "x.npy", "-o", "W.npy", "--scales-file", "empty.npy"],
    );
    fails_with(&o, "the list of scales is empty");
    assert!(!stderr(&o).contains("List("), "{}", stderr(&o));
    let c = Array2::<num_complex::Complex64>::zeros((8, 8));
    write_npy(d.join("c.npy"), &c).unwrap();
    let o = multires(d, &["compress", "c.npy", "-o", "c.mrz"]);
    fails_with(&o, "complex values");
    assert!(!stderr(&o).contains("DWT"), "{}", stderr(&o));
    for args in [
        &["decompress", "missing.mrz", "-o", "o.npy"][..],
        &["info", "missing.mrz"],
        &["cwt", "missing.npy", "-o", "o.npy"],
    ] {
        let e = stderr(&multires(d, args));
        assert_eq!(e.matches("os error 2").count(), 1, "{args:?}: {e}");
    }
    let o = multires(
        d,
        &[
            "wavedec", "x.npy", "-o", "c.npz", "-w", "db4", "--level", "1000",
        ],
    );
    fails_with(&o, "at most 255 levels");
    assert!(!stderr(&o).contains("Computed anyway"), "{}", stderr(&o));
    fails_with(
        &multires(d, &["cwt", "x.npy", "-o", "W.npy", "--scales", "-5:10"]),
        "'-5' is not a positive number",
    );
    fails_with(
        &multires(
            d,
            &[
                "cwt",
                "x.npy",
                "-o",
                "W.npy",
                "--memory-limit",
                "1",
                "--scales",
                "1:4000",
            ],
        ),
        "MiB allowed",
    );
}

/// On a machine without a GPU, `--device auto` (the default) runs on the
/// CPU without a line about it on every run.
#[test]
fn no_gpu_line_without_a_gpu() {
    if multires_cuda::device_count() > 0 {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    signal(d.path(), "x.npy", 100);
    let o = multires(
        d.path(),
        &["cwt", "x.npy", "-o", "W.npy", "--scales", "1:2"],
    );
    ok(&o);
    assert!(!stderr(&o).contains("GPU"), "{}", stderr(&o));
}

#[test]
fn every_flag_has_help_text() {
    let d = tempfile::tempdir().unwrap();
    for cmd in [
        "cwt",
        "fir",
        "wavedec",
        "waverec",
        "wavedecn",
        "waverecn",
        "compress",
        "decompress",
        "info",
        "make-field",
        "demo",
        "bench",
    ] {
        let o = multires(d.path(), &[cmd, "--help"]);
        ok(&o);
        let text = String::from_utf8_lossy(&o.stdout);
        // A flag's line (indented at most 6) carries its help after two
        // spaces, or the next line (indented deeper) does.
        let indent = |l: &str| l.len() - l.trim_start().len();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            if !(t.starts_with('-') && indent(l) <= 6) || t.starts_with("-h, --help") {
                continue;
            }
            // "[default: x]" alone is no help.
            let inline = t
                .split_once("  ")
                .is_some_and(|(_, h)| !h.trim_start().starts_with("[default"));
            let next = lines.get(i + 1).copied().unwrap_or("");
            let below = !next.trim().is_empty() && indent(next) > 6;
            assert!(inline || below, "{cmd}: '{t}' has no help text");
        }
    }
    let o = multires(d.path(), &["cwt", "--help"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("1:64"), "the default scales are stated");
    assert!(text.contains("f64|f32"), "--precision lists its values");
}
