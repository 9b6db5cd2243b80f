//! A redirect that finds a shorter path to a page while that page is being
//! fetched: the page is fetched once, and its links are followed from the
//! shorter depth.
//!
//! `/` links `/a` and `/r`. `/r` fails once (a 500, retried after a short
//! back-off), so the crawl's wave moves on to depth 2 and fetches `/p`
//! (linked from `/a`), which answers slowly. Meanwhile `/r` is retried and
//! redirects to `/p`: `/p` is at depth 1 by that path. Before the fix the
//! crawler re-put `/p` at depth 1, which ended its lease, and `/p` was
//! handed out and requested a second time while the first fetch was in
//! flight. `/p` links `/q`, at depth 2 by the short path and 3 by the long
//! one: with `--max-depth 2` it is stored only if `/p`'s links are followed
//! from depth 1.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

fn page(links: &[&str]) -> String {
    let a: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">x</a>"))
        .collect();
    format!("<html><body>{a}</body></html>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_reached_by_a_redirect_while_in_flight_is_fetched_once() {
    let (hits, stored, summary, p_depth) = crawl(false).await;
    assert_eq!(hits.get("/r"), Some(&2), "{hits:?} {summary:?}");
    // Its row says the depth its links were followed from.
    assert_eq!(p_depth, 1);
    assert_eq!(
        hits.get("/p"),
        Some(&1),
        "/p fetched once: {hits:?} {summary:?}"
    );
    assert_stored(&stored, "lower.test", &["", "a", "p", "q"], &summary);
}

/// The same, but `/p`'s first answer is a 500: it is handed back to be
/// retried at the depth the redirect gave it, fetched a second time (the
/// retry), and its link is followed from that depth; the crawl ends. (The
/// counts per depth that move with it are checked in `queue.rs`'s tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_lowered_in_flight_and_retried_ends_the_crawl() {
    let (hits, stored, summary, p_depth) = crawl(true).await;
    assert_eq!(hits.get("/p"), Some(&2), "a retry: {hits:?} {summary:?}");
    assert_eq!(p_depth, 1);
    assert_stored(&stored, "lower.test", &["", "a", "p", "q"], &summary);
}

/// Crawls the site above to depth 2; `/p` fails its first request when
/// `p_fails`. Returns the requests per path, the stored pages, the summary
/// and the depth of `/p`'s row.
async fn crawl(
    p_fails: bool,
) -> (
    HashMap<String, u32>,
    std::collections::BTreeSet<String>,
    mgz_crawl::Summary,
    u32,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let log = hits.clone();
    tokio::spawn(serve_bytes_async(listener, move |path: String| {
        let n = {
            let mut l = log.lock().unwrap();
            let n = l.entry(path.clone()).or_default();
            *n += 1;
            *n
        };
        async move {
            let (status, extra, body) = match path.as_str() {
                "/" => ("200 OK", "", page(&["/a", "/r"])),
                "/a" => ("200 OK", "", page(&["/p"])),
                "/r" if n == 1 => ("500 Internal Server Error", "", String::new()),
                "/r" => ("301 Moved Permanently", "Location: /p\r\n", String::new()),
                "/p" => {
                    tokio::time::sleep(Duration::from_millis(2_500)).await;
                    if p_fails && n == 1 {
                        ("500 Internal Server Error", "", String::new())
                    } else {
                        ("200 OK", "", page(&["/q"]))
                    }
                }
                "/q" => ("200 OK", "", page(&[])),
                _ => ("404 Not Found", "", String::new()),
            };
            format!(
                "HTTP/1.1 {status}\r\n{extra}Content-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        }
    }));
    let (dir, mut cfg) = one_host_config("lower.test", addr);
    cfg.max_depth = 2;
    cfg.per_host = 4;
    cfg.ignore_robots = true;
    cfg.backoff = Duration::from_millis(200);
    let summary = tokio::time::timeout(Duration::from_secs(60), run(cfg))
        .await
        .expect("the crawl ends");
    let hits = hits.lock().unwrap().clone();
    let db = dir.path().join("pages.db");
    let stored = stored_pages(&db);
    let p_depth = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT depth FROM pages WHERE url = 'http://lower.test/p'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (hits, stored, summary, p_depth)
}
