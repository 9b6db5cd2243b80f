//! The `mgz` binary's own pages are mapped on demand, one at a time.
//!
//! Measured (docs/BENCHMARKS.md "Crawler"): in a small crawl, 15 MB of the
//! 24 MB peak RSS was the binary's file-backed pages, most of them never
//! executed: each page fault on code maps the 64 KiB around it as well
//! (the kernel's fault-around). `MADV_RANDOM` on the binary's read-only
//! mappings asks for the faulted page only. The pages stay in the page
//! cache either way (shared, evictable); what changes is how many this
//! process maps, i.e. its RSS. The cost is one minor fault per 4 KiB page
//! of code actually used (a few thousand faults, about a millisecond).
//!
//! Best effort: on a system without `/proc` or if `madvise` refuses,
//! nothing changes.

/// Advises `MADV_RANDOM` for every read-only mapping of the running binary.
pub fn map_on_demand() {
    #[cfg(target_os = "linux")]
    {
        let Ok(exe) = std::fs::read_link("/proc/self/exe") else {
            return;
        };
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
            return;
        };
        let exe = exe.to_string_lossy();
        for (start, end) in maps.lines().filter_map(|l| read_only_of(l, &exe)) {
            // SAFETY: the range is a whole mapping of this process (read from
            // /proc/self/maps); MADV_RANDOM only changes how later faults on
            // it are served, never its contents or protection.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_RANDOM);
            }
        }
    }
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
/// The address range of a `/proc/self/maps` line when it maps `exe`
/// without write permission.
fn read_only_of(line: &str, exe: &str) -> Option<(usize, usize)> {
    let mut fields = line.split_whitespace();
    let (range, perms) = (fields.next()?, fields.next()?);
    let path = fields.nth(3)?;
    if path != exe || perms.contains('w') {
        return None;
    }
    let (a, b) = range.split_once('-')?;
    let (a, b) = (
        usize::from_str_radix(a, 16).ok()?,
        usize::from_str_radix(b, 16).ok()?,
    );
    (b > a).then_some((a, b))
}

#[cfg(test)]
mod tests {
    use super::read_only_of;

    #[test]
    fn picks_the_binarys_read_only_mappings() {
        let exe = "/usr/bin/mgz";
        let text = "5555a000-5556b000 r-xp 00010000 fd:01 42 /usr/bin/mgz";
        assert_eq!(read_only_of(text, exe), Some((0x5555a000, 0x5556b000)));
        let data = "5556b000-5556c000 rw-p 00021000 fd:01 42 /usr/bin/mgz";
        assert_eq!(read_only_of(data, exe), None);
        let other = "7f00a000-7f00b000 r-xp 00000000 fd:01 7 /usr/lib/libc.so.6";
        assert_eq!(read_only_of(other, exe), None);
        assert_eq!(
            read_only_of("7ffd0000-7ffd1000 rw-p 00000000 00:00 0", exe),
            None
        );
        assert_eq!(read_only_of("garbage", exe), None);
        assert_eq!(
            read_only_of("zz-yy r-xp 0 fd:01 42 /usr/bin/mgz", exe),
            None
        );
    }
}
