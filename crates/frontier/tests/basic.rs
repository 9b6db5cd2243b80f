//! Behaviour of the public API on small inputs, with a manual clock.

use std::sync::Arc;

use mgz_frontier::{
    Durability, Frontier, FrontierError, FrontierOptions, GetParams, KnownItem, Lowered,
    ManualClock, PutOutcome, RejectReason, UrlItem, UrlQuery,
};

const T0: u64 = 1_700_000_000_000;

fn open(dir: &std::path::Path, clock: &ManualClock) -> Frontier {
    let opts = FrontierOptions {
        clock: Arc::new(clock.clone()),
        durability: Durability::OsBuffer,
        ..FrontierOptions::default()
    };
    Frontier::open(dir, opts).unwrap()
}

fn get_all(f: &Frontier) -> Vec<String> {
    let p = GetParams::default();
    f.get(&p).unwrap().into_iter().map(|r| r.url).collect()
}

fn done(url: &str) -> KnownItem {
    KnownItem {
        item: UrlItem::new(url),
        next_fetch: 0,
    }
}

#[test]
fn put_dedupes_and_rejects_per_item() {
    let dir = tempfile::tempdir().unwrap();
    let f = open(dir.path(), &ManualClock::new(T0));
    let long_key = UrlItem {
        key: Some("k".repeat(256)),
        ..UrlItem::new("http://a.com/x")
    };
    let out = f
        .put_discovered(&[
            UrlItem::new("http://a.com/1"),
            UrlItem::new("http://a.com/1"),
            UrlItem::new("not a url"),
            long_key,
            UrlItem::new("http://A.com/2#frag"),
        ])
        .unwrap();
    assert_eq!(out[0], PutOutcome::New);
    assert_eq!(out[1], PutOutcome::Seen);
    assert!(matches!(
        out[2],
        PutOutcome::Rejected(RejectReason::InvalidUrl(_))
    ));
    assert_eq!(
        out[3],
        PutOutcome::Rejected(RejectReason::KeyTooLong { len: 256 })
    );
    assert_eq!(out[4], PutOutcome::New);
    let again = f.put_discovered(&[UrlItem::new("http://a.com/1")]).unwrap();
    assert_eq!(again, vec![PutOutcome::Seen]);
    let s = f.stats("", None);
    assert_eq!((s.size, s.queues, s.completed), (2, 1, 0));
}

/// A batch of one clean crawl is decided by one seen-set batch insert; a
/// batch mixing crawls, or of a crawl with deletions, item by item. The
/// outcomes are the same: repeats inside the batch and across batches are
/// `Seen`, crawls dedupe apart, and a URL deleted with its queue is new again.
#[test]
fn batch_and_item_by_item_decisions_agree() {
    let dir = tempfile::tempdir().unwrap();
    let f = open(dir.path(), &ManualClock::new(T0));
    let in_crawl = |c: &str, u: &str| UrlItem {
        crawl: c.to_string(),
        ..UrlItem::new(u)
    };
    use PutOutcome::{New, Seen};
    // One crawl: the batch path.
    let one = [
        in_crawl("a", "http://x.com/1"),
        in_crawl("a", "http://y.com/1"),
        in_crawl("a", "http://x.com/1"),
        in_crawl("a", "http://x.com/2"),
    ];
    assert_eq!(f.put_discovered(&one).unwrap(), [New, New, Seen, New]);
    assert_eq!(f.put_discovered(&one).unwrap(), [Seen, Seen, Seen, Seen]);
    // Two crawls in one batch: item by item.
    let mixed = [
        in_crawl("b", "http://x.com/1"),
        in_crawl("a", "http://x.com/1"),
        in_crawl("b", "http://x.com/1"),
        in_crawl("a", "http://x.com/3"),
    ];
    assert_eq!(f.put_discovered(&mixed).unwrap(), [New, Seen, Seen, New]);
    // Crawl "a" after a deletion: its seen answers are checked in the store.
    assert_eq!(f.delete_queue("a", "x.com").unwrap(), 3);
    let again = [
        in_crawl("a", "http://x.com/1"),
        in_crawl("a", "http://y.com/1"),
        in_crawl("a", "http://x.com/1"),
    ];
    assert_eq!(f.put_discovered(&again).unwrap(), [New, Seen, Seen]);
    assert_eq!(f.stats("a", None).size, 2);
    assert_eq!(f.stats("b", None).size, 1);
}

/// `clear_queue_delays` gives every queue of a crawl the crawl's default
/// delay again (what the crawler does at each run's start: a delay of 0
/// set on a host given up is for that run only), durably, and counts
/// the queues it changed.
#[test]
fn cleared_queue_delays_take_the_crawls_default_again() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let one = GetParams {
        max_urls_per_queue: 1,
        ..GetParams::default()
    };
    let urls = ["http://a.com/1", "http://a.com/2", "http://a.com/3"];
    {
        let f = open(dir.path(), &clock);
        f.set_delay("", None, 100).unwrap();
        f.put_discovered(&urls.map(UrlItem::new)).unwrap();
        f.set_delay("", Some("a.com"), 0).unwrap();
        f.set_delay("other", Some("b.com"), 0).unwrap();
        let next = || {
            let got = f.get(&one).unwrap();
            for r in &got {
                f.put_known(&[done(&r.url)]).unwrap();
            }
            got.into_iter().map(|r| r.url).collect::<Vec<_>>()
        };
        assert_eq!(next(), [urls[0]]);
        assert_eq!(next(), [urls[1]], "its own delay of 0");
        assert_eq!(f.clear_queue_delays("").unwrap(), 1);
        assert!(next().is_empty(), "the crawl's 100 s again");
        clock.advance_ms(100_000);
        assert_eq!(next(), [urls[2]]);
        assert_eq!(f.clear_queue_delays("").unwrap(), 0);
    }
    let f = open(dir.path(), &clock);
    assert_eq!(f.clear_queue_delays("").unwrap(), 0, "cleared durably");
    assert_eq!(
        f.clear_queue_delays("other").unwrap(),
        1,
        "another crawl's kept"
    );
    assert_eq!(
        f.clear_queue_delays("no-such-crawl").unwrap(),
        0,
        "an unknown crawl has nothing to clear"
    );
}

#[test]
fn fifo_lease_politeness_and_completion() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    let urls = ["http://a.com/1", "http://a.com/2", "http://a.com/3"];
    f.put_discovered(&urls.map(UrlItem::new)).unwrap();
    let p = GetParams {
        max_urls_per_queue: 2,
        ..GetParams::default()
    };
    let got: Vec<_> = f.get(&p).unwrap().into_iter().map(|r| r.url).collect();
    assert_eq!(got, ["http://a.com/1", "http://a.com/2"]);
    assert!(f.get(&p).unwrap().is_empty(), "politeness delay");
    clock.advance_ms(1_000);
    assert!(f.get(&p).unwrap().is_empty(), "2 in flight = cap");
    f.put_known(&[done(urls[0])]).unwrap();
    clock.advance_ms(1_000);
    let got: Vec<_> = f.get(&p).unwrap().into_iter().map(|r| r.url).collect();
    assert_eq!(got, ["http://a.com/3"]);
    clock.advance_ms(30_000);
    let got = get_all(&f);
    assert_eq!(got, ["http://a.com/2", "http://a.com/3"], "leases expired");
    let st = f.url_status("", urls[0], None).unwrap();
    assert_eq!(st.next_fetch, 0);
    assert!(matches!(
        f.url_status("", "http://a.com/nope", None),
        Err(FrontierError::NotFound(_))
    ));
}

/// `max_urls_per_turn` caps what one call takes from a queue, while
/// `max_urls_per_queue` still caps its URLs in flight across calls: with a
/// delay, a queue gives one URL per delay (what a crawler spacing the
/// host's requests can use) and up to the cap in flight when they last
/// longer than the delay. `set_delay_ms` paces to the millisecond.
#[test]
fn one_url_per_turn_up_to_the_in_flight_cap() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    f.set_delay_ms("", None, 300).unwrap();
    let urls = [
        "http://a.com/1",
        "http://a.com/2",
        "http://a.com/3",
        "http://a.com/4",
    ];
    f.put_discovered(&urls.map(UrlItem::new)).unwrap();
    let p = GetParams {
        max_urls_per_queue: 2,
        max_urls_per_turn: 1,
        ..GetParams::default()
    };
    let get = || -> Vec<String> { f.get(&p).unwrap().into_iter().map(|r| r.url).collect() };
    assert_eq!(get(), [urls[0]], "one URL, not the two the cap allows");
    assert!(get().is_empty(), "the delay");
    clock.advance_ms(299);
    assert!(get().is_empty(), "300 ms, not a whole second or none");
    clock.advance_ms(1);
    assert_eq!(get(), [urls[1]], "a second in flight after the delay");
    clock.advance_ms(300);
    assert!(get().is_empty(), "two in flight: the cap");
    f.put_known(&[done(urls[0])]).unwrap();
    assert_eq!(get(), [urls[2]]);
    // Unset (0), a turn is the queue's whole room, as URLFrontier asks.
    f.put_known(&[done(urls[1]), done(urls[2])]).unwrap();
    f.put_discovered(&[UrlItem::new("http://a.com/5")]).unwrap();
    clock.advance_ms(300);
    let whole = GetParams {
        max_urls_per_turn: 0,
        ..p.clone()
    };
    let got: Vec<_> = f.get(&whole).unwrap().into_iter().map(|r| r.url).collect();
    assert_eq!(got, [urls[3], "http://a.com/5"]);
    // A turn larger than the cap is the cap.
    let dir = tempfile::tempdir().unwrap();
    let f = open(dir.path(), &clock);
    f.set_delay("", None, 0).unwrap();
    f.put_discovered(&urls.map(UrlItem::new)).unwrap();
    let over = GetParams {
        max_urls_per_queue: 2,
        max_urls_per_turn: 5,
        ..GetParams::default()
    };
    assert_eq!(f.get(&over).unwrap().len(), 2);
}

#[test]
fn known_with_future_date_waits_and_reopen_keeps_state() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    {
        let f = open(dir.path(), &clock);
        f.set_delay("", None, 0).unwrap();
        f.put_known(&[
            KnownItem {
                item: UrlItem::new("http://b.org/later"),
                next_fetch: T0 / 1000 + 100,
            },
            done("http://b.org/done"),
        ])
        .unwrap();
        f.put_discovered(&[UrlItem::new("http://b.org/now")])
            .unwrap();
        assert_eq!(get_all(&f), ["http://b.org/now"]);
        f.block_queue_until("", "b.org", T0 / 1000 + 500).unwrap();
    }
    let f = open(dir.path(), &clock);
    let out = f
        .put_discovered(&[UrlItem::new("http://b.org/done")])
        .unwrap();
    assert_eq!(out, vec![PutOutcome::Seen], "seen set rebuilt");
    clock.advance_ms(200_000);
    assert!(get_all(&f).is_empty(), "block is durable");
    clock.advance_ms(400_000);
    // "now" was leased before the restart: leases are not durable, and it is due first.
    assert_eq!(get_all(&f), ["http://b.org/now", "http://b.org/later"]);
}

/// `blocked_queues` names the queues blocked now and when each block
/// ends: not a block that has ended, nor another crawl's, nor one lifted.
#[test]
fn blocked_queues_are_listed_until_their_block_ends() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    let now_s = T0 / 1000;
    f.put_discovered(&[UrlItem::new("http://a.org/"), UrlItem::new("http://b.org/")])
        .unwrap();
    assert!(f.blocked_queues("").is_empty());
    f.block_queue_until("", "b.org", now_s + 3600).unwrap();
    f.block_queue_until("", "a.org", now_s + 10).unwrap();
    f.block_queue_until("other", "c.org", now_s + 10).unwrap();
    f.block_queue_until("", "gone.org", now_s - 1).unwrap();
    assert_eq!(
        f.blocked_queues(""),
        [
            ("a.org".to_string(), now_s + 10),
            ("b.org".to_string(), now_s + 3600)
        ]
    );
    assert_eq!(
        f.blocked_queues("other"),
        [("c.org".to_string(), now_s + 10)]
    );
    assert!(f.blocked_queues("none").is_empty());
    clock.advance_ms(10_000);
    assert_eq!(f.blocked_queues(""), [("b.org".to_string(), now_s + 3600)]);
    f.block_queue_until("", "b.org", 0).unwrap();
    assert!(f.blocked_queues("").is_empty());
}

#[test]
fn listing_counting_deleting_and_inactive() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    let items: Vec<_> = (0..5)
        .map(|i| UrlItem::new(format!("http://c.net/Page{i}")))
        .chain([UrlItem {
            crawl: "other".into(),
            ..UrlItem::new("http://c.net/page0")
        }])
        .collect();
    f.put_discovered(&items).unwrap();
    let q = UrlQuery {
        filter: Some("page".into()),
        ignore_case: true,
        ..UrlQuery::default()
    };
    assert_eq!(f.count_urls(&q).unwrap(), 5);
    let case = UrlQuery {
        ignore_case: false,
        ..q.clone()
    };
    assert_eq!(f.count_urls(&case).unwrap(), 0);
    let page = f
        .list_urls(&UrlQuery {
            start: 1,
            size: 2,
            ..UrlQuery::default()
        })
        .unwrap();
    assert_eq!(page.len(), 2);
    assert_eq!(f.list_crawls(), ["DEFAULT", "other"]);
    assert_eq!(f.list_queues("", 0, 0, false).keys, ["c.net"]);
    f.set_active(false).unwrap();
    assert!(get_all(&f).is_empty());
    f.set_active(true).unwrap();
    assert_eq!(f.delete_queue("", "c.net").unwrap(), 5);
    assert_eq!(f.stats("other", None).size, 1);
    let again = f
        .put_discovered(&[UrlItem::new("http://c.net/Page1")])
        .unwrap();
    assert_eq!(again, vec![PutOutcome::New], "deleted URLs may come back");
    assert_eq!(f.delete_crawl("other").unwrap(), 1);
    assert_eq!(f.list_crawls(), ["DEFAULT"]);
    clock.advance_ms(3 * 86_400_000);
    assert_eq!(f.purge_urls("", None, 2).unwrap(), 1);
    assert_eq!(f.count_urls(&UrlQuery::default()).unwrap(), 0);
}

#[test]
fn known_batch_with_the_same_url_twice_keeps_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    let later = KnownItem {
        item: UrlItem::new("http://d.io/x"),
        next_fetch: T0 / 1000 + 50,
    };
    let out = f.put_known(&[later, done("http://d.io/x")]).unwrap();
    assert_eq!(out, vec![PutOutcome::New, PutOutcome::Updated]);
    let s = f.stats("", None);
    assert_eq!((s.size, s.completed), (0, 1));
    assert_eq!(
        f.url_status("", "http://d.io/x", None).unwrap().next_fetch,
        0
    );
}

#[test]
fn concurrent_writers_share_group_commits() {
    let dir = tempfile::tempdir().unwrap();
    let f = Frontier::open(dir.path(), FrontierOptions::default()).unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let f = &f;
            s.spawn(move || {
                for b in 0..10 {
                    let items: Vec<_> = (0..50)
                        .map(|i| UrlItem::new(format!("http://t{t}.example/{b}/{i}")))
                        .collect();
                    let out = f.put_discovered(&items).unwrap();
                    assert!(out.iter().all(|o| *o == PutOutcome::New));
                }
            });
        }
    });
    assert_eq!(f.stats("", None).size, 4 * 10 * 50);
    drop(f);
    let f = Frontier::open(dir.path(), FrontierOptions::default()).unwrap();
    assert_eq!(f.stats("", None).size, 2000, "durable across reopen");
}

#[test]
fn a_state_directory_in_use_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    let opts = FrontierOptions {
        clock: Arc::new(clock.clone()),
        ..FrontierOptions::default()
    };
    match Frontier::open(dir.path(), opts) {
        Err(e @ FrontierError::InUse { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
            assert!(msg.contains("in use by another process"), "{msg}");
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("opened twice"),
    }
    // The first one is unharmed, and the directory opens once it is closed.
    f.put_discovered(&[UrlItem::new("http://a.com/x")]).unwrap();
    drop(f);
    let f = open(dir.path(), &clock);
    assert_eq!(get_all(&f), ["http://a.com/x"]);
}

/// `Frontier::lower_depth`: a pending URL moves to a shallower depth; a
/// leased one is left alone, so it is not handed out a second time while
/// its fetch is in flight.
fn get_one_url(f: &Frontier) -> Vec<String> {
    let p = GetParams {
        max_urls_per_queue: 1,
        ..GetParams::default()
    };
    f.get(&p).unwrap().into_iter().map(|r| r.url).collect()
}

#[test]
fn a_pending_url_moves_and_a_leased_one_is_not_served_again() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let f = open(dir.path(), &clock);
    f.set_delay("", None, 0).unwrap();
    let urls = ["http://a.com/1", "http://a.com/2", "http://a.com/3"];
    let items = urls.map(|u| UrlItem {
        depth: 3,
        ..UrlItem::new(u)
    });
    f.put_discovered(&items).unwrap();

    // /1 is leased: left alone, and not served again while its lease lasts.
    assert_eq!(get_one_url(&f), [urls[0]]);
    assert_eq!(
        f.lower_depth("", urls[0], 1).unwrap(),
        Lowered::InFlight { depth: 3 }
    );
    assert_eq!(f.url_status("", urls[0], None).unwrap().depth, 3);

    // /2 is pending and unleased: it moves, keeping its due time (it is
    // queued again behind the URLs already due then).
    assert_eq!(
        f.lower_depth("", urls[1], 1).unwrap(),
        Lowered::Moved { from: 3 }
    );
    let st = f.url_status("", urls[1], None).unwrap();
    assert_eq!((st.depth, st.next_fetch > 0), (1, true));
    // Not deeper than asked, unknown or malformed: nothing happens.
    assert_eq!(f.lower_depth("", urls[1], 1).unwrap(), Lowered::Unchanged);
    assert_eq!(f.lower_depth("", urls[1], 2).unwrap(), Lowered::Unchanged);
    assert_eq!(
        f.lower_depth("", "http://a.com/none", 0).unwrap(),
        Lowered::Unchanged
    );
    assert_eq!(
        f.lower_depth("", "not a url", 0).unwrap(),
        Lowered::Unchanged
    );
    assert_eq!(
        f.lower_depth("no such crawl", urls[2], 0).unwrap(),
        Lowered::Unchanged
    );

    clock.advance_ms(1_000);
    let p = GetParams {
        max_urls_per_queue: 10,
        ..GetParams::default()
    };
    let served: Vec<String> = f.get(&p).unwrap().into_iter().map(|r| r.url).collect();
    assert_eq!(served, [urls[2], urls[1]], "/1 is not handed out twice");

    // Completed: left alone.
    let done = KnownItem {
        item: UrlItem::new(urls[0]),
        next_fetch: 0,
    };
    f.put_known(&[done]).unwrap();
    assert_eq!(f.lower_depth("", urls[0], 0).unwrap(), Lowered::Unchanged);
    assert_eq!(f.url_status("", urls[0], None).unwrap().next_fetch, 0);
}

#[test]
fn for_each_url_sees_what_listing_every_queue_sees() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let opts = FrontierOptions {
        clock: Arc::new(clock.clone()),
        durability: Durability::OsBuffer,
        // 16 discovered URLs a segment: the 300 below span many.
        store: mgz_frontier::StoreOptions {
            segment_bits: 4,
            ..mgz_frontier::StoreOptions::default()
        },
        ..FrontierOptions::default()
    };
    let f = Frontier::open(dir.path(), opts).unwrap();
    let items: Vec<UrlItem> = (0..300)
        .map(|i| UrlItem {
            crawl: if i % 7 == 0 {
                "other".into()
            } else {
                String::new()
            },
            depth: i % 4,
            ..UrlItem::new(format!("http://h{}.test/p{i}", i % 23))
        })
        .collect();
    f.put_discovered(&items).unwrap();
    // Some completed, some rescheduled (in `sched`), some leased, the
    // rest still discovered (in `disc`).
    let leased = f.get(&GetParams::default()).unwrap();
    assert!(leased.len() > 20);
    for (i, r) in leased.into_iter().enumerate() {
        let next_fetch = match i % 3 {
            0 => 0,
            1 => T0 / 1000 + 3600,
            _ => continue,
        };
        let item = r.into_item(1);
        f.put_known(&[KnownItem { item, next_fetch }]).unwrap();
    }
    type Row = (String, String, String, u32, u64);
    let row =
        |r: mgz_frontier::UrlRecord| -> Row { (r.crawl, r.key, r.url, r.depth, r.next_fetch) };
    for crawl in ["", "other", "absent"] {
        let mut want: Vec<Row> = Vec::new();
        for key in f.list_queues(crawl, 0, u32::MAX, true).keys {
            let q = UrlQuery {
                crawl: crawl.into(),
                key: Some(key),
                size: u64::MAX,
                ..UrlQuery::default()
            };
            want.extend(f.list_urls(&q).unwrap().into_iter().map(row));
        }
        let mut got = Vec::new();
        f.for_each_url(crawl, |r| {
            got.push(row(r));
            true
        })
        .unwrap();
        want.sort();
        got.sort();
        assert_eq!(got, want, "crawl {crawl:?}");
        if crawl.is_empty() {
            assert_eq!(got.len(), 300 - 43, "every URL of the default crawl");
            assert!(got.iter().any(|r| r.4 == 0) && got.iter().any(|r| r.4 > T0 / 1000));
        }
    }
    // It stops when asked.
    let mut calls = 0;
    f.for_each_url("", |_| {
        calls += 1;
        calls < 5
    })
    .unwrap();
    assert_eq!(calls, 5);
}
