//! Releases the executable's start-up code pages once a crawl is set up.
//!
//! Why: `mgz` is one 14 MB-`.text` binary (crawler, gRPC service, stores,
//! benches). The kernel maps file pages in 64 KiB fault-around windows, so
//! the start-up alone (argument parsing, TLS set-up, SQLite and fjall
//! opening) leaves ~9-11 MB of the binary resident, most of it never run
//! again; that was ~60 % of a small crawl's peak RSS, which is bounded by
//! 2x wget2's (docs/BENCHMARKS.md, "Crawler"). After set-up, the clean
//! read-only file mappings of the executable are dropped from the page
//! tables (`MADV_DONTNEED`); the code the crawl runs faults back in from
//! the page cache (minor faults, no disk reads), the rest stays out.
//!
//! What is dropped: mappings of `/proc/self/exe` that are private, not
//! writable and hold no anonymous (copied-on-write) page — i.e. whose every
//! resident page equals the file's bytes. The relocated RELRO part (and
//! anything else written) has anonymous pages and is skipped: dropping it
//! would lose the writes. The executable is never unmapped while running,
//! so the addresses read from `/proc/self/smaps` stay its mappings.
//!
//! `MGZ_CODE_PAGES=keep` turns this off (to measure the difference).

/// One mapping of `/proc/self/smaps`: address range, permissions, path and
/// anonymous kilobytes.
#[derive(Debug, PartialEq)]
struct Mapping {
    start: usize,
    end: usize,
    perms: String,
    path: String,
    anon_kb: u64,
}

/// Parses `/proc/self/smaps` text into mappings (unknown lines ignored).
fn parse_smaps(text: &str) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::new();
    for line in text.lines() {
        if let Some(m) = parse_header(line) {
            out.push(m);
        } else if let (Some(last), Some(kb)) = (out.last_mut(), line.strip_prefix("Anonymous:")) {
            let kb = kb.trim().trim_end_matches("kB").trim();
            // Unparsable: count it as written, so the mapping is kept.
            last.anon_kb = kb.parse().unwrap_or(u64::MAX);
        }
    }
    out
}

/// `start-end perms offset dev inode [path]`, or None for a field line.
fn parse_header(line: &str) -> Option<Mapping> {
    let mut f = line.split_ascii_whitespace();
    let (range, perms) = (f.next()?, f.next()?);
    let (start, end) = range.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let (_offset, _dev, _inode) = (f.next()?, f.next()?, f.next()?);
    let path = f.collect::<Vec<_>>().join(" ");
    Some(Mapping {
        start,
        end,
        perms: perms.to_string(),
        path,
        anon_kb: 0,
    })
}

/// The mappings that may be dropped: `exe`'s clean, private, read-only ones.
fn droppable<'a>(maps: &'a [Mapping], exe: &'a str) -> impl Iterator<Item = &'a Mapping> {
    maps.iter().filter(move |m| {
        let p = m.perms.as_bytes();
        m.path == exe && p.len() == 4 && p[1] == b'-' && p[3] == b'p' && m.anon_kb == 0
    })
}

/// Drops the executable's clean code and read-only pages from this
/// process's page tables (see the module docs); returns the bytes of
/// address range advised. Errors (no `/proc`) drop nothing.
pub fn release() -> usize {
    if std::env::var_os("MGZ_CODE_PAGES").is_some_and(|v| v == "keep") {
        return 0;
    }
    let (Ok(exe), Ok(text)) = (
        std::fs::read_link("/proc/self/exe"),
        std::fs::read_to_string("/proc/self/smaps"),
    ) else {
        return 0;
    };
    let maps = parse_smaps(&text);
    let mut advised = 0;
    for m in droppable(&maps, &exe.to_string_lossy()) {
        // SAFETY: the range is a private, read-only mapping of our own
        // executable with no anonymous page (checked just above in smaps),
        // so every resident page is a copy of the file: after
        // MADV_DONTNEED the next access maps the same bytes again from the
        // page cache. Nothing can write it meanwhile (not writable), and the
        // executable's mappings are never unmapped, so the range cannot
        // have become another mapping.
        let rc = unsafe { libc::madvise(m.start as *mut _, m.end - m.start, libc::MADV_DONTNEED) };
        if rc == 0 {
            advised += m.end - m.start;
        }
    }
    advised
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0-55e0 r--p 00000000 fd:00 12 /opt/mgz
Rss:                 100 kB
Anonymous:             0 kB
55e0-5600 r-xp 00010000 fd:00 12 /opt/mgz
Anonymous:             0 kB
5600-5610 r--p 00030000 fd:00 12 /opt/mgz
Anonymous:            40 kB
5610-5620 rw-p 00040000 fd:00 12 /opt/mgz
Anonymous:             0 kB
7f00-7f10 r-xp 00000000 fd:00 99 /usr/lib/libc.so.6
Anonymous:             0 kB
7f10-7f20 rw-p 00000000 00:00 0 
Anonymous:            64 kB
7f20-7f30 r--s 00000000 fd:00 13 /opt/mgz
Anonymous:             0 kB
";

    #[test]
    fn parses_ranges_paths_and_anonymous_pages() {
        let maps = parse_smaps(SMAPS);
        assert_eq!(maps.len(), 7);
        assert_eq!(
            maps[2],
            Mapping {
                start: 0x5600,
                end: 0x5610,
                perms: "r--p".into(),
                path: "/opt/mgz".into(),
                anon_kb: 40,
            }
        );
        assert_eq!(maps[5].path, "");
    }

    /// Only the executable's clean, private, read-only mappings: not the
    /// relocated (anonymous) one, not writable ones, not shared ones, not
    /// libraries or anonymous memory.
    #[test]
    fn drops_only_clean_private_read_only_mappings_of_the_executable() {
        let maps = parse_smaps(SMAPS);
        let starts: Vec<usize> = droppable(&maps, "/opt/mgz").map(|m| m.start).collect();
        assert_eq!(starts, [0x55d0, 0x55e0]);
    }

    #[test]
    fn an_unreadable_anonymous_count_keeps_the_mapping() {
        let maps = parse_smaps("1000-2000 r-xp 0 fd:00 1 /x\nAnonymous: lots\n");
        assert_eq!(droppable(&maps, "/x").count(), 0);
    }

    /// In this very process: releasing keeps the program running (the code
    /// it needs faults back in) and advises at least the code mapping.
    #[test]
    fn release_in_this_process_keeps_it_working() {
        let advised = release();
        assert!(advised > 0 || std::env::var_os("MGZ_CODE_PAGES").is_some());
        let v: Vec<u64> = (0..1000).map(|i| i * i).collect();
        assert_eq!(v.iter().sum::<u64>(), 332_833_500);
    }
}
