//! A task waiting for its host's turn does not hold a fetch slot: with
//! `--concurrency 1`, each host's first page comes one delay after its
//! robots.txt, and meanwhile the one slot fetches the other hosts'
//! robots.txt instead of sitting idle (a slot held per wait made a broad
//! polite crawl run at a few hundred pages a second). What a server sees
//! does not change: each host's requests are spaced by the delay, and no
//! two requests of the crawl overlap.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mgz_crawl::net::ResolveRule;
use mgz_crawl::traps::Scope;
use mgz_crawl::{CrawlConfig, Sitemaps};

const HOSTS: [&str; 4] = ["h0.w.test", "h1.w.test", "h2.w.test", "h3.w.test"];
const DELAY: Duration = Duration::from_secs(2);

use common::Seen;

/// Every host's `/` (no links); a 404 for anything else (robots.txt
/// included: allow all).
fn respond(path: &str) -> (&'static str, String) {
    match path {
        "/" => ("200 OK", "<html><body>a page</body></html>".into()),
        _ => ("404 Not Found", String::new()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_slot_fetches_other_hosts_while_a_host_waits_its_delay() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let server = tokio::spawn(common::serve_logged(
        listener,
        log.clone(),
        Duration::ZERO,
        respond,
    ));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = CrawlConfig {
        seeds: HOSTS.iter().map(|h| format!("http://{h}/")).collect(),
        state_dir: dir.path().join("state"),
        db: dir.path().join("pages.db"),
        max_depth: 0,
        scope: Scope::Any,
        concurrency: 1,
        per_host: 1,
        delay: DELAY,
        sitemaps: Sitemaps::Off,
        progress: false,
        ..CrawlConfig::default()
    };
    cfg.fetch.resolve = vec![ResolveRule::parse(&format!("*.w.test={addr}")).unwrap()];
    cfg.fetch.allow_private = true;
    let summary = tokio::time::timeout(Duration::from_secs(60), common::run(cfg))
        .await
        .expect("the crawl ends");
    server.abort();
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    assert_eq!(stored.len(), HOSTS.len(), "{stored:?} {summary:?}");
    let mut seen = log.lock().unwrap().clone();
    seen.sort_by_key(|s| s.2);
    assert_eq!(
        seen.len(),
        2 * HOSTS.len(),
        "a robots.txt and a page each: {seen:?}"
    );
    let show = |s: &[Seen]| {
        s.iter()
            .map(|(h, p, ..)| format!("{h}{p}"))
            .collect::<Vec<_>>()
    };
    // The slot went to other hosts' robots.txt while the first host's
    // page waited: a slot held through the wait gives robots.txt, page,
    // robots.txt, page, ... (one robots.txt before the first page).
    let first_page = seen.iter().position(|s| s.1 == "/").unwrap();
    assert!(
        first_page >= 2,
        "one robots.txt before the first page: {:?}",
        show(&seen)
    );
    // --concurrency 1 still: no request arrived before the one before it
    // was answered.
    for w in seen.windows(2) {
        assert!(w[1].2 >= w[0].3, "two requests at once: {:?}", show(&seen));
    }
    // Each host's page came at least the delay after its robots.txt was
    // answered (less 5 ms of scheduling jitter in the stamps).
    for h in HOSTS {
        let mine: Vec<&Seen> = seen.iter().filter(|s| s.0 == h).collect();
        assert_eq!(mine.len(), 2, "{h}: {:?}", show(&seen));
        assert_eq!(mine[0].1, "/robots.txt");
        let gap = mine[1].2.saturating_duration_since(mine[0].3);
        assert!(gap >= DELAY - Duration::from_millis(5), "{h}: {gap:?}");
    }
}
