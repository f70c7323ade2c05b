//! How much memory a job may take before it is refused with a clear error
//! instead of being killed by the operating system.

/// 90% of MemAvailable on Linux; 16 GiB where that cannot be read.
pub fn default_limit() -> u64 {
    if let Ok(text) = std::fs::read_to_string("/proc/meminfo") {
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("MemAvailable:") {
                let kb: u64 = rest
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .unwrap_or(0);
                if kb > 0 {
                    return kb * 1024 / 10 * 9;
                }
            }
        }
    }
    16 << 30
}

/// A zeroed vector for large outputs. The pages come untouched from the OS
/// (first touched by the workers that fill them); on Linux they are marked
/// for transparent huge pages, so filling 256 MB costs 128 page faults
/// instead of 65536.
pub fn zeroed_vec<T: bytemuck::Zeroable + Clone>(n: usize) -> Vec<T> {
    let v = bytemuck::allocation::zeroed_vec::<T>(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = n * std::mem::size_of::<T>();
        if bytes >= 4 * HUGE {
            let start = v.as_ptr() as usize;
            let aligned = start.next_multiple_of(HUGE);
            let len = (start + bytes).saturating_sub(aligned) / HUGE * HUGE;
            if len > 0 {
                // SAFETY: the range lies inside the allocation and madvise
                // only changes how its (untouched) pages are backed.
                unsafe {
                    libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v
}

/// A zeroed vector whose pages are faulted in on every core now, for
/// outputs filled piecewise from one thread (the GPU's streamed batches):
/// there, first-touch faults would run one piece at a time and cost more
/// than the copies (256 MB: 7 ms here against about 40 ms in the copies).
pub fn touched_vec<T: bytemuck::Zeroable + Clone + Send>(n: usize) -> Vec<T> {
    use rayon::prelude::*;
    let mut v = zeroed_vec::<T>(n);
    let page = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    v.par_chunks_mut(page)
        .for_each(|c| c[0] = bytemuck::Zeroable::zeroed());
    v
}

/// A byte count as people read it: "256.0 GiB", "3.1 MiB", "512 bytes".
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} bytes");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    #[test]
    fn touched_vec_is_zeroed_at_any_length() {
        for n in [0, 1, 1023, 1024, 1025, 3 << 20] {
            let v = super::touched_vec::<f32>(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0.0), "n = {n}");
        }
    }
}
