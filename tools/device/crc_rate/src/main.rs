//! CRC-32 rate of crc32fast and of crc-fast (the codec's payload
//! checksums since session 60, `multires::codec::container::crc32`): one
//! thread over a 75 MB buffer (a turbulent batch's payloads), then 4, 8,
//! 16 and every core at once, each over a buffer of its own (what a
//! codec's tail asks of the host's memory).
use std::time::Instant;

const LEN: usize = 75_000_000;

fn buffer(seed: u64) -> Vec<u8> {
    (0..LEN as u64)
        .map(|i| ((i + seed).wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

type Sum = fn(&[u8]) -> u32;

fn fast(b: &[u8]) -> u32 {
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32IsoHdlc, b) as u32
}

fn main() {
    let ways: [(&str, Sum); 2] = [("crc32fast", crc32fast::hash), ("crc-fast", fast)];
    let one = buffer(0);
    assert_eq!(crc32fast::hash(&one), fast(&one), "the two sums differ");
    for (name, f) in ways {
        for _ in 0..3 {
            let t = Instant::now();
            let c = f(&one);
            let s = t.elapsed().as_secs_f64();
            println!("{name} one thread: {c:08x} in {:.2} ms = {:.1} GB/s", s * 1e3, LEN as f64 / s / 1e9);
        }
    }
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bufs: Vec<Vec<u8>> = (0..all as u64).map(buffer).collect();
    for threads in [4, 8, 16, all] {
        if threads > all {
            continue;
        }
        for (name, f) in ways {
            for _ in 0..2 {
                let t = Instant::now();
                std::thread::scope(|s| {
                    for b in &bufs[..threads] {
                        s.spawn(move || std::hint::black_box(f(b)));
                    }
                });
                let s = t.elapsed().as_secs_f64();
                let bytes = (threads * LEN) as f64;
                println!(
                    "{name} {threads} threads at once: {:.2} ms = {:.1} GB/s in all, {:.1} a thread",
                    s * 1e3,
                    bytes / s / 1e9,
                    bytes / s / 1e9 / threads as f64
                );
            }
        }
    }
}
