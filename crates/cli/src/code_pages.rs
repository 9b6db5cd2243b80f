//! Releases the start-up code pages of the executable (and of the C runtime's
//! libraries) once a crawl is set up.
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
//! The release link packs the functions a crawl runs together, those of
//! set-up and those of the crawl proper each in one stretch
//! (`crates/cli/link/`, ARCHITECTURE.md "Code layout"), so what faults back
//! in is a few MB of windows instead of ~9. The C runtime's libraries
//! (libc, libm, libgcc_s, the loader) are dropped the same way.
//!
//! What is dropped: mappings of `/proc/self/exe` and of the C runtime's
//! libraries that are private, not writable and hold no anonymous
//! (copied-on-write) page — i.e. whose every
//! resident page equals the file's bytes. The relocated RELRO part (and
//! anything else written) has anonymous pages and is skipped: dropping it
//! would lose the writes. The executable and those libraries (needed by
//! it, loaded before `main`) are never unmapped while it runs, so the
//! addresses read from `/proc/self/smaps` stay their mappings.
//!
//! The crawl's own code is released again every so often
//! ([`release_again`], from the crawl's housekeeping task): what it keeps
//! running faults back in, what ran only for a while (robots.txt, the first
//! pages' set-up paths) drops out. The ranges found at set-up are reused, so
//! a repeat costs one `madvise` per range, not a read of `smaps` (which
//! walks every page table of the process). Ranges stay valid: a mapping that
//! is not writable cannot gain anonymous pages, and the executable is never
//! unmapped.
//!
//! `MGZ_CODE_PAGES=keep` turns both off, `MGZ_CODE_PAGES=once` the repeats
//! (to measure the difference).

use std::sync::OnceLock;

/// The droppable ranges, found by the first [`release`].
static RANGES: OnceLock<Vec<(usize, usize)>> = OnceLock::new();

fn mode() -> Option<String> {
    std::env::var("MGZ_CODE_PAGES").ok()
}

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

/// The C runtime's shared libraries, by file name: every `mgz` binary needs
/// them (`DT_NEEDED`), so they are mapped before `main` and never unloaded,
/// and their set-up code (the loader's, the math library's `ifunc`
/// resolvers) is dropped as the executable's is. Libraries loaded later
/// (glibc's NSS modules for a name lookup) may be unloaded and their
/// addresses reused, so they are never touched.
const RUNTIME_LIBRARIES: [&str; 4] = [
    "libc.so.6",
    "libm.so.6",
    "libgcc_s.so.1",
    "ld-linux-x86-64.so.2",
];

/// Whether `path` is one of [`RUNTIME_LIBRARIES`] (an absolute path).
fn runtime_library(path: &str) -> bool {
    path.starts_with('/')
        && path
            .rsplit('/')
            .next()
            .is_some_and(|name| RUNTIME_LIBRARIES.contains(&name))
}

/// The mappings that may be dropped: the clean, private, read-only ones of
/// `exe` and of the [`RUNTIME_LIBRARIES`].
fn droppable<'a>(maps: &'a [Mapping], exe: &'a str) -> impl Iterator<Item = &'a Mapping> {
    maps.iter().filter(move |m| {
        let p = m.perms.as_bytes();
        (m.path == exe || runtime_library(&m.path))
            && p.len() == 4
            && p[1] == b'-'
            && p[3] == b'p'
            && m.anon_kb == 0
    })
}

/// Drops the executable's clean code and read-only pages from this
/// process's page tables (see the module docs); returns the bytes of
/// address range advised. Errors (no `/proc`) drop nothing.
pub fn release() -> usize {
    if mode().as_deref() == Some("keep") {
        return 0;
    }
    advise(RANGES.get_or_init(find_ranges))
}

/// Repeats [`release`] on the ranges it found; nothing before it ran, or
/// with `MGZ_CODE_PAGES=keep|once`.
pub fn release_again() -> usize {
    match (RANGES.get(), mode().as_deref()) {
        (Some(ranges), None) => advise(ranges),
        _ => 0,
    }
}

/// The executable's droppable ranges, from `/proc/self/smaps`.
fn find_ranges() -> Vec<(usize, usize)> {
    let (Ok(exe), Ok(text)) = (
        std::fs::read_link("/proc/self/exe"),
        std::fs::read_to_string("/proc/self/smaps"),
    ) else {
        return Vec::new();
    };
    let maps = parse_smaps(&text);
    droppable(&maps, &exe.to_string_lossy())
        .map(|m| (m.start, m.end))
        .collect()
}

fn advise(ranges: &[(usize, usize)]) -> usize {
    let mut advised = 0;
    for &(start, end) in ranges {
        // SAFETY: the range is a private, read-only mapping of our own
        // executable or of a runtime library that had no anonymous page
        // when found in smaps, and a mapping that is not writable cannot
        // gain one, so every resident page is a copy of the file: after
        // MADV_DONTNEED the next access maps the same bytes again from the
        // page cache. Neither the executable nor a library it needs is ever
        // unmapped, so the range is still that mapping.
        let rc = unsafe { libc::madvise(start as *mut _, end - start, libc::MADV_DONTNEED) };
        if rc == 0 {
            advised += end - start;
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

    /// Only the clean, private, read-only mappings of the executable and of
    /// the C runtime's libraries: not the relocated (anonymous) one, not
    /// writable ones, not shared ones, not anonymous memory.
    #[test]
    fn drops_only_clean_private_read_only_mappings_of_the_executable() {
        let maps = parse_smaps(SMAPS);
        let starts: Vec<usize> = droppable(&maps, "/opt/mgz").map(|m| m.start).collect();
        assert_eq!(starts, [0x55d0, 0x55e0, 0x7f00]);
    }

    /// Other libraries (NSS modules are loaded and unloaded at run time),
    /// look-alike names and relative paths are kept; the runtime's
    /// libraries' relocated and writable mappings too.
    #[test]
    fn of_libraries_only_the_c_runtimes_clean_read_only_mappings() {
        let maps = parse_smaps(
            "\
1000-2000 r-xp 0 fd:00 1 /lib/x86_64-linux-gnu/libm.so.6
Anonymous: 0 kB
2000-3000 r--p 0 fd:00 1 /lib/x86_64-linux-gnu/libm.so.6
Anonymous: 8 kB
3000-4000 rw-p 0 fd:00 1 /lib/x86_64-linux-gnu/libm.so.6
Anonymous: 0 kB
4000-5000 r-xp 0 fd:00 2 /usr/lib/x86_64-linux-gnu/libnss_files.so.2
Anonymous: 0 kB
5000-6000 r-xp 0 fd:00 3 /opt/x/libc.so.6.bak
Anonymous: 0 kB
6000-7000 r-xp 0 fd:00 4 libc.so.6
Anonymous: 0 kB
7000-8000 r--p 0 fd:00 5 /lib64/ld-linux-x86-64.so.2
Anonymous: 0 kB
8000-9000 r-xp 0 fd:00 6 /lib/x86_64-linux-gnu/libgcc_s.so.1
Anonymous: 0 kB
9000-a000 r-xp 0 fd:00 7 /lib/x86_64-linux-gnu/libc.so.6 (deleted)
Anonymous: 0 kB
",
        );
        let starts: Vec<usize> = droppable(&maps, "/opt/mgz").map(|m| m.start).collect();
        assert_eq!(starts, [0x1000, 0x7000, 0x8000]);
    }

    #[test]
    fn an_unreadable_anonymous_count_keeps_the_mapping() {
        let maps = parse_smaps("1000-2000 r-xp 0 fd:00 1 /x\nAnonymous: lots\n");
        assert_eq!(droppable(&maps, "/x").count(), 0);
    }

    /// In this very process: releasing, then releasing again, keeps the
    /// program running (the code it needs faults back in) and advises at
    /// least the code mapping each time.
    #[test]
    fn release_in_this_process_keeps_it_working() {
        for advised in [release(), release_again()] {
            assert!(advised > 0 || mode().is_some());
            let v: Vec<u64> = (0..1000).map(|i| i * i).collect();
            assert_eq!(v.iter().sum::<u64>(), 332_833_500);
        }
    }
}
