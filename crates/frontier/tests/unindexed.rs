//! Pending URLs that `put_discovered` stores without a `urls` entry (trusted,
//! clean seen set; format 3) must behave exactly like indexed ones for every
//! lookup by URL: status, `put_known`, listing, counting, deletes, purges,
//! "seen" checks of a dirty crawl and a rebuild of the seen set from the
//! store. Run with a trusted backend (`hash`, `fingerprint`: unindexed) and
//! an untrusted one (`bloom`: indexed) so both forms are covered.

use std::sync::Arc;

use mgz_frontier::{
    Durability, Frontier, FrontierOptions, KnownItem, ManualClock, PutOutcome, StoreOptions,
    UrlItem, UrlQuery, seen_factory,
};

const T0: u64 = 1_700_000_000_000;

fn open(dir: &std::path::Path, clock: &ManualClock, backend: &str) -> Frontier {
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
    Frontier::open(dir, opts).unwrap()
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

fn listed(f: &Frontier) -> Vec<(String, u64)> {
    let mut v: Vec<_> = f
        .list_urls(&UrlQuery::default())
        .unwrap()
        .into_iter()
        .map(|r| (r.url, r.next_fetch))
        .collect();
    v.sort();
    v
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
    assert_eq!(listed(&f), want, "{backend}");
    // Completing an unleased pending URL.
    assert_eq!(known(&f, a3, 0), PutOutcome::Updated);
    assert_eq!(f.url_status("", a3, None).unwrap().next_fetch, 0);
    want[2].1 = 0;
    assert_eq!(listed(&f), want, "{backend}");
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
        let mut old = b"MGZF".to_vec();
        old.extend_from_slice(&version.to_le_bytes());
        let sum = xxhash_rust::xxh3::xxh3_64(&old);
        old.extend_from_slice(&sum.to_le_bytes());
        std::fs::write(dir.path().join("FORMAT"), &old).unwrap();
        clock.advance_ms(60_000);
        let f = open(dir.path(), &clock, "hash");
        assert_eq!(f.stats("", None).size, 2);
        let fresh = [
            "http://a.com/new1",
            "http://a.com/new2",
            "http://a.com/new3",
        ];
        assert!(put(&f, &fresh).iter().all(|o| *o == PutOutcome::New));
        let params = mgz_frontier::GetParams {
            max_queues: 1,
            max_urls_per_queue: 10,
            ..Default::default()
        };
        let served: Vec<_> = f.get(&params).unwrap().into_iter().map(|r| r.url).collect();
        let want = ["old-early", "old-late", "new1", "new2", "new3"];
        let want: Vec<_> = want.iter().map(|p| format!("http://a.com/{p}")).collect();
        assert_eq!(served, want, "version {version}");
        drop(f);
        let now = std::fs::read(dir.path().join("FORMAT")).unwrap();
        assert_eq!(now[4..8], mgz_frontier::FORMAT_VERSION.to_le_bytes());
    }
}
