//! `--politeness domain`: the hosts of one registrable domain share one
//! delay and one in-flight cap; by default each host has its own.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mgz_crawl::net::ResolveRule;
use mgz_crawl::traps::Scope;
use mgz_crawl::{CrawlConfig, Sitemaps};
use mgz_url::QueueKeyKind;

const HOSTS: [&str; 3] = ["a.x.test", "b.x.test", "c.x.test"];
const DELAY: Duration = Duration::from_millis(150);
/// How long the server takes over each answer.
const SERVE: Duration = Duration::from_millis(20);

use common::Seen;

/// Each `/` links to the other hosts and to two pages of its own;
/// robots.txt is 404.
fn respond(path: &str) -> (&'static str, String) {
    match path {
        "/" => {
            let mut b = String::from("<html><body>");
            for h in HOSTS {
                b += &format!("<a href=\"http://{h}/\">{h}</a> ");
            }
            b += "<a href=\"/p1\">one</a> <a href=\"/p2\">two</a></body></html>";
            ("200 OK", b)
        }
        "/p1" | "/p2" => ("200 OK", "<html><body>page</body></html>".into()),
        _ => ("404 Not Found", String::new()),
    }
}

/// Crawls the three hosts from `a.x.test` with `politeness` and returns the
/// requests the server saw, in arrival order, and the stored pages.
async fn crawl(politeness: QueueKeyKind) -> (Vec<Seen>, std::collections::BTreeSet<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let server = tokio::spawn(common::serve_logged(listener, log.clone(), SERVE, respond));
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = CrawlConfig {
        seeds: vec!["http://a.x.test/".into()],
        state_dir: dir.path().join("state"),
        db: dir.path().join("pages.db"),
        max_depth: 3,
        scope: Scope::Any,
        concurrency: 8,
        per_host: 1,
        delay: DELAY,
        politeness,
        sitemaps: Sitemaps::Off,
        progress: false,
        ..CrawlConfig::default()
    };
    cfg.fetch.resolve = vec![ResolveRule::parse(&format!("*.x.test={addr}")).unwrap()];
    cfg.fetch.allow_private = true;
    let summary = common::run(cfg).await;
    server.abort();
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    assert_eq!(stored.len(), 9, "{stored:?} {summary:?}");
    let mut seen = log.lock().unwrap().clone();
    seen.sort_by_key(|s| s.2);
    (seen, stored)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_of_one_domain_share_its_delay_and_cap() {
    let (seen, _) = crawl(QueueKeyKind::RegistrableDomain).await;
    // Three robots.txt files and nine pages, one at a time across the hosts:
    // each request arrives at least the delay after the previous answer
    // (less 5 ms of scheduling jitter in the stamps).
    assert_eq!(seen.len(), 12, "{seen:?}");
    for w in seen.windows(2) {
        let gap = w[1].2.saturating_duration_since(w[0].3);
        assert!(
            gap >= DELAY - Duration::from_millis(5),
            "{}{} arrived {gap:?} after {}{} was answered",
            w[1].0,
            w[1].1,
            w[0].0,
            w[0].1
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_each_host_has_its_own_delay() {
    let (seen, _) = crawl(QueueKeyKind::Host).await;
    assert_eq!(seen.len(), 12, "{seen:?}");
    // Each host on its own is spaced...
    for h in HOSTS {
        let mine: Vec<&Seen> = seen.iter().filter(|s| s.0 == h).collect();
        for w in mine.windows(2) {
            let gap = w[1].2.saturating_duration_since(w[0].3);
            assert!(gap >= DELAY - Duration::from_millis(5), "{h}: {gap:?}");
        }
    }
    // ...but two hosts of the domain were asked at once: the whole crawl
    // did not wait one delay per request.
    let overlapping = seen
        .windows(2)
        .filter(|w| w[1].2 < w[0].3 + DELAY / 2)
        .count();
    assert!(overlapping > 0, "no two hosts fetched together: {seen:?}");
}
