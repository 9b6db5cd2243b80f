//! Connections are reused across the per-host delay: a polite crawl of one
//! host asks for its pages one at a time, `--delay` apart, and the idle
//! connection outlives the delay by `fetch::IDLE_SLACK`, so the host sees
//! one connection (or a few on a loaded machine), not one per request. The
//! slack is short (docs/BENCHMARKS.md, "Idle connections"); this is what
//! it must still allow.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;

/// Each request's path and whether it asked for `Connection: close`.
type Asked = Arc<Mutex<Vec<(String, bool)>>>;

/// Serves keep-alive HTTP/1.1 on `listener`: every request on a connection
/// is answered with a `Content-Length` and the connection kept (closed
/// after the answer when the request asked so). `/` links to `/p1` …
/// `/p5`; robots.txt and the pages are small HTML or 404s. Counts accepted
/// connections and requests, and logs what each asked.
async fn serve_keep_alive(
    listener: tokio::net::TcpListener,
    accepted: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
    asked: Asked,
) {
    while let Ok((mut sock, _)) = listener.accept().await {
        accepted.fetch_add(1, Ordering::SeqCst);
        let (requests, asked) = (requests.clone(), asked.clone());
        tokio::spawn(async move {
            while let Some(head) = common::read_head(&mut sock).await {
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let close = head.lines().any(|l| {
                    l.split_once(':').is_some_and(|(k, v)| {
                        k.trim().eq_ignore_ascii_case("connection")
                            && v.trim().eq_ignore_ascii_case("close")
                    })
                });
                asked.lock().unwrap().push((path.clone(), close));
                requests.fetch_add(1, Ordering::SeqCst);
                let (status, body) = match path.as_str() {
                    "/" => (
                        "200 OK",
                        (1..=5)
                            .map(|i| format!("<a href=\"/p{i}\">p{i}</a>"))
                            .collect::<String>(),
                    ),
                    p if p.starts_with("/p") => ("200 OK", format!("<title>{p}</title>")),
                    _ => ("404 Not Found", String::new()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                if sock.write_all(head.as_bytes()).await.is_err()
                    || sock.write_all(body.as_bytes()).await.is_err()
                    || close
                {
                    return;
                }
            }
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_is_reused_across_the_per_host_delay() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (accepted, requests) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let asked = Asked::default();
    tokio::spawn(serve_keep_alive(
        listener,
        accepted.clone(),
        requests.clone(),
        asked.clone(),
    ));
    let (dir, mut cfg) = common::one_host_config("keep.test", addr);
    cfg.delay = Duration::from_millis(300);
    cfg.per_host = 1;
    cfg.max_depth = 1;
    // What `mgz crawl --delay 300` sets.
    cfg.fetch.idle_timeout = mgz_crawl::fetch::idle_timeout(cfg.delay);
    cfg.fetch.idle_per_host = 1;
    let summary = tokio::time::timeout(Duration::from_secs(60), common::run(cfg))
        .await
        .expect("the crawl ends");
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    common::assert_stored(
        &stored,
        "keep.test",
        &["", "p1", "p2", "p3", "p4", "p5"],
        &summary,
    );
    let (accepted, requests) = (
        accepted.load(Ordering::SeqCst),
        requests.load(Ordering::SeqCst),
    );
    // robots.txt (and maybe sitemap.xml), the index and five pages, each
    // `--delay` after the last: one connection if each next request came
    // within the slack. A loaded machine may miss it now and then; without
    // reuse (an idle timeout shorter than the delay) every request opens
    // its own connection.
    assert!(requests >= 7, "{requests} requests");
    assert!(
        accepted <= 3,
        "{accepted} connections for {requests} requests: not kept across the delay"
    );
    // Far under the socket cap (`--max-connections`), no request asks for
    // its connection to be closed: not even the index or p5, each the last
    // URL of its queue when asked for (docs/BENCHMARKS.md, session 59).
    let asked = asked.lock().unwrap().clone();
    assert!(asked.iter().all(|(_, close)| !close), "{asked:?}");
    assert!(asked.iter().any(|(path, _)| path == "/p5"), "{asked:?}");
}
