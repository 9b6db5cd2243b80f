//! Resident set size of this process, read from `/proc/self/status`.
//!
//! Returns 0 where `/proc` is unavailable (not Linux): the page then shows 0
//! rather than failing.

fn status_field_kib(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Current resident set size in bytes (`VmRSS`).
pub fn rss_bytes() -> u64 {
    status_field_kib("VmRSS:").unwrap_or(0) * 1024
}

/// Peak resident set size in bytes (`VmHWM`).
pub fn peak_rss_bytes() -> u64 {
    status_field_kib("VmHWM:").unwrap_or(0) * 1024
}

#[cfg(test)]
mod tests {
    #[test]
    fn rss_is_positive_on_linux_and_below_peak() {
        if cfg!(target_os = "linux") {
            let now = super::rss_bytes();
            assert!(now > 0);
            assert!(super::peak_rss_bytes() >= now / 2);
        }
    }
}
