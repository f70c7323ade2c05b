//! Every GPU codec kernel against the CPU's float64 result, on fresh random
//! inputs, with outputs poisoned (NaN) before each run so an unwritten
//! element fails. Without a GPU these tests print a notice and pass, unless
//! MULTIRES_REQUIRE_GPU=1, where a missing GPU fails them.

mod gpu_common;
use gpu_common::*;

/// RPLAN, RPIECES and RWORDS plan every brick as `rans::plan` does (the
/// bytes of the file depend on it): tables, chunk length, split, table
/// words and chunk lists, over synthetic histograms of every kind of plan,
/// three bricks a batch. The codec tests below check the same on real
/// fields, through the files' bytes.
#[test]
fn rans_plans_on_the_device_equal_the_hosts() {
    use multires::codec::rans;
    let Some(gpu) = gpu_or_skip("rans_plans_on_the_device_equal_the_hosts") else {
        return;
    };
    let cases = rans::synthetic_plan_cases(11, 600);
    let (mut split, mut logs) = (0, std::collections::BTreeSet::new());
    for (g, group) in cases.chunks_exact(3).enumerate() {
        let most_log = [16, 14, 12, 15, 13][g % 5];
        let (n, blocks) = (group[0].2, &group[0].1);
        let hists: Vec<u32> = group.iter().flat_map(|c| c.0.iter().copied()).collect();
        let got = multires_cuda::codec::plans_on_device(&gpu, &hists, blocks, n, most_log)
            .unwrap_or_else(|e| panic!("group {g}: {e}"));
        assert_eq!(got.len(), 3);
        for (b, (c, d)) in group.iter().zip(&got).enumerate() {
            let p = rans::plan(&c.0, blocks, n, most_log);
            let at = format!("group {g} brick {b} (n {n}, most_log {most_log})");
            assert_eq!(d.cum, p.tables.cum, "{at}: cumulative starts");
            assert_eq!(d.scale, p.tables.scale, "{at}: scales");
            assert_eq!(
                (d.chunk_log, d.split),
                (p.chunk_log, p.split),
                "{at}: chunks"
            );
            assert_eq!(d.words, p.words, "{at}: table words");
            let pieces: Vec<_> = rans::pieces(n, p.chunk_log, p.split).collect();
            assert_eq!(d.pieces, pieces, "{at}: chunk list");
            split += (p.split.chunks > 0) as usize;
            logs.insert(p.chunk_log);
        }
    }
    assert!(
        split >= 10 && logs.len() >= 4,
        "{split} splits, chunk logs {logs:?}"
    );
}

/// The codec slots' small copies (a kernel through mapped page-locked
/// memory): odd lengths, misaligned views, a stage filled (it waits for
/// the stream) and outgrown (it grows), several element types.
#[test]
fn staged_copies_equal_their_data() {
    use multires_cuda::stage::Stage;
    let Some(gpu) = gpu_or_skip("staged_copies_equal_their_data") else {
        return;
    };
    let s = gpu.ctx.new_stream().unwrap();
    let mut stage = Stage::default();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // All copies up are queued before any comes down: the 2 MiB one no
    // longer fits in the first 4 MiB, the last one outgrows it.
    let lens = [
        0usize,
        1,
        3,
        16,
        17,
        1000,
        65_537,
        3 << 20,
        2 << 20,
        (9 << 20) + 3,
    ];
    let mut ups = Vec::new();
    for &n in &lens {
        let v: Vec<u8> = (0..n).map(|_| next() as u8).collect();
        let d = stage.up(&gpu, &s, &v).unwrap();
        ups.push((v, d));
    }
    for (v, d) in &ups {
        let back = stage.down(&gpu, &s, &d.slice(0..v.len())).unwrap();
        assert!(back == *v, "{} bytes up and down differ", v.len());
        if v.len() > 1 {
            let back = stage.down(&gpu, &s, &d.slice(1..v.len())).unwrap();
            assert!(back == v[1..], "{} bytes at offset 1 differ", v.len() - 1);
        }
    }
    let w: Vec<u64> = (0..1001).map(|_| next()).collect();
    let d = stage.up(&gpu, &s, &w).unwrap();
    assert_eq!(stage.down(&gpu, &s, &d).unwrap(), w);
    let f: Vec<f64> = (0..777).map(|_| next() as f64 / 3.0).collect();
    let d = stage.up(&gpu, &s, &f).unwrap();
    assert_eq!(stage.down(&gpu, &s, &d).unwrap(), f);
    let d = stage
        .up_bytes(&gpu, &s, 41, |b| {
            b.iter_mut().enumerate().for_each(|(i, v)| *v = i as u8)
        })
        .unwrap();
    let want: Vec<u8> = (0..41u8).collect();
    assert_eq!(stage.down(&gpu, &s, &d.slice(0..41)).unwrap(), want);
}

/// The codec's output on the GPU, byte for byte the CPU's: every transform,
/// bound kind (zero included), dtype, 2-D and 3-D, bricks of several
/// shapes; then streamed in small batches, and spread over every GPU (each
/// given twice, so four or more slots share the bricks): the same bytes.
#[test]
fn codec_on_the_gpu_is_byte_identical_to_the_cpu() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::{compress, CodecOptions, DType, ErrorBound, Lifting, Volume};
    let Some(gpu) = gpu_or_skip("codec_on_the_gpu_is_byte_identical_to_the_cpu") else {
        return;
    };
    let turb: Vec<f64> = make(FieldKind::Turbulent, 48, true, 3)
        .into_iter()
        .map(f64::from)
        .collect();
    // 40 x 48 x 44 with 16^3 bricks: interior and edge bricks of 8 shapes.
    let mut cut = Vec::new();
    for z in 0..40 {
        for y in 0..48 {
            cut.extend_from_slice(&turb[(z * 48 + y) * 48..(z * 48 + y) * 48 + 44]);
        }
    }
    let smooth2: Vec<f64> = make(FieldKind::Smooth, 100, false, 5)
        .into_iter()
        .map(f64::from)
        .collect();
    let noise: Vec<f64> = (0..37 * 53)
        .map(|i| ((i as f64 * 0.7).sin() * 1e3).fract())
        .collect();
    let cases: Vec<(Volume, [usize; 3])> = vec![
        (
            Volume::new(&[40, 48, 44], cut.clone(), DType::F32).unwrap(),
            [16, 16, 16],
        ),
        (
            Volume::new(&[100, 100], smooth2.clone(), DType::F32).unwrap(),
            [1, 64, 64],
        ),
        (
            Volume::new(&[37, 53], noise.clone(), DType::F64).unwrap(),
            [1, 32, 32],
        ),
        // Bricks of 2^k + 1 (interp's default shape), edges of 6 and 15.
        (
            Volume::new(&[40, 48, 44], cut.clone(), DType::F32).unwrap(),
            [17, 33, 17],
        ),
    ];
    let bounds = [
        ErrorBound::Rel(1e-2),
        ErrorBound::Rel(1e-4),
        ErrorBound::Abs(0.0),
        ErrorBound::Psnr(60.0),
    ];
    let mut checked = 0;
    for (v, brick) in &cases {
        for t in Lifting::ALL {
            for bound in bounds {
                let mut o = CodecOptions::new(t, bound);
                o.brick = Some(*brick);
                let (cpu, _) = compress(v, &o, &|_| {}).unwrap();
                let (dev, stats, _) = multires_cuda::codec::compress(
                    v,
                    &o,
                    std::slice::from_ref(&gpu),
                    None,
                    &|_| {},
                )
                .unwrap();
                // The file's parts written out, compared unjoined and
                // joined.
                let mut written = Vec::new();
                dev.write_to(&mut written).unwrap();
                let same = dev.equals(&cpu) && dev.len() == cpu.len();
                let dev = dev.to_vec();
                assert!(
                    cpu == dev,
                    "{t} {bound} {:?}: GPU {} bytes, CPU {} bytes, first difference at {:?}",
                    v.dims,
                    dev.len(),
                    cpu.len(),
                    cpu.iter().zip(&dev).position(|(a, b)| a != b)
                );
                assert!(
                    same && written == dev,
                    "{t} {bound}: the parts disagree with the file"
                );
                assert!(stats.max_error <= stats.abs_bound, "{t} {bound}");
                // A float32 field goes up whole; gathered in batches by the
                // host (a memory cap, a field near the device's size), the
                // same bytes.
                if v.dtype() == DType::F32 {
                    let (streamed, _, _) = multires_cuda::codec::compress_streamed(
                        v,
                        &o,
                        std::slice::from_ref(&gpu),
                        None,
                        &|_| {},
                    )
                    .unwrap();
                    assert!(
                        streamed.to_vec() == cpu,
                        "{t} {bound}: streamed bytes differ"
                    );
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 64);
    // Constant fields under a relative bound (a range of 0, so a zero
    // bound): the interpolation's step a power of two below the peak
    // (float32: a sixteenth of its epsilon), on the device as on the CPU,
    // and decoded on the device to every value.
    for (c, dtype) in [(1.0, DType::F64), (3.7, DType::F64), (3.7, DType::F32)] {
        let v = Volume::new(&[40, 48, 44], vec![dtype.round(c); 40 * 48 * 44], dtype).unwrap();
        let mut o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
        o.brick = Some([17, 33, 17]);
        let (cpu, st) = compress(&v, &o, &|_| {}).unwrap();
        let (dev, _, _) =
            multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {})
                .unwrap();
        assert!(
            dev.to_vec() == cpu,
            "constant {c} {dtype:?}: GPU bytes differ"
        );
        assert_eq!(st.max_error, 0.0, "constant {c} {dtype:?}");
        let back = multires_cuda::codec::decompress(
            &mut in_memory(&cpu),
            None,
            std::slice::from_ref(&gpu),
            &|_| {},
        )
        .unwrap();
        assert!(
            back.data == v.data,
            "constant {c} {dtype:?}: GPU decode differs"
        );
    }
    // Every rANS chunk cap, on bricks of many chunks (65^3, smooth).
    let sm: Vec<f64> = make(FieldKind::Smooth, 65, true, 7)
        .into_iter()
        .map(f64::from)
        .collect();
    let v = Volume::new(&[65, 65, 65], sm, DType::F32).unwrap();
    for chunk in [1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16] {
        let o = CodecOptions {
            rans_chunk: chunk,
            ..CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3))
        };
        let (cpu, _) = compress(&v, &o, &|_| {}).unwrap();
        let (dev, _, _) =
            multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {})
                .unwrap();
        assert!(dev.to_vec() == cpu, "rANS chunk {chunk}: GPU bytes differ");
    }
    // A dense brick (turbulent 129^3 at 1e-4, about 9 bits a value): 525
    // chunks of 2^12, so RDEC decodes it in three blocks of six warps and
    // RENC codes it in 17 blocks.
    let tu: Vec<f64> = make(FieldKind::Turbulent, 129, true, 3)
        .into_iter()
        .map(f64::from)
        .collect();
    let v = Volume::new(&[129, 129, 129], tu, DType::F32).unwrap();
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-4));
    let (cpu, _) = compress(&v, &o, &|_| {}).unwrap();
    let (dev, _, _) =
        multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {}).unwrap();
    assert!(dev.to_vec() == cpu, "dense brick: GPU bytes differ");
    let want = multires::codec::decompress(&mut in_memory(&cpu), None, &|_| {}).unwrap();
    let got = multires_cuda::codec::decompress(
        &mut in_memory(&cpu),
        None,
        std::slice::from_ref(&gpu),
        &|_| {},
    )
    .unwrap();
    assert!(
        want.data.to_f64() == got.data.to_f64(),
        "dense brick: GPU decode differs"
    );
    // Streamed: a limit that lets one brick per batch; and several GPUs.
    let v = &cases[0].0;
    for t in [Lifting::Cdf97, Lifting::Interp] {
        let mut o = CodecOptions::new(t, ErrorBound::Rel(1e-3));
        o.brick = Some([16, 16, 16]);
        let (cpu, _) = compress(v, &o, &|_| {}).unwrap();
        let (streamed, _, run) = multires_cuda::codec::compress(
            v,
            &o,
            std::slice::from_ref(&gpu),
            Some(3 << 20),
            &|_| {},
        )
        .unwrap();
        let streamed = streamed.to_vec();
        assert_eq!(run.max_bricks_per_batch, 1);
        assert_eq!(run.batches, 27, "{run:?}");
        assert!(streamed == cpu, "streamed bytes differ");
        let mut all = Vec::new();
        for i in 0..multires_cuda::device_count() {
            let g = multires_cuda::gpu_at(i).unwrap();
            all.push(g.clone());
            all.push(g);
        }
        let (multi, _, run) =
            multires_cuda::codec::compress(v, &o, &all, Some(3 << 20), &|_| {}).unwrap();
        assert!(
            multi.equals(&cpu),
            "{t}: bytes on {} slots differ",
            run.gpus * 2
        );
        // Without a cap the field goes up whole, a slab to each GPU listed,
        // and decodes back through them.
        let (whole, _, _) = multires_cuda::codec::compress(v, &o, &all, None, &|_| {}).unwrap();
        assert!(
            whole.equals(&cpu),
            "{t}: bytes from slabs on {} GPUs differ",
            all.len()
        );
        let want = multires::codec::decompress(&mut in_memory(&cpu), None, &|_| {}).unwrap();
        let back =
            multires_cuda::codec::decompress(&mut in_memory(&cpu), None, &all, &|_| {}).unwrap();
        assert!(
            back.data == want.data,
            "{t}: decoded from slabs on {} GPUs, values differ",
            all.len()
        );
        // A limit below one brick's working set is a clear error.
        let err =
            multires_cuda::codec::compress(v, &o, std::slice::from_ref(&gpu), Some(1000), &|_| {})
                .unwrap_err();
        assert!(err.to_string().contains("limit"), "{err}");
    }
}

/// Decoding on the GPU gives the CPU decoder's values bit for bit (whole
/// fields and regions, every transform, f32 and f64, 2-D and 3-D), and a
/// corrupt brick is an error that names it, as on the CPU.
#[test]
fn codec_decodes_on_the_gpu_as_on_the_cpu() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::{compress, decompress, CodecOptions, DType, ErrorBound, Lifting};
    use multires::codec::{MrzReader, Volume};
    let Some(gpu) = gpu_or_skip("codec_decodes_on_the_gpu_as_on_the_cpu") else {
        return;
    };
    let f3: Vec<f64> = make(FieldKind::Turbulent, 40, true, 7)
        .into_iter()
        .map(f64::from)
        .collect();
    let f2: Vec<f64> = make(FieldKind::Smooth, 90, false, 2)
        .into_iter()
        .map(f64::from)
        .collect();
    let cases = [
        (
            Volume::new(&[40, 40, 40], f3, DType::F32).unwrap(),
            [16, 16, 16],
            "5:33,0:40,7:21",
        ),
        (
            Volume::new(&[90, 90], f2, DType::F64).unwrap(),
            [1, 32, 32],
            "10:80,3:4",
        ),
    ];
    for (v, brick, region) in &cases {
        for t in Lifting::ALL {
            for bound in [
                ErrorBound::Rel(1e-3),
                ErrorBound::Abs(0.0),
                ErrorBound::Rel(1e-1),
            ] {
                let mut o = CodecOptions::new(t, bound);
                o.brick = Some(*brick);
                let (bytes, _) = compress(v, &o, &|_| {}).unwrap();
                let cpu = decompress(&mut in_memory(&bytes), None, &|_| {}).unwrap();
                let dev = multires_cuda::codec::decompress(
                    &mut in_memory(&bytes),
                    None,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert_eq!(cpu.dims, dev.dims);
                assert_eq!(cpu.dtype(), dev.dtype(), "decoded to the stored type");
                let same = cpu
                    .data
                    .to_f64()
                    .iter()
                    .zip(&dev.data.to_f64())
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{t} {bound} {:?}: GPU decode differs", v.dims);
                let streamed = multires_cuda::codec::decompress_streamed(
                    &mut in_memory(&bytes),
                    None,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert!(
                    streamed.data == dev.data,
                    "{t} {bound} {:?}: decoded in batches to the host, values differ",
                    v.dims
                );
                // The file in page-locked memory: its streams go up from
                // where they lie, with the same values.
                let locked = multires_cuda::codec::PinnedBytes::copy_of(&gpu, &bytes)
                    .unwrap()
                    .shared();
                let before = multires_cuda::codec::direct_batches();
                let from_locked = multires_cuda::codec::decompress(
                    &mut MrzReader::from_shared(locked.clone(), "t").unwrap(),
                    None,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert!(
                    from_locked.data == dev.data,
                    "{t} {bound} {:?}: decode from page-locked bytes differs",
                    v.dims
                );
                if t == Lifting::Interp && bound != ErrorBound::Abs(0.0) {
                    assert!(
                        multires_cuda::codec::direct_batches() > before,
                        "{t} {bound}: the streams were gathered, not copied from where they lie"
                    );
                }
                let r = multires::codec::parse_region(region, &v.shape()).unwrap();
                let c = decompress(&mut in_memory(&bytes), Some(r), &|_| {}).unwrap();
                let g = multires_cuda::codec::decompress(
                    &mut in_memory(&bytes),
                    Some(r),
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert!(c.data == g.data && c.dims == g.dims, "{t} {bound}: region");
                let g = multires_cuda::codec::decompress(
                    &mut MrzReader::from_shared(locked, "t").unwrap(),
                    Some(r),
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .unwrap();
                assert!(
                    c.data == g.data && c.dims == g.dims,
                    "{t} {bound}: region from page-locked bytes"
                );
            }
        }
    }
    // A damaged brick in a file held in memory (its checksum verified
    // while the kernels decode): an error naming the brick, from every
    // GPU decoder, with the file in ordinary or page-locked memory,
    // whether the damage is in the brick's rANS data or in its last byte
    // (its outlier counts: the checksum's error comes first).
    let v = &cases[0].0;
    let mut o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    o.brick = Some([16, 16, 16]);
    let (good, _) = compress(v, &o, &|_| {}).unwrap();
    let idx_off = u64::from_le_bytes(good[86..94].try_into().unwrap()) as usize;
    let e = 20 * 5;
    let (off, len) = (
        u64::from_le_bytes(good[idx_off + e..idx_off + e + 8].try_into().unwrap()) as usize,
        u64::from_le_bytes(good[idx_off + e + 8..idx_off + e + 16].try_into().unwrap()) as usize,
    );
    for at in [off + len / 2, off + len - 1] {
        let mut bytes = good.clone();
        bytes[at] ^= 0x10;
        let shape = v.shape();
        let mut out = multires_cuda::codec::PinnedField::zeros(&gpu, &shape).unwrap();
        for locked in [false, true] {
            let held: multires::codec::SharedBytes = if locked {
                multires_cuda::codec::PinnedBytes::copy_of(&gpu, &bytes)
                    .unwrap()
                    .shared()
            } else {
                std::sync::Arc::new(bytes.clone())
            };
            let open = || MrzReader::from_shared(held.clone(), "bad.mrz").unwrap();
            let errs = [
                multires_cuda::codec::decompress(
                    &mut open(),
                    None,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .map(|_| ())
                .unwrap_err(),
                multires_cuda::codec::decompress_resident(&mut open(), &gpu, &|_| {})
                    .map(|_| ())
                    .unwrap_err(),
                multires_cuda::codec::decompress_pinned(
                    &mut open(),
                    &mut out,
                    std::slice::from_ref(&gpu),
                    &|_| {},
                )
                .map(|_| ())
                .unwrap_err(),
            ];
            for e in errs {
                let e = e.to_string();
                assert!(
                    e.contains("brick 5") && e.contains("checksum"),
                    "page-locked {locked}, byte {} of {len}: {e}",
                    at - off
                );
            }
        }
    }
    // Files of versions 3 and 4 (the details in Morton order, and in the
    // second a split chunk), and of version 6 (rANS contexts restarting
    // every 4,096 values, where version 7's restart every 2,048) decode on
    // the GPU as on the CPU.
    for file in [
        "v3_wave40.mrz",
        "v4_wave40.mrz",
        "v6/v6_interp_f32_bricks.mrz",
        "v6/v6_interp_f32_fine.mrz",
        "v6/v6_interp_f32_chunks.mrz",
        "v6/v6_interp_f64_2d.mrz",
        "v6/v6_interp_f64_exact.mrz",
        "v6/v6_cdf97_f32.mrz",
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data")
            .join(file);
        let bytes = std::fs::read(&path).unwrap();
        let cpu = decompress(&mut in_memory(&bytes), None, &|_| {}).unwrap();
        let dev = multires_cuda::codec::decompress(
            &mut in_memory(&bytes),
            None,
            std::slice::from_ref(&gpu),
            &|_| {},
        )
        .unwrap();
        assert!(cpu.data == dev.data, "{file}: GPU decode differs");
    }
    // A brick whose stream is damaged but whose CRC was fixed up: the CPU
    // decoder's error, naming the brick, or exactly the CPU's values.
    let v = &cases[0].0;
    for t in [Lifting::Cdf97, Lifting::Interp] {
        let mut o = CodecOptions::new(t, ErrorBound::Rel(1e-3));
        o.brick = Some([16, 16, 16]);
        let (bytes, _) = compress(v, &o, &|_| {}).unwrap();
        let idx_off = u64::from_le_bytes(bytes[86..94].try_into().unwrap()) as usize;
        let (off, len) = (
            u64::from_le_bytes(bytes[idx_off..idx_off + 8].try_into().unwrap()) as usize,
            u64::from_le_bytes(bytes[idx_off + 8..idx_off + 16].try_into().unwrap()) as usize,
        );
        let mut checked = 0;
        for pos in (off + 8..off + len).step_by(7).take(300) {
            let mut bad = bytes.clone();
            bad[pos] ^= 0x5a;
            let crc = crc32fast::hash(&bad[off..off + len]);
            bad[idx_off + 16..idx_off + 20].copy_from_slice(&crc.to_le_bytes());
            let icrc = crc32fast::hash(&bad[idx_off..bad.len() - 4]);
            let n = bad.len();
            bad[n - 4..].copy_from_slice(&icrc.to_le_bytes());
            let c = decompress(&mut in_memory(&bad), None, &|_| {});
            let g = multires_cuda::codec::decompress(
                &mut in_memory(&bad),
                None,
                std::slice::from_ref(&gpu),
                &|_| {},
            );
            match (c, g) {
                (Ok(c), Ok(g)) => assert!(c.data == g.data, "byte {pos}: decodes differ"),
                (Err(c), Err(g)) => {
                    assert!(g.to_string().contains("brick 0"), "{g}");
                    assert!(g.to_string().contains(&c.to_string()), "{g} vs {c}");
                }
                (c, g) => panic!("byte {pos}: CPU {:?}, GPU {:?}", c.is_ok(), g.is_ok()),
            }
            checked += 1;
        }
        assert!(checked > 100, "{t}");
    }
}

/// A field that lives on the GPU: compressed there into the same bytes as
/// the host path (every transform, bounds that leave outliers, 2-D and 3-D,
/// bricks of several shapes), decoded there into the CPU's values; a NaN
/// is an error that names its index.
#[test]
fn codec_on_a_device_resident_or_pinned_field_equals_the_host_path() {
    use multires::codec::fields::{make, FieldKind};
    use multires::codec::{compress, decompress, CodecOptions, DType, ErrorBound, Lifting};
    use multires::codec::{MrzReader, Volume};
    use multires_cuda::codec::{compress_pinned, decompress_pinned, PinnedField};
    use multires_cuda::codec::{compress_resident, decompress_resident, DeviceField};
    use multires_cuda::codec::{compress_slabs, decompress_slabs, SlabField};
    use multires_cuda::codec::{set_tuning, Tuning};
    let Some(gpu) = gpu_or_skip("codec_on_a_device_resident_or_pinned_field_equals_the_host_path")
    else {
        return;
    };
    // A page-locked field is read and written by every GPU, each twice
    // over (two lists of slots), so shares and batches cross GPUs.
    let gpus: Vec<_> = (0..multires_cuda::device_count())
        .flat_map(|i| {
            let g = multires_cuda::gpu_at(i).unwrap();
            [g.clone(), g]
        })
        .collect();
    let f3 = make(FieldKind::Turbulent, 40, true, 11);
    let f2 = make(FieldKind::Smooth, 90, false, 3);
    // The last 3-D case has 8 brick layers: each slab of the page-locked
    // field goes up (and comes down) in several groups of layers.
    let cases: [(Vec<usize>, Vec<f32>, [usize; 3]); 4] = [
        (vec![40, 40, 40], f3.clone(), [16, 16, 16]),
        (vec![40, 40, 40], f3.clone(), [17, 33, 17]),
        (vec![90, 90], f2, [1, 32, 32]),
        (vec![40, 40, 40], f3, [5, 40, 40]),
    ];
    let mut checked = 0;
    for (shape, values, brick) in &cases {
        let v = Volume::new(
            shape,
            values.iter().map(|&x| x as f64).collect(),
            DType::F32,
        )
        .unwrap();
        let field = DeviceField::upload(&gpu, shape, values).unwrap();
        let pinned = PinnedField::from_values(&gpu, shape, values).unwrap();
        // The same values after `as_mut_slice`: the range the host took
        // while writing them is forgotten, so the devices take it.
        let mut unknown = PinnedField::from_values(&gpu, shape, values).unwrap();
        let _ = unknown.as_mut_slice();
        let mut pinned_out = PinnedField::zeros(&gpu, shape).unwrap();
        for t in Lifting::ALL {
            for bound in [
                ErrorBound::Rel(1e-4),
                ErrorBound::Rel(1e-2),
                ErrorBound::Abs(0.0),
                // A positive absolute bound: the pinned path codes each
                // group of layers as it arrives.
                ErrorBound::Abs(2e-3),
            ] {
                let mut o = CodecOptions::new(t, bound);
                o.brick = Some(*brick);
                let (cpu, _) = compress(&v, &o, &|_| {}).unwrap();
                let (dev, stats, _) = compress_resident(&field, &o, &gpu, &|_| {}).unwrap();
                let dev = dev.to_vec();
                assert!(
                    cpu == dev,
                    "{t} {bound} {shape:?}: resident {} bytes, CPU {} bytes, first difference at {:?}",
                    dev.len(),
                    cpu.len(),
                    cpu.iter().zip(&dev).position(|(a, b)| a != b)
                );
                assert!(stats.max_error <= stats.abs_bound);
                let want = decompress(&mut in_memory(&cpu), None, &|_| {})
                    .unwrap()
                    .data
                    .to_f64();
                // Decoded float32 values equal the CPU decoder's, bit for bit.
                let same_as_cpu = |got: &[f32]| {
                    want.iter()
                        .zip(got)
                        .all(|(a, &b)| a.to_bits() == (b as f64).to_bits())
                };
                let back = decompress_resident(&mut in_memory(&cpu), &gpu, &|_| {}).unwrap();
                assert_eq!(back.info.shape(), *shape);
                assert!(
                    same_as_cpu(&back.download(&gpu).unwrap()),
                    "{t} {bound} {shape:?}: resident decode differs from the CPU's"
                );
                let locked = multires_cuda::codec::PinnedBytes::copy_of(&gpu, &cpu)
                    .unwrap()
                    .shared();
                let back = decompress_resident(
                    &mut MrzReader::from_shared(locked, "t").unwrap(),
                    &gpu,
                    &|_| {},
                )
                .unwrap();
                assert!(
                    same_as_cpu(&back.download(&gpu).unwrap()),
                    "{t} {bound} {shape:?}: resident decode from page-locked bytes differs from the CPU's"
                );
                // Slabs of brick layers in the GPUs' memory (each GPU
                // twice): the bytes, and the values decoded into slabs.
                let brick_of = o.grid(v.info().dims).unwrap().brick;
                let slabs = SlabField::upload(&gpus, shape, values, brick_of).unwrap();
                let (sl, _, run) = compress_slabs(&slabs, &o, &|_| {}).unwrap();
                assert_eq!(run.gpus, gpus.len());
                assert!(
                    sl.equals(&cpu),
                    "{t} {bound} {shape:?}: slabs on {} GPU lists: bytes differ from the CPU's",
                    gpus.len()
                );
                let back = decompress_slabs(&mut in_memory(&cpu), &gpus, &|_| {}).unwrap();
                assert_eq!(back.info.shape(), *shape);
                assert!(
                    same_as_cpu(&back.download().unwrap()),
                    "{t} {bound} {shape:?}: decode into slabs differs from the CPU's"
                );
                // Slabs on the devices, then slabs left on the host.
                for across in [false, true] {
                    let tune = Tuning {
                        slabs_on_host: across,
                        ..Tuning::DEFAULT
                    };
                    set_tuning(tune);
                    let (pin, _, run) = compress_pinned(&pinned, &o, &gpus, &|_| {}).unwrap();
                    let pin = pin.to_vec();
                    assert_eq!(run.gpus, gpus.len());
                    let (pin2, _, _) = compress_pinned(&unknown, &o, &gpus, &|_| {}).unwrap();
                    assert!(
                        pin2.equals(&cpu),
                        "{t} {bound} {shape:?} across PCIe {across}: pinned, range not known on the host: bytes differ from the CPU's"
                    );
                    assert!(
                        cpu == pin,
                        "{t} {bound} {shape:?} across PCIe {across}: pinned {} bytes, CPU {} bytes, first difference at {:?}",
                        pin.len(),
                        cpu.len(),
                        cpu.iter().zip(&pin).position(|(a, b)| a != b)
                    );
                    // The decoder copies the slab down whole, or in
                    // groups of layers as each is placed, its batches
                    // kept a few (or one) behind the earliest.
                    // Pieces of brick rows (rows "1") as well as layers.
                    for (groups, ahead, rows) in [
                        (1, (8, 4), false),
                        (4, (8, 4), false),
                        (16, (8, 4), false),
                        (16, (1, 1), false),
                        (16, (8, 4), true),
                    ] {
                        set_tuning(Tuning {
                            decode_groups: groups,
                            decode_ahead: ahead,
                            rows_down: rows,
                            ..tune
                        });
                        pinned_out.as_mut_slice().fill(f32::NAN);
                        decompress_pinned(&mut in_memory(&cpu), &mut pinned_out, &gpus, &|_| {})
                            .unwrap();
                        assert!(
                            same_as_cpu(pinned_out.as_slice()),
                            "{t} {bound} {shape:?} across PCIe {across}, {groups} group(s), {ahead:?} ahead, rows {rows}: pinned decode differs from the CPU's"
                        );
                    }
                    set_tuning(Tuning::DEFAULT);
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 64);
    // A NaN: the error names where it is, as the host path's does.
    let mut bad = make(FieldKind::Smooth, 24, true, 1);
    bad[1234] = f32::NAN;
    let field = DeviceField::upload(&gpu, &[24, 24, 24], &bad).unwrap();
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    let Err(e) = compress_resident(&field, &o, &gpu, &|_| {}) else {
        panic!("a NaN must be refused");
    };
    assert!(e.to_string().contains("1234"), "{e}");
    // In a page-locked field, the first NaN is named whichever GPU's share
    // and group of layers holds it (here the last layer, then also the
    // first), under a relative bound (the range first) and an absolute one
    // (layers coded as they arrive), with slabs on the devices or not.
    bad[1234] = 0.5;
    bad[13800] = f32::NAN;
    for across in [false, true] {
        set_tuning(Tuning {
            slabs_on_host: across,
            ..Tuning::DEFAULT
        });
        for bound in [ErrorBound::Rel(1e-3), ErrorBound::Abs(1e-3)] {
            let mut o = CodecOptions::new(Lifting::Interp, bound);
            o.brick = Some([4, 8, 8]);
            let mut p = PinnedField::from_values(&gpu, &[24, 24, 24], &bad).unwrap();
            let Err(e) = compress_pinned(&p, &o, &gpus, &|_| {}) else {
                panic!("a NaN must be refused");
            };
            assert!(e.to_string().contains("value 13800 is NaN"), "{bound}: {e}");
            p.as_mut_slice()[7] = f32::INFINITY;
            let Err(e) = compress_pinned(&p, &o, &gpus, &|_| {}) else {
                panic!("an infinity must be refused");
            };
            assert!(e.to_string().contains("value 7 is inf"), "{bound}: {e}");
        }
        set_tuning(Tuning::DEFAULT);
    }
    // Slabs: the NaN named by its index in the whole field (it lies in a
    // later slab), and slabs not cut at the bricks' layers refused.
    let os = {
        let mut os = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
        os.brick = Some([4, 8, 8]);
        os
    };
    let slabs = SlabField::upload(&gpus, &[24, 24, 24], &bad, [4, 8, 8]).unwrap();
    let Err(e) = compress_slabs(&slabs, &os, &|_| {}) else {
        panic!("a NaN in a slab must be refused");
    };
    assert!(e.to_string().contains("value 13800 is NaN"), "{e}");
    bad[13800] = 0.25;
    if gpus.len() > 1 {
        let cut = SlabField::upload(&gpus, &[24, 24, 24], &bad, [5, 8, 8]).unwrap();
        let Err(e) = compress_slabs(&cut, &os, &|_| {}) else {
            panic!("slabs not cut at brick layers must be refused");
        };
        assert!(e.to_string().contains("whole layers of 4 planes"), "{e}");
    }
    // A decoded field must have the file's shape.
    let (b24, _) = compress(
        &Volume::new(&[24, 24, 24], vec![1.0; 13824], DType::F32).unwrap(),
        &o,
        &|_| {},
    )
    .unwrap();
    let mut wrong = PinnedField::zeros(&gpu, &[24, 24, 25]).unwrap();
    let Err(e) = decompress_pinned(&mut in_memory(&b24), &mut wrong, &gpus, &|_| {}) else {
        panic!("a field of another shape must be refused");
    };
    assert!(e.to_string().contains("[24, 24, 25]"), "{e}");
    // A float64 file cannot be decoded into a float32 field.
    let v = Volume::new(&[8, 8], (0..64).map(|i| i as f64).collect(), DType::F64).unwrap();
    let (b64, _) = compress(&v, &o, &|_| {}).unwrap();
    let Err(e) = decompress_resident(&mut in_memory(&b64), &gpu, &|_| {}) else {
        panic!("a float64 file must be refused");
    };
    assert!(e.to_string().contains("float64"), "{e}");
    let mut f8 = PinnedField::zeros(&gpu, &[8, 8]).unwrap();
    let Err(e) = decompress_pinned(&mut in_memory(&b64), &mut f8, &gpus, &|_| {}) else {
        panic!("a float64 file must be refused");
    };
    assert!(e.to_string().contains("float64"), "{e}");
}

/// Batches above 240M values (an earlier encoder's streams failed there):
/// a 1024^3 field on one device cut into one share, so its 129^3 bricks go
/// in batches of up to 128 (275M values); the bytes equal the CPU's, for
/// the smooth and the turbulent field.
#[test]
fn a_batch_above_240m_values_writes_the_cpus_bytes() {
    use multires::codec::{self, fields, CodecOptions, ErrorBound, Lifting, Values, Volume};
    use multires_cuda::codec::{compress_resident, set_tuning, DeviceField, Tuning};
    let Some(gpu) = gpu_or_skip("a_batch_above_240m_values_writes_the_cpus_bytes") else {
        return;
    };
    let n = 1024;
    let shape = [n, n, n];
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    set_tuning(Tuning {
        resident_shares: 1,
        ..Tuning::DEFAULT
    });
    for kind in [fields::FieldKind::Smooth, fields::FieldKind::Turbulent] {
        let f = fields::make(kind, n, true, 1);
        let field = DeviceField::upload(&gpu, &shape, &f).unwrap();
        let (dev, _, run) = compress_resident(&field, &o, &gpu, &|_| {}).unwrap();
        drop(field);
        let most = run.max_bricks_per_batch * 129 * 129 * 129;
        assert!(
            most > 240_000_000,
            "{kind:?}: batches of at most {most} values"
        );
        let v = Volume::of(&shape, Values::F32(f)).unwrap();
        let (cpu, _) = codec::compress(&v, &o, &|_| {}).unwrap();
        assert!(
            dev.equals(&cpu),
            "{kind:?}: batches of {most} values: bytes differ from the CPU's"
        );
    }
    set_tuning(Tuning::DEFAULT);
}

/// Version 8 files the CPU wrote (NaN kept as outliers, integers, 1-D and
/// 4-D shapes) decode on the GPU to the CPU's values; lossless files and
/// lossless coding, and fields with NaN, are refused with the reason.
#[test]
fn the_gpu_decodes_nan_integer_and_reshaped_files_and_refuses_lossless() {
    use multires::codec::{compress, decompress, CodecOptions, DType, Elem, ErrorBound, Lifting};
    use multires::codec::{Values, Volume};
    let Some(gpu) =
        gpu_or_skip("the_gpu_decodes_nan_integer_and_reshaped_files_and_refuses_lossless")
    else {
        return;
    };
    let n = 30 * 41 * 37;
    let smooth = |i: usize| ((i as f64) * 0.001).sin() * 50.0 + ((i % 41) as f64 * 0.2).cos();
    let mut nan: Vec<f32> = (0..n).map(|i| smooth(i) as f32).collect();
    nan[17] = f32::NAN;
    nan[900] = f32::NEG_INFINITY;
    let ints: Vec<f32> = (0..n)
        .map(|i| (smooth(i) * 20.0).round() as f32 + 2000.0)
        .collect();
    let mut cases: Vec<(Volume, CodecOptions)> = Vec::new();
    cases.push((
        Volume::of(&[30, 41, 37], Values::F32(nan.clone())).unwrap(),
        CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3)),
    ));
    let mut o = CodecOptions::new(Lifting::Interp, ErrorBound::Abs(2.0));
    o.elem = Some(Elem::U16);
    cases.push((Volume::of(&[30, 41, 37], Values::F32(ints)).unwrap(), o));
    let mut o = CodecOptions::new(Lifting::Interp, ErrorBound::Abs(1e-2));
    o.axes = Some(vec![5, 6, 41, 37]);
    cases.push((
        Volume::of(
            &[30, 41, 37],
            Values::F32((0..n).map(|i| smooth(i) as f32).collect()),
        )
        .unwrap(),
        o,
    ));
    let mut o = CodecOptions::new(Lifting::Cdf97, ErrorBound::Abs(1e-3));
    o.axes = Some(vec![n]);
    cases.push((
        Volume::of(&[1, n], Values::F64((0..n).map(smooth).collect())).unwrap(),
        o,
    ));
    for (v, o) in &cases {
        let (bytes, _) = compress(v, o, &|_| {}).unwrap();
        let cpu = decompress(&mut in_memory(&bytes), None, &|_| {}).unwrap();
        let dev = multires_cuda::codec::decompress(
            &mut in_memory(&bytes),
            None,
            std::slice::from_ref(&gpu),
            &|_| {},
        )
        .unwrap();
        let bits = |x: &Values| x.to_f64().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&dev.data),
            bits(&cpu.data),
            "{:?} {:?}",
            o.bound,
            o.axes
        );
    }
    // The GPU codes finite fields: NaN is named, for the CPU.
    let v = Volume::of(&[30, 41, 37], Values::F32(nan)).unwrap();
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Abs(1e-3));
    let e = multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {})
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.to_lowercase().contains("nan") || e.contains("finite"),
        "{e}"
    );
    // Lossless: neither coded nor decoded on the GPU.
    let v = Volume::new(&[20, 20], (0..400).map(smooth).collect(), DType::F64).unwrap();
    let o = CodecOptions::new(Lifting::Interp, ErrorBound::Lossless);
    let e = multires_cuda::codec::compress(&v, &o, std::slice::from_ref(&gpu), None, &|_| {})
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("lossless"), "{e}");
    let (bytes, _) = compress(&v, &o, &|_| {}).unwrap();
    let e = multires_cuda::codec::decompress(&mut in_memory(&bytes), None, &[gpu], &|_| {})
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("lossless"), "{e}");
}
