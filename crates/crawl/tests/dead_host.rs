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
    let summary = common::run(cfg).await;
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
}
