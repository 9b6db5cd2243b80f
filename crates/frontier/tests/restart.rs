//! Restart: the seen index comes back from its snapshot and log, or is
//! rebuilt from the store when they are missing, damaged or unsupported —
//! and in every case deduplication after the reopen is exactly right.

use std::path::Path;
use std::sync::Arc;

use mgz_frontier::{
    Durability, Frontier, FrontierOptions, ManualClock, PutOutcome, StoreOptions, UrlItem,
    seen_factory,
};

fn opts(backend: &str) -> FrontierOptions {
    FrontierOptions {
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        durability: Durability::OsBuffer,
        seen: seen_factory(backend, 10_000).unwrap(),
        // 256 discovered URLs per `disc` segment: 2,000 URLs fill 8.
        store: StoreOptions {
            segment_bits: 8,
            ..StoreOptions::default()
        },
        ..FrontierOptions::default()
    }
}

fn items(range: std::ops::Range<u32>) -> Vec<UrlItem> {
    range
        .map(|i| UrlItem::new(format!("http://h{}.example/p/{i}", i % 13)))
        .collect()
}

/// Puts URLs 0..2000 in batches; returns the open frontier.
fn fill(dir: &Path, backend: &str) -> Frontier {
    let f = Frontier::open(dir, opts(backend)).unwrap();
    for chunk in items(0..2000).chunks(300) {
        assert!(
            f.put_discovered(chunk)
                .unwrap()
                .iter()
                .all(|o| *o == PutOutcome::New)
        );
    }
    f
}

/// After reopening: 0..2000 are all Seen, 2000..2100 all New.
fn assert_dedupes(dir: &Path, backend: &str) {
    assert_dedupes_upto(dir, backend, 2000);
}

/// After reopening: 0..`stored` are all Seen, the next 100 all New.
fn assert_dedupes_upto(dir: &Path, backend: &str, stored: u32) {
    let f = Frontier::open(dir, opts(backend)).unwrap();
    let old = f.put_discovered(&items(0..stored)).unwrap();
    assert!(
        old.iter().all(|o| *o == PutOutcome::Seen),
        "{backend}: stored URLs are seen"
    );
    let new = f.put_discovered(&items(stored..stored + 100)).unwrap();
    assert!(
        new.iter().all(|o| *o == PutOutcome::New),
        "{backend}: unseen URLs are new"
    );
    assert_eq!(f.stats("", None).size, u64::from(stored) + 100);
}

fn logs(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("seen-"))
        .collect();
    v.sort();
    v
}

#[test]
fn close_writes_a_snapshot_that_restores_the_set() {
    for backend in ["hash", "fingerprint"] {
        let has_form = mgz_seen::backend(backend, &mgz_seen::BackendOptions::default())
            .unwrap()
            .snapshot()
            .is_some();
        let dir = tempfile::tempdir().unwrap();
        fill(dir.path(), backend).close().unwrap();
        assert_eq!(dir.path().join("seen.snap").exists(), has_form, "{backend}");
        assert_eq!(
            logs(dir.path()).len(),
            usize::from(has_form),
            "old logs are removed"
        );
        assert_dedupes(dir.path(), backend);
    }
}

#[test]
fn a_checkpoint_leaves_the_frontier_open_and_later_writes_are_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let f = fill(dir.path(), "fingerprint");
    let log_len = |dir: &Path| -> u64 {
        logs(dir)
            .iter()
            .map(|n| std::fs::metadata(dir.join(n)).unwrap().len())
            .sum()
    };
    let before = log_len(dir.path());
    f.checkpoint().unwrap();
    // The snapshot holds the 2,000 keys; one log is left, and it is shorter
    // than the one that held them.
    assert!(dir.path().join("seen.snap").exists());
    assert_eq!(logs(dir.path()).len(), 1);
    let after = log_len(dir.path());
    assert!(after < before / 10, "log {before} -> {after} bytes");
    // Still open: a put after it, then a drop without close.
    assert!(
        f.put_discovered(&items(2000..2050))
            .unwrap()
            .iter()
            .all(|o| *o == PutOutcome::New)
    );
    drop(f);
    assert_dedupes_upto(dir.path(), "fingerprint", 2050);
}

#[test]
fn drop_without_close_replays_the_log() {
    let dir = tempfile::tempdir().unwrap();
    drop(fill(dir.path(), "hash"));
    assert_dedupes(dir.path(), "hash");
    // And again: the reopened log is appended to, not replaced.
    let f = Frontier::open(dir.path(), opts("hash")).unwrap();
    assert_eq!(
        f.put_discovered(&items(2100..2101)).unwrap(),
        [PutOutcome::New]
    );
    drop(f);
    let f = Frontier::open(dir.path(), opts("hash")).unwrap();
    assert_eq!(
        f.put_discovered(&items(2100..2101)).unwrap(),
        [PutOutcome::Seen]
    );
}

#[test]
fn damaged_snapshot_is_rebuilt_from_the_store() {
    let base = tempfile::tempdir().unwrap();
    fill(base.path(), "hash").close().unwrap();
    let snap = std::fs::read(base.path().join("seen.snap")).unwrap();
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", snap[..snap.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("bit flip", {
            let mut b = snap.clone();
            b[snap.len() / 3] ^= 0x20;
            b
        }),
        ("header flip", {
            let mut b = snap.clone();
            b[5] ^= 1;
            b
        }),
    ];
    for (what, bytes) in damages {
        let dir = tempfile::tempdir().unwrap();
        copy(base.path(), dir.path());
        std::fs::write(dir.path().join("seen.snap"), bytes).unwrap();
        eprintln!("{what}");
        assert_dedupes(dir.path(), "hash");
    }
}

#[test]
fn torn_log_tail_is_truncated_and_damage_inside_rebuilds() {
    let base = tempfile::tempdir().unwrap();
    drop(fill(base.path(), "hash"));
    let name = logs(base.path()).pop().unwrap();
    // A torn write: half a frame at the end.
    let dir = tempfile::tempdir().unwrap();
    copy(base.path(), dir.path());
    let path = dir.path().join(&name);
    let mut b = std::fs::read(&path).unwrap();
    let good = b.len();
    b.extend_from_slice(&[200, 0, 0, 0, 1, 2, 3]);
    std::fs::write(&path, &b).unwrap();
    assert_dedupes(dir.path(), "hash");
    assert!(
        std::fs::read(&path).unwrap().len() > good,
        "appending resumed after the cut"
    );
    // A bit flip in the first frame, with frames after it: rebuilt, not trusted.
    let dir = tempfile::tempdir().unwrap();
    copy(base.path(), dir.path());
    let path = dir.path().join(&name);
    let mut b = std::fs::read(&path).unwrap();
    b[40] ^= 0x08;
    std::fs::write(&path, &b).unwrap();
    assert_dedupes(dir.path(), "hash");
}

/// A power cut can keep a batch in the store (fjall fsynced its journal, on
/// the group commit's turn or on its own at a flush) while losing the seen-log
/// frame written just before it, which was not fsynced yet. The log then
/// replays cleanly but lacks those URLs; the store's mark of its newest
/// frame says so, and the open rebuilds the sets instead of trusting it.
/// Without the mark, the URLs of the lost frames were stored but unseen:
/// putting them again stored them twice (New), and both copies were served.
#[test]
fn a_log_that_lost_frames_the_store_kept_is_not_trusted() {
    for backend in ["hash", "fingerprint"] {
        let dir = tempfile::tempdir().unwrap();
        let f = fill(dir.path(), backend);
        let name = logs(dir.path()).pop().unwrap();
        let path = dir.path().join(&name);
        let kept = std::fs::metadata(&path).unwrap().len();
        let later = items(2000..2300);
        let put = f.put_discovered(&later).unwrap();
        assert!(put.iter().all(|o| *o == PutOutcome::New));
        drop(f);
        // The frames of `later` (and their durable marks) are lost; the
        // store keeps its batch (OsBuffer: the journal is in the OS).
        assert!(std::fs::metadata(&path).unwrap().len() > kept);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(kept)
            .unwrap();
        let f = Frontier::open(dir.path(), opts(backend)).unwrap();
        let again = f.put_discovered(&later).unwrap();
        assert!(
            again.iter().all(|o| *o == PutOutcome::Seen),
            "{backend}: URLs the store kept are seen"
        );
        assert_eq!(f.stats("", None).size, 2300, "{backend}: stored once");
        let served = drain(&f);
        assert_eq!(served.len(), 2300, "{backend}");
        let distinct: std::collections::HashSet<_> = served.iter().collect();
        assert_eq!(distinct.len(), 2300, "{backend}: each served once");
        drop(f);
        assert_dedupes_upto(dir.path(), backend, 2300);
    }
}

#[test]
fn backend_without_snapshot_rebuilds_every_time() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), "tst").close().unwrap();
    assert!(!dir.path().join("seen.snap").exists());
    assert!(logs(dir.path()).is_empty());
    assert_dedupes(dir.path(), "tst");
}

#[test]
fn switching_backend_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), "hash").close().unwrap();
    assert_dedupes(dir.path(), "fingerprint");
}

#[test]
fn deletions_survive_snapshot_and_log() {
    for close in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let f = fill(dir.path(), "hash");
        assert!(f.delete_queue("", "h3.example").unwrap() > 0);
        if close {
            f.close().unwrap();
        } else {
            drop(f);
        }
        let f = Frontier::open(dir.path(), opts("hash")).unwrap();
        let again = f.put_discovered(&items(0..2000)).unwrap();
        let new = again.iter().filter(|o| **o == PutOutcome::New).count();
        assert_eq!(
            new,
            items(0..2000)
                .iter()
                .filter(|i| i.url.contains("//h3."))
                .count()
        );
    }
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy(&p, &dest);
        } else {
            std::fs::copy(&p, dest).unwrap();
        }
    }
}

#[test]
fn counters_survive_folds_deletes_and_reopens() {
    use mgz_frontier::KnownItem;
    let dir = tempfile::tempdir().unwrap();
    let f = Frontier::open(dir.path(), opts("hash")).unwrap();
    // 2,500 one-URL puts: more than two folds of counter records.
    for item in items(0..2500) {
        f.put_discovered(&[item]).unwrap();
    }
    let done: Vec<_> = items(0..300)
        .into_iter()
        .map(|item| KnownItem {
            item,
            next_fetch: 0,
        })
        .collect();
    f.put_known(&done).unwrap();
    f.delete_queue("", "h5.example").unwrap();
    f.set_delay("", Some("h6.example"), 3).unwrap();
    f.put_discovered(&items(2500..2600)).unwrap();
    let before: Vec<_> = (0..13)
        .map(|h| f.stats("", Some(&format!("h{h}.example"))))
        .collect();
    drop(f);
    let f = Frontier::open(dir.path(), opts("hash")).unwrap();
    let after: Vec<_> = (0..13)
        .map(|h| f.stats("", Some(&format!("h{h}.example"))))
        .collect();
    assert_eq!(before, after);
    let all = f.stats_all();
    assert_eq!(all.size, after.iter().map(|s| s.size).sum::<u64>());
    assert_eq!(
        all.completed,
        after.iter().map(|s| s.completed).sum::<u64>()
    );
    let h5_new = (2500..2600).filter(|i| i % 13 == 5).count() as u64;
    assert_eq!(
        (after[5].size, after[5].completed),
        (h5_new, 0),
        "deleted queue restarted empty"
    );
    assert!(after[0].completed > 0 && after[0].size > 0);
}

/// Backend names of the crawls in `DIR/seen.snap` (format in the
/// frontier's `snapshot` module: a 20-byte header, then per crawl id u32,
/// dirty u8, name length u8, name, set length u64, set bytes).
fn snapshot_backends(dir: &Path) -> Vec<String> {
    let b = std::fs::read(dir.join("seen.snap")).unwrap();
    let crawls = u32::from_le_bytes(b[16..20].try_into().unwrap());
    let mut at = 20;
    let mut names = Vec::new();
    for _ in 0..crawls {
        let len = usize::from(b[at + 5]);
        names.push(String::from_utf8(b[at + 6..at + 6 + len].to_vec()).unwrap());
        let set = u64::from_le_bytes(b[at + 6 + len..at + 14 + len].try_into().unwrap());
        at += 14 + len + set as usize;
    }
    names
}

#[test]
fn fingerprint_is_split_and_a_whole_set_saved_before_still_restores() {
    // New state: the split form.
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), "fingerprint").close().unwrap();
    assert_eq!(snapshot_backends(dir.path()), ["fingerprint-parts"]);
    assert_dedupes(dir.path(), "fingerprint");

    // State written by a frontier that kept the set whole: restored as it
    // is (no rebuild), and it keeps deduplicating.
    let dir = tempfile::tempdir().unwrap();
    let whole = FrontierOptions {
        seen: Arc::new(|| {
            mgz_seen::backend("fingerprint", &mgz_seen::BackendOptions::default()).unwrap()
        }),
        ..opts("hash")
    };
    let f = Frontier::open(dir.path(), whole).unwrap();
    f.put_discovered(&items(0..2000)).unwrap();
    f.close().unwrap();
    assert_eq!(snapshot_backends(dir.path()), ["fingerprint"]);
    assert_dedupes(dir.path(), "fingerprint");
    assert_eq!(snapshot_backends(dir.path()), ["fingerprint"], "kept whole");
}

/// Leases everything eligible (no politeness delay) and returns the URLs.
fn drain(f: &Frontier) -> Vec<String> {
    f.set_delay("", None, 0).unwrap();
    let p = mgz_frontier::GetParams::default();
    let mut got = Vec::new();
    loop {
        let batch = f.get(&p).unwrap();
        if batch.is_empty() {
            return got;
        }
        got.extend(batch.into_iter().map(|r| r.url));
    }
}

fn complete(f: &Frontier, urls: &[String]) {
    let done: Vec<_> = urls
        .iter()
        .map(|u| mgz_frontier::KnownItem {
            item: UrlItem::new(u.as_str()),
            next_fetch: 0,
        })
        .collect();
    f.put_known(&done).unwrap();
}

/// The open takes the highest `disc` segment from the segment keyspaces
/// present (format 7), not from the last live key (which fjall finds by
/// walking back over every completed URL's tombstone). URLs left pending in the first and in the
/// highest of the 8 segments, and URLs put after the reopen, are all served
/// again after it; completed ones never are.
#[test]
fn pending_urls_of_every_segment_are_served_after_most_completed() {
    let dir = tempfile::tempdir().unwrap();
    let f = fill(dir.path(), "fingerprint");
    let all = drain(&f);
    assert_eq!(all.len(), 2000);
    // Keep the 3 URLs put first (segment 1) and the 3 put last (segment 8).
    let keep = [
        "http://h0.example/p/0",
        "http://h1.example/p/1",
        "http://h2.example/p/2",
    ]
    .into_iter()
    .map(String::from)
    .chain((1997..2000).map(|i| format!("http://h{}.example/p/{i}", i % 13)))
    .collect::<std::collections::BTreeSet<_>>();
    let done: Vec<String> = all.into_iter().filter(|u| !keep.contains(u)).collect();
    assert_eq!(done.len(), 1994);
    complete(&f, &done);
    f.close().unwrap();

    let f = Frontier::open(dir.path(), opts("fingerprint")).unwrap();
    assert_eq!(f.stats("", None).size, 6);
    // Listing reads every segment up to the top: all 2,000 URLs, the
    // last-put pending one among them.
    let all = mgz_frontier::UrlQuery::default();
    assert_eq!(f.count_urls(&all).unwrap(), 2000);
    let last = mgz_frontier::UrlQuery {
        filter: Some("/p/1999".into()),
        ..mgz_frontier::UrlQuery::default()
    };
    assert_eq!(f.list_urls(&last).unwrap().len(), 1);
    let again: std::collections::BTreeSet<_> = drain(&f).into_iter().collect();
    assert_eq!(
        again, keep,
        "leases lapse at the restart; each kept URL once"
    );
    complete(&f, &again.into_iter().collect::<Vec<_>>());
    f.close().unwrap();

    // Everything completed: nothing is served, new URLs are.
    let f = Frontier::open(dir.path(), opts("fingerprint")).unwrap();
    assert!(drain(&f).is_empty());
    let new = f.put_discovered(&items(2000..2010)).unwrap();
    assert!(new.iter().all(|o| *o == PutOutcome::New));
    let mut got = drain(&f);
    got.sort();
    let mut want: Vec<String> = items(2000..2010).into_iter().map(|i| i.url).collect();
    want.sort();
    assert_eq!(got, want);
    assert!(
        f.put_discovered(&items(0..2000))
            .unwrap()
            .iter()
            .all(|o| *o == PutOutcome::Seen)
    );
}
