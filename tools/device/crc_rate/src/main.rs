//! CRC-32 rate of crc32fast: one thread over a 75 MB buffer (a turbulent
//! batch's payloads), then every core at once, each over a buffer of its
//! own (what a codec's tail asks of the host's memory).
use std::time::Instant;

const LEN: usize = 75_000_000;

fn buffer(seed: u64) -> Vec<u8> {
    (0..LEN as u64)
        .map(|i| ((i + seed).wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

fn main() {
    let one = buffer(0);
    for _ in 0..3 {
        let t = Instant::now();
        let c = crc32fast::hash(&one);
        let s = t.elapsed().as_secs_f64();
        println!("one thread: {c:08x} in {:.2} ms = {:.1} GB/s", s * 1e3, LEN as f64 / s / 1e9);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bufs: Vec<Vec<u8>> = (0..threads as u64).map(buffer).collect();
    for _ in 0..3 {
        let t = Instant::now();
        std::thread::scope(|s| {
            for b in &bufs {
                s.spawn(move || std::hint::black_box(crc32fast::hash(b)));
            }
        });
        let s = t.elapsed().as_secs_f64();
        let bytes = (threads * LEN) as f64;
        println!(
            "{threads} threads at once: {:.2} ms = {:.1} GB/s in all, {:.1} a thread",
            s * 1e3,
            bytes / s / 1e9,
            bytes / s / 1e9 / threads as f64
        );
    }
}
