//! A crawl whose disk fills: `--state`, `--db` and `--warc` on a small tmpfs.
//! The crawl must stop with an error that names the cause (not a later
//! symptom), lose nothing it acknowledged, and, once there is room, resume to
//! the sim's ground truth with a WARC file that reads through.
//!
//! Mounting a tmpfs needs root (CAP_SYS_ADMIN); elsewhere the test says so
//! and skips. (The frontier's own disk-full test, `RLIMIT_FSIZE` based, runs
//! everywhere: crates/frontier/tests/disk_full.rs. A file-size limit cannot
//! fill the crawl's disk part way: fjall sizes its journal at 64 MiB first.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mgz_sim::{SimConfig, SimServer};

mod common;

/// Whether an error line names a full device (SQLite says "database or
/// disk is full").
fn names_full_disk(line: &str) -> bool {
    ["No space left", "no space left", "disk is full"]
        .iter()
        .any(|c| line.contains(c))
}

/// A mounted tmpfs, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, bytes: u64) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }

    fn resize(&self, bytes: u64) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,size={bytes}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(st.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_stops_the_crawl_with_its_cause_and_resume_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(small) = Tmpfs::mount(&dir.path().join("small"), 3 << 20) else {
        eprintln!("SKIPPED: cannot mount a tmpfs here (needs root)");
        return;
    };
    let sim = SimConfig::small(11, 20, 1200);
    let server =
        SimServer::start_blocking(sim.clone(), "127.0.0.1:0".parse().unwrap(), None).unwrap();
    let on = |name: &str| small.0.join(name);
    let crawl = || {
        let mut c = common::sim_crawl(&server, &sim, &small.0);
        c.arg("--warc").arg(on("crawl.warc")).stdout(Stdio::null());
        c
    };
    let out = crawl().output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the crawl fit in 3 MiB: {err}");
    let last = err.lines().rfind(|l| l.starts_with("mgz: error")).unwrap();
    // Whichever file filled first (SQLite says "database or disk is full").
    // When a store worker found no room (a table it could not write), the
    // store refuses writes only as "poisoned": the line then carries the
    // store's first logged error, which names the cause.
    assert!(
        names_full_disk(last)
            && (!last.contains("poisoned") || last.contains("(the store's first error: "))
            && !last.contains("config"),
        "the final error hides the cause: {last}"
    );
    eprintln!("stopped by: {last}");
    let parts: Vec<&str> = last.split(": ").collect();
    assert!(
        parts.windows(2).all(|w| w[0] != w[1]),
        "a cause printed twice: {last}"
    );
    // Every fetch in flight is refused by the poisoned frontier; those
    // refusals are symptoms of the one cause and are not each logged.
    let refusals = (err.lines())
        .filter(|l| l.contains("poisoned") && !l.starts_with("mgz: error"))
        .count();
    assert!(
        refusals <= 1,
        "{refusals} lines of poisoned-frontier refusals: {err}"
    );
    let before = common::urls_where(&on("pages.db"), "status > 0");
    assert!(!before.is_empty(), "nothing stored before the disk filled");

    // A WARC write that failed part way was cut back off: the file ends
    // with a complete record even before the resume repairs anything.
    let bytes = std::fs::read(on("crawl.warc")).unwrap();
    let tail = mgz_crawl::warc_tail::scan(&mut std::io::Cursor::new(&bytes), bytes.len() as u64);
    assert_eq!(tail, Ok(mgz_crawl::warc_tail::Tail::Clean), "{last}");

    // The disk fills again a few times on the way (each stop leaves a
    // write that died half-way for the next open to settle, and the writes
    // after that open must not vouch for it: crates/frontier/tests/
    // seen_log_tail.rs), each time with its cause named.
    let mut stops = 1;
    for mib in [4u64, 5, 6] {
        small.resize(mib << 20);
        let out = crawl().output().unwrap();
        if out.status.success() {
            break;
        }
        stops += 1;
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rfind(|l| l.starts_with("mgz: error")).unwrap();
        assert!(
            names_full_disk(last),
            "stop {stops} at {mib} MiB hides its cause: {last}\nits log:\n{err}"
        );
    }
    eprintln!("{stops} disk-full stops before the resume with room");
    small.resize(256 << 20);
    let out = crawl().output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let truth: BTreeSet<String> = mgz_sim::truth(&sim, 3, true).into_iter().collect();
    let got = common::urls_where(&on("pages.db"), common::HTML_PAGES);
    assert!(
        got == truth,
        "{} stored, {} in the truth",
        got.len(),
        truth.len()
    );
    let after = common::urls_where(&on("pages.db"), "status > 0");
    assert!(after.is_superset(&before));
    let bytes = std::fs::read(on("crawl.warc")).unwrap();
    let tail = mgz_crawl::warc_tail::scan(&mut std::io::Cursor::new(&bytes), bytes.len() as u64);
    assert_eq!(tail, Ok(mgz_crawl::warc_tail::Tail::Clean));
    let responses: BTreeSet<String> = common::warc_records(&bytes)
        .into_iter()
        .filter(|(t, _)| t == "response")
        .map(|(_, u)| u)
        .collect();
    let without: Vec<_> = after.difference(&responses).take(5).collect();
    assert!(
        without.is_empty(),
        "stored without a response record: {without:?}"
    );
}
