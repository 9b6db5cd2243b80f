//! Completed URLs (format 9) keep only their depth, creation time and
//! metadata in `urls`: the URL comes back from the entry's key. Every reader
//! of completed URLs (status, listing, counting, purge, queue deletion, a
//! restart) must see the same URL text and fields as before, and a format-8
//! directory, whose completed values still hold the URL, must read the same.

mod common;

use std::sync::Arc;

use mgz_frontier::{
    Durability, Frontier, FrontierOptions, KnownItem, ManualClock, Metadata, PutOutcome, UrlItem,
    UrlQuery, seen_factory,
};

const T0: u64 = 1_700_000_000_000;

/// URL shapes: each as given and as the frontier stores it (canonical).
const URLS: [(&str, &str); 5] = [
    ("http://a.com/plain", "http://a.com/plain"),
    (
        "HTTPS://a.com:443/x/../q?b=2&a=1#f",
        "https://a.com/q?b=2&a=1",
    ),
    ("http://a.com:8080/port", "http://a.com:8080/port"),
    (
        "http://a.com/%7Euser/caf%C3%A9",
        "http://a.com/~user/caf%C3%A9",
    ),
    ("http://A.com/sp%20ace?x=%41", "http://a.com/sp%20ace?x=A"),
];

fn open(dir: &std::path::Path, clock: &ManualClock) -> Frontier {
    let opts = FrontierOptions {
        clock: Arc::new(clock.clone()),
        durability: Durability::OsBuffer,
        seen: seen_factory("hash", 1000).unwrap(),
        ..FrontierOptions::default()
    };
    Frontier::open(dir, opts).unwrap()
}

/// Creation times given with the completions: even URLs in 2020, odd ones
/// unset (the frontier's clock then).
fn created(i: usize) -> u64 {
    if i.is_multiple_of(2) {
        1_600_000_000 + i as u64
    } else {
        0
    }
}

fn metadata(i: usize) -> Metadata {
    let mut m = Metadata::new();
    m.insert("n".into(), vec![i.to_string(), "é".into()]);
    m
}

/// Discovers every URL, then completes it with new metadata.
fn complete_all(f: &Frontier) {
    let items: Vec<_> = URLS.iter().map(|(u, _)| UrlItem::new(*u)).collect();
    assert!(
        f.put_discovered(&items)
            .unwrap()
            .iter()
            .all(|o| *o == PutOutcome::New)
    );
    let done: Vec<_> = URLS
        .iter()
        .enumerate()
        .map(|(i, (u, _))| KnownItem {
            item: UrlItem {
                url: u.to_string(),
                metadata: metadata(i),
                depth: i as u32,
                created: created(i),
                ..UrlItem::default()
            },
            next_fetch: 0,
        })
        .collect();
    let outcomes = f.put_known(&done).unwrap();
    assert!(
        outcomes.iter().all(|o| *o == PutOutcome::Updated),
        "{outcomes:?}"
    );
}

/// Every completed URL as status, listing and count report it.
fn check_all(f: &Frontier, what: &str) {
    for (i, (given, canonical)) in URLS.iter().enumerate() {
        let r = f.url_status("", given, None).unwrap();
        assert_eq!(r.url, *canonical, "{what}");
        assert_eq!(r.next_fetch, 0, "{what}: {canonical}");
        assert_eq!(r.metadata, metadata(i), "{what}: {canonical}");
        let created = if i.is_multiple_of(2) {
            created(i)
        } else {
            T0 / 1000
        };
        assert_eq!(
            (r.depth, r.created),
            (i as u32, created),
            "{what}: {canonical}"
        );
        assert_eq!(r.key, "a.com", "{what}: {canonical}");
    }
    let listed = common::listed(f);
    let mut want: Vec<_> = URLS.iter().map(|(_, c)| (c.to_string(), 0)).collect();
    want.sort();
    assert_eq!(listed, want, "{what}");
    let tilde = UrlQuery {
        filter: Some("~USER".into()),
        ignore_case: true,
        ..UrlQuery::default()
    };
    assert_eq!(f.count_urls(&tilde).unwrap(), 1, "{what}");
    assert_eq!(f.stats("", None).completed, URLS.len() as u64, "{what}");
}

/// Runs `f` on the `urls` keyspace of the closed state in `dir`.
fn with_urls<T>(dir: &std::path::Path, f: impl FnOnce(&fjall::Keyspace) -> T) -> T {
    let db = fjall::Database::builder(dir.join("store")).open().unwrap();
    let ks = db
        .keyspace("urls", fjall::KeyspaceCreateOptions::default)
        .unwrap();
    let out = f(&ks);
    db.persist(fjall::PersistMode::SyncAll).unwrap();
    out
}

/// The `urls` values of the closed state in `dir`, by key.
fn urls_values(dir: &std::path::Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    with_urls(dir, urls_values_of)
}

#[test]
fn completed_urls_read_back_whole_from_short_values() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    complete_all(&f);
    check_all(&f, "before the restart");
    f.close().unwrap();
    let values = urls_values(dir.path());
    assert_eq!(values.len(), URLS.len());
    for (_, v) in &values {
        // Version, tag 2, depth, created, metadata ("n" → [i, "é"]): no URL.
        assert_eq!(&v[..2], &[2, 2]);
        assert!(v.len() <= 2 + 1 + 5 + 10, "{} bytes", v.len());
        assert!(!v.windows(5).any(|w| w == b"a.com"), "URL text stored");
    }
    let f = open(dir.path(), &clock);
    check_all(&f, "after the restart");
    // Purge and queue deletion read completed values without their URLs:
    // the three from 2020 are purged, the other two deleted with the queue.
    assert_eq!(f.purge_urls("", None, 1).unwrap(), 3);
    assert_eq!(f.delete_queue("", "a.com").unwrap(), 2);
    assert_eq!(f.count_urls(&UrlQuery::default()).unwrap(), 0);
}

/// Formats 6 to 8 stored completed URLs whole; such a directory opens as
/// format 9 in place, reads the same, and takes new completions next to them.
#[test]
fn format_8_completed_values_are_read_and_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    complete_all(&f);
    f.close().unwrap();
    with_urls(dir.path(), |ks| {
        for (k, v) in urls_values_of(ks) {
            ks.insert(&k, common::completed_with_url(&v, &k[4..]))
                .unwrap();
        }
    });
    common::write_format(dir.path(), 8);
    let f = open(dir.path(), &clock);
    check_all(&f, "format 8");
    assert_eq!(
        std::fs::read(dir.path().join("FORMAT")).unwrap(),
        common::format_file(mgz_frontier::FORMAT_VERSION)
    );
    let late = KnownItem {
        item: UrlItem::new("http://a.com/late"),
        next_fetch: 0,
    };
    assert_eq!(f.put_known(&[late]).unwrap(), [PutOutcome::New]);
    assert_eq!(
        f.url_status("", "http://a.com/late", None).unwrap().url,
        "http://a.com/late"
    );
    f.close().unwrap();
    let tags: Vec<u8> = urls_values(dir.path()).iter().map(|(_, v)| v[1]).collect();
    assert_eq!(tags.iter().filter(|&&t| t == 1).count(), URLS.len());
    assert_eq!(tags.iter().filter(|&&t| t == 2).count(), 1);
}

fn urls_values_of(ks: &fjall::Keyspace) -> Vec<(Vec<u8>, Vec<u8>)> {
    ks.iter()
        .map(|kv| {
            let (k, v) = kv.into_inner().unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}
