//! A host whose requests are spaced further apart than a worker can hold
//! its lease: the URLs waiting their turn are handed back to the frontier
//! instead of outliving their lease, which had the frontier serve them
//! again (a second request for the same page).
//!
//! At scale: `--per-host 32` against a `Crawl-delay: 30` leases 32 of the
//! host's URLs at once; the 21st waited 600 s for its slot, the lease's
//! length, and was fetched twice. Here the same with a 2 s lease.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const HOST: &str = "spaced.test";
const PAGES: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_waiting_past_half_their_lease_are_handed_back_not_fetched_twice() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let asked: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let log = asked.clone();
    tokio::spawn(common::serve_raw(listener, move |path: &str| {
        *log.lock().unwrap().entry(path.to_string()).or_default() += 1;
        let html = |b: String| ("200 OK", "text/html".to_string(), b.into_bytes());
        match path {
            "/robots.txt" => (
                "200 OK",
                "text/plain".into(),
                b"User-agent: *\nCrawl-delay: 0.4\n".to_vec(),
            ),
            "/" => html(
                (0..PAGES)
                    .map(|i| format!("<a href=\"/p{i}\">{i}</a>"))
                    .collect(),
            ),
            _ => html("<p>page</p>".into()),
        }
    }));
    let (dir, mut cfg) = common::one_host_config(HOST, addr);
    cfg.max_depth = 1;
    cfg.per_host = PAGES as u32;
    cfg.lease = Duration::from_secs(2);
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    assert_eq!(stored.len(), PAGES + 1, "{stored:?} {summary:?}");
    // All ten were leased at once and 0.4 s apart their slots span 4 s:
    // without the hand-back, the last ones outlived their 2 s lease.
    each_asked_once(&asked, PAGES + 2);
}

/// Asserts that the server saw `paths` distinct paths, each once.
fn each_asked_once(asked: &Mutex<BTreeMap<String, usize>>, paths: usize) {
    let asked = asked.lock().unwrap().clone();
    let twice: Vec<_> = asked.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "asked more than once: {twice:?}");
    assert_eq!(asked.len(), paths, "{asked:?}");
}

/// A stop (Ctrl-C) while a host's sitemaps are read ends the reading
/// instead of waiting out one slot of the host's gate per file; robots.txt
/// is then not remembered, so the next run reads the sitemaps again and
/// the crawl is whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_ends_the_reading_of_sitemaps_and_the_rerun_reads_them() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;
    const MAPS: usize = 10;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let asked: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let log = asked.clone();
    tokio::spawn(common::serve_raw(listener, move |path: &str| {
        *log.lock().unwrap().entry(path.to_string()).or_default() += 1;
        let url = |p: &str| format!("http://{HOST}{p}");
        if path == "/robots.txt" {
            let mut r = String::from("User-agent: *\nCrawl-delay: 0.5\n");
            for i in 0..MAPS {
                r += &format!("Sitemap: {}\n", url(&format!("/map{i}.xml")));
            }
            return ("200 OK", "text/plain".into(), r.into_bytes());
        }
        if let Some(i) = path
            .strip_prefix("/map")
            .and_then(|p| p.strip_suffix(".xml"))
        {
            let set = format!(
                "<urlset><url><loc>{}</loc></url></urlset>",
                url(&format!("/s{i}"))
            );
            return ("200 OK", "application/xml".into(), set.into_bytes());
        }
        ("200 OK", "text/html".into(), b"<p>page</p>".to_vec())
    }));
    let (dir, mut cfg) = common::one_host_config(HOST, addr);
    cfg.max_depth = 1;
    let stop = Arc::new(AtomicBool::new(false));
    let crawl = tokio::spawn(mgz_crawl::crawl(cfg.clone(), stop.clone()));
    // Robots.txt, the seed, then ten sitemaps half a second apart at least.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::Relaxed);
    let stopped = Instant::now();
    crawl.await.unwrap().unwrap();
    let took = stopped.elapsed();
    let maps_read =
        |a: &BTreeMap<String, usize>| a.keys().filter(|p| p.starts_with("/map")).count();
    let read = maps_read(&asked.lock().unwrap());
    assert!(read < MAPS, "all {MAPS} sitemaps were read before the stop");
    // The old code read the other sitemaps first: 0.5 s a file.
    assert!(
        took < Duration::from_millis(500) * (MAPS - read) as u32,
        "the stop took {took:?} with {} sitemaps left",
        MAPS - read
    );
    // The rerun reads robots.txt and every sitemap again, and stores all.
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    assert_eq!(stored.len(), MAPS + 1, "{stored:?} {summary:?}");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.get("/robots.txt"), Some(&2), "{asked:?}");
    let pages_twice: Vec<_> = (asked.iter())
        .filter(|(p, n)| !p.starts_with("/map") && p.as_str() != "/robots.txt" && **n > 1)
        .collect();
    assert!(pages_twice.is_empty(), "pages asked twice: {pages_twice:?}");
}
