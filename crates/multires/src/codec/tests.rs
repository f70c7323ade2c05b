use super::*;

fn field(shape: &[usize], seed: u64, dtype: DType) -> Volume {
    // A smooth part, a noisy part and a jump: every kind of brick.
    let n: usize = shape.iter().product();
    let noise = crate::signal::noise(n, seed);
    let nx = *shape.last().unwrap_or(&1);
    let data = (0..n)
        .map(|i| {
            let (x, r) = ((i % nx) as f64, (i / nx) as f64);
            let v = 3.0 * (x / 9.0).sin() * (r / 13.0).cos()
                + 0.05 * noise[i]
                + if x > nx as f64 * 0.7 { 2.0 } else { 0.0 };
            dtype.round(v)
        })
        .collect();
    Volume::new(shape, data, dtype).unwrap()
}

fn quiet(_: usize) {}

/// Copies decoded bricks (grid index, row-major values) into `out`, the
/// region's values, in parallel (false when one did not fit or came twice).
fn place<T: Sample, U: Sample>(
    out: &mut [U],
    region: &Region,
    grid: &BrickGrid,
    bricks: &[(usize, &[T])],
) -> bool {
    let Some(o) = RegionOut::new(out, *region, grid) else {
        return false;
    };
    bricks
        .par_iter()
        .map(|&(k, y)| o.place(k, y, &[], 0.0, DType::F64))
        .reduce(|| true, |a, b| a & b)
}

fn max_err(a: &Volume, b: &Volume) -> f64 {
    a.data
        .to_f64()
        .iter()
        .zip(&b.data.to_f64())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `rel` in the repository's data/ folder (the checked-in files).
fn data_path(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(rel)
}

fn reader(bytes: Vec<u8>) -> Result<MrzReader, CodecError> {
    MrzReader::from_reader(Box::new(std::io::Cursor::new(bytes)), "test.mrz")
}

/// The reader's four sources: a plain reader (one brick at a time), bytes
/// in memory, its own or shared (here a window of a larger buffer), and a
/// file (all three read at positions on every core).
fn open_as(source: usize, bytes: Vec<u8>) -> Result<MrzReader, CodecError> {
    struct Window(Vec<u8>, std::ops::Range<usize>);
    impl AsRef<[u8]> for Window {
        fn as_ref(&self) -> &[u8] {
            &self.0[self.1.clone()]
        }
    }
    match source {
        0 => reader(bytes),
        1 => MrzReader::from_bytes(bytes, "test.mrz"),
        2 => {
            let n = bytes.len();
            let padded = [vec![0x5a; 13], bytes, vec![0xa5; 29]].concat();
            MrzReader::from_shared(std::sync::Arc::new(Window(padded, 13..13 + n)), "test.mrz")
        }
        _ => {
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), &bytes).unwrap();
            MrzReader::open(f.path())
        }
    }
}

#[test]
fn the_bound_holds_on_every_value_for_every_mode_and_transform() {
    for (shape, brick) in [
        (vec![45usize, 70], Some([1, 32, 32])),
        (vec![19, 23, 30], Some([8, 16, 16])),
        (vec![64, 64], None),
    ] {
        for dtype in [DType::F32, DType::F64] {
            let v = field(&shape, 5, dtype);
            let (lo, hi) = v.range();
            for t in Lifting::ALL {
                for bound in [
                    ErrorBound::Abs(1e-2),
                    ErrorBound::Rel(1e-4),
                    ErrorBound::Psnr(60.0),
                    ErrorBound::Abs(0.0),
                ] {
                    let mut o = CodecOptions::new(t, bound);
                    o.brick = brick;
                    let (bytes, stats) = compress(&v, &o, &quiet).unwrap();
                    let what = format!("{shape:?} {dtype:?} {t} {bound}");
                    let mut r = reader(bytes).unwrap();
                    let back = decompress(&mut r, None, &quiet).unwrap();
                    assert_eq!(back.shape(), shape, "{what}");
                    let e = bound.absolute(hi - lo);
                    let m = max_err(&v, &back);
                    assert!(m <= e, "{what}: max error {m} over the bound {e}");
                    assert!(stats.max_error <= e, "{what}");
                    if let ErrorBound::Psnr(db) = bound {
                        assert!(stats.psnr >= db, "{what}: psnr {}", stats.psnr);
                    }
                    if e > 0.0 {
                        assert!(stats.ratio > 1.0, "{what}: ratio {}", stats.ratio);
                    }
                }
            }
        }
    }
}

#[test]
fn shorter_rans_chunks_decode_to_the_same_values_in_larger_files() {
    // One 65^3 brick of a smooth field: few bits a value, 275k values.
    let x: Vec<f64> = fields::make(fields::FieldKind::Smooth, 65, true, 7)
        .into_iter()
        .map(f64::from)
        .collect();
    let v = Volume::new(&[65, 65, 65], x, DType::F32).unwrap();
    let mut sizes = Vec::new();
    let mut decoded: Vec<Volume> = Vec::new();
    for chunk in [1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16] {
        let o = CodecOptions {
            rans_chunk: chunk,
            ..CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3))
        };
        let (bytes, s) = compress(&v, &o, &quiet).unwrap();
        assert!(s.max_error <= s.abs_bound, "chunk {chunk}");
        sizes.push(bytes.len());
        let d = decompress(&mut reader(bytes).unwrap(), None, &quiet).unwrap();
        assert!(max_err(&v, &d) <= s.abs_bound, "chunk {chunk}");
        decoded.push(d);
    }
    // Splitting the dense first chunk (`rans::Split`) can make 2^15 and
    // 2^16 chunks cost the same.
    assert!(
        sizes[0] > sizes[2] && sizes.windows(2).all(|w| w[0] >= w[1]),
        "{sizes:?}"
    );
    for d in &decoded[1..] {
        assert!(d.data.to_f64() == decoded[0].data.to_f64());
    }
    for chunk in [0, 1000, 1 << 10, 1 << 17] {
        let o = CodecOptions {
            rans_chunk: chunk,
            ..CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3))
        };
        let e = compress(&v, &o, &quiet).unwrap_err().to_string();
        assert!(e.contains(&chunk.to_string()) && e.contains("2048"), "{e}");
    }
}

#[test]
fn looser_bounds_compress_more() {
    let v = field(&[96, 96], 1, DType::F32);
    let mut last = 0.0;
    for e in [1e-5, 1e-4, 1e-3, 1e-2] {
        let (_, s) = compress(
            &v,
            &CodecOptions::new(Lifting::Cdf97, ErrorBound::Rel(e)),
            &quiet,
        )
        .unwrap();
        assert!(s.ratio > last, "rel {e}: ratio {} after {last}", s.ratio);
        last = s.ratio;
    }
}

/// The decoder leaves a brick's doubles unrounded until it places them
/// (`decode_brick_with`): placing into float64 still rounds float32 values
/// first, and the outliers move the rounded values.
#[test]
fn float32_files_decode_into_float64_as_rounded_float32() {
    let v = field(&[33, 30, 29], 4, DType::F32);
    for bound in [ErrorBound::Rel(1e-2), ErrorBound::Rel(1e-5)] {
        let mut o = CodecOptions::new(Lifting::Interp, bound);
        o.brick = Some([16, 16, 16]);
        let (bytes, _) = compress(&v, &o, &quiet).unwrap();
        let mut r = reader(bytes).unwrap();
        let full = decompress(&mut r, None, &quiet).unwrap();
        let Values::F32(want) = &full.data else {
            panic!("{bound}: a float32 file decoded to {:?}", full.dtype());
        };
        let mut into = vec![0f64; want.len()];
        decompress_into(&mut r, None, &mut into, &quiet).unwrap();
        let off = want
            .iter()
            .zip(&into)
            .position(|(&a, &b)| (a as f64).to_bits() != b.to_bits());
        assert_eq!(off, None, "{bound}: first value not the float32 one");
        for (k, p) in r.read_bricks(&[0]).unwrap().into_iter().enumerate() {
            let y = decode_brick(&p, r.grid().bounds(k).1, r.header()).unwrap();
            assert!(
                y.iter().all(|&x| x == x as f32 as f64),
                "{bound}: decode_brick's values are not float32's"
            );
        }
    }
}

/// A correction moves the value rounded to the stored type, as the coder
/// computed it, even where the decoder hands it an unrounded double: here
/// one step of 2e from the unrounded value rounds to another float32.
#[test]
fn corrections_move_the_rounded_value() {
    let (g, e) = (1.267732437050385f64, 1e-3);
    let rounded = DType::F32.round(g);
    assert_ne!(
        DType::F32.round(g + 2.0 * e),
        apply(rounded, 1, e, DType::F32)
    );
    // One outlier, at index 0, one step up, none stored exactly.
    let mut rest = Vec::new();
    for w in [1u32, 0, 0, 1] {
        rest.extend_from_slice(&w.to_le_bytes());
    }
    let mut y = vec![g];
    correct(&mut y, &rest, e, DType::F32).unwrap();
    assert_eq!(y[0].to_bits(), apply(rounded, 1, e, DType::F32).to_bits());
}

#[test]
fn region_decode_equals_the_crop_of_a_full_decode() {
    let v = field(&[21, 40, 37], 2, DType::F64);
    let mut o = CodecOptions::new(Lifting::Cdf53, ErrorBound::Abs(1e-3));
    o.brick = Some([8, 16, 16]);
    let (bytes, _) = compress(&v, &o, &quiet).unwrap();
    let mut r = reader(bytes).unwrap();
    let full = decompress(&mut r, None, &quiet).unwrap();
    for spec in [
        "3:17,15:33,0:37",
        "0:1,0:1,36:37",
        ":,20:,:5",
        "8:16,16:32,16:32",
    ] {
        let reg = parse_region(spec, &[21, 40, 37]).unwrap();
        let part = decompress(&mut r, Some(reg), &quiet).unwrap();
        let d = reg.map(|(a, b)| b - a);
        assert_eq!(part.dims, d, "{spec}");
        for z in 0..d[0] {
            for y in 0..d[1] {
                for x in 0..d[2] {
                    let a = part.data.get((z * d[1] + y) * d[2] + x);
                    let b = full
                        .data
                        .get(((z + reg[0].0) * 40 + y + reg[1].0) * 37 + x + reg[2].0);
                    assert_eq!(a.to_bits(), b.to_bits(), "{spec} at {z},{y},{x}");
                }
            }
        }
    }
    // Into a caller's buffer: the same values; a buffer of another size
    // is refused.
    let reg = parse_region("3:17,15:33,0:37", &[21, 40, 37]).unwrap();
    let part = decompress(&mut r, Some(reg), &quiet).unwrap();
    let mut into = vec![0f64; 14 * 18 * 37];
    decompress_into(&mut r, Some(reg), &mut into, &quiet).unwrap();
    assert_eq!(Values::F64(into), part.data);
    let mut short = vec![0f64; 14 * 18 * 37 - 1];
    let e = decompress_into(&mut r, Some(reg), &mut short, &quiet).unwrap_err();
    assert!(e.to_string().contains("does not hold its values"), "{e}");
    for bad in [
        "1:2,3:4",
        "5:3,0:1,0:1",
        "0:99,0:1,0:1",
        "a:b,0:1,0:1",
        "0:1;0:1,0:1",
    ] {
        assert!(parse_region(bad, &[21, 40, 37]).is_err(), "{bad}");
    }
}

#[test]
fn corrupt_and_truncated_files_are_errors_naming_the_brick() {
    let v = field(&[40, 50], 3, DType::F32);
    let mut o = CodecOptions::new(Lifting::Haar, ErrorBound::Abs(1e-3));
    o.brick = Some([1, 16, 16]);
    let (bytes, _) = compress(&v, &o, &quiet).unwrap();
    // A flipped byte inside brick 5's payload: that brick, by name, from
    // every source (the parallel reads report the first bad brick).
    let r = reader(bytes.clone()).unwrap();
    let sizes = r.brick_sizes();
    let start = super::container::HEADER_LEN as u64 + sizes[..5].iter().sum::<u64>();
    let mut bad = bytes.clone();
    bad[start as usize + 3] ^= 0x40;
    let later = start + sizes[5..9].iter().sum::<u64>();
    bad[later as usize + 1] ^= 0x40;
    for source in 0..4 {
        let mut r = open_as(source, bad.clone()).unwrap();
        let e = decompress(&mut r, None, &quiet).unwrap_err().to_string();
        assert!(
            e.contains("brick 5") && e.contains("checksum"),
            "source {source}: {e}"
        );
        // The GPU decoder's reads (borrowed where the file is in memory):
        // the bad brick by name, and the good ones equal to read_bricks.
        let e = r.brick_slices(&[2, 5]).unwrap_err().to_string();
        assert!(
            e.contains("brick 5") && e.contains("checksum"),
            "source {source}: {e}"
        );
        // Unverified: a file in memory lends its bytes with the checksums
        // still to verify, and the bad brick fails that by name; a file
        // read is verified at once.
        match r.brick_slices_unverified(&[2, 5]) {
            Ok(v) => {
                assert!(source == 1 || source == 2, "source {source}");
                assert!(v.iter().all(|(_, c)| c.is_some()));
                assert!(r.verify_brick(2, &v[0].0, v[0].1.unwrap()).is_ok());
                let e = r
                    .verify_brick(5, &v[1].0, v[1].1.unwrap())
                    .unwrap_err()
                    .to_string();
                assert!(e.contains("brick 5") && e.contains("checksum"), "{e}");
            }
            Err(e) => {
                assert!(source == 0 || source == 3, "source {source}");
                assert!(e.to_string().contains("brick 5"), "{e}");
            }
        }
        let ks = [0, 4, 6, sizes.len() - 1];
        let slices = r.brick_slices(&ks).unwrap();
        assert_eq!(
            slices.iter().map(|c| c.to_vec()).collect::<Vec<_>>(),
            r.read_bricks(&ks).unwrap(),
            "source {source}"
        );
        assert_eq!(
            matches!(slices[0], std::borrow::Cow::Borrowed(_)),
            source == 1 || source == 2,
            "source {source}: only a file in memory lends its bytes"
        );
        assert!(r.brick_slices(&[sizes.len()]).is_err());
        // A region that avoids bricks 5 and 9 still decodes, equal to the
        // plain reader's.
        let reg = parse_region("32:40,0:16", &[40, 50]).unwrap();
        let part = decompress(&mut r, Some(reg), &quiet).unwrap();
        let plain = decompress(&mut reader(bytes.clone()).unwrap(), Some(reg), &quiet).unwrap();
        assert_eq!(part.data, plain.data, "source {source}");
        // Truncation anywhere: an error, never a panic.
        for cut in [0, 3, 10, 97, 98, 200, bytes.len() / 2, bytes.len() - 1] {
            assert!(
                open_as(source, bytes[..cut].to_vec()).is_err(),
                "source {source}, cut at {cut}"
            );
        }
    }
    // Every single-byte flip: an error or the exact same values.
    let good = decompress(&mut reader(bytes.clone()).unwrap(), None, &quiet).unwrap();
    for i in (0..bytes.len()).step_by(7) {
        let mut b = bytes.clone();
        b[i] ^= 0x01;
        if let Ok(mut r) = reader(b) {
            if let Ok(out) = decompress(&mut r, None, &quiet) {
                assert_eq!(out.data, good.data, "flip at {i} gave wrong data");
            }
        }
    }
    // Not an mrz at all.
    let e = reader(b"P5 not a field".to_vec())
        .err()
        .map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("not a .mrz")));
}

#[test]
fn bad_inputs_are_errors() {
    let mut v = field(&[8, 8], 1, DType::F64);
    if let Values::F64(d) = &mut v.data {
        d[9] = f64::NAN;
    }
    // A NaN is kept (Haar too), not refused.
    let (b, _) = compress(
        &v,
        &CodecOptions::new(Lifting::Haar, ErrorBound::Abs(1.0)),
        &quiet,
    )
    .unwrap();
    let back = decompress(&mut reader(b).unwrap(), None, &quiet).unwrap();
    assert!(back.data.get(9).is_nan());
    assert!(Volume::new(&[4], vec![0.0; 4], DType::F32).is_err());
    assert!(Volume::new(&[2, 3], vec![0.0; 5], DType::F32).is_err());
    assert!(Volume::new(&[0, 3], vec![], DType::F32).is_err());
    assert_eq!("lossless".parse::<ErrorBound>(), Ok(ErrorBound::Lossless));
    for s in ["abs", "abs:-1", "rel:x", "psnr:0", "foo:1", "abs:inf"] {
        assert!(s.parse::<ErrorBound>().is_err(), "{s}");
    }
    assert_eq!("rel:1e-3".parse::<ErrorBound>(), Ok(ErrorBound::Rel(1e-3)));
    // A constant field compresses and comes back exactly.
    let c = Volume::new(&[5, 6, 7], vec![2.5; 210], DType::F32).unwrap();
    let (b, _) = compress(
        &c,
        &CodecOptions::new(Lifting::Cdf97, ErrorBound::Rel(1e-3)),
        &quiet,
    )
    .unwrap();
    let back = decompress(&mut reader(b).unwrap(), None, &quiet).unwrap();
    assert_eq!(back.data, c.data);
}

/// Fields near float64's limits: squared errors that overflow give a
/// finite PSNR marked as a bound (the true one, taken on scaled errors,
/// is at least it), a range that overflows under a relative bound is an
/// error that says to give an absolute one, and an absolute bound holds.
#[test]
fn fields_near_float64s_limits_report_a_finite_psnr() {
    let v = field(&[12, 10, 9], 3, DType::F64);
    let scaled = |k: f64| {
        let d: Vec<f64> = v.data.to_f64().iter().map(|x| x * k).collect();
        Volume::new(&[12, 10, 9], d, DType::F64).unwrap()
    };
    let opts = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    let (_, small) = compress(&v, &opts, &quiet).unwrap();
    assert!(small.psnr.is_finite() && !small.psnr_bound);
    let big = scaled(1e200);
    let (b, stats) = compress(&big, &opts, &quiet).unwrap();
    assert!(stats.psnr.is_finite() && stats.psnr_bound, "{stats:?}");
    let back = decompress(&mut reader(b).unwrap(), None, &quiet).unwrap();
    let (x, y) = (big.data.to_f64(), back.data.to_f64());
    let (lo, hi) = x
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &a| (l.min(a), h.max(a)));
    let k = 1e-200;
    let mse = x
        .iter()
        .zip(&y)
        .map(|(a, b)| ((a - b) * k).powi(2))
        .sum::<f64>()
        / x.len() as f64;
    let true_psnr = 20.0 * ((hi - lo) * k / mse.sqrt()).log10();
    assert!(
        stats.psnr <= true_psnr + 1e-9,
        "{} > {true_psnr}",
        stats.psnr
    );
    assert!(stats.psnr > 40.0, "{}", stats.psnr);
    // The scaled field's PSNR is the unscaled one's.
    assert!(
        (true_psnr - small.psnr).abs() < 1e-6,
        "{true_psnr} {}",
        small.psnr
    );
    let mut span = scaled(1e306);
    if let Values::F64(d) = &mut span.data {
        d[5] = 1.7e308;
        d[700] = -1.7e308;
    }
    let e = compress(&span, &opts, &quiet).unwrap_err().to_string();
    assert!(e.contains("give an absolute bound"), "{e}");
    let abs = CodecOptions::new(Lifting::Interp, ErrorBound::Abs(1e300));
    let (b, stats) = compress(&span, &abs, &quiet).unwrap();
    assert!(stats.psnr.is_finite(), "{stats:?}");
    let back = decompress(&mut reader(b).unwrap(), None, &quiet).unwrap();
    let worst = span
        .data
        .to_f64()
        .iter()
        .zip(&back.data.to_f64())
        .map(|(a, b)| (a / 2.0 - b / 2.0).abs() * 2.0)
        .fold(0.0, f64::max);
    assert!(worst <= 1e300, "{worst:e}");
}

#[test]
fn output_bytes_do_not_depend_on_the_thread_count() {
    let v = field(&[20, 33, 40], 8, DType::F32);
    let mut o = CodecOptions::new(Lifting::Cdf97, ErrorBound::Rel(1e-3));
    o.brick = Some([8, 16, 16]);
    let many = compress(&v, &o, &quiet).unwrap().0;
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| compress(&v, &o, &quiet).unwrap().0);
    assert_eq!(many, one);
}

#[test]
fn outliers_placed_after_the_brick_equal_outliers_applied_before() {
    // A 3-D grid with uneven edge bricks; each brick gets outliers of both
    // kinds (steps and exact values), and regions crop some of them away.
    let grid = BrickGrid {
        dims: [7, 9, 11],
        brick: [4, 4, 8],
    };
    let (e, dtype) = (0.25, DType::F32);
    let mut bricks = Vec::new();
    for k in 0..grid.len() {
        let (_, ext) = grid.bounds(k);
        let n: usize = ext.iter().product();
        let y: Vec<f64> = (0..n)
            .map(|i| ((k * 131 + i * 7) % 97) as f64 / 8.0)
            .collect();
        let idx: Vec<u32> = (0..n as u32)
            .filter(|i| (i + k as u32).is_multiple_of(5))
            .collect();
        let steps: Vec<i32> = (0..idx.len()).map(|j| [3, 0, -2][j % 3]).collect();
        let exact: Vec<f32> = steps
            .iter()
            .enumerate()
            .filter(|(_, &s)| s == 0)
            .map(|(j, _)| -(j as f32) - 0.5)
            .collect();
        let mut rest = Vec::new();
        rest.extend((idx.len() as u32).to_le_bytes());
        rest.extend((exact.len() as u32).to_le_bytes());
        idx.iter().for_each(|i| rest.extend(i.to_le_bytes()));
        steps.iter().for_each(|s| rest.extend(s.to_le_bytes()));
        exact.iter().for_each(|v| rest.extend(v.to_le_bytes()));
        bricks.push((k, y, rest));
    }
    // A short output, or a region past the field, is refused.
    assert!(RegionOut::new(&mut [0.0f64; 5], full_region(grid.dims), &grid).is_none());
    assert!(RegionOut::new(&mut [0.0f64; 10], [(0, 1), (0, 1), (5, 15)], &grid).is_none());
    for region in [
        full_region(grid.dims),
        [(1, 6), (2, 9), (3, 10)],
        [(4, 5), (0, 9), (7, 9)],
    ] {
        let len: usize = region.iter().map(|(a, b)| b - a).product();
        let (mut before, mut after) = (vec![0.0; len], vec![0.0; len]);
        let fixed: Vec<(usize, Vec<f64>)> = bricks
            .iter()
            .map(|(k, y, rest)| (*k, apply_outliers(y.clone(), rest, e, dtype).unwrap()))
            .collect();
        let refs: Vec<(usize, &[f64])> = fixed.iter().map(|(k, y)| (*k, y.as_slice())).collect();
        assert!(place(&mut before, &region, &grid, &refs));
        let out = RegionOut::new(&mut after, region, &grid).unwrap();
        for (k, y, rest) in &bricks {
            let list = outliers(rest, y.len(), dtype).unwrap();
            assert!(out.place(*k, y, &list, e, dtype));
            // A brick comes once: a second placement writes nothing.
            assert!(!out.place(*k, &vec![9.0; y.len()], &[], e, dtype));
        }
        assert!(
            !out.place(grid.len(), &[0.0], &[], e, dtype),
            "no such brick"
        );
        assert_eq!(before, after, "region {region:?}");
        assert!(
            before.iter().any(|&v| v < 0.0),
            "exact outliers were placed"
        );
    }
}

#[test]
fn quantize_rounds_half_away_from_zero_as_round_does() {
    let reference = |c: f64, q: f64| (c / q).round().clamp(-rice::MAX_INT, rice::MAX_INT) as i32;
    let mut next = xorshift(2024);
    let mut cases = vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        0.49999999999999994,
        -0.49999999999999994,
        1e-300,
        2147483647.5,
        -2147483648.5,
        1073741823.5,
        1073741824.5,
        4e9,
        -4e9,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MAX,
        f64::MIN_POSITIVE,
    ];
    for _ in 0..200_000 {
        let x = next();
        let mag = 2f64.powi((x % 70) as i32 - 20);
        let v = ((x >> 8) as f64 / (1u64 << 56) as f64 - 0.5) * mag;
        cases.push(v);
        cases.push(v.round() + 0.5);
        cases.push(v.round() - 0.5);
    }
    for &c in &cases {
        for q in [1.0, 0.1, 3.0, 1e-3] {
            assert_eq!(quantize(c, q), reference(c, q), "{c} / {q}");
        }
    }
}

/// The headers the GPU decoder's host reads from a payload's first words
/// equal those read from all of it, and a damaged or cut payload is an
/// error for both or for neither.
#[test]
fn headers_read_from_a_prefix_equal_headers_read_from_the_whole_payload() {
    fn agree<T: PartialEq + std::fmt::Debug>(
        whole: Result<T, String>,
        prefix: Result<T, String>,
        k: usize,
    ) {
        match (whole, prefix) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "brick {k}"),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("brick {k}: {a:?} against {b:?}"),
        }
    }
    let v = field(&[40, 50], 3, DType::F32);
    for t in [Lifting::Interp, Lifting::Haar] {
        let mut o = CodecOptions::new(t, ErrorBound::Rel(1e-4));
        o.brick = Some([1, 16, 16]);
        let (bytes, _) = compress(&v, &o, &quiet).unwrap();
        let r = reader(bytes).unwrap();
        let grid = r.grid();
        let ks: Vec<usize> = (0..grid.len()).collect();
        let mut compared = 0;
        for (&k, p) in ks.iter().zip(r.read_bricks(&ks).unwrap()) {
            let n: usize = grid.bounds(k).1.iter().product();
            let mut variants = vec![p.clone()];
            for cut in [0, 5, 8, 12, 16, 40, p.len() / 2, p.len() - 4] {
                variants.push(p[..cut.min(p.len())].to_vec());
            }
            for i in (8..p.len().min(80)).step_by(3) {
                let mut b = p.clone();
                b[i] ^= 0x81;
                variants.push(b);
            }
            for b in &variants {
                if t == Lifting::Interp {
                    let whole =
                        brick_step(b).and_then(|(q, w)| rans::read_header(&w, n).map(|h| (q, h)));
                    let prefix = brick_rans_header(b, n);
                    agree(whole, prefix, k);
                } else {
                    let whole = brick_step(b)
                        .and_then(|(q, w)| rice::StreamHeader::read(&w, n).map(|h| (q, h)));
                    let prefix =
                        brick_step_prefix(b, rice::StreamHeader::WORDS).and_then(|(q, w, tot)| {
                            rice::StreamHeader::read_of(&w, tot, n).map(|h| (q, h))
                        });
                    agree(whole, prefix, k);
                }
                compared += 1;
            }
        }
        assert!(compared > 100, "{t}: {compared}");
    }
}

#[test]
fn float32_fields_stay_float32() {
    // Held, decoded and reported in their stored type: a float32 field
    // never widens to f64 on the host.
    let v = field(&[12, 20, 17], 4, DType::F32);
    assert!(matches!(v.data, Values::F32(_)));
    let opts = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    let (b, s) = compress(&v, &opts, &quiet).unwrap();
    let back = decompress(&mut reader(b.clone()).unwrap(), None, &quiet).unwrap();
    let Values::F32(y) = &back.data else {
        panic!("a float32 field decoded to {:?}", back.dtype());
    };
    assert_eq!(y.len(), v.data.len());
    assert!(max_err(&v, &back) <= s.abs_bound, "bound broken");
    // The same values given as f64 with dtype F32 give the same bytes.
    let wide = Volume::new(&[12, 20, 17], v.data.to_f64(), DType::F32).unwrap();
    assert_eq!(compress(&wide, &opts, &quiet).unwrap().0, b);
    // NaN and infinities come back as they were (a NaN's payload too),
    // the finite values within the bound of their own range.
    let mut bad = v.clone();
    let payload = f32::from_bits(0x7fc0_1234);
    if let Values::F32(d) = &mut bad.data {
        d[77] = payload;
        d[78] = f32::INFINITY;
        d[500] = f32::NEG_INFINITY;
        d[3000] = 1e30;
    }
    for t in [Lifting::Interp, Lifting::Cdf97] {
        let o = CodecOptions::new(t, ErrorBound::Rel(1e-3));
        let (b, s) = compress(&bad, &o, &quiet).unwrap();
        let back = decompress(&mut reader(b).unwrap(), None, &quiet).unwrap();
        let (Values::F32(x), Values::F32(y)) = (&bad.data, &back.data) else {
            panic!("float32 in, float32 out");
        };
        assert_eq!(y[77].to_bits(), payload.to_bits(), "{t:?}");
        assert_eq!((y[78], y[500]), (f32::INFINITY, f32::NEG_INFINITY));
        assert!(s.psnr.is_finite() && s.max_error <= s.abs_bound, "{s:?}");
        // The range is the finite values' (1e30 included).
        assert!(s.abs_bound > 1e26 && s.abs_bound <= 1.001e27, "{s:?}");
        for (k, (a, b)) in x.iter().zip(y).enumerate() {
            if a.is_finite() {
                assert!(((a - b) as f64).abs() <= s.abs_bound, "{t:?} value {k}");
            }
        }
    }
    // A field with no finite value at all.
    let all_nan = Volume::new(&[5, 6], vec![f64::NAN; 30], DType::F64).unwrap();
    let (b, _) = compress(&all_nan, &opts, &quiet).unwrap();
    let back = decompress(&mut reader(b).unwrap(), None, &quiet).unwrap();
    assert!(back.data.to_f64().iter().all(|v| v.is_nan()));
    // Placing decoded f64 bricks into a float32 output rounds each value
    // once, as the f64 output rounded afterwards would.
    let grid = opts.grid(v.dims).unwrap();
    let region = full_region(v.dims);
    let bricks: Vec<(usize, Vec<f64>)> = (0..grid.len())
        .map(|k| {
            let (s, e) = grid.bounds(k);
            (k, gather(&v, s, e).iter().map(|x| x * 1.0000001).collect())
        })
        .collect();
    let refs: Vec<(usize, &[f64])> = bricks.iter().map(|(k, y)| (*k, y.as_slice())).collect();
    let (mut o32, mut o64) = (vec![0f32; v.data.len()], vec![0f64; v.data.len()]);
    place(&mut o32, &region, &grid, &refs);
    place(&mut o64, &region, &grid, &refs);
    assert!(o32.iter().zip(&o64).all(|(a, b)| *a == *b as f32));
}

#[test]
fn scan_finds_the_range_and_any_nan() {
    let mut r = xorshift(3);
    for n in [1, 15, 16, 17, 1000, 70_000, 200_003] {
        let d: Vec<f32> = (0..n)
            .map(|_| (r() % 20001) as f32 / 7.0 - 1000.0)
            .collect();
        let lo = d.iter().fold(f64::INFINITY, |m, &x| m.min(x as f64));
        let hi = d.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x as f64));
        assert_eq!(scan(&d), (lo, hi, false), "{n} values");
        let wide: Vec<f64> = d.iter().map(|&x| x as f64).collect();
        assert_eq!(scan(&wide), (lo, hi, false), "{n} values as f64");
        for at in [0, n / 2, n - 1] {
            let mut e = d.clone();
            e[at] = f32::NAN;
            assert!(scan(&e).2, "a NaN at {at} of {n}");
            e[at] = f32::NEG_INFINITY;
            let (l, h, nan) = scan(&e);
            assert!(l == f64::NEG_INFINITY && !nan, "-inf at {at} of {n}");
            assert!(h <= hi, "{n} values");
        }
    }
}

/// A file's parts (what the GPU coder returns) written out, joined and
/// compared unjoined all give the file; a changed, missing or extra byte
/// is seen.
#[test]
fn a_files_parts_are_the_file() {
    let v = field(&[40, 50], 3, DType::F32);
    let mut o = CodecOptions::new(Lifting::Interp, ErrorBound::Abs(1e-3));
    o.brick = Some([1, 16, 16]);
    let (bytes, _) = compress(&v, &o, &quiet).unwrap();
    let r = reader(bytes.clone()).unwrap();
    let all: Vec<usize> = (0..r.grid().len()).collect();
    let payloads = r.read_bricks(&all).unwrap();
    let parts = super::container::parts(r.header(), payloads);
    assert_eq!(parts.len(), bytes.len());
    assert!(parts.to_vec() == bytes);
    let mut written = Vec::new();
    parts.write_to(&mut written).unwrap();
    assert!(written == bytes);
    assert!(parts.equals(&bytes));
    let mut changed = bytes.clone();
    let last = changed.len() - 1;
    changed[last / 2] ^= 1;
    assert!(!parts.equals(&changed));
    assert!(!parts.equals(&bytes[..last]));
    assert!(!parts.equals(&[bytes.as_slice(), &[0]].concat()));
    // Checksums taken before (as the GPU's slots do) give the same file;
    // a list of the wrong length is taken again.
    let crcs: Vec<u32> = parts.payloads.iter().map(|p| crc32fast::hash(p)).collect();
    let payloads = parts.payloads.clone();
    let with = super::container::parts_with_checksums(r.header(), payloads.clone(), crcs);
    assert!(with.equals(&bytes));
    let short = super::container::parts_with_checksums(r.header(), payloads, vec![0; 3]);
    assert!(short.equals(&bytes));
    let empty: super::container::MrzParts<Vec<u8>> = super::container::parts(r.header(), vec![]);
    assert_eq!(empty.len(), empty.to_vec().len());
}

/// Files of container versions 3 and 4 still decode within their bounds:
/// `data/v3_wave40.mrz` (written by ed21b31, before rANS chunks could be
/// split) and `data/v4_wave40.mrz` (written by e7cf4d3 with its first
/// chunk split), both of the interpolation's
/// details in Morton order, from a 40^3 float32 field sin(0.3 x) +
/// cos(0.2 y) z / 10 at rel:1e-3 and rel:1e-4.
#[test]
fn version_3_and_4_files_still_decode() {
    for (file, version, split) in [("v3_wave40.mrz", 3, false), ("v4_wave40.mrz", 4, true)] {
        let bytes = std::fs::read(data_path(file)).unwrap();
        let mut r = reader(bytes).unwrap();
        assert_eq!(r.version(), version);
        assert_eq!(r.header().version, version);
        let h = r.header().clone();
        assert_eq!(h.dims, [40, 40, 40]);
        let p = r.read_brick(0).unwrap();
        let (_, head) = brick_rans_header(&p, 40 * 40 * 40).unwrap();
        assert_eq!(head.split.chunks > 0, split, "{file}: {:?}", head.split);
        let d = decompress(&mut r, None, &quiet).unwrap();
        check_wave40(&d.data.to_f64(), h.abs_bound);
    }
}

fn check_wave40(v: &[f64], bound: f64) {
    let mut worst = 0f64;
    for z in 0..40 {
        for y in 0..40 {
            for x in 0..40 {
                let f = ((0.3 * x as f64).sin() + (0.2 * y as f64).cos() * z as f64 / 10.0) as f32;
                worst = worst.max((v[(z * 40 + y) * 40 + x] - f as f64).abs());
            }
        }
    }
    // The field was made by numpy: its sin and cos may differ from
    // Rust's in the last bit.
    assert!(worst <= bound * (1.0 + 1e-5), "{worst} > {bound}");
}

/// A field made with IEEE arithmetic alone (no libm: its sin and cos may
/// differ between machines in the last bit): a smooth polynomial part,
/// seeded noise of `amp` and a jump.
fn exact_field(shape: &[usize], seed: u64, amp: f64, dtype: DType) -> Volume {
    let n: usize = shape.iter().product();
    let noise = crate::signal::noise(n, seed);
    let dims = dims_of(shape).unwrap();
    let data = (0..n)
        .map(|i| {
            let t = [
                i / (dims[1] * dims[2]),
                (i / dims[2]) % dims[1],
                i % dims[2],
            ]
            .map(|c| c as f64)
            .map(|c| c / 16.0);
            let v = 4.0 * t[2] * (3.0 - t[2]) * (1.0 + t[1] * t[0]) - t[1] * t[1]
                + amp * noise[i]
                + if t[2] > 2.0 { 2.0 } else { 0.0 };
            dtype.round(v)
        })
        .collect();
    Volume::new(shape, data, dtype).unwrap()
}

/// The cases of `compressed_bytes_equal_the_golden_files`: file name,
/// field and options.
fn golden_cases() -> Vec<(&'static str, Volume, CodecOptions)> {
    let opts = |t, b, brick| {
        let mut o = CodecOptions::new(t, b);
        o.brick = brick;
        o
    };
    vec![
        // Edge bricks of every shape; raw bits, and raw pieces over
        // PIECE bits (rel 2e-8).
        (
            "v7_interp_f32_bricks.mrz",
            exact_field(&[21, 30, 40], 1, 0.05, DType::F32),
            opts(Lifting::Interp, ErrorBound::Rel(1e-3), Some([17, 17, 17])),
        ),
        (
            "v7_interp_f32_fine.mrz",
            exact_field(&[9, 12, 35], 2, 0.2, DType::F32),
            opts(Lifting::Interp, ErrorBound::Rel(2e-8), None),
        ),
        // One brick of 41^3 values: rANS chunks of 2^12, split or not.
        (
            "v7_interp_f32_chunks.mrz",
            exact_field(&[41, 41, 41], 3, 0.3, DType::F32),
            opts(Lifting::Interp, ErrorBound::Rel(1e-3), None),
        ),
        (
            "v7_interp_f64_2d.mrz",
            exact_field(&[70, 90], 4, 0.01, DType::F64),
            opts(Lifting::Interp, ErrorBound::Psnr(70.0), None),
        ),
        // Every value an exact outlier.
        (
            "v7_interp_f64_exact.mrz",
            exact_field(&[5, 6, 7], 5, 0.1, DType::F64),
            opts(Lifting::Interp, ErrorBound::Abs(0.0), None),
        ),
        // Outliers moved by whole steps.
        (
            "v7_cdf97_f32.mrz",
            exact_field(&[12, 20, 33], 6, 0.02, DType::F32),
            opts(Lifting::Cdf97, ErrorBound::Rel(1e-3), Some([8, 16, 16])),
        ),
    ]
}

/// The bytes of this build's files are the format: the GPU coders write
/// the same, and any change to them must be a new container version.
/// Files in data/golden/, of version 7 (`MULTIRES_WRITE_GOLDEN=1`
/// rewrites them; do that only with a version change, or for a change of
/// the coder alone that every decoder reads the same, as the zero
/// bound's power-of-two step was: data/README.md lists such rewrites).
#[test]
fn compressed_bytes_equal_the_golden_files() {
    let dir = data_path("golden");
    let write = std::env::var_os("MULTIRES_WRITE_GOLDEN").is_some();
    for (name, v, o) in golden_cases() {
        let (bytes, _) = compress(&v, &o, &quiet).unwrap();
        let path = dir.join(name);
        if write {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
        }
        let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(bytes.len(), want.len(), "{name}: length");
        if let Some(i) = bytes.iter().zip(&want).position(|(a, b)| a != b) {
            panic!("{name}: byte {i} of {} differs", want.len());
        }
        // And they decode within the bound.
        let e = o.bound.absolute(v.range().1 - v.range().0);
        let back = decompress(&mut reader(want).unwrap(), None, &quiet).unwrap();
        assert!(max_err(&v, &back) <= e, "{name}");
    }
}

/// The golden files of version 6 (`data/v6/`, whose rANS contexts restart every 4,096 values) still
/// decode within their bounds; version 7's restart every 2,048, as each
/// stream's first word says.
#[test]
fn version_6_files_still_decode() {
    for (name, v, o) in golden_cases() {
        let old = name.replace("v7_", "v6_");
        let bytes = std::fs::read(data_path("v6").join(&old)).unwrap();
        let mut r = reader(bytes).unwrap();
        assert_eq!(r.version(), 6, "{old}");
        let e = o.bound.absolute(v.range().1 - v.range().0);
        let back = decompress(&mut r, None, &quiet).unwrap();
        assert!(max_err(&v, &back) <= e, "{old}");
    }
    // One brick of 41^3 values in rANS chunks, in both versions.
    let n = 41 * 41 * 41;
    for (dir, file, reset) in [
        ("v6", "v6_interp_f32_chunks.mrz", rans::RESET_V6),
        ("golden", "v7_interp_f32_chunks.mrz", rans::RESET),
    ] {
        let bytes = std::fs::read(data_path(dir).join(file)).unwrap();
        let p = reader(bytes).unwrap().read_brick(0).unwrap();
        let (_, head) = brick_rans_header(&p, n).unwrap();
        assert_eq!(head.reset, reset, "{file}");
    }
}

/// A zero-bound file written before the step became a power of two
/// below the peak (`data/v6_interp_f64_exact_6d84cfd.mrz`, golden before
/// that step) decodes to every value: each brick carries its own step.
#[test]
fn zero_bound_files_of_the_old_step_still_decode_exactly() {
    let bytes = std::fs::read(data_path("v6_interp_f64_exact_6d84cfd.mrz")).unwrap();
    let v = exact_field(&[5, 6, 7], 5, 0.1, DType::F64);
    let back = decompress(&mut reader(bytes).unwrap(), None, &quiet).unwrap();
    assert_eq!(back.data, v.data);
}

/// A zero bound (`abs:0`, or a relative bound on a constant field, whose
/// range is 0) keeps every value; constant fields then code small in both
/// types, since the interpolation's step is a power of two below the peak
/// (at `peak * 1e-6` a float64 field of ones came out at ratio 0.5, every
/// value an outlier), and a smooth float32 field codes smaller than raw.
#[test]
fn zero_bounds_keep_every_value_and_code_constant_fields_small() {
    let shape = [33, 40, 35];
    let n: usize = shape.iter().product();
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    for (c, dtype) in [
        (1.0, DType::F64),
        (-1.2345678e-6, DType::F64),
        (3.7, DType::F32),
        (1.0, DType::F32),
    ] {
        let v = Volume::new(&shape, vec![dtype.round(c); n], dtype).unwrap();
        let (b, st) = compress(&v, &o, &quiet).unwrap();
        let back = decompress(&mut reader(b).unwrap(), None, &quiet).unwrap();
        assert_eq!(back.data, v.data, "{c} {dtype:?}");
        assert_eq!(
            (st.abs_bound, st.max_error, st.outliers),
            (0.0, 0.0, 0),
            "{c}"
        );
        assert!(st.ratio > 500.0, "{c} {dtype:?}: ratio {}", st.ratio);
    }
    let smooth: Vec<f64> = fields::make(fields::FieldKind::Smooth, 48, true, 3)
        .into_iter()
        .map(f64::from)
        .collect();
    let v = Volume::new(&[48, 48, 48], smooth, DType::F32).unwrap();
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Abs(0.0));
    let (b, st) = compress(&v, &o, &quiet).unwrap();
    let back = decompress(&mut reader(b).unwrap(), None, &quiet).unwrap();
    assert_eq!(back.data, v.data);
    assert!(
        st.ratio > 1.0,
        "smooth float32 at abs:0: ratio {}",
        st.ratio
    );
}

/// The container's checksums (crc-fast) sum every length
/// and alignment as crc32fast, which wrote the files before.
#[test]
fn container_crc32_sums_as_crc32fast() {
    let bytes: Vec<u8> = (0..70_000u64)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for start in [0usize, 1, 3, 8, 61] {
        for len in [
            0usize, 1, 2, 15, 16, 31, 64, 127, 255, 256, 511, 4096, 65_536,
        ] {
            let p = &bytes[start..start + len];
            assert_eq!(
                super::container::crc32(p),
                crc32fast::hash(p),
                "{len} bytes from {start}"
            );
        }
    }
}

#[test]
fn lossless_fields_come_back_bit_for_bit() {
    // Smooth values with every kind of special float sprinkled in, in
    // both types, 2-D and 3-D, bricks cut unevenly.
    let mut next = xorshift(41);
    for dtype in [DType::F32, DType::F64] {
        for shape in [vec![19, 23], vec![9, 14, 31]] {
            let n: usize = shape.iter().product();
            let data = match dtype {
                DType::F32 => Values::F32(
                    (0..n)
                        .map(|i| match next() % 23 {
                            0 => f32::from_bits(0x7f80_0001), // signaling NaN
                            1 => f32::from_bits(0xffc0_beef),
                            2 => f32::NEG_INFINITY,
                            3 => -0.0,
                            4 => f32::from_bits(3), // subnormal
                            5 => f32::from_bits(next() as u32),
                            _ => ((i as f32) * 0.013).sin() * 40.0,
                        })
                        .collect(),
                ),
                DType::F64 => Values::F64(
                    (0..n)
                        .map(|i| match next() % 23 {
                            0 => f64::from_bits(0x7ff0_0000_0000_0001),
                            1 => f64::from_bits(0xfff8_dead_beef_0000),
                            2 => f64::INFINITY,
                            3 => -0.0,
                            4 => f64::from_bits(7),
                            5 => f64::from_bits(next()),
                            _ => ((i as f64) * 0.013).sin() * 40.0,
                        })
                        .collect(),
                ),
            };
            let v = Volume::of(&shape, data).unwrap();
            let mut opts = CodecOptions::new(Lifting::Interp, ErrorBound::Lossless);
            opts.brick = Some([4, 8, 16]);
            let (b, s) = compress(&v, &opts, &quiet).unwrap();
            assert_eq!((s.max_error, s.abs_bound), (0.0, 0.0));
            let mut r = reader(b.clone()).unwrap();
            assert_eq!(r.version(), container::LAYOUT_VERSION);
            assert_eq!(r.header().bound, ErrorBound::Lossless);
            let back = decompress(&mut r, None, &quiet).unwrap();
            let bits = |v: &Values| -> Vec<u64> {
                with_values!(v, d => d.iter().map(|x| x.to_bits64()).collect())
            };
            assert_eq!(bits(&back.data), bits(&v.data), "{dtype:?} {shape:?}");
            // A region, too.
            let region = [(0, 1), (3, 11), (5, 20)];
            let region = if shape.len() == 3 {
                [(2, 7), (3, 11), (5, 20)]
            } else {
                region
            };
            let part = decompress(&mut reader(b).unwrap(), Some(region), &quiet).unwrap();
            let (want, got) = (bits(&v.data), bits(&part.data));
            let dims = v.dims;
            let mut k = 0;
            for z in region[0].0..region[0].1 {
                for y in region[1].0..region[1].1 {
                    for x in region[2].0..region[2].1 {
                        assert_eq!(got[k], want[(z * dims[1] + y) * dims[2] + x]);
                        k += 1;
                    }
                }
            }
        }
    }
    // The open-loop transforms cannot code losslessly: said, not ignored.
    let v = field(&[8, 8], 1, DType::F64);
    let e = compress(
        &v,
        &CodecOptions::new(Lifting::Cdf97, ErrorBound::Lossless),
        &quiet,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("interp"), "{e}");
}

#[test]
fn integer_fields_keep_the_bound_in_integer_units() {
    let mut next = xorshift(5);
    let shape = [33, 40];
    for elem in [Elem::U8, Elem::U16, Elem::I16, Elem::I32] {
        let (lo, hi) = elem.limits();
        let span = (hi - lo).min(5000.0);
        let x: Vec<f64> = (0..33 * 40)
            .map(|i| {
                let smooth = ((i % 40) as f64 * 0.2).sin() * 0.4 + 0.5;
                (lo + (smooth * span).round() + (next() % 3) as f64).min(hi)
            })
            .collect();
        for bound in [
            ErrorBound::Lossless,
            ErrorBound::Abs(0.05),
            ErrorBound::Abs(3.7),
        ] {
            let mut opts = CodecOptions::new(Lifting::Interp, bound);
            opts.elem = Some(elem);
            let v = Volume::new(&shape, x.clone(), elem.coding()).unwrap();
            let (b, s) = compress(&v, &opts, &quiet).unwrap();
            let mut r = reader(b.clone()).unwrap();
            assert_eq!(r.header().elem, elem);
            assert_eq!(r.version(), container::LAYOUT_VERSION);
            // The ratio is against the integers' own size.
            assert!((s.ratio - (x.len() * elem.size()) as f64 / b.len() as f64).abs() < 1e-12);
            let back = decompress(&mut r, None, &quiet).unwrap().data.to_f64();
            let allowed = match bound {
                ErrorBound::Abs(e) => e.floor(),
                _ => 0.0,
            };
            for (k, (a, y)) in x.iter().zip(&back).enumerate() {
                let got = integer_value(*y, elem);
                assert!(is_integer_of(got, elem));
                assert!(
                    (a - got).abs() <= allowed,
                    "{elem:?} {bound:?} value {k}: {a} -> {got}"
                );
            }
        }
    }
}

#[test]
fn one_and_four_axis_shapes_are_kept_in_the_header() {
    for shape in [vec![1000], vec![3, 4, 10, 12]] {
        let coded = coded_shape(&shape).unwrap();
        let v = field(&coded, 3, DType::F32);
        let mut opts = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
        opts.axes = Some(shape.clone());
        let (b, _) = compress(&v, &opts, &quiet).unwrap();
        let mut r = reader(b).unwrap();
        assert_eq!(r.header().shape(), shape);
        assert_eq!(r.header().coded_shape(), coded);
        let back = decompress(&mut r, None, &quiet).unwrap();
        assert!(max_err(&v, &back) <= r.header().abs_bound);
    }
    assert!(coded_shape(&[2, 2, 2, 2, 2]).is_err());
    // A plain float field is still written as version 7.
    let v = field(&[10, 12], 3, DType::F32);
    let (b, _) = compress(
        &v,
        &CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3)),
        &quiet,
    )
    .unwrap();
    assert_eq!(reader(b).unwrap().version(), container::PLAIN_VERSION);
}

/// The full decode's values at a coarse view's positions, for comparison.
fn at_positions(v: &Volume, pos: &[Vec<usize>; 3]) -> Vec<f64> {
    let d = v.data.to_f64();
    let mut out = Vec::new();
    for &z in &pos[0] {
        for &y in &pos[1] {
            for &x in &pos[2] {
                out.push(d[(z * v.dims[1] + y) * v.dims[2] + x]);
            }
        }
    }
    out
}

#[test]
fn coarse_views_equal_the_whole_decode_at_their_points() {
    // Bricks that do not divide the field, tight bounds (outliers), NaN,
    // lossless and an open-loop transform (decoded whole, subsampled).
    let mut nan = field(&[40, 37, 29], 3, DType::F32);
    if let Values::F32(d) = &mut nan.data {
        d[5] = f32::NAN;
        d[4000] = f32::INFINITY;
    }
    let cases = [
        (
            field(&[40, 37, 29], 1, DType::F64),
            Lifting::Interp,
            ErrorBound::Rel(1e-3),
            [17, 16, 9],
        ),
        (
            field(&[40, 37, 29], 2, DType::F32),
            Lifting::Interp,
            ErrorBound::Abs(1e-7),
            [33, 33, 33],
        ),
        (nan, Lifting::Interp, ErrorBound::Abs(1e-3), [33, 20, 17]),
        (
            field(&[40, 37, 29], 4, DType::F32),
            Lifting::Interp,
            ErrorBound::Lossless,
            [17, 17, 17],
        ),
        (
            field(&[40, 37, 29], 5, DType::F64),
            Lifting::Cdf97,
            ErrorBound::Abs(1e-3),
            [16, 16, 16],
        ),
        (
            field(&[70, 53], 6, DType::F32),
            Lifting::Interp,
            ErrorBound::Rel(1e-4),
            [1, 33, 17],
        ),
    ];
    for (v, t, bound, brick) in cases {
        let mut opts = CodecOptions::new(t, bound);
        opts.brick = Some(brick);
        opts.rans_chunk = 2048;
        let (b, _) = compress(&v, &opts, &quiet).unwrap();
        let whole = decompress(&mut reader(b.clone()).unwrap(), None, &quiet).unwrap();
        let bits = |d: &[f64]| d.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for level in 0..=5 {
            let mut r = reader(b.clone()).unwrap();
            let (c, pos) = decompress_coarse(&mut r, None, level, &quiet).unwrap();
            let st = 1 << level;
            for a in 0..3 {
                let want: Vec<usize> = (0..v.dims[a])
                    .filter(|p| (p % brick[a]) % st == 0)
                    .collect();
                assert_eq!(pos[a], want, "{t} {bound} level {level} axis {a}");
            }
            assert_eq!(
                c.shape(),
                pos[3 - v.ndim..]
                    .iter()
                    .map(|p| p.len())
                    .collect::<Vec<_>>()
            );
            assert_eq!(
                bits(&c.data.to_f64()),
                bits(&at_positions(&whole, &pos)),
                "{t} {bound} level {level}"
            );
            // A region: the view's points inside it.
            let region = if v.ndim == 3 {
                [(3, 31), (10, 37), (1, 20)]
            } else {
                [(0, 1), (9, 61), (2, 50)]
            };
            let want: Vec<Vec<usize>> = (0..3)
                .map(|a| {
                    pos[a]
                        .iter()
                        .copied()
                        .filter(|&p| p >= region[a].0 && p < region[a].1)
                        .collect()
                })
                .collect();
            let got = decompress_coarse(&mut r, Some(region), level, &quiet);
            if want.iter().any(|w| w.is_empty()) {
                let e = got.unwrap_err().to_string();
                assert!(e.contains("holds none"), "{e}");
                continue;
            }
            let (cr, pr) = got.unwrap();
            for a in 0..3 {
                assert_eq!(pr[a], want[a]);
            }
            assert_eq!(bits(&cr.data.to_f64()), bits(&at_positions(&whole, &pr)));
        }
    }
    let mut r = reader(
        compress(
            &field(&[9, 9], 1, DType::F64),
            &CodecOptions::new(Lifting::Interp, ErrorBound::Abs(0.1)),
            &quiet,
        )
        .unwrap()
        .0,
    )
    .unwrap();
    assert!(decompress_coarse(&mut r, None, 17, &quiet).is_err());
    assert!(decompress_coarse(&mut r, Some([(0, 1), (3, 3), (0, 9)]), 1, &quiet).is_err());
}

#[test]
fn a_coarse_view_reads_a_fraction_of_the_brick() {
    // The interpolation's coarse passes come first: level 2 of a 65^3
    // brick decodes 17^3 of its 65^3 values from the front chunks.
    let v = field(&[65, 65, 65], 9, DType::F32);
    let mut opts = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-5));
    opts.rans_chunk = 2048;
    let (b, _) = compress(&v, &opts, &quiet).unwrap();
    let r = reader(b).unwrap();
    let h = r.header().clone();
    let (head, len) = r.read_brick_part(0, 0..1 << 20).unwrap();
    let (_, words) = brick_step(&head).unwrap();
    let n = 65 * 65 * 65;
    let rh = rans::read_header(&words, n).unwrap();
    let m = 17 * 17 * 17;
    let upto = rans::prefix_words(&rh, n, m);
    assert!(
        (8 + 4 * upto) as u64 * 8 < len,
        "{upto} words of {len} bytes"
    );
    assert_eq!(h.transform, Lifting::Interp);
}
