//! Disk full: a child process writes under a small `RLIMIT_FSIZE` (with
//! SIGXFSZ ignored, so an over-long write fails with EFBIG instead of killing
//! the process), the way a full device makes writes fail part-way. The put
//! that hits the limit must return a typed error, not panic and not be
//! acknowledged; later puts must be refused too; and reopening without the
//! limit must find every acknowledged URL.
//!
//! The limit is per process and needs no privilege, so this runs the same as
//! root or as an unprivileged user (a tmpfs would need root to mount).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use mgz_frontier::{Durability, Frontier, FrontierError, FrontierOptions, UrlItem};

/// File size limit of the child, in bytes: the journal reaches it after a few
/// dozen batches.
const LIMIT: u64 = 192 << 10;

fn opts() -> FrontierOptions {
    FrontierOptions {
        durability: Durability::GroupCommit {
            interval: Duration::from_millis(2),
        },
        ..FrontierOptions::default()
    }
}

fn limit_file_size(bytes: u64) {
    // SAFETY: plain libc calls with valid arguments; SIG_IGN installs no
    // Rust code as a handler, and the rlimit struct outlives the call.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let lim = libc::rlimit {
            rlim_cur: bytes as libc::rlim_t,
            rlim_max: libc::RLIM_INFINITY,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
}

/// What the child prints for an error: `E <variant> <message>`.
fn describe(e: &FrontierError) -> String {
    let variant = format!("{e:?}");
    let variant = variant
        .split([' ', '(', '{'])
        .next()
        .unwrap_or("")
        .to_string();
    format!("E {variant} {e}")
}

/// The child: puts until a put fails, then tries once more. Run only by
/// `a_full_disk_is_a_typed_error_and_loses_nothing_acknowledged`.
#[test]
#[ignore = "child process of a_full_disk_is_a_typed_error_and_loses_nothing_acknowledged"]
fn disk_full_child() {
    let dir = std::env::var("MGZ_DISKFULL_DIR").expect("run by the disk-full test");
    let f = Frontier::open(&dir, opts()).unwrap();
    limit_file_size(LIMIT);
    let mut out = std::io::stdout().lock();
    let pad = "p".repeat(120);
    for b in 0..10_000 {
        let urls: Vec<String> = (0..32)
            .map(|i| format!("http://h{}.full.test/b{b}/i{i}/{pad}", i % 7))
            .collect();
        let items: Vec<_> = urls.iter().map(|u| UrlItem::new(u.as_str())).collect();
        match f.put_discovered(&items) {
            Ok(_) => {
                for u in &urls {
                    writeln!(out, "D {u}").unwrap();
                }
            }
            Err(e) => {
                writeln!(out, "{}", describe(&e)).unwrap();
                let again = f.put_discovered(&[UrlItem::new("http://after.full.test/")]);
                match again {
                    Ok(_) => writeln!(out, "AGAIN ok").unwrap(),
                    Err(e) => writeln!(out, "AGAIN {}", describe(&e)).unwrap(),
                }
                return;
            }
        }
        out.flush().unwrap();
    }
    writeln!(out, "NEVER FAILED").unwrap();
}

#[test]
fn a_full_disk_is_a_typed_error_and_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "disk_full_child", "--ignored", "--nocapture"])
        .env("MGZ_DISKFULL_DIR", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "child failed:\n{stdout}\n{stderr}");
    let acked: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("D "))
        .collect();
    let error = stdout
        .lines()
        .find(|l| l.starts_with("E "))
        .unwrap_or_else(|| {
            panic!("no put failed under a {LIMIT}-byte file limit:\n{stdout}\n{stderr}")
        });
    let again = stdout.lines().find(|l| l.starts_with("AGAIN ")).unwrap();
    eprintln!(
        "{} URLs acknowledged, then: {error}; next put: {again}",
        acked.len()
    );
    assert!(acked.len() >= 32, "the limit left room for some batches");
    assert!(error.starts_with("E DiskFull "), "{error}");
    assert!(error.contains("no space"), "message says why: {error}");
    assert!(
        again.starts_with("AGAIN E DiskFull ") || again.starts_with("AGAIN E Poisoned "),
        "writes after a failed one are refused: {again}"
    );
    let f = Frontier::open(dir.path(), opts()).expect("reopens after the failed write");
    for url in &acked {
        f.url_status("", url, None)
            .unwrap_or_else(|e| panic!("acknowledged {url} lost: {e}"));
    }
    let stats = f.stats("", None);
    assert!(stats.size >= acked.len() as u64, "{stats:?}");
    // The reopened frontier writes normally again.
    f.put_discovered(&[UrlItem::new("http://after.full.test/")])
        .unwrap();
}
