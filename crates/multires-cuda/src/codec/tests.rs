use super::*;

/// Every value of a slab is in exactly one piece, whose rows say where
/// (as the copies and the range read them), and every brick of the
/// slab is held by exactly the piece its values are in.
#[test]
fn slab_pieces_tile_the_slab_by_bricks() {
    let cases = [
        ([1024, 1024, 1024], [129, 129, 129], (516, 1024), 16),
        ([1024, 1024, 1024], [129, 129, 129], (0, 1024), 16),
        ([300, 70, 33], [32, 16, 16], (0, 300), 16),
        ([300, 70, 33], [32, 16, 16], (128, 288), 64),
        ([9, 5, 7], [4, 4, 4], (0, 9), 3),
        ([9, 5, 7], [4, 4, 4], (8, 9), 1),
    ];
    for (dims, brick, (z0, z1), most) in cases {
        let grid = codec::BrickGrid { dims, brick };
        let pieces = slab_pieces(&grid, (z0, z1), most, true);
        let plane = dims[1] * dims[2];
        let mut seen = vec![0u8; (z1 - z0) * plane];
        for p in &pieces {
            let (at, r) = p.rows(dims, z0);
            assert!(r.width <= r.pitch && r.width > 0, "{p:?}: {r:?}");
            for row in 0..r.rows {
                for x in 0..r.width {
                    seen[at + row * r.pitch + x] += 1;
                }
            }
        }
        assert!(
            seen.iter().all(|&c| c == 1),
            "{dims:?} {brick:?} {z0}..{z1}"
        );
        for k in 0..grid.len() {
            let (start, ext) = grid.bounds(k);
            if !(z0..z1).contains(&start[0]) {
                continue;
            }
            let holders: Vec<&Piece> = pieces.iter().filter(|p| p.holds(start)).collect();
            assert_eq!(holders.len(), 1, "brick {k}");
            let p = holders[0];
            assert!(start[0] + ext[0] <= p.z.1 && start[1] + ext[1] <= p.y.1);
        }
    }
    // Enough layers: whole layers, one copy each.
    let grid = codec::BrickGrid {
        dims: [1024, 1024, 1024],
        brick: [129, 129, 129],
    };
    let whole = slab_pieces(&grid, (0, 1024), 8, true);
    assert_eq!(whole.len(), 8);
    assert!(whole.iter().all(|p| p.y == (0, 1024)));
    assert_eq!(whole[0].rows([1024; 3], 0).1.rows, 1);
    // Two GPUs' slabs of 4 layers: 16 pieces of two brick rows.
    let half = slab_pieces(&grid, (516, 1024), 16, true);
    assert_eq!(half.len(), 16);
    assert_eq!(half[1].y, (258, 516));
}

#[test]
fn host_ranges_join_like_the_devices() {
    let v = [3.0f32, f32::NAN, -2.0, 7.5, f32::INFINITY, 0.25];
    let whole = host_range(0, &v);
    assert_eq!(whole, (-2.0, 7.5, Some(1)));
    // Pieces in any order give the whole range and the first bad index.
    let a = host_range(0, &v[..3]);
    let b = host_range(3, &v[3..]);
    assert_eq!(b, (0.25, 7.5, Some(4)));
    assert_eq!(join_ranges(a, b), whole);
    assert_eq!(join_ranges(b, a), whole);
    let none = (f32::INFINITY, f32::NEG_INFINITY, None);
    assert_eq!(join_ranges(none, b), b);
    assert_eq!(host_range(9, &[]), none);
    // All finite: the vectorized scan's answer, over more than a chunk.
    let w: Vec<f32> = (0..70_000).map(|i| (i as f32 * 0.37).sin() * 4.0).collect();
    let (lo, hi) = w
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    assert_eq!(host_range(5, &w), (lo, hi, None));
}

#[test]
fn packed_lists_start_on_16_byte_boundaries_after_the_streams() {
    let (offs, all) = packed_layout(1000 + RDEC_PAD, &[8, 0, 20, 3]);
    assert_eq!(offs, vec![1264, 1280, 1280, 1312]);
    assert_eq!(all, 1328);
    // Each list fits before the next, and the streams' padding stays.
    for (k, &o) in offs.iter().enumerate() {
        assert_eq!(o % 16, 0);
        assert!(o >= 1000 + RDEC_PAD);
        let end = o + [8, 0, 20, 3][k];
        assert!(end <= offs.get(k + 1).copied().unwrap_or(all));
    }
    assert_eq!(packed_layout(0, &[]), (vec![], 0));
}

/// Streams copied up in spans land where `at` says, with every
/// stream's bytes intact, and only streams of one buffer, in order
/// and close together, share a copy.
#[test]
fn stream_spans_copy_every_stream_to_its_place() {
    let file: Vec<u8> = (0..(SPAN_GAP * 3) as u32)
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    let other: Vec<u8> = (0..64u8).collect();
    let range = |b: &[u8]| b.as_ptr() as usize..b.as_ptr() as usize + b.len();
    let (fr, or) = (range(&file), range(&other));
    let streams: Vec<(&[u8], std::ops::Range<usize>)> = vec![
        (&file[10..20], fr.clone()),
        // 100 bytes on: same copy.
        (&file[120..200], fr.clone()),
        // More than SPAN_GAP on: a copy of its own.
        (&file[SPAN_GAP + 300..SPAN_GAP + 310], fr.clone()),
        // Before the last one: a copy of its own.
        (&file[50..60], fr.clone()),
        // Another buffer: a copy of its own.
        (&other[0..8], or.clone()),
        (&file[70..80], fr.clone()),
    ];
    let sp = stream_spans(streams.clone());
    assert_eq!(sp.copies.len(), 5);
    assert_eq!(sp.at.len(), streams.len());
    let mut up = vec![0u8; sp.total];
    for (from, at) in &sp.copies {
        up[*at..*at + from.len()].copy_from_slice(from);
    }
    for ((st, _), &at) in streams.iter().zip(&sp.at) {
        assert_eq!(&up[at..at + st.len()], *st);
    }
    // The first two share a copy of 190 bytes, gap included.
    assert_eq!(sp.copies[0].0.len(), 190);
    assert_eq!(sp.total, 190 + 10 + 10 + 8 + 10);
    assert_eq!(stream_spans(Vec::new()).total, 0);
}

/// A smooth row has no finest detail above a bound of its range's
/// thousandth; a noisy one has most; rows too short for the cubic
/// have none.
#[test]
fn finest_dense_tells_noise_from_a_smooth_row() {
    let w = 64;
    let smooth: Vec<f32> = (0..4 * w).map(|i| ((i % w) as f32 * 0.05).sin()).collect();
    assert!(!finest_dense([&smooth[..]], w, 1e-3));
    let noise: Vec<f32> = multires::signal::noise(4 * w, 9)
        .into_iter()
        .map(|v| v as f32)
        .collect();
    assert!(finest_dense([&noise[..]], w, 1e-3));
    // Judged on all samples: one dense sample among smooth ones is a
    // third of the rows, above the dense share.
    assert!(finest_dense(
        [&smooth[..], &noise[..], &smooth[..]],
        w,
        1e-3
    ));
    // A bound above every detail.
    assert!(!finest_dense([&noise[..]], w, 10.0));
    assert!(!finest_dense([&noise[..6]], 6, 0.0));
    assert!(!finest_dense([], w, 0.0));
}

/// A sparse slab on each of several GPUs is cut into the batches of
/// one GPU's whole field, never fewer than two; a dense one into as
/// many as one GPU's whole field.
#[test]
fn slabs_are_cut_into_batches_of_one_gpus_size() {
    let shares = |gpus, dense| slab_shares(gpus, || Ok(dense)).ok();
    assert_eq!(shares(1, false), Some(RESIDENT_SHARES));
    assert_eq!(shares(1, true), Some(RESIDENT_SHARES));
    assert_eq!(shares(2, false), Some(RESIDENT_SHARES / 2));
    assert_eq!(shares(2, true), Some(RESIDENT_SHARES));
    assert_eq!(shares(0, false), Some(RESIDENT_SHARES));
    assert_eq!(shares(64, false), Some(2));
    // One GPU never samples the field.
    let asked = slab_shares(1, || Err(CudaError::Unsupported("asked".into())));
    assert_eq!(asked.ok(), Some(RESIDENT_SHARES));
    // `compress_slabs` samples exactly where `slab_shares` asks.
}

#[test]
fn tile_classes_mark_each_class_of_a_tile_once() {
    let mut cl = vec![0u8; 70];
    cl[3] = 2;
    cl[40] = 9;
    cl[41] = 7;
    cl[69] = 5;
    assert_eq!(tile_classes(&cl), vec![0b101, 0b1000_0001, 0b10_0001]);
    // A tile of one class; and the interpolation's own classes, every
    // value's class present in its tile.
    assert_eq!(tile_classes(&[4; 32]), vec![1 << 4]);
    let dims = [9, 17, 33];
    let cl = interp::classes(dims, interp::Order::LazyMorton);
    let t = tile_classes(&cl);
    assert_eq!(t.len(), cl.len().div_ceil(32));
    for (i, &c) in cl.iter().enumerate() {
        assert_ne!(t[i / 32] & 1 << c.min(7), 0, "value {i}");
    }
}

#[test]
fn rdec_blocks_hold_a_bricks_chunks_within_the_shared_memory() {
    // A smooth 129^3 brick (33 chunks) takes two warps; four such
    // blocks fit the H100's 228 KiB of shared memory an SM.
    assert_eq!(rdec_warps(33), 2);
    assert_eq!(rdec_warps(1), 1);
    assert_eq!(rdec_warps(0), 1);
    assert_eq!(rdec_warps(132), 5);
    assert_eq!(rdec_warps(100_000), RDEC_MAX_WARPS);
    assert!(4 * (rdec_smem(2) + 1024) <= 228 * 1024);
    assert!(rdec_smem(RDEC_MAX_WARPS) <= 227 * 1024);
}

#[test]
fn a_field_address_reaches_the_waiting_slots_or_its_error_does() {
    let cell = FieldAt::default();
    std::thread::scope(|sc| {
        let waiter = sc.spawn(|| cell.get());
        std::thread::sleep(std::time::Duration::from_millis(20));
        cell.answer(Ok(4096));
        assert_eq!(waiter.join().ok().and_then(|r| r.ok()), Some(4096));
    });
    // A guard's late error does not replace the address.
    cell.answer(Err("stopped".into()));
    assert_eq!(cell.get().ok(), Some(4096));
    let failed = FieldAt::default();
    failed.answer(Err("no memory".into()));
    let e = failed
        .get()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("no memory"), "{e}");
}

#[test]
fn batches_in_order_wait_only_for_earlier_unfinished_ones() {
    // Entropy decoding at most 2, the inverse at most 1 unfinished
    // batch behind the earliest.
    let order = InOrder::new(4, (2, 1));
    let first = order.turn(0);
    first.wait(DecodePhase::Inverse);
    let second = order.turn(1);
    second.wait(DecodePhase::Entropy);
    let third = order.turn(2);
    let (started, inverse) = (AtomicUsize::new(0), AtomicUsize::new(0));
    std::thread::scope(|sc| {
        sc.spawn(|| {
            third.wait(DecodePhase::Entropy);
            started.store(1, Ordering::SeqCst);
            third.wait(DecodePhase::Inverse);
            inverse.store(1, Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(
            started.load(Ordering::SeqCst),
            0,
            "two unfinished before it"
        );
        drop(first);
        // Polled, so a slow machine does not fail it.
        let t0 = std::time::Instant::now();
        while started.load(Ordering::SeqCst) == 0 && t0.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(
            started.load(Ordering::SeqCst),
            1,
            "one unfinished before it"
        );
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert_eq!(
            inverse.load(Ordering::SeqCst),
            0,
            "its inverse waits for batch 1"
        );
        // A batch that ends early (an error) still frees the ones after.
        drop(second);
    });
    assert_eq!(inverse.load(Ordering::SeqCst), 1);
    drop(third);
    order.turn(3).wait(DecodePhase::Inverse);
}

#[test]
fn table_addresses_point_where_write_tables_puts_each_part() {
    // Three bricks' tables, every word telling its brick and part.
    let owned: Vec<rans::Tables> = (0..3u32)
        .map(|b| rans::Tables {
            freq: Vec::new(),
            cum: vec![100 + b; CUM_BYTES / 4],
            scale: vec![200 + b; SCALE_BYTES / 4],
        })
        .collect();
    let tables: Vec<&rans::Tables> = owned.iter().collect();
    let mut dst = vec![0u8; tables_bytes(&tables).unwrap()];
    write_tables(&mut dst, &tables);
    let at = 4096u64;
    let (cum, scale) = table_addresses(at, tables.len());
    let word = |addr: u64| {
        let i = (addr - at) as usize;
        u32::from_le_bytes([dst[i], dst[i + 1], dst[i + 2], dst[i + 3]])
    };
    for b in 0..3u64 {
        assert_eq!(word(cum + b * CUM_BYTES as u64), 100 + b as u32);
        assert_eq!(word(cum + (b + 1) * CUM_BYTES as u64 - 4), 100 + b as u32);
        assert_eq!(word(scale + b * SCALE_BYTES as u64), 200 + b as u32);
    }
    assert_eq!(scale - at + 3 * SCALE_BYTES as u64, dst.len() as u64);
}

#[test]
fn renc_tables_match_the_kernel() {
    // RENC_SMEM's size is checked where it is defined; its layout
    // must be the kernel's.
    let src = crate::kernels::CODEC_SOURCE;
    assert!(src.contains("#define R_CU16_WORDS ((R_NCTX * (R_NSYM + 1) + 1) / 2)\n"));
}

#[test]
fn the_last_large_batch_is_halved_once_where_little_codes_after_it() {
    let per_value = Use::EncodeInterp.per_value(DType::F32);
    // GPU 0's slab (four full layers): 60 M batches, two of the edge
    // shapes (56 M) and the corners (7.6 M) last.
    let mut plan = plan_batches(vec![slab_1024(0)], 120 << 30, per_value, (16, 8, 128)).unwrap();
    let before = plan.caps();
    halve_last_large(&mut plan);
    let after = plan.caps();
    assert_eq!(after.len(), before.len() + 1, "{before:?} -> {after:?}");
    assert_eq!(plan.group.len(), after.len());
    let n = before.len();
    assert_eq!(after[..n - 2], before[..n - 2]);
    assert_eq!(after[n - 2] + after[n - 1], before[n - 2], "{after:?}");
    assert_eq!(after[n], before[n - 1]);
    assert!(after.windows(2).all(|w| w[0] >= w[1]), "{after:?}");
    let mut bricks: Vec<usize> = plan.batches.iter().flat_map(|(_, l)| l.clone()).collect();
    bricks.sort_unstable();
    assert_eq!(bricks, (0..256).collect::<Vec<_>>());
    // Once: the halves have the corners' batch and each other after them.
    halve_last_large(&mut plan);
    assert_eq!(plan.caps(), after);
    // GPU 1's slab ends in its thin layer's small batches: no cut.
    let mut plan = plan_batches(vec![slab_1024(1)], 120 << 30, per_value, (16, 8, 128)).unwrap();
    let before = plan.caps();
    halve_last_large(&mut plan);
    assert_eq!(plan.caps(), before);
}

#[test]
fn crc_x8n_joins_checksums_as_crc32fast() {
    // CRC_FOLD joins the pieces' checksums with crc_x8n(CRC_PIECE).
    let bytes: Vec<u8> = (0..3 * CRC_PIECE + 52)
        .map(|i| (i * 37 % 251) as u8)
        .collect();
    let whole = crc32fast::hash(&bytes);
    for cut in [4, CRC_PIECE, bytes.len() - CRC_PIECE, bytes.len() - 4] {
        let (a, b) = bytes.split_at(cut);
        let joined = crc_multmodp(crc_x8n(b.len() as u64), crc32fast::hash(a)) ^ crc32fast::hash(b);
        assert_eq!(joined, whole, "cut at {cut}");
    }
    // The kernel's fold: the short head, then whole pieces, each
    // appended by one product with x^(8 CRC_PIECE).
    let head = bytes.len() % CRC_PIECE;
    let xp = crc_x8n(CRC_PIECE as u64);
    assert_eq!(xp, CRC_PIECE_SHIFT);
    let mut c = crc32fast::hash(&bytes[..head]);
    for piece in bytes[head..].chunks(CRC_PIECE) {
        c = crc_multmodp(xp, c) ^ crc32fast::hash(piece);
    }
    assert_eq!(c, whole);
    // CRC_FOLD's warp, lane by lane: runs of k pieces (a power of
    // two) aligned to the end, folded, then joined in five steps.
    for len in [
        4usize,
        512,
        516,
        40 * 512 + 8,
        33 * 512,
        1000 * 512 + 4,
        2500 * 512 + 260,
    ] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 131 % 255) as u8).collect();
        let np = len.div_ceil(CRC_PIECE);
        let head = len - (np - 1) * CRC_PIECE;
        let piece = |q: usize| match q {
            0 => &bytes[..head],
            _ => &bytes[head + (q - 1) * CRC_PIECE..head + q * CRC_PIECE],
        };
        let crcp: Vec<u32> = (0..np).map(|q| crc32fast::hash(piece(q))).collect();
        let (mut k, mut op) = (1usize, xp);
        while 32 * k < np {
            k <<= 1;
            op = crc_multmodp(op, op);
        }
        let mut lanes: Vec<u32> = (0..32)
            .map(|lane| {
                let hi = np as i64 - (31 - lane) * k as i64;
                let lo = (hi - k as i64).max(0);
                (lo..hi).fold(0, |c, p| crc_multmodp(xp, c) ^ crcp[p as usize])
            })
            .collect();
        let mut s = 1;
        while s < 32 {
            let right: Vec<u32> = (0..32)
                .map(|l| lanes[if l + s < 32 { l + s } else { l }])
                .collect();
            for l in 0..32 {
                lanes[l] = crc_multmodp(op, lanes[l]) ^ right[l];
            }
            op = crc_multmodp(op, op);
            s <<= 1;
        }
        assert_eq!(lanes[0], crc32fast::hash(&bytes), "{len} bytes");
    }
}

#[test]
fn rdec_window_matches_the_kernel() {
    // rdec_smem sizes RDEC's shared memory from the window's length;
    // the kernel must index with the same one.
    let src = crate::kernels::CODEC_SOURCE;
    assert!(
        src.contains(&format!("#define R_WIN {RDEC_WINDOW_WORDS}\n")),
        "the codec kernels' R_WIN is not RDEC_WINDOW_WORDS ({RDEC_WINDOW_WORDS})"
    );
    // The host counts each payload's checksum pieces with CRC_PIECE.
    assert!(
        src.contains(&format!("#define CRC_PIECE {CRC_PIECE}\n")),
        "the codec kernels' CRC_PIECE is not {CRC_PIECE}"
    );
}

/// A 1024^3 field's bricks of 129 (8 shapes), as the grid lists them.
fn shapes_1024() -> BTreeMap<[usize; 3], Vec<usize>> {
    let ext = |i: usize| if i < 7 { 129 } else { 1024 - 7 * 129 };
    let mut shapes: BTreeMap<[usize; 3], Vec<usize>> = BTreeMap::new();
    for k in 0..512 {
        shapes
            .entry([ext(k / 64), ext(k / 8 % 8), ext(k % 8)])
            .or_default()
            .push(k);
    }
    shapes
}

/// Each GPU's bricks of `shapes_1024` on two GPUs, by shape, as the
/// slab paths cut them.
fn slab_1024(g: usize) -> BTreeMap<[usize; 3], Vec<usize>> {
    let grid = codec::BrickGrid {
        dims: [1024; 3],
        brick: [129; 3],
    };
    let parts = slabs(&grid, 2);
    shapes_1024()
        .into_iter()
        .map(|(d, l)| {
            let l: Vec<usize> = l.into_iter().filter(|k| parts[g].2.contains(k)).collect();
            (d, l)
        })
        .filter(|(_, l)| !l.is_empty())
        .collect()
}

fn cost(d: &[usize; 3], bricks: usize, per_value: usize) -> usize {
    bricks * (d.iter().product::<usize>() * per_value + (1 << 20))
}

#[test]
fn a_ramp_is_cut_only_where_every_batch_runs_at_once_and_few_are_small() {
    let per_value = Use::Decode.per_value(DType::F32);
    let budget = 120usize << 30;
    let plan_of = |bricks| plan_batches(vec![bricks], budget, per_value, (32, 8, 128)).unwrap();
    // GPU 0's slab: ten batches (28 bricks x8 of two shapes, the corners' 4).
    let mut plan = plan_of(slab_1024(0));
    let before = plan.caps();
    assert_eq!((before.len(), plan.slots), (10, 10), "{before:?}");
    let first = plan.batches[0].1.clone();
    ramp_batches(&mut plan, 32, budget, per_value);
    let after = plan.caps();
    assert_eq!((after.len(), plan.slots, plan.group.len()), (14, 14, 14));
    let sizes: Vec<usize> = plan.batches.iter().map(|(_, l)| l.len()).collect();
    assert_eq!(sizes, [28, 28, 28, 28, 28, 28, 28, 28, 13, 8, 4, 4, 2, 1]);
    assert!(after.windows(2).all(|w| w[0] >= w[1]), "{after:?}");
    assert_eq!(after.iter().sum::<usize>(), before.iter().sum::<usize>());
    // The ramp's bricks are the first batch's last ones, the rest of it
    // keeps its order.
    let ramp = |i: usize| plan.batches[i].1.clone();
    let cut = [ramp(9), ramp(10), ramp(12), ramp(13)].concat();
    let want = [
        &first[20..28],
        &first[16..20],
        &first[14..16],
        &first[13..14],
    ];
    assert_eq!(cut, want.concat());
    assert_eq!(plan.batches[8].1, first[..13]);
    let mut bricks: Vec<usize> = plan.batches.iter().flat_map(|(_, l)| l.clone()).collect();
    bricks.sort_unstable();
    assert_eq!(bricks, (0..256).collect::<Vec<_>>());
    // Once: its small batches now hold the ramp's bricks and more.
    ramp_batches(&mut plan, 32, budget, per_value);
    assert_eq!(plan.caps(), after);
    // GPU 1's slab and the whole field have small batches (the thin
    // layer's); a plan that cannot run every batch at once, or one that
    // would need more slots or memory than it has, is left as it is.
    for (bricks, slots, budget) in [
        (slab_1024(1), 32, budget),
        (shapes_1024(), 32, budget),
        (slab_1024(0), 12, budget),
        (slab_1024(0), 32, 4 << 30),
    ] {
        let mut plan = plan_of(bricks);
        let before = (plan.caps(), plan.slots);
        ramp_batches(&mut plan, slots, budget, per_value);
        assert_eq!((plan.caps(), plan.slots), before);
    }
    let mut plan = plan_of(slab_1024(0));
    plan.slots = 8;
    let before = plan.caps();
    ramp_batches(&mut plan, 32, budget, per_value);
    assert_eq!((plan.caps(), plan.slots), (before, 8));
}

#[test]
fn plans_cover_every_brick_once_largest_first_within_the_budget() {
    let per_value = Use::EncodeInterp.per_value(DType::F32);
    for (budget, slots, shares, limit) in [
        (
            52usize << 30,
            RESIDENT_SLOTS,
            RESIDENT_SHARES,
            RESIDENT_BATCH,
        ),
        (52 << 30, HOST_SLOTS, HOST_SLOTS, DEFAULT_BATCH),
        (6 << 30, RESIDENT_SLOTS, RESIDENT_SHARES, RESIDENT_BATCH),
        (1 << 30, 4, 4, 64),
    ] {
        let plan = plan_batches(
            vec![shapes_1024()],
            budget,
            per_value,
            (slots, shares, limit),
        )
        .unwrap();
        let mut seen: Vec<usize> = plan.batches.iter().flat_map(|(_, l)| l.clone()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..512).collect::<Vec<_>>(), "{budget} {slots}");
        let costs: Vec<usize> = plan
            .batches
            .iter()
            .map(|(d, l)| cost(d, l.len(), per_value))
            .collect();
        assert!(
            costs.windows(2).all(|w| w[0] >= w[1]),
            "not the largest first: {costs:?}"
        );
        assert!(plan
            .batches
            .iter()
            .all(|(_, l)| !l.is_empty() && l.len() <= limit));
        assert!(plan.slots >= 1 && plan.slots <= slots.min(plan.batches.len()));
        assert!(
            costs[..plan.slots].iter().sum::<usize>() <= budget,
            "{budget} {slots}: {costs:?}"
        );
        // Bricks of a batch share a shape and keep the grid order.
        let shapes = shapes_1024();
        for (d, l) in &plan.batches {
            assert!(l.iter().all(|k| shapes[d].contains(k)));
            assert!(l.windows(2).all(|w| w[0] < w[1]));
        }
    }
    // A field on the device with room for all of it (80% of what an
    // H100 has free beside it): every batch at once.
    let plan = plan_batches(
        vec![shapes_1024()],
        60 << 30,
        per_value,
        (RESIDENT_SLOTS, RESIDENT_SHARES, RESIDENT_BATCH),
    )
    .unwrap();
    assert_eq!(plan.slots, plan.batches.len(), "{}", plan.batches.len());
    // One slot, a large budget and a high brick limit (how the bad
    // streams were made): batches stay under MAX_BATCH_VALUES.
    for limit in [128, 200, 4096] {
        let plan = plan_batches(vec![shapes_1024()], 120 << 30, per_value, (1, 1, limit)).unwrap();
        let most = plan.caps().into_iter().max().unwrap_or(0);
        assert!(most <= MAX_BATCH_VALUES, "{limit}: {most}");
        let bricks: usize = plan.batches.iter().map(|(_, l)| l.len()).sum();
        assert_eq!(bricks, 512);
    }
}

#[test]
fn groups_of_layers_are_planned_in_order_each_within_itself() {
    // A 1024^3 field's 8 brick layers, a group each (how a slab is
    // coded as it arrives and copied down as it is decoded).
    let per_value = Use::EncodeInterp.per_value(DType::F32);
    let layers: Vec<BTreeMap<[usize; 3], Vec<usize>>> = (0..8)
        .map(|z| {
            let mut m = shapes_1024();
            m.retain(|_, l| {
                l.retain(|k| k / 64 == z);
                !l.is_empty()
            });
            m
        })
        .collect();
    let budget = 60usize << 30;
    let plan = plan_batches(
        layers.clone(),
        budget,
        per_value,
        (RESIDENT_SLOTS, RESIDENT_SHARES, RESIDENT_BATCH),
    )
    .unwrap();
    assert_eq!(plan.group.len(), plan.batches.len());
    assert!(
        plan.group.windows(2).all(|w| w[0] <= w[1]),
        "{:?}",
        plan.group
    );
    for (z, want) in layers.iter().enumerate() {
        let mut got: Vec<usize> = plan
            .batches
            .iter()
            .zip(&plan.group)
            .filter(|(_, &g)| g == z)
            .flat_map(|((_, l), _)| l.clone())
            .collect();
        got.sort_unstable();
        let mut all: Vec<usize> = want.values().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(got, all, "layer {z}");
    }
    // One share a group: a batch a shape of a layer (4 shapes a layer).
    assert_eq!(plan.batches.len(), 32);
    let mut costs: Vec<usize> = plan
        .batches
        .iter()
        .map(|(d, l)| cost(d, l.len(), per_value))
        .collect();
    costs.sort_unstable_by(|a, b| b.cmp(a));
    assert!(plan.slots > 1 && costs[..plan.slots].iter().sum::<usize>() <= budget);
}

#[test]
fn interp_divisors_divide_every_index_of_a_pass() {
    let check = |d: usize, below: usize, t: usize| {
        let (m, sh) = interp_divisor(d, below);
        let q = ((t as u128 * m as u128) >> sh) as usize;
        assert!(t as u128 * (m as u128) < 1u128 << 64, "d {d} below {below}");
        assert_eq!(q, t / d.max(1), "t {t} d {d} below {below}");
    };
    for d in 1..=300 {
        for below in [1, 2, 3, 129, 4096, 16641, 16642] {
            (0..below).for_each(|t| check(d, below, t));
        }
    }
    // Whole bricks (129^3 and larger) and the largest count a pass may have.
    for (d, below) in [
        (129, 2_146_689),
        (16641, 2_146_689),
        (65, 1 << 31),
        (129 * 129, 1 << 31),
    ] {
        let mut t = 0usize;
        while t < below {
            check(d, below, t);
            check(d, below, (t + d - 1).min(below - 1));
            t += 7919 * (1 + t / 100_000);
        }
        check(d, below, below - 1);
    }
}

#[test]
fn a_budget_below_two_bricks_is_refused() {
    let per_value = Use::Decode.per_value(DType::F32);
    let one = cost(&[129, 129, 129], 1, per_value);
    match plan_batches(vec![shapes_1024()], 2 * one - 1, per_value, (2, 2, 64)) {
        Err(CudaError::MemoryLimit { need, limit }) => {
            assert_eq!((need, limit), (2 * one as u128, 2 * one as u128 - 1))
        }
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("a plan under the limit"),
    }
    let plan = plan_batches(vec![shapes_1024()], 2 * one, per_value, (2, 2, 64)).unwrap();
    assert_eq!(plan.batches.len(), 512);
    assert_eq!(plan.slots, 2);
}

#[test]
fn a_slot_serves_its_own_use_and_every_lesser_one() {
    assert!(Use::EncodeLifting > Use::EncodeInterp && Use::EncodeInterp > Use::Decode);
    for t in [
        lifting::Lifting::Haar,
        lifting::Lifting::Cdf97,
        lifting::Lifting::Interp,
    ] {
        assert_eq!(Use::of(false, t), Use::Decode);
    }
    assert_eq!(Use::of(true, lifting::Lifting::Interp), Use::EncodeInterp);
    assert_eq!(Use::of(true, lifting::Lifting::Cdf53), Use::EncodeLifting);
    for d in [DType::F32, DType::F64] {
        let h = [Use::Decode, Use::EncodeInterp, Use::EncodeLifting].map(|u| u.held_per_value(d));
        assert!(h[0] < h[1] && h[1] < h[2], "{h:?}");
    }
}
