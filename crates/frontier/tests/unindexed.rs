//! Pending URLs that `put_discovered` stores without a `urls` entry (trusted,
//! clean seen set; format 3) must behave exactly like indexed ones for every
//! lookup by URL: status, `put_known`, listing, counting, deletes, purges,
//! "seen" checks of a dirty crawl and a rebuild of the seen set from the
//! store. Run with a trusted backend (`hash`, `fingerprint`: unindexed) and
//! an untrusted one (`bloom`: indexed) so both forms are covered.

mod common;

use std::sync::Arc;

use common::write_format;

use mgz_frontier::{
    Durability, Frontier, FrontierError, FrontierOptions, KnownItem, ManualClock, PutOutcome,
    StoreOptions, UrlItem, UrlQuery, seen_factory,
};

const T0: u64 = 1_700_000_000_000;

fn open(dir: &std::path::Path, clock: &ManualClock, backend: &str) -> Frontier {
    try_open(dir, clock, backend).unwrap()
}

fn try_open(
    dir: &std::path::Path,
    clock: &ManualClock,
    backend: &str,
) -> Result<Frontier, FrontierError> {
    let opts = FrontierOptions {
        clock: Arc::new(clock.clone()),
        durability: Durability::OsBuffer,
        seen: seen_factory(backend, 1000).unwrap(),
        // 2 discovered URLs per `disc` segment.
        store: StoreOptions {
            segment_bits: 1,
            ..StoreOptions::default()
        },
        ..FrontierOptions::default()
    };
    Frontier::open(dir, opts)
}

fn put(f: &Frontier, urls: &[&str]) -> Vec<PutOutcome> {
    let items: Vec<_> = urls.iter().map(|u| UrlItem::new(*u)).collect();
    f.put_discovered(&items).unwrap()
}

fn known(f: &Frontier, url: &str, next_fetch: u64) -> PutOutcome {
    let item = KnownItem {
        item: UrlItem::new(url),
        next_fetch,
    };
    f.put_known(&[item]).unwrap()[0].clone()
}

/// The URLs one `get` serves: up to `max_queues` queues × `per_queue` URLs.
fn served(f: &Frontier, max_queues: u32, per_queue: u32) -> Vec<String> {
    let params = mgz_frontier::GetParams {
        max_queues,
        max_urls_per_queue: per_queue,
        ..Default::default()
    };
    f.get(&params).unwrap().into_iter().map(|r| r.url).collect()
}

fn scenario(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock, backend);
    let now = T0 / 1000;
    let (a1, a2, a3) = ("http://a.com/1", "http://a.com/2", "http://a.com/3");
    let (b1, b2) = ("http://b.com/1", "http://b.com/2");
    assert!(
        put(&f, &[a1, a2, a3, b1, b2])
            .iter()
            .all(|o| *o == PutOutcome::New)
    );
    assert_eq!(f.url_status("", a2, None).unwrap().next_fetch, now);
    // Rescheduling an unleased pending URL moves it, never duplicates it.
    assert_eq!(known(&f, a1, now + 50), PutOutcome::Updated);
    assert_eq!(put(&f, &[a1]), vec![PutOutcome::Seen]);
    assert_eq!(f.count_urls(&UrlQuery::default()).unwrap(), 5, "{backend}");
    assert_eq!(f.stats("", None).size, 5);
    let mut want = vec![
        (a1.to_string(), now + 50),
        (a2.to_string(), now),
        (a3.to_string(), now),
        (b1.to_string(), now),
        (b2.to_string(), now),
    ];
    assert_eq!(common::listed(&f), want, "{backend}");
    // Completing an unleased pending URL.
    assert_eq!(known(&f, a3, 0), PutOutcome::Updated);
    assert_eq!(f.url_status("", a3, None).unwrap().next_fetch, 0);
    want[2].1 = 0;
    assert_eq!(common::listed(&f), want, "{backend}");
    assert_eq!(f.stats("", None).size, 4);
    assert_eq!(f.stats("", None).completed, 1);
    // A delete makes the crawl dirty: "seen" answers are checked in the store.
    assert_eq!(f.delete_queue("", "b.com").unwrap(), 2);
    assert_eq!(put(&f, &[a2, b1]), vec![PutOutcome::Seen, PutOutcome::New]);
    assert_eq!(put(&f, &[a2, a3]), vec![PutOutcome::Seen, PutOutcome::Seen]);
    assert_eq!(f.count_urls(&UrlQuery::default()).unwrap(), 4, "{backend}");
    // Purge everything created before now: pending and completed alike.
    clock.advance_ms(3 * 86_400_000);
    assert_eq!(f.purge_urls("", Some("a.com"), 1).unwrap(), 3, "{backend}");
    assert_eq!(f.count_urls(&UrlQuery::default()).unwrap(), 1);
    assert!(f.url_status("", a2, None).is_err());
    assert_eq!(put(&f, &[a2]), vec![PutOutcome::New]);
    f.close().unwrap();
    // Rebuild from the store (no snapshot): pending URLs come from `sched`.
    let _ = std::fs::remove_file(dir.path().join("seen.snap"));
    let f = open(dir.path(), &clock, backend);
    assert_eq!(
        put(&f, &[a2, b1, a1]),
        vec![PutOutcome::Seen, PutOutcome::Seen, PutOutcome::New]
    );
    assert_eq!(f.count_urls(&UrlQuery::default()).unwrap(), 3);
}

#[test]
fn trusted_backends_store_pending_urls_unindexed() {
    scenario("hash");
    scenario("fingerprint");
}

#[test]
fn untrusted_backend_stores_pending_urls_indexed() {
    scenario("bloom");
}

/// Versions 2 and 3 kept every pending URL in `sched` (what `put_known`
/// with a schedule still writes there); such a directory opens as version
/// 4, serves them merged with URLs discovered after the upgrade, in order.
#[test]
fn version_2_and_3_directories_are_upgraded_in_place() {
    for version in [2u32, 3] {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(T0);
        let f = open(dir.path(), &clock, "hash");
        let s = T0 / 1000;
        assert_eq!(known(&f, "http://a.com/old-late", s - 10), PutOutcome::New);
        assert_eq!(known(&f, "http://a.com/old-early", s - 30), PutOutcome::New);
        f.close().unwrap();
        write_format(dir.path(), version);
        clock.advance_ms(60_000);
        let f = open(dir.path(), &clock, "hash");
        assert_eq!(f.stats("", None).size, 2);
        let fresh = [
            "http://a.com/new1",
            "http://a.com/new2",
            "http://a.com/new3",
        ];
        assert!(put(&f, &fresh).iter().all(|o| *o == PutOutcome::New));
        let served = served(&f, 1, 10);
        let want = ["old-early", "old-late", "new1", "new2", "new3"];
        let want: Vec<_> = want.iter().map(|p| format!("http://a.com/{p}")).collect();
        assert_eq!(served, want, "version {version}");
        drop(f);
        let now = std::fs::read(dir.path().join("FORMAT")).unwrap();
        assert_eq!(now[4..8], mgz_frontier::FORMAT_VERSION.to_le_bytes());
    }
}

/// Rewrites the `disc` keys of the closed state in `dir` to the format-4
/// layout (`seg u32 | qid u32 | seq u64 | next u64`, big-endian), every
/// `stride`-th one only (the others stay as an interrupted upgrade left
/// them), and marks the directory version 4. Returns the keys rewritten.
fn make_version_4(dir: &std::path::Path, stride: usize) -> usize {
    make_version_6(dir, 1);
    let db = fjall::Database::builder(dir.join("store")).open().unwrap();
    let disc = db
        .keyspace("disc", fjall::KeyspaceCreateOptions::default)
        .unwrap();
    let rewritten = rewrite_keys(&db, &disc, stride, &mut 0, 20, |k| {
        // Format 5: seg u16 BE | qid u32 LE | seq 48 bits BE | next u64 BE.
        let seg = u32::from(u16::from_be_bytes([k[0], k[1]]));
        let qid = u32::from_le_bytes(k[2..6].try_into().unwrap());
        let mut seq = [0u8; 8];
        seq[2..].copy_from_slice(&k[6..12]);
        let seq = u64::from_be_bytes(seq) | 1 << 63;
        let mut old = Vec::with_capacity(24);
        old.extend_from_slice(&seg.to_be_bytes());
        old.extend_from_slice(&qid.to_be_bytes());
        old.extend_from_slice(&seq.to_be_bytes());
        old.extend_from_slice(&k[12..20]);
        old
    });
    db.persist(fjall::PersistMode::SyncAll).unwrap();
    drop(disc);
    drop(db);
    write_format(dir, 4);
    rewritten
}

/// Rewrites the keys of keyspace `ks` (each `len` bytes) with `old`, in
/// one batch, values unchanged: every `stride`-th key, counted by `seen`
/// (which goes on across calls). Returns the keys rewritten.
fn rewrite_keys(
    db: &fjall::Database,
    ks: &fjall::Keyspace,
    stride: usize,
    seen: &mut usize,
    len: usize,
    old: impl Fn(&[u8]) -> Vec<u8>,
) -> usize {
    let mut batch = db.batch();
    let mut rewritten = 0;
    for kv in ks.iter() {
        let (k, v) = kv.into_inner().unwrap();
        assert_eq!(k.len(), len, "disc key length");
        *seen += 1;
        if !(*seen).is_multiple_of(stride) {
            continue;
        }
        batch.insert(ks, old(&k), v);
        batch.remove(ks, k);
        rewritten += 1;
    }
    batch.commit().unwrap();
    rewritten
}

/// Version 4 wrote 24-byte `disc` keys; opening converts them (all of
/// them, or what an interrupted upgrade left), and nothing is lost: every
/// URL is served once, each queue in discovery order, and the scheduled
/// one stays where it was.
#[test]
fn version_4_disc_keys_are_converted_at_open() {
    upgraded_at_open(make_version_4, &[1, 2]);
}

/// Makes the state of [`discovered_and_scheduled`], turns it into an older
/// version's with `make(dir, stride)` (which changes 40 / `stride` entries
/// and leaves the rest as a cut-short upgrade would), and checks that it
/// opens upgraded with nothing lost.
fn upgraded_at_open(make: fn(&std::path::Path, usize) -> usize, strides: &[usize]) {
    for &stride in strides {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(T0);
        let urls = discovered_and_scheduled(dir.path(), &clock);
        assert_eq!(make(dir.path(), stride), 40 / stride, "stride {stride}");
        served_once_in_discovery_order(dir.path(), &clock, &urls, &format!("stride {stride}"));
    }
}

/// Makes a closed state in `dir`: 40 URLs discovered over hosts h0-h3
/// (returned), then `http://h0.com/sched` scheduled before them.
fn discovered_and_scheduled(dir: &std::path::Path, clock: &ManualClock) -> Vec<String> {
    let f = open(dir, clock, "hash");
    let urls: Vec<String> = (0..40)
        .map(|i| format!("http://h{}.com/p{i}", i % 4))
        .collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    assert!(put(&f, &refs).iter().all(|o| *o == PutOutcome::New));
    let s = T0 / 1000;
    assert_eq!(known(&f, "http://h0.com/sched", s - 5), PutOutcome::New);
    f.close().unwrap();
    urls
}

/// Opens the upgraded state in `dir` (40 discovered `urls` over hosts h0-h3
/// plus `http://h0.com/sched` scheduled before them) and checks that it says
/// the current version, has no `disc` keyspace left, and serves every URL
/// once, each host in discovery order; then that it opens again the same.
fn served_once_in_discovery_order(
    dir: &std::path::Path,
    clock: &ManualClock,
    urls: &[String],
    case: &str,
) {
    let f = open(dir, clock, "hash");
    let format = std::fs::read(dir.join("FORMAT")).unwrap();
    assert_eq!(format[4..8], mgz_frontier::FORMAT_VERSION.to_le_bytes());
    assert_eq!(f.stats("", None).size, 41, "{case}");
    f.set_delay("", None, 0).unwrap();
    let served = served(&f, 10, 100);
    assert_eq!(served.len(), 41, "{case}: {served:?}");
    for h in 0..4 {
        let host = format!("http://h{h}.com/");
        let got: Vec<&String> = served.iter().filter(|u| u.starts_with(&host)).collect();
        let mut want: Vec<String> = Vec::new();
        if h == 0 {
            want.push("http://h0.com/sched".into());
        }
        want.extend(urls.iter().filter(|u| u.starts_with(&host)).cloned());
        let want: Vec<&String> = want.iter().collect();
        assert_eq!(got, want, "{case}, host {h}");
    }
    f.close().unwrap();
    {
        let db = fjall::Database::builder(dir.join("store")).open().unwrap();
        assert!(!db.keyspace_exists("disc"), "{case}: disc removed");
    }
    // Opens again as the current version, with the same URLs.
    let f = open(dir, clock, "hash");
    assert_eq!(f.stats("", None).size, 41, "{case}");
    f.close().unwrap();
    let keys = segment_keys(dir);
    assert!(keys.iter().all(|k| k.len() == 18), "{case}: format-8 keys");
    assert_eq!(keys.len(), 40, "{case}");
}

/// Names of the segment keyspaces (`disc.N`) of `db`, sorted.
fn segment_names(db: &fjall::Database) -> Vec<String> {
    let mut names: Vec<String> = db
        .list_keyspace_names()
        .iter()
        .filter(|n| n.starts_with("disc."))
        .map(|n| n.to_string())
        .collect();
    names.sort();
    names
}

/// The keys of every segment keyspace (`disc.N`) of the closed state in
/// `dir`, segment by segment.
fn segment_keys(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let db = fjall::Database::builder(dir.join("store")).open().unwrap();
    let names = segment_names(&db);
    let mut keys = Vec::new();
    for name in names {
        let seg = db
            .keyspace(&name, fjall::KeyspaceCreateOptions::default)
            .unwrap();
        keys.extend(seg.iter().map(|kv| kv.key().unwrap().to_vec()));
    }
    keys
}

/// Rewrites the format-8 `disc` keys of the closed state in `dir` (`qid u32
/// BE | seq 48 bits | next u64`, 18 bytes) as format 7 kept them (format-5
/// keys: `seg u16 BE | qid u32 LE | seq | next`, 20 bytes), every
/// `stride`-th one only (the others stay as an interrupted upgrade left
/// them), and marks the directory version 7. Segments hold 2 URLs here
/// (`open`). Returns the keys rewritten.
fn make_version_7(dir: &std::path::Path, stride: usize) -> usize {
    let db = fjall::Database::builder(dir.join("store")).open().unwrap();
    let names = segment_names(&db);
    let (mut rewritten, mut i) = (0, 0);
    for name in names {
        let seg = db
            .keyspace(&name, fjall::KeyspaceCreateOptions::default)
            .unwrap();
        let n: u16 = name["disc.".len()..].parse().unwrap();
        rewritten += rewrite_keys(&db, &seg, stride, &mut i, 18, |k| {
            let qid = u32::from_be_bytes(k[..4].try_into().unwrap());
            let mut old = Vec::with_capacity(20);
            old.extend_from_slice(&n.to_be_bytes());
            old.extend_from_slice(&qid.to_le_bytes());
            old.extend_from_slice(&k[4..]);
            old
        });
    }
    db.persist(fjall::PersistMode::SyncAll).unwrap();
    drop(db);
    write_format(dir, 7);
    rewritten
}

/// Format 8 puts the queue id first in `disc` keys, big-endian, and leaves
/// the segment out; a format-7 directory (format-5 keys in its segment
/// keyspaces), or one whose conversion was cut short (keys of both
/// formats), is converted at open and nothing is lost.
#[test]
fn version_7_disc_keys_are_converted_at_open() {
    upgraded_at_open(make_version_7, &[1, 3]);
}

/// A format-7 segment keyspace holding a key that is neither a format-5
/// nor a format-8 one is a `Corrupt` error at open, not a panic, and the
/// directory stays a format-7 one.
#[test]
fn malformed_version_7_disc_keys_are_corrupt_at_open() {
    corrupt_at_open(
        make_version_7,
        7,
        "disc.1",
        &[&b"short"[..], &[0u8; 21][..]],
    );
}

/// Moves the entries of the closed state in `dir` from its segment
/// keyspaces (`disc.N`, format 7) into one `disc` keyspace as format 6 kept
/// them: every `stride`-th entry only (the others stay where an interrupted
/// upgrade would have put them), removing the segment keyspaces left empty,
/// and marks the directory version 6. Returns the entries moved.
fn make_version_6(dir: &std::path::Path, stride: usize) -> usize {
    make_version_7(dir, 1);
    let db = fjall::Database::builder(dir.join("store")).open().unwrap();
    let disc = db
        .keyspace("disc", fjall::KeyspaceCreateOptions::default)
        .unwrap();
    let names = segment_names(&db);
    let mut moved = 0;
    let mut i = 0;
    for name in names {
        let seg = db
            .keyspace(&name, fjall::KeyspaceCreateOptions::default)
            .unwrap();
        let mut kept = 0;
        let mut batch = db.batch();
        for kv in seg.iter() {
            let (k, v) = kv.into_inner().unwrap();
            assert_eq!(k.len(), 20, "format-5 disc key");
            i += 1;
            if i % stride != 0 {
                kept += 1;
                continue;
            }
            batch.insert(&disc, k.clone(), v);
            batch.remove(&seg, k);
            moved += 1;
        }
        batch.commit().unwrap();
        if kept == 0 {
            db.delete_keyspace(seg).unwrap();
        }
    }
    db.persist(fjall::PersistMode::SyncAll).unwrap();
    drop(disc);
    drop(db);
    write_format(dir, 6);
    moved
}

/// Writes one raw entry into keyspace `name` of the closed state in `dir`.
fn insert_raw(dir: &std::path::Path, name: &str, key: &[u8], value: &[u8]) {
    let db = fjall::Database::builder(dir.join("store")).open().unwrap();
    let ks = db
        .keyspace(name, fjall::KeyspaceCreateOptions::default)
        .unwrap();
    ks.insert(key, value).unwrap();
    db.persist(fjall::PersistMode::SyncAll).unwrap();
}

/// A format-6 `disc` keyspace holding a key that is not a format-5 one (a
/// wrong length, or segment 0) is a `Corrupt` error at open, not a panic,
/// and the directory stays a format-6 one.
/// Makes an older version's state with `make` (every entry changed), adds
/// each key of `bad` to keyspace `ks` in turn, and checks that the open
/// fails with `Corrupt` (no panic) and leaves the directory at `version`.
fn corrupt_at_open(
    make: fn(&std::path::Path, usize) -> usize,
    version: u32,
    ks: &str,
    bad: &[&[u8]],
) {
    for bad in bad {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(T0);
        discovered_and_scheduled(dir.path(), &clock);
        make(dir.path(), 1);
        insert_raw(dir.path(), ks, bad, b"x");
        match try_open(dir.path(), &clock, "hash") {
            Err(FrontierError::Corrupt { .. }) => {}
            Err(other) => panic!("{bad:?}: expected Corrupt, got {other}"),
            Ok(_) => panic!("{bad:?}: opened"),
        }
        let format = std::fs::read(dir.path().join("FORMAT")).unwrap();
        assert_eq!(format[4..8], version.to_le_bytes(), "{bad:?}");
    }
}

#[test]
fn malformed_version_6_disc_keys_are_corrupt_at_open() {
    corrupt_at_open(make_version_6, 6, "disc", &[&b"short"[..], &[0u8; 20][..]]);
}

/// Format 7 keeps each `disc` segment in its own keyspace; a format-6
/// directory (one `disc` keyspace), or one whose upgrade was cut short
/// (entries in both), is moved at open and nothing is lost.
#[test]
fn version_6_disc_is_moved_into_segment_keyspaces_at_open() {
    upgraded_at_open(make_version_6, &[1, 3]);
}

/// `disc` keys hold segments up to 65,535 and seqs below 2^48: URLs
/// discovered past that go to `sched` instead, and are served with the
/// others, in discovery order. (One URL per `disc` segment of 2 here, so
/// the limit is at seq 131,070; the stored seq counter is moved there.)
#[test]
fn urls_past_the_disc_key_range_go_to_sched() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock, "hash");
    assert_eq!(put(&f, &["http://a.com/first"]), [PutOutcome::New]);
    f.close().unwrap();
    insert_raw(
        dir.path(),
        "meta",
        b"seq",
        &(2 * 65_535u64 - 3).to_le_bytes(),
    );
    let f = open(dir.path(), &clock, "hash");
    let urls: Vec<String> = (0..8).map(|i| format!("http://a.com/p{i}")).collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    assert!(put(&f, &refs).iter().all(|o| *o == PutOutcome::New));
    f.set_delay("", None, 0).unwrap();
    let first = served(&f, 1, 100);
    let mut want = vec!["http://a.com/first".to_string()];
    want.extend(urls.iter().cloned());
    assert_eq!(first, want);
    // Found after the queue's marks moved past everything leased.
    assert_eq!(put(&f, &["http://a.com/late"]), [PutOutcome::New]);
    let late = served(&f, 1, 100);
    assert_eq!(late, ["http://a.com/late"]);
    want.push("http://a.com/late".to_string());
    // And after a restart (leases are not kept).
    drop(f);
    let f = open(dir.path(), &clock, "hash");
    f.set_delay("", None, 0).unwrap();
    let again = served(&f, 1, 100);
    assert_eq!(again, want);
}

/// A LEB128 varint at `b[*at..]` (test-side reader of the documented v2 value).
fn varint(b: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    for i in 0.. {
        let x = b[*at];
        *at += 1;
        v |= u64::from(x & 0x7f) << (7 * i);
        if x < 0x80 {
            break;
        }
    }
    v
}

/// Version-2 body fields at `b[*at..]` rewritten as version-1 fields
/// (`codec` documents both: fixed-width little-endian integers, u32 lengths,
/// the URL whole). A host left out (bit 2 of the scheme byte) is `host`, the
/// key of the entry's queue.
fn body_v2_to_v1(b: &[u8], at: &mut usize, host: &str, out: &mut Vec<u8>) {
    let mut scheme = match b[*at] & 3 {
        0 => Vec::new(),
        1 => b"http://".to_vec(),
        2 => b"https://".to_vec(),
        c => panic!("scheme code {c}"),
    };
    if b[*at] & 4 != 0 {
        scheme.extend_from_slice(host.as_bytes());
    }
    let scheme = &scheme[..];
    *at += 1;
    let depth = varint(b, at) as u32;
    let created = varint(b, at);
    out.extend_from_slice(&depth.to_le_bytes());
    out.extend_from_slice(&created.to_le_bytes());
    let bytes = |b: &[u8], at: &mut usize, prefix: &[u8], out: &mut Vec<u8>| {
        let n = varint(b, at) as usize;
        out.extend_from_slice(&((prefix.len() + n) as u32).to_le_bytes());
        out.extend_from_slice(prefix);
        out.extend_from_slice(&b[*at..*at + n]);
        *at += n;
    };
    bytes(b, at, scheme, out);
    let names = varint(b, at);
    out.extend_from_slice(&(names as u32).to_le_bytes());
    for _ in 0..names {
        bytes(b, at, b"", out);
        let values = varint(b, at);
        out.extend_from_slice(&(values as u32).to_le_bytes());
        for _ in 0..values {
            bytes(b, at, b"", out);
        }
    }
}

/// Rewrites every body-holding value of the closed state in `dir` (`disc`
/// and `sched` bodies, `urls` states) as a format-5 binary wrote it (value
/// version 1) and marks the directory version 5. Every URL is in queue
/// `host`. Returns the values rewritten.
fn make_version_5(dir: &std::path::Path, host: &str) -> usize {
    make_version_6(dir, 1);
    let db = fjall::Database::builder(dir.join("store")).open().unwrap();
    let mut n = 0;
    for name in ["disc", "sched", "urls"] {
        let ks = db
            .keyspace(name, fjall::KeyspaceCreateOptions::default)
            .unwrap();
        let all: Vec<(Vec<u8>, Vec<u8>)> = ks
            .iter()
            .map(|kv| {
                let (k, v) = kv.into_inner().unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect();
        for (k, v) in all {
            assert_eq!(v[0], 2, "{name}: value version");
            // Completed values of format 9 take their URL from the key.
            let v = match (name, v[1]) {
                ("urls", 2) => common::completed_with_url(&v, &k[4..]),
                _ => v,
            };
            let mut old = vec![1];
            let mut at = 1;
            match name {
                "urls" => {
                    old.push(v[1]);
                    at = 2;
                    if v[1] == 0 {
                        old.extend_from_slice(&v[2..]);
                        at = v.len();
                    } else {
                        body_v2_to_v1(&v, &mut at, "", &mut old);
                    }
                }
                _ => body_v2_to_v1(&v, &mut at, host, &mut old),
            }
            assert_eq!(at, v.len(), "{name}: whole value read");
            ks.insert(k, old).unwrap();
            n += 1;
        }
    }
    db.persist(fjall::PersistMode::SyncAll).unwrap();
    drop(db);
    write_format(dir, 5);
    n
}

/// Format 6 writes bodies as value version 2; a format-5 directory (value
/// version 1 everywhere) opens in place and reads back every field of its
/// pending (`disc`, `sched`, indexed) and completed URLs, next to new ones.
#[test]
fn version_5_directories_with_version_1_values_are_read() {
    for backend in ["hash", "bloom"] {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(T0);
        let f = open(dir.path(), &clock, backend);
        let s = T0 / 1000;
        let mut meta = mgz_frontier::Metadata::new();
        meta.insert("anchor".into(), vec!["home".into(), "".into()]);
        let rich = UrlItem {
            url: "https://a.com/rich?x=1".into(),
            metadata: meta.clone(),
            depth: 7,
            created: 1_600_000_000,
            ..UrlItem::default()
        };
        let plain = UrlItem::new("http://a.com/plain");
        assert!(
            f.put_discovered(&[rich.clone(), plain])
                .unwrap()
                .iter()
                .all(|o| *o == PutOutcome::New)
        );
        assert_eq!(known(&f, "http://a.com/sched", s + 5), PutOutcome::New);
        assert_eq!(known(&f, "https://a.com/done", 0), PutOutcome::New);
        f.close().unwrap();
        assert!(make_version_5(dir.path(), "a.com") >= 4, "{backend}");
        clock.advance_ms(60_000);
        let f = open(dir.path(), &clock, backend);
        let done = f.url_status("", "https://a.com/done", None).unwrap();
        assert_eq!(done.next_fetch, 0, "{backend}");
        assert_eq!(put(&f, &["http://a.com/new"]), vec![PutOutcome::New]);
        let params = mgz_frontier::GetParams {
            max_queues: 1,
            max_urls_per_queue: 10,
            ..Default::default()
        };
        let got = f.get(&params).unwrap();
        let urls: Vec<&str> = got.iter().map(|r| r.url.as_str()).collect();
        let want = [
            "https://a.com/rich?x=1",
            "http://a.com/plain",
            "http://a.com/sched",
            "http://a.com/new",
        ];
        assert_eq!(urls, want, "{backend}");
        assert_eq!((got[0].depth, got[0].created), (7, 1_600_000_000));
        assert_eq!(got[0].metadata, meta);
        assert_eq!(f.count_urls(&UrlQuery::default()).unwrap(), 5);
        drop(f);
        let now = std::fs::read(dir.path().join("FORMAT")).unwrap();
        assert_eq!(now[4..8], mgz_frontier::FORMAT_VERSION.to_le_bytes());
    }
}
