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
