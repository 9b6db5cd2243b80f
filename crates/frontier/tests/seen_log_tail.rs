//! A write that dies between its seen-log frame and its store batch (a
//! kill, or a full disk refusing the batch) leaves a frame whose keys the
//! store never got. The replay after it checks those keys against the store
//! and leaves them out. The writes after that open must not vouch for the
//! dead frame: a durable mark covers every frame before it in its log
//! file, so appending to the same file would make the replay after the
//! *next* restart trust the dead keys — URLs answered "seen" that are not
//! stored, so never served and never queued again (found by a disk-full
//! soak of `mgz crawl`: crates/frontier/bench/full_soak.sh).

use std::sync::Arc;

use mgz_frontier::{Durability, Frontier, FrontierOptions, ManualClock, PutOutcome, UrlItem};
use mgz_url::{CanonicalUrl, Policy};
use xxhash_rust::xxh3::xxh3_64;

fn opts() -> FrontierOptions {
    FrontierOptions {
        durability: Durability::OsBuffer,
        ..FrontierOptions::default()
    }
}

fn put(f: &Frontier, url: &str) -> PutOutcome {
    f.put_discovered(&[UrlItem::new(url)]).unwrap()[0].clone()
}

/// The newest `seen-<g>.log` of `dir`.
fn newest_log(dir: &std::path::Path) -> (u64, std::path::PathBuf) {
    let mut logs: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let g = p
                .file_name()?
                .to_str()?
                .strip_prefix("seen-")?
                .strip_suffix(".log")?
                .parse()
                .ok()?;
            Some((g, p))
        })
        .collect();
    logs.sort();
    logs.pop().expect("a seen log")
}

/// Appends a frame holding key records of `url` (for crawl ids 0..4: one is
/// the default crawl's), in the documented layout (`seenlog.rs`): what a
/// write leaves when it dies after its frame.
fn append_dead_frame(dir: &std::path::Path, url: &str) {
    let key = CanonicalUrl::parse(url, None, &Policy::safe())
        .unwrap()
        .key_bytes()
        .to_vec();
    let mut payload = Vec::new();
    for crawl in 0u32..4 {
        payload.push(1u8); // key record
        payload.extend_from_slice(&crawl.to_le_bytes());
        payload.extend_from_slice(&0u32.to_le_bytes()); // queue id
        payload.extend_from_slice(&(key.len() as u16).to_le_bytes());
        payload.extend_from_slice(&key);
    }
    let mut frame = (payload.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&payload);
    let sum = xxh3_64(&frame);
    frame.extend_from_slice(&sum.to_le_bytes());
    let (_, path) = newest_log(dir);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&frame);
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn a_dead_writes_keys_stay_unseen_across_two_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let dead = "http://dead.example/never-stored";
    {
        let f = Frontier::open(dir.path(), opts()).unwrap();
        assert_eq!(put(&f, "http://a.example/"), PutOutcome::New);
        // Dropped without `close`: the next open replays the log.
    }
    append_dead_frame(dir.path(), dead);
    let (before, _) = newest_log(dir.path());
    {
        let f = Frontier::open(dir.path(), opts()).unwrap();
        assert!(f.url_status("", dead, None).is_err(), "not stored");
        // A write after the open: its durable mark must not cover the
        // dead frame.
        assert_eq!(put(&f, "http://c.example/"), PutOutcome::New);
    }
    let (after, _) = newest_log(dir.path());
    assert_eq!(after, before + 1, "writes go on in a new log generation");
    let f = Frontier::open(dir.path(), opts()).unwrap();
    for known in ["http://a.example/", "http://c.example/"] {
        assert!(f.url_status("", known, None).is_ok(), "{known} kept");
        assert_eq!(put(&f, known), PutOutcome::Seen, "{known}");
    }
    assert_eq!(
        put(&f, dead),
        PutOutcome::New,
        "a URL whose write died is new, not seen-and-lost"
    );
    assert!(f.url_status("", dead, None).is_ok());
}

#[test]
fn a_log_without_a_dead_tail_is_appended_to() {
    let dir = tempfile::tempdir().unwrap();
    {
        let f = Frontier::open(dir.path(), opts()).unwrap();
        assert_eq!(put(&f, "http://a.example/"), PutOutcome::New);
    }
    let (before, _) = newest_log(dir.path());
    {
        let f = Frontier::open(dir.path(), opts()).unwrap();
        assert_eq!(put(&f, "http://b.example/"), PutOutcome::New);
    }
    assert_eq!(newest_log(dir.path()).0, before, "no new generation");
    let f = Frontier::open(dir.path(), opts()).unwrap();
    assert_eq!(put(&f, "http://a.example/"), PutOutcome::Seen);
    assert_eq!(put(&f, "http://b.example/"), PutOutcome::Seen);
}

/// Options with a clock stopped at one moment, so two fresh frontiers
/// given the same puts give them the same positions.
fn stopped_clock() -> FrontierOptions {
    FrontierOptions {
        clock: Arc::new(ManualClock::new(1_800_000_000_000)),
        ..opts()
    }
}

/// The last frame of the newest seen log of `dir` (its bytes, as written).
fn last_frame(dir: &std::path::Path) -> Vec<u8> {
    let (_, path) = newest_log(dir);
    let bytes = std::fs::read(path).unwrap();
    let (mut at, mut last) = (24, None);
    while at + 4 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let end = at + 4 + len + 8;
        // A durable mark is one 9-byte record (tag 2); key frames are longer.
        if len != 9 || bytes[at + 4] != 2 {
            last = Some(bytes[at..end].to_vec());
        }
        at = end;
    }
    last.expect("a key frame")
}

/// The dead write's keys are checked by position when they are pending
/// URLs without a `urls` entry (the usual case): is there a pending entry
/// at (queue, due time, sequence number)? The dead write took sequence
/// numbers the store never counted, so the writes after the open took them
/// again: a URL of the same queue at the same time got the dead URL's
/// position, and the replay after the next restart took the dead URL for
/// stored. The open now moves the counter past every number the log holds.
#[test]
fn a_dead_writes_position_is_not_given_to_a_later_url() {
    let (x, y) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [&x, &y] {
        let f = Frontier::open(dir.path(), stopped_clock()).unwrap();
        assert_eq!(put(&f, "http://a.example/"), PutOutcome::New);
    }
    // In X the write of B lands; its frame is what a write that died in Y
    // at the same point would have left in Y's log.
    {
        let f = Frontier::open(x.path(), stopped_clock()).unwrap();
        assert_eq!(put(&f, "http://b.example/dead"), PutOutcome::New);
    }
    let frame = last_frame(x.path());
    let (_, log) = newest_log(y.path());
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(&frame);
    std::fs::write(&log, bytes).unwrap();
    {
        let f = Frontier::open(y.path(), stopped_clock()).unwrap();
        assert!(f.url_status("", "http://b.example/dead", None).is_err());
        // Same queue, same moment: without the fix, B's position.
        assert_eq!(put(&f, "http://b.example/later"), PutOutcome::New);
    }
    let f = Frontier::open(y.path(), stopped_clock()).unwrap();
    assert_eq!(
        put(&f, "http://b.example/dead"),
        PutOutcome::New,
        "the dead URL is new, not taken for stored at the later URL's position"
    );
    assert_eq!(put(&f, "http://b.example/later"), PutOutcome::Seen);
}
