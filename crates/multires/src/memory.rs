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
