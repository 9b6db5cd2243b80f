//! A host that stops answering is given up after a few network failures in
//! a row: its remaining URLs are recorded as failed without a request,
//! instead of each being tried and retried against a server that is not
//! there (hours for a big queue). Other hosts are not affected.

use std::time::{Duration, Instant};

mod common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_host_is_given_up_and_the_live_one_crawled() {
    let (dir, mut cfg) = common::raw_host("live.test", |path| {
        let body = if path == "/" {
            "<a href=/next>n</a>"
        } else {
            "<title>t</title>"
        };
        ("200 OK", "text/html".into(), body.as_bytes().to_vec())
    })
    .await;
    common::resolve_to_closed_port(&mut cfg, "dead.test");
    const DEAD_URLS: u64 = 30;
    cfg.seeds
        .extend((0..DEAD_URLS).map(|i| format!("http://dead.test/p{i}")));
    cfg.ignore_robots = true; // else the unreachable robots.txt holds them back
    cfg.max_host_failures = 3;
    cfg.host_give_up_after = Duration::ZERO;
    cfg.backoff = Duration::from_millis(10);
    let started = Instant::now();
    let summary = common::run(cfg.clone()).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    common::assert_stored(&stored, "live.test", &["", "next"], &summary);
    // Every dead URL has a row saying why, none was retried to the end.
    assert_eq!(
        summary.errors.get("host_unreachable"),
        Some(&DEAD_URLS),
        "{summary:?}"
    );
    assert_eq!(summary.errors.get("connect"), None, "{summary:?}");
    // Only the first failures' retries waited (one back-off, ≥ 1 s each).
    assert!(started.elapsed() < Duration::from_secs(20), "{summary:?}");
    // The delay of 0 its queue was given to settle its URLs at once is
    // for that run only: a rerun starts with the crawl's default delay on
    // every queue (until session 55 the 0 stayed in the state).
    let state = cfg.state_dir.clone();
    common::run(cfg).await;
    let opts = mgz_frontier::FrontierOptions {
        seen: mgz_frontier::seen_factory("hash", 1000).unwrap(),
        ..Default::default()
    };
    let f = mgz_frontier::Frontier::open(state.join("frontier"), opts).unwrap();
    assert_eq!(
        f.clear_queue_delays("").unwrap(),
        0,
        "a queue kept its own delay"
    );
}

/// Before session 53 every URL of a host whose robots.txt cannot be had
/// waited out `--robots-retries` of its own, served one per `--delay`: a
/// thousand URLs took an hour. Now the first URL to run out of retries
/// gives the host up, and the rest are settled as soon as they are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_without_robots_txt_is_given_up_once_not_url_by_url() {
    let (dir, mut cfg) = common::raw_host("live.test", |_| {
        ("200 OK", "text/html".into(), b"<title>t</title>".to_vec())
    })
    .await;
    common::resolve_to_closed_port(&mut cfg, "gone.test");
    const GONE_URLS: u64 = 40;
    cfg.seeds
        .extend((0..GONE_URLS).map(|i| format!("http://gone.test/p{i}")));
    cfg.delay = Duration::from_secs(1);
    cfg.per_host = 1;
    cfg.robots_retries = 1;
    cfg.robots_retry = Duration::from_secs(2);
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    common::assert_stored(&stored, "live.test", &[""], &summary);
    assert_eq!(
        summary.errors.get("robots_unreachable"),
        Some(&GONE_URLS),
        "{summary:?}"
    );
    assert_eq!(summary.robots_excluded, GONE_URLS, "{summary:?}");
    // Which URLs were asked again: those served before the first ran out
    // of retries (one a second for two seconds, a few more on a loaded
    // machine), not every one.
    let opts = mgz_frontier::FrontierOptions {
        seen: mgz_frontier::seen_factory("hash", 1000).unwrap(),
        ..Default::default()
    };
    let f = mgz_frontier::Frontier::open(dir.path().join("state/frontier"), opts).unwrap();
    let mut asked_again = 0;
    let mut settled = 0;
    f.for_each_url("", |rec| {
        if rec.url.starts_with("http://gone.test/") {
            assert_eq!(rec.next_fetch, 0, "{rec:?} still pending");
            settled += 1;
            asked_again += u64::from(rec.metadata.contains_key("robots_tries"));
        }
        true
    })
    .unwrap();
    assert_eq!(settled, GONE_URLS);
    assert!(
        (1..=GONE_URLS / 4).contains(&asked_again),
        "{asked_again} of {GONE_URLS} URLs waited out a retry of robots.txt"
    );
}
