use super::*;

/// Writes `synthetic_plan_cases` in threes (a batch of one shape), with
/// their plans, to the file MULTIRES_RPLAN_CASES names, for the RPLAN
/// emulator (tools/kernel_emu/rplan_check.sh reads it).
#[test]
#[ignore = "a tool's input: tools/kernel_emu/rplan_check.sh runs it"]
fn write_rplan_cases() {
    let Ok(path) = std::env::var("MULTIRES_RPLAN_CASES") else {
        panic!("MULTIRES_RPLAN_CASES names no file");
    };
    let cases = synthetic_plan_cases(7, 240);
    let mut out: Vec<u8> = Vec::new();
    let u64s = |o: &mut Vec<u8>, v: &[u64]| v.iter().for_each(|x| o.extend(x.to_le_bytes()));
    let u32s = |o: &mut Vec<u8>, v: &[u32]| v.iter().for_each(|x| o.extend(x.to_le_bytes()));
    u64s(&mut out, &[(cases.len() / 3) as u64]);
    out.extend(log2_table().iter().flat_map(|x| x.to_le_bytes()));
    for (g, group) in cases.chunks_exact(3).enumerate() {
        let most_log = [16, 14, 12, 15, 13][g % 5];
        let k = plan_knobs(most_log);
        let n = group[0].2;
        let nblk = group[0].1.len();
        u64s(
            &mut out,
            &[n as u64, nblk as u64, k.most as u64, k.floor as u64],
        );
        u64s(&mut out, &[k.most_pieces as u64, k.wide as u64]);
        out.extend(k.dense.to_le_bytes());
        out.extend(k.long_chain.to_le_bytes());
        let flat: Vec<u32> = group[0].1.iter().flatten().copied().collect();
        u32s(&mut out, &flat);
        for (hist, blocks, m) in group {
            assert_eq!((*m, blocks.len()), (n, nblk));
            let p = plan(hist, blocks, n, most_log);
            u32s(&mut out, hist);
            u32s(&mut out, &p.tables.cum);
            u32s(&mut out, &p.tables.scale);
            let pc = piece_count(n, p.chunk_log, p.split) as u32;
            let w = p.words.len() as u32;
            u32s(&mut out, &[p.chunk_log, p.split.chunks, p.split.log, pc, w]);
            u32s(&mut out, &p.words);
        }
    }
    std::fs::write(&path, out).expect("writing the cases");
}

/// The synthetic cases reach every kind of plan the GPU's planner must
/// match: splits, shorter chains, every chunk length, tables of one
/// symbol and none.
#[test]
fn synthetic_plan_cases_cover_the_plans() {
    let cases = synthetic_plan_cases(7, 240);
    let (mut split, mut wide, mut logs) = (0, 0, std::collections::BTreeSet::new());
    let (mut lone, mut empty) = (0, 0);
    for (g, group) in cases.chunks_exact(3).enumerate() {
        let most_log = [16, 14, 12, 15, 13][g % 5];
        for (hist, blocks, n) in group {
            let p = plan(hist, blocks, *n, most_log);
            split += (p.split.chunks > 0) as usize;
            // More pieces than the usual split may add: shorter_chains'.
            let extra = piece_count(*n, p.chunk_log, p.split) - chunks(*n, p.chunk_log);
            wide += (extra > SPLIT_PIECES) as usize;
            logs.insert(p.chunk_log);
            for h in hist.chunks(NSYM) {
                let present = h.iter().filter(|&&x| x > 0).count();
                lone += (present == 1) as usize;
                empty += (present == 0) as usize;
            }
        }
    }
    eprintln!("splits {split} wide {wide} logs {logs:?} lone {lone} empty {empty}");
    assert!(split >= 10 && wide >= 3, "{split} splits, {wide} wide");
    assert!(logs.len() >= 4, "chunk logs {logs:?}");
    assert!(lone >= 100 && empty >= 100, "{lone} lone, {empty} empty");
}

/// Every value's entry, whichever of the vector forms runs here, and
/// the counts, against `context` and `symbol` value by value.
#[test]
fn entries_and_counts_equal_the_value_by_value_ones() {
    let mut r = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        r
    };
    // Runs of zeros, small values, wide ones up to u32::MAX, and every
    // level class (past LEVELS too), over a few reset chunks.
    let n = 3 * RESET + 123;
    let v: Vec<u32> = (0..n)
        .map(|i| match (i / 700) % 4 {
            0 => 0,
            1 => (next() % 70) as u32,
            2 => (next() >> (next() % 64)) as u32,
            _ => u32::MAX - (next() % 3) as u32,
        })
        .collect();
    let lv: Vec<u8> = (0..n).map(|i| ((i / 300) % 11) as u8).collect();
    let want_entry = |i: usize| {
        let prev = if i.is_multiple_of(RESET) { 0 } else { v[i - 1] };
        (context(lv[i] as u32, prev) * NSYM + symbol(v[i]).0 as usize) as u16
    };
    let mut entries = Vec::new();
    let hist = histogram_and_entries(&v, &lv, &mut entries);
    let mut want_hist = vec![0u32; NCTX * NSYM];
    for i in 0..n {
        assert_eq!(entries[i], want_entry(i), "value {i}: {}", v[i]);
        want_hist[want_entry(i) as usize] += 1;
    }
    assert_eq!(hist, want_hist);
    // The scalar form too, where the processor would take a vector one.
    let mut scalar = vec![0u16; RESET];
    entries_of_generic(&v[RESET..2 * RESET], &lv[RESET..2 * RESET], &mut scalar);
    assert_eq!(scalar, entries[RESET..2 * RESET]);
    // Counts past a 16-bit table's reach: no run of sixteen is one
    // entry, so every value goes through the four tables.
    let m = 300_000;
    let v: Vec<u32> = (0..m).map(|i| (i % 16 == 15) as u32).collect();
    let h = histogram(&v, &vec![2u8; m]);
    let mut want = vec![0u32; NCTX * NSYM];
    for i in 0..m {
        let prev = if i.is_multiple_of(RESET) { 0 } else { v[i - 1] };
        want[context(2, prev) * NSYM + v[i] as usize] += 1;
    }
    assert!(want[context(2, 0) * NSYM] > 2 * u16::MAX as u32);
    assert_eq!(h, want);
}

#[test]
fn divisor_divides_as_division_does() {
    let mut r = crate::codec::xorshift(7);
    let edges = [1u32, 2, 65535, 65536, 1 << 31, u32::MAX - 1, u32::MAX];
    for d in (1..=1u32 << 15).chain([(1 << 16) - 1, 1 << 16, 12345678, u32::MAX]) {
        let dv = Divisor::new(d);
        for x in edges
            .iter()
            .copied()
            .chain((0..8).map(|_| r() as u32))
            .chain([d - 1, d, d.wrapping_mul(3).wrapping_sub(1)])
            .chain([(u32::MAX / d) * d, (u32::MAX / d) * d - 1])
            .filter(|&x| x > 0 || d > 1)
        {
            assert_eq!(dv.quotient(x), x / d, "{x} / {d}");
        }
    }
}

#[test]
fn floor_div_divides_as_division_does() {
    let mut next = crate::codec::xorshift(0x51ed_270b_a9c3_4f1d);
    let ds = [
        1u64,
        2,
        3,
        7,
        168,
        1 << 15,
        (1 << 22) + 1,
        4_294_967_291,
        (1 << 40) - 3,
    ];
    let random: Vec<u64> = (0..200).map(|_| 1 + next() % (1 << 40)).collect();
    for d in ds.into_iter().chain(random) {
        let fd = FloorDiv::new(d);
        let near = |x: u64| [x.saturating_sub(1), x, x + 1];
        let xs = (0..50)
            .map(|_| next() % (1 << 47))
            .chain(near((1u64 << 47) / d * d))
            .chain(near(d))
            .chain(near(((1u64 << 53) - 1) / d * d))
            .chain([0, u64::MAX, 1 << 53]);
        for x in xs {
            assert_eq!(fd.floor(x), x / d, "{x} / {d}");
        }
    }
}

#[test]
fn bit_writer_writes_what_a_bit_at_a_time_writes() {
    // The reference: each bit on its own, least significant first.
    let mut want: Vec<u32> = Vec::new();
    let mut at = 0usize;
    let mut w = BitWriter::default();
    let mut next = crate::codec::xorshift(0x9e37_79b9_7f4a_7c15);
    let mut put = |w: &mut BitWriter, v: u64, n: u32| {
        for i in 0..n {
            if at.is_multiple_of(32) {
                want.push(0);
            }
            if i < 64 && (v >> i) & 1 == 1 {
                let k = want.len() - 1;
                want[k] |= 1 << (at % 32);
            }
            at += 1;
        }
        w.put(v, n);
    };
    for k in 0..5000u32 {
        // Every length from 0 to 64, at every offset in a word.
        put(&mut w, next(), k % 65);
    }
    let mut g = BitWriter::default();
    for v in [0u32, 1, 2, 3, 1000, 65535, u32::MAX - 1] {
        exp_golomb(&mut g, v);
    }
    let words = g.finish();
    let mut r = BitReader {
        words: &words,
        bit: 0,
    };
    for v in [0u32, 1, 2, 3, 1000, 65535, u32::MAX - 1] {
        assert_eq!(r.exp_golomb(), Ok(v));
    }
    assert_eq!(w.finish(), want);
}

/// The reader's word-at-a-time paths (`window`) read what the writer
/// wrote, codes of every length and fields of every width mixed, at
/// every offset, up to the stream's last word (read bit by bit), and
/// a code that runs past the end is an error.
#[test]
fn bit_reader_reads_what_the_writer_wrote() {
    let mut next = crate::codec::xorshift(0x2545_f491_4f6c_dd1d);
    let mut w = BitWriter::default();
    let mut want = Vec::new();
    for k in 0..4000u32 {
        let r = next();
        if k % 3 == 0 {
            let n = (r % 33) as u32;
            let v = (r >> 8) as u32 & ((1u64 << n) - 1) as u32;
            w.put(v as u64, n);
            want.push((true, n, v));
        } else {
            // Values of 0 to 32 significant bits (codes of 1 to 65).
            let v = ((r >> 8) as u32) >> (r % 33).min(31) as u32;
            let v = if r.is_multiple_of(97) {
                u32::MAX - 1
            } else {
                v
            };
            exp_golomb(&mut w, v);
            want.push((false, 0, v));
        }
    }
    let words = w.finish();
    let mut r = BitReader {
        words: &words,
        bit: 0,
    };
    for (i, &(fixed, n, v)) in want.iter().enumerate() {
        let got = if fixed { r.bits(n) } else { r.exp_golomb() };
        assert_eq!(got, Ok(v), "item {i}");
    }
    let mut r = BitReader {
        words: &[0, 0, 0],
        bit: 0,
    };
    assert!(r.exp_golomb().is_err());
}

#[test]
fn symbols_round_trip_every_bit_length() {
    let mut vals: Vec<u32> = (0..300).collect();
    for b in 7..=32u32 {
        let top = 1u64 << (b - 1);
        vals.extend([top, top + 12345 % top, (1u64 << b) - 1].map(|v| v as u32));
    }
    for v in vals {
        let (s, nraw, raw) = symbol(v);
        assert!((s as usize) < NSYM, "{v}");
        assert_eq!(raw_bits(s), nraw, "{v}");
        assert_eq!(value(s, raw), v, "{v}");
    }
}

/// Round trips at every chunk cap; the stream's length at the default.
fn check(v: &[u32], lv: &[u8]) -> usize {
    let mut len = 0;
    for most in CHUNK_MIN_LOG..=CHUNK_MAX_LOG {
        let w = encode(v, lv, most);
        let (d, used) = decode(&w, v.len(), lv).unwrap();
        assert_eq!(used, w.len());
        assert_eq!(d, v);
        let h = read_header(&w, v.len()).unwrap();
        assert!(h.chunk_log <= most);
        len = w.len();
    }
    len
}

#[test]
fn streams_round_trip() {
    let mut next = crate::codec::xorshift(12345);
    for n in [1, 2, 100, 4096, 4097, 70_000] {
        for scale in [0u32, 1, 3, 10, 30] {
            let v: Vec<u32> = (0..n)
                .map(|_| {
                    let x = next();
                    if scale == 0 {
                        0
                    } else {
                        ((x % (1u64 << scale)) >> (x >> 60)) as u32
                    }
                })
                .collect();
            let lv: Vec<u8> = (0..n).map(|_| (next() % 9) as u8).collect();
            check(&v, &lv);
        }
    }
    // The largest zigzag code a clamped coefficient can have.
    check(&[u32::MAX >> 1, 0, 1 << 31, 5], &[0, 1, 2, 3]);
}

/// A stream of under 2 bits a value (the decoder's sparse path: a
/// branch past a direct symbol's raw pieces) that still holds every
/// kind of value: mostly zeros, contexts' other direct symbols, and
/// values with one raw piece and with two.
#[test]
fn sparse_streams_round_trip_with_rare_symbols_of_every_kind() {
    let mut next = crate::codec::xorshift(777);
    for n in [5000, 70_000, 300_000] {
        let v: Vec<u32> = (0..n)
            .map(|_| match next() % 1000 {
                0 => 1 + (next() % 60) as u32,
                1 => 64 + (next() % 10_000) as u32,
                2 => (1 << 20) + (next() % (1 << 20)) as u32,
                _ => 0,
            })
            .collect();
        let lv: Vec<u8> = (0..n).map(|i| (i * 7 / n) as u8).collect();
        for most in CHUNK_MIN_LOG..=CHUNK_MAX_LOG {
            let w = encode(&v, &lv, most);
            let h = read_header(&w, n).unwrap();
            assert!((h.used - h.data_word) * 32 < 2 * n, "not sparse");
        }
        check(&v, &lv);
    }
}

/// A sparse stream whose classes 0-3 hold only zeros (their contexts
/// after a 0 hold 0 alone: runs the decoder writes at once) between
/// classes with rare values of every kind, so that runs start and end
/// everywhere, across chunk and context resets.
#[test]
fn sparse_zero_runs_round_trip() {
    let mut next = crate::codec::xorshift(99);
    for n in [3000, 70_000, 300_000] {
        let lv: Vec<u8> = (0..n).map(|i| ((i / 5 + i / 97) % 9) as u8).collect();
        let v: Vec<u32> = lv
            .iter()
            .map(|&c| match (c, next() % 50) {
                (0..=3, _) => 0,
                (_, 0) => 1 + (next() % 60) as u32,
                (_, 1) => 64 + (next() % 100_000) as u32,
                _ => 0,
            })
            .collect();
        let w = encode(&v, &lv, CHUNK_MAX_LOG);
        let h = read_header(&w, n).unwrap();
        assert_eq!(zero_classes(&h.tables) & 0b1111, 0b1111, "n {n}");
        assert!((h.used - h.data_word) * 32 < 2 * n, "not sparse");
        check(&v, &lv);
    }
}

#[test]
fn tables_sum_to_their_totals_and_read_back() {
    // Small and large totals, flat and skewed counts.
    let mut cases: Vec<Vec<u32>> = (1..40).map(|k| vec![1; k]).collect();
    cases.push(vec![5, 1, 1, 1, 1, 1, 1, 1]);
    cases.push(vec![1_000_000, 1, 1, 3, 0, 7]);
    cases.push((0..NSYM as u32).map(|s| 1 + s * s * 40).collect());
    for counts in cases {
        let mut h = vec![0u32; NCTX * NSYM];
        for c in [0, 5, NCTX - 1] {
            h[c * NSYM..c * NSYM + counts.len()].copy_from_slice(&counts);
        }
        let p = plan(&h, &[], 1000, CHUNK_MAX_LOG);
        for c in 0..NCTX {
            let cum = &p.tables.cum[c * (NSYM + 1)..(c + 1) * (NSYM + 1)];
            let used = h[c * NSYM..(c + 1) * NSYM].iter().any(|&x| x > 0);
            assert_eq!(cum[NSYM], if used { 1 << p.tables.scale[c] } else { 0 });
            for s in 0..NSYM {
                assert_eq!(p.tables.freq[c * NSYM + s] > 0, h[c * NSYM + s] > 0);
            }
        }
        assert_eq!(read_tables(&p.words).unwrap(), p.tables, "{counts:?}");
    }
}

#[test]
fn zero_classes_are_those_of_a_lone_zero_after_a_zero() {
    // Class 0 after a 0: only 0s. Class 1 after a 0: 0s and a 1.
    // Class 2 after a 0: only 3s. Class 5: only 0s, but after a 1 (not
    // a 0), so its context after a 0 is unused. Class 7 (also 9 and
    // up, clamped) after a 0: only 0s.
    let mut v = vec![0, 0, 0, 0, 1, 0, 3, 3, 1, 0, 0];
    let mut lv = vec![0, 0, 1, 1, 1, 1, 2, 2, 0, 5, 7];
    v.extend([0, 0]);
    lv.extend([9, 12]);
    let p = plan(
        &histogram(&v, &lv),
        &class_blocks(&lv),
        v.len(),
        CHUNK_MAX_LOG,
    );
    assert_eq!(zero_classes(&p.tables), 0b1000_0001);
    // A lone 0 of class 1 after a 0 makes it one.
    let p = plan(
        &histogram(&[0, 0], &[0, 1]),
        &class_blocks(&[0, 1]),
        2,
        CHUNK_MAX_LOG,
    );
    assert_eq!(zero_classes(&p.tables), 0b11);
}

#[test]
fn a_constant_stream_costs_its_header_only() {
    let n = 100_000;
    let w = check(&vec![0; n], &vec![0; n]);
    // Header, a few table words, 7 chunk lengths and 2 state words each.
    assert!(w < 20, "{w} words");
}

#[test]
fn coded_size_is_near_the_entropy() {
    // A two-sided geometric source: 0 with p 0.5, then halving.
    let mut next = crate::codec::xorshift(99);
    let n = 1 << 18;
    let v: Vec<u32> = (0..n)
        .map(|_| (next() | 1 << 40).trailing_zeros())
        .collect();
    let lv = vec![0; n];
    let words = check(&v, &lv);
    // Entropy 2 bits per value (geometric with p 1/2).
    let bits = 32.0 * words as f64 / n as f64;
    assert!((bits - 2.0).abs() < 0.02, "{bits} bits per value");
}

#[test]
fn damage_is_an_error_not_a_panic() {
    let v: Vec<u32> = (0..20_000u32).map(|i| (i * 7919) % 37).collect();
    let lv = vec![1; v.len()];
    let w = encode(&v, &lv, CHUNK_MAX_LOG);
    let mut errors = 0;
    for i in 0..w.len() {
        for bit in [0, 5, 17, 31] {
            let mut d = w.clone();
            d[i] ^= 1 << bit;
            match decode(&d, v.len(), &lv) {
                Ok((got, _)) => assert!(got.len() == v.len()),
                Err(_) => errors += 1,
            }
        }
    }
    assert!(errors > 0);
    for cut in [0, 1, 2, w.len() / 2, w.len() - 1] {
        assert!(decode(&w[..cut], v.len(), &lv).is_err(), "cut at {cut}");
    }
}

#[test]
fn pieces_cover_the_brick_in_order() {
    for n in [1usize, 4096, 70_000, 200_000, 1 << 18] {
        for chunk_log in CHUNK_MIN_LOG..=CHUNK_MAX_LOG {
            let nc = chunks(n, chunk_log);
            for log in 0..=chunk_log - PIECE_MIN_LOG {
                for m in [0, 1, nc] {
                    if (m == 0) != (log == 0) {
                        continue;
                    }
                    let split = Split {
                        chunks: m as u32,
                        log,
                    };
                    let p: Vec<_> = pieces(n, chunk_log, split).collect();
                    assert_eq!(p.len(), piece_count(n, chunk_log, split));
                    let mut at = 0;
                    for &(a, len) in &p {
                        assert_eq!(a, at, "{n} {chunk_log} {split:?}");
                        assert!(len > 0 && a % RESET == 0);
                        assert!(len <= 1 << chunk_log);
                        at += len;
                    }
                    assert_eq!(at, n);
                }
            }
        }
    }
}

/// A brick whose first values are coded and the rest a lone zero:
/// like a smooth field's brick, its coarse levels first.
fn dense_start(n: usize, dense: usize) -> (Vec<u32>, Vec<u8>) {
    let mut next = crate::codec::xorshift(777);
    let v = (0..n)
        .map(|i| (i < dense && next().is_multiple_of(10)) as u32)
        .collect();
    let lv = (0..n).map(|i| if i < dense { 3 } else { 0 }).collect();
    (v, lv)
}

#[test]
fn a_brick_dense_at_its_start_is_split_and_round_trips() {
    let n = 1 << 18;
    let (v, lv) = dense_start(n, 32768);
    let p = plan(&histogram(&v, &lv), &class_blocks(&lv), n, CHUNK_MAX_LOG);
    assert_eq!(p.chunk_log, 16);
    // 32768 coded steps in chunk 0: eight pieces of 8192 values.
    assert_eq!(p.split, Split { chunks: 1, log: 3 });
    let w = encode(&v, &lv, CHUNK_MAX_LOG);
    let h = read_header(&w, n).unwrap();
    assert_eq!(h.split, p.split);
    assert_eq!(h.offsets.len(), 4 + 7 + 1);
    assert_eq!(header_len(w[0], w[1], n), h.data_word);
    let (d, used) = decode(&w, n, &lv).unwrap();
    assert_eq!((d, used), (v, w.len()));
    // Dense everywhere, in more chunks than a split may add pieces:
    // splitting the first would not shorten the longest chain.
    let n = 1 << 20;
    let mut next = crate::codec::xorshift(3);
    let v: Vec<u32> = (0..n).map(|_| next().is_multiple_of(10) as u32).collect();
    let lv = vec![3u8; n];
    let p = plan(&histogram(&v, &lv), &class_blocks(&lv), n, CHUNK_MAX_LOG);
    assert_eq!(p.split, Split::default());
}

/// Dense coarse levels over four chunks (two edge bricks of the
/// smooth 1024^3 field): the usual seven pieces leave chains of 2^15,
/// a wide split brings them to 2^13.
#[test]
fn a_long_dense_head_takes_a_wide_split_and_round_trips() {
    let n = 1 << 20;
    let (v, lv) = dense_start(n, 1 << 18);
    let (hist, blocks) = (histogram(&v, &lv), class_blocks(&lv));
    let steps = block_steps(&hist, &blocks);
    let usual = plan_split(&steps, n, 16, (plan_knobs(16).dense, SPLIT_PIECES));
    assert_eq!(usual, Split { chunks: 4, log: 1 });
    assert_eq!(longest_chain(&steps, n, 16, usual), 32768.0);
    let p = plan(&hist, &blocks, n, CHUNK_MAX_LOG);
    assert_eq!((p.chunk_log, p.split), (16, Split { chunks: 4, log: 3 }));
    assert_eq!(longest_chain(&steps, n, 16, p.split), 8192.0);
    let w = encode(&v, &lv, CHUNK_MAX_LOG);
    let h = read_header(&w, n).unwrap();
    assert_eq!((h.split, h.offsets.len()), (p.split, 16 + 32 - 4 + 1));
    let (d, used) = decode(&w, n, &lv).unwrap();
    assert_eq!((d, used), (v, w.len()));
    // Coded throughout (an edge brick of a smaller field): no split
    // of the first chunks shortens its chains, so none is made.
    let mut next = crate::codec::xorshift(5);
    let v: Vec<u32> = (0..n).map(|_| next().is_multiple_of(100) as u32).collect();
    let lv = vec![0u8; n];
    let p = plan(&histogram(&v, &lv), &class_blocks(&lv), n, CHUNK_MAX_LOG);
    assert_eq!((p.chunk_log, p.split), (16, Split::default()));
}

/// Bricks with dense runs of every length and place, at every chunk
/// length: what `shorter_chains` picks never lengthens the usual
/// layout's longest chain, reaches `LONG_CHAIN` where it differs, adds
/// at most `WIDE_SPLIT_PIECES` pieces; the plan's layout round trips.
#[test]
fn shorter_chains_never_cost_more_than_they_may() {
    let mut next = crate::codec::xorshift(2024);
    let (mut wide, mut shorter) = (0, 0);
    for case in 0..24 {
        let n = RESET * (1 + (next() % 300) as usize) - (next() % 100) as usize;
        let (a, len) = ((next() as usize) % n, (next() as usize) % n);
        let every = 2 + next() % 40;
        let v: Vec<u32> = (0..n)
            .map(|i| (i >= a && i < a + len && next().is_multiple_of(every)) as u32)
            .collect();
        let lv: Vec<u8> = (0..n).map(|i| (i * 8 / n) as u8).collect();
        let (hist, blocks) = (histogram(&v, &lv), class_blocks(&lv));
        let steps = block_steps(&hist, &blocks);
        let what = format!("case {case}: n {n}, dense {a}+{len} 1/{every}");
        for log in CHUNK_MIN_LOG..=CHUNK_MAX_LOG {
            let k = PlanKnobs {
                floor: CHUNK_MIN_LOG,
                ..plan_knobs(log)
            };
            let usual = (log, plan_split(&steps, n, log, (k.dense, k.most_pieces)));
            let (l, sp) = shorter_chains(&steps, n, usual, &k);
            let chain = longest_chain(&steps, n, l, sp);
            assert!(l <= log, "{what}, 2^{log}");
            wide += (l == log && sp != usual.1) as usize;
            shorter += (l < log) as usize;
            assert!(
                chain <= longest_chain(&steps, n, log, usual.1),
                "{what}, 2^{log}"
            );
            assert!((l, sp) == usual || chain <= k.long_chain, "{what}, 2^{log}");
            assert!(
                piece_count(n, l, sp) <= piece_count(n, log, usual.1) + WIDE_SPLIT_PIECES,
                "{what}, 2^{log}"
            );
        }
        let p = plan(&hist, &blocks, n, CHUNK_MAX_LOG);
        let w = encode(&v, &lv, CHUNK_MAX_LOG);
        let h = read_header(&w, n).unwrap();
        assert_eq!((h.chunk_log, h.split), (p.chunk_log, p.split), "{what}");
        let (d, used) = decode(&w, n, &lv).unwrap();
        assert_eq!((d, used), (v, w.len()), "{what}");
    }
    // Both ways were taken.
    assert!(wide > 0 && shorter > 0, "wide {wide}, shorter {shorter}");
}

#[test]
fn a_wrong_split_is_an_error_naming_it() {
    let n = 1 << 18;
    let (v, lv) = dense_start(n, 32768);
    let w = encode(&v, &lv, CHUNK_MAX_LOG);
    let low = w[0] & 0xffff;
    // Pieces under 2^11 values (2^12 without the restart's flag), more
    // split chunks than chunks, a split count without a split.
    let finest = (w[0] & 0x7f) - RESET_LOG;
    for h0 in [
        low | 1 << 16 | (finest + 1) << 24,
        (low & !H0_RESET) | 1 << 16 | finest << 24,
        low | 5 << 16 | 1 << 24,
        low | 1 << 24,
    ] {
        let mut bad = w.clone();
        bad[0] = h0;
        let e = read_header(&bad, n).unwrap_err();
        assert!(e.contains("split"), "{e}");
        assert_eq!(header_len(bad[0], bad[1], n), 2);
        assert!(decode(&bad, n, &lv).is_err());
    }
}

/// `count` copies of stream `w` with one to three bits flipped in its
/// words past the header (from `data_word`), each handed to `f`.
fn each_damaged(
    w: &[u32],
    data_word: usize,
    next: &mut impl FnMut() -> u64,
    count: usize,
    mut f: impl FnMut(&[u32]),
) {
    for k in 0..count {
        let mut d = w.to_vec();
        for _ in 0..1 + k % 3 {
            let at = data_word + (next() as usize) % (w.len() - data_word);
            d[at] ^= 1 << (next() % 32);
        }
        f(&d);
    }
}

/// Sparse streams decode to the same values, and fail with the same
/// errors, with and without the runs of likely zeros
/// (`zeros_of_one_class`): zeros of a likely but not lone 0 in long
/// runs of one class, rare other values with and without raw bits,
/// and damaged copies (one to three bits flipped in their words).
#[test]
fn runs_of_likely_zeros_decode_as_single_steps() {
    let mut next = crate::codec::xorshift(777);
    let n = 150_000;
    let both = |w: &[u32], lv: &[u8]| {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let ra = decode_into_by(w, n, lv, &mut a, false);
        FIRST_RUNS_OFF.with(|c| c.set(true));
        let rb = decode_into_by(w, n, lv, &mut b, false);
        FIRST_RUNS_OFF.with(|c| c.set(false));
        assert_eq!(ra, rb, "runs and single steps end differently");
        if ra.is_ok() {
            assert!(a == b, "runs and single steps give other values");
        }
        ra.is_ok()
    };
    for kind in 0..4 {
        let v: Vec<u32> = (0..n)
            .map(|_| {
                let x = next();
                match (kind, x % 1000) {
                    (0, 0..=2) => 1 + (x >> 20) as u32 % 5,
                    (1, 0..=20) => (x >> 20) as u32 % 40,
                    (2, 0) => 64 + (x >> 20) as u32 % 100_000,
                    (3, 0..=1) => 2,
                    _ => 0,
                }
            })
            .collect();
        // Runs of one class, of many lengths, and classes past the
        // last level.
        let lv: Vec<u8> = (0..n).map(|i| ((i / 700 + i / 9000) % 11) as u8).collect();
        let w = encode(&v, &lv, CHUNK_MAX_LOG);
        let h = read_header(&w, n).unwrap();
        // Under half a bit a value: the runs are tried.
        assert!(
            (h.used - h.data_word) * 64 < n,
            "kind {kind}: not sparse enough for the runs"
        );
        let mut got = Vec::new();
        decode_into_by(&w, n, &lv, &mut got, false).unwrap();
        assert!(got == v, "kind {kind}: not the values coded");
        assert!(both(&w, &lv));
        each_damaged(&w, h.data_word, &mut next, 60, |d| {
            both(d, &lv);
        });
    }
}

/// The wide decoder (sixteen chunks in AVX-512 lanes) gives the
/// scalar decoder's values, and refuses what it refuses, on dense
/// streams of every kind of value (lone-symbol contexts, one raw
/// piece, two) and on damaged copies of them (one to three bits
/// flipped in their words).
#[test]
fn wide_and_scalar_decoders_agree() {
    use std::sync::atomic::Ordering;
    let mut next = crate::codec::xorshift(4242);
    let n = 200_000;
    let before = WIDE_GROUPS.load(Ordering::Relaxed);
    let fixed_before = rans_wide::FIXED_GROUPS.load(Ordering::Relaxed);
    let both = |w: &[u32], lv: &[u8]| {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let ra = decode_into_by(w, n, lv, &mut a, true);
        let rb = decode_into_by(w, n, lv, &mut b, false);
        match (&ra, &rb) {
            (Ok(ua), Ok(ub)) => {
                assert_eq!(ua, ub);
                assert!(a == b, "wide and scalar values differ");
            }
            (Err(_), Err(_)) => {}
            _ => panic!("wide {ra:?} against scalar {rb:?}"),
        }
        ra.is_ok()
    };
    // Classes that change every value, and classes in runs of 2^16
    // (most groups' lanes then keep one class: `rans_wide`'s steps
    // without the classes' gather).
    for (kind, runs) in (0..4).flat_map(|k| [(k, false), (k, true)]) {
        let v: Vec<u32> = (0..n)
            .map(|i| {
                let x = next();
                match kind {
                    // Level class 0 all zeros: contexts of a lone symbol.
                    0 if i % 8 == 0 => 0,
                    0 | 1 => (x % 5000) as u32,
                    // Two raw pieces now and then.
                    2 => ((x % (1 << 22)) >> (x >> 61)) as u32,
                    _ => ((x % 300) as u32) * (1 + (i % 3) as u32),
                }
            })
            .collect();
        let lv: Vec<u8> = (0..n)
            .map(|i| if runs { (i >> 16) % 8 } else { i % 8 } as u8)
            .collect();
        let w = encode(&v, &lv, CHUNK_MIN_LOG);
        let mut got = Vec::new();
        decode_into_by(&w, n, &lv, &mut got, true).unwrap();
        assert!(got == v, "kind {kind}: not the values coded");
        assert!(both(&w, &lv));
        let h = read_header(&w, n).unwrap();
        each_damaged(&w, h.data_word, &mut next, 60, |d| {
            both(d, &lv);
        });
    }
    if rans_wide::available() {
        assert!(
            WIDE_GROUPS.load(Ordering::Relaxed) > before,
            "the wide decoder never ran"
        );
        assert!(
            rans_wide::FIXED_GROUPS.load(Ordering::Relaxed) > fixed_before,
            "the wide decoder never kept a group's classes"
        );
    } else {
        eprintln!("no AVX-512 here: only the scalar decoder ran");
    }
}

#[test]
fn random_streams_are_errors_or_values_never_panics() {
    // Headers that pass the first checks, then random tables, lengths
    // and data: the decoder must answer, whatever it reads.
    let mut next = crate::codec::xorshift(7);
    let n = 40_000;
    let lv: Vec<u8> = (0..n).map(|i| (i % 8) as u8).collect();
    let mut decoded = 0;
    for _ in 0..3000 {
        let len = 3 + (next() % 200) as usize;
        let mut w: Vec<u32> = (0..len).map(|_| next() as u32).collect();
        w[0] = (14 + (next() % 3) as u32) | ((1 + next() % 20) as u32) << 8;
        w[1] = (next() % 40) as u32;
        if let Ok((v, used)) = decode(&w, n, &lv) {
            assert_eq!(v.len(), n);
            assert!(used <= w.len());
            decoded += 1;
        }
    }
    // Valid tables of an encoded stream with random data after them.
    let v: Vec<u32> = (0..n as u32).map(|i| (i * 31) % 7).collect();
    let good = encode(&v, &lv, CHUNK_MAX_LOG);
    let h = read_header(&good, n).unwrap();
    for _ in 0..300 {
        let mut w = good.clone();
        for x in &mut w[h.data_word..] {
            *x = next() as u32;
        }
        let _ = decode(&w, n, &lv);
    }
    assert!(decoded < 3000);
}
