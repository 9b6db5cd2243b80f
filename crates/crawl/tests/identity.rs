//! What the crawl says about itself: every request (robots.txt and pages)
//! carries the `User-Agent`, and the `From` address when `--from` is given
//! (`FetchConfig::from`); the WARC request records show them as sent.

mod common;

use std::sync::{Arc, Mutex};

/// Serves a two-page site on a free loopback port and logs every request
/// head; returns the crawl of it and the log.
async fn logged_site() -> (
    tempfile::TempDir,
    mgz_crawl::CrawlConfig,
    Arc<Mutex<Vec<String>>>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = Arc::<Mutex<Vec<String>>>::default();
    let log = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                log.lock().unwrap().push(head);
                let body = match path.as_str() {
                    "/" => "<a href=/next>next</a>",
                    "/next" => "<title>next</title>",
                    _ => "",
                };
                let status = if body.is_empty() {
                    "404 Not Found"
                } else {
                    "200 OK"
                };
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    let (dir, cfg) = common::one_host_config("id.test", addr);
    (dir, cfg, heads)
}

/// The value of header `name` in a request head (first line skipped).
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Crawls the logged site with `cfg` set by `set`; checks both pages were
/// stored and returns the request heads (robots.txt, `/`, `/next`), each
/// checked to carry `agent` and `from`.
async fn crawl_checking(
    set: impl FnOnce(&mut mgz_crawl::CrawlConfig),
    agent: &str,
    from: Option<&str>,
) -> tempfile::TempDir {
    let (dir, mut cfg, heads) = logged_site().await;
    set(&mut cfg);
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    assert_eq!(stored.len(), 2, "{summary:?}");
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 3, "{heads:?}");
    for head in &heads {
        assert_eq!(header(head, "user-agent"), Some(agent), "{head}");
        assert_eq!(header(head, "from"), from, "{head}");
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_says_who_sends_it() {
    let agent = "mgz-test/1.0 (+https://ops.example/crawler)";
    let from = "crawl-ops@ops.example";
    let dir = crawl_checking(
        |cfg| {
            cfg.fetch.user_agent = agent.into();
            cfg.fetch.from = Some(from.into());
            cfg.warc = Some(cfg.db.with_file_name("crawl.warc"));
        },
        agent,
        Some(from),
    )
    .await;
    // The two pages' request records, as sent.
    let warc = std::fs::read(dir.path().join("crawl.warc")).unwrap();
    let warc = String::from_utf8_lossy(&warc);
    let line = format!("\r\nFrom: {from}\r\n");
    assert_eq!(warc.matches(&line).count(), 2, "{warc}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_from_no_from_header_is_sent() {
    crawl_checking(|_| {}, mgz_crawl::DEFAULT_USER_AGENT, None).await;
}
