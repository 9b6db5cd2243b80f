//! Corruption: truncate and bit-flip every kind of state file. Opening must
//! either recover (and then everything it serves decodes and is consistent)
//! or fail with a typed error; it must never panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mgz_frontier::{
    Durability, Frontier, FrontierError, FrontierOptions, GetParams, KnownItem, ManualClock,
    StoreOptions, UrlItem, UrlQuery,
};

fn opts() -> FrontierOptions {
    FrontierOptions {
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        durability: Durability::OsBuffer,
        store: StoreOptions {
            memtable_bytes: 1 << 20,
            disc_memtable_bytes: 1 << 20,
            ..StoreOptions::default()
        },
        ..FrontierOptions::default()
    }
}

/// A state with journal and table files: 3,000 URLs with padding, 1,000 completed.
fn build(dir: &Path) {
    let f = Frontier::open(dir, opts()).unwrap();
    let pad = "x".repeat(300);
    let items: Vec<_> = (0..3000)
        .map(|i| UrlItem::new(format!("http://h{}.example/{i}/{pad}", i % 17)))
        .collect();
    for chunk in items.chunks(500) {
        f.put_discovered(chunk).unwrap();
    }
    let done: Vec<_> = items[..1000]
        .iter()
        .map(|i| KnownItem {
            item: i.clone(),
            next_fetch: 0,
        })
        .collect();
    f.put_known(&done).unwrap();
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if std::fs::metadata(&p).unwrap().len() > 0 {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Copies a directory tree, empty files and directories included.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, dest).unwrap();
        }
    }
}

/// Opens and reads everything; Ok(n URLs) or the typed error.
fn open_and_read(dir: &Path) -> Result<u64, FrontierError> {
    let f = Frontier::open(dir, opts())?;
    let all = UrlQuery {
        size: 1_000_000,
        ..UrlQuery::default()
    };
    let urls = f.list_urls(&all)?;
    for u in &urls {
        assert!(u.url.starts_with("http://h"), "garbage URL {u:?}");
    }
    let stats = f.stats("", None);
    assert_eq!(
        stats.size + stats.completed,
        urls.len() as u64,
        "counters match the URLs"
    );
    f.set_delay("", None, 0)?;
    let served = f.get(&GetParams::default())?;
    assert_eq!(
        served.len() as u64,
        stats.size,
        "every pending URL is served once"
    );
    Ok(urls.len() as u64)
}

fn check(base: &Path, name: &str, mutate: impl FnOnce(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(base, dir.path());
    mutate(dir.path());
    let result = catch_unwind(AssertUnwindSafe(|| open_and_read(dir.path())));
    match result {
        Err(_) => panic!("{name}: panicked"),
        Ok(Ok(n)) => eprintln!("{name}: recovered {n} URLs"),
        Ok(Err(e)) => eprintln!("{name}: clear error: {e}"),
    }
}

fn truncate(path: &Path, frac: f64) {
    let len = std::fs::metadata(path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len((len as f64 * frac) as u64).unwrap();
}

fn flip(path: &Path, frac: f64) {
    let mut b = std::fs::read(path).unwrap();
    let i = ((b.len() as f64 * frac) as usize).min(b.len() - 1);
    b[i] ^= 0x20;
    std::fs::write(path, b).unwrap();
}

/// Where files are cut. A journal cut in its middle drops batches that
/// the keyspaces flushed before the cut still hold (see `repair`): 0.5 and
/// 0.55 cut this state's journal there.
const FRACS: [f64; 4] = [0.0, 0.5, 0.55, 0.6];
#[test]
fn truncated_and_bit_flipped_files_never_panic() {
    let base = tempfile::tempdir().unwrap();
    build(base.path());
    assert_eq!(open_and_read(base.path()).unwrap(), 3000);
    let rel: Vec<PathBuf> = files(base.path())
        .into_iter()
        .map(|p| p.strip_prefix(base.path()).unwrap().to_path_buf())
        .filter(|p| !p.ends_with("lock"))
        // fjall's own keyspace 0 and the small meta/queue keyspaces 1-2 have
        // the same file kinds as the URL keyspaces 3-4: skip them (time).
        .filter(|p| {
            !["keyspaces/0/", "keyspaces/1/", "keyspaces/2/"]
                .iter()
                .any(|k| p.to_string_lossy().contains(k))
        })
        .collect();
    assert!(
        rel.iter().any(|p| p.to_string_lossy().contains("tables")),
        "{rel:?}"
    );
    for r in &rel {
        for frac in FRACS {
            check(
                base.path(),
                &format!("truncate {} at {frac}", r.display()),
                |d| truncate(&d.join(r), frac),
            );
        }
        for frac in [0.3, 0.9] {
            check(
                base.path(),
                &format!("flip {} at {frac}", r.display()),
                |d| flip(&d.join(r), frac),
            );
        }
    }
}

#[test]
fn format_file_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    drop(Frontier::open(dir.path(), opts()).unwrap());
    let format = dir.path().join("FORMAT");
    let good = std::fs::read(&format).unwrap();
    let mut newer = good.clone();
    newer[4] += 1; // a newer version, checksum now wrong too
    std::fs::write(&format, &newer).unwrap();
    assert!(matches!(
        Frontier::open(dir.path(), opts()),
        Err(FrontierError::Corrupt { .. })
    ));
    std::fs::remove_file(&format).unwrap();
    assert!(matches!(
        Frontier::open(dir.path(), opts()),
        Err(FrontierError::Corrupt { .. })
    ));
    std::fs::write(&format, &good).unwrap();
    assert!(Frontier::open(dir.path(), opts()).is_ok());
}

#[test]
fn read_only_directory_is_a_clear_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root ignores permission bits: use sysfs, where the kernel refuses new entries.
    let target = if std::fs::write(ro.join("probe"), b"x").is_ok() {
        PathBuf::from("/sys/mgz-frontier-test")
    } else {
        ro
    };
    let err = Frontier::open(&target, opts()).unwrap_err();
    assert!(matches!(err, FrontierError::ReadOnly { .. }), "{err}");
}

/// A journal cut in its middle drops the batches after the cut from the
/// keyspaces still in memtables (here `meta` and `urls`: the sequence
/// counter, counter records, the completions) while `disc` keeps them in a
/// table it flushed earlier. The open recounts the queues, moves the
/// sequence counter past every stored position and rebuilds the seen set
/// from the store: the seen answers match what is stored, new URLs never
/// overwrite surviving ones, and everything listed is served once.
#[test]
fn a_journal_cut_in_the_middle_leaves_a_consistent_frontier() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let journal = dir.path().join("store/0.jnl");
    let end = std::fs::metadata(&journal).unwrap().len();
    truncate(&journal, 0.3);
    assert!(std::fs::metadata(&journal).unwrap().len() < end);
    let f = Frontier::open(dir.path(), opts()).unwrap();
    let all = UrlQuery {
        size: 1_000_000,
        ..UrlQuery::default()
    };
    let listed = f.list_urls(&all).unwrap();
    let stats = f.stats("", None);
    assert_eq!(stats.size + stats.completed, listed.len() as u64);
    assert!(stats.completed < 1000, "the cut lost the completions");
    let pad = "x".repeat(300);
    let kept: std::collections::HashSet<String> = listed.iter().map(|u| u.url.clone()).collect();
    let original: Vec<_> = (0..3000)
        .map(|i| UrlItem::new(format!("http://h{}.example/{i}/{pad}", i % 17)))
        .collect();
    let again = f.put_discovered(&original).unwrap();
    for (item, outcome) in original.iter().zip(&again) {
        let want = match kept.contains(&item.url) {
            true => mgz_frontier::PutOutcome::Seen,
            false => mgz_frontier::PutOutcome::New,
        };
        assert_eq!(*outcome, want, "{}", item.url);
    }
    // All in one queue, so that a reused sequence number would name the key
    // of a surviving entry of that queue (every 17th position).
    let fresh: Vec<_> = (0..500)
        .map(|i| UrlItem::new(format!("http://h0.example/new{i}")))
        .collect();
    f.put_discovered(&fresh).unwrap();
    let now = f.list_urls(&all).unwrap();
    assert_eq!(now.len(), 3500, "no entry overwritten");
    let stats = f.stats("", None);
    assert_eq!(stats.size + stats.completed, 3500);
    f.set_delay("", None, 0).unwrap();
    let served = f.get(&GetParams::default()).unwrap();
    assert_eq!(served.len() as u64, stats.size);
    let distinct: std::collections::HashSet<_> = served.iter().map(|r| &r.url).collect();
    assert_eq!(distinct.len(), served.len(), "served once");
}
