//! Helpers shared by the crawler's integration tests.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use mgz_crawl::net::ResolveRule;
use mgz_crawl::traps::Scope;
use mgz_crawl::{CrawlConfig, Sitemaps, Summary};
use mgz_sim::{SimConfig, SimServer};

/// A small sim with fast slow-features, served on a free loopback port.
pub async fn small_sim(seed: u64, hosts: u32, pages: u32) -> (SimConfig, SimServer) {
    let mut cfg = SimConfig::small(seed, hosts, pages);
    cfg.crawl_delay_secs = 0.05;
    cfg.retry_after_secs = 1;
    let server = mgz_sim::start(cfg.clone(), "127.0.0.1:0".parse().unwrap(), None)
        .await
        .unwrap();
    (cfg, server)
}

/// A crawl configuration against `server`, state under `dir`.
pub fn crawl_config(
    sim: &SimConfig,
    server: &SimServer,
    dir: &Path,
    max_depth: u32,
) -> CrawlConfig {
    let mut c = CrawlConfig {
        seeds: mgz_sim::seeds(sim),
        state_dir: dir.join("state"),
        db: dir.join("pages.db"),
        max_depth,
        scope: Scope::Any,
        concurrency: 32,
        per_host: 2,
        delay: Duration::from_millis(0),
        sitemaps: Sitemaps::Off,
        robots_retry: Duration::from_secs(60),
        robots_retries: 0,
        backoff: Duration::from_millis(200),
        progress: false,
        ..CrawlConfig::default()
    };
    c.fetch.resolve = vec![ResolveRule::parse(&server.resolve_spec()).unwrap()];
    c.fetch.allow_private = true;
    // Generous: a timed-out fetch is retried by design, so a timeout caused
    // by a loaded test machine (not by the sim, whose slowest answer takes
    // 20 ms) would show up as a URL requested twice in `sim_truth`.
    c.fetch.read_timeout = Duration::from_secs(30);
    c.fetch.total_timeout = Duration::from_secs(60);
    c
}

/// Serves `respond` (as [`serve_raw`] does) on a free loopback port and
/// returns a crawl of the one host `host` there, from `http://{host}/` with
/// no delay, its state and database in a new temporary directory (kept
/// alive by the returned guard).
pub async fn raw_host<F>(host: &str, respond: F) -> (tempfile::TempDir, CrawlConfig)
where
    F: Fn(&str) -> (&'static str, String, Vec<u8>) + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_raw(listener, respond));
    one_host_config(host, addr)
}

/// A crawl of the one host `host`, resolved to `addr`, from `http://{host}/`
/// with no delay, its state and database in a new temporary directory (kept
/// alive by the returned guard).
pub fn one_host_config(host: &str, addr: std::net::SocketAddr) -> (tempfile::TempDir, CrawlConfig) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = CrawlConfig {
        seeds: vec![format!("http://{host}/")],
        state_dir: dir.path().join("state"),
        db: dir.path().join("pages.db"),
        delay: Duration::ZERO,
        progress: false,
        ..CrawlConfig::default()
    };
    c.fetch.resolve = vec![ResolveRule::parse(&format!("{host}={addr}")).unwrap()];
    c.fetch.allow_private = true;
    (dir, c)
}

/// Crawls `host` served by `respond` (see [`raw_host`]) to `max_depth` and
/// returns the stored pages (as [`stored_pages`]) and the summary.
pub async fn crawl_raw<F>(host: &str, respond: F, max_depth: u32) -> (BTreeSet<String>, Summary)
where
    F: Fn(&str) -> (&'static str, String, Vec<u8>) + Send + Sync + 'static,
{
    let (dir, mut cfg) = raw_host(host, respond).await;
    cfg.max_depth = max_depth;
    let summary = run(cfg).await;
    (stored_pages(&dir.path().join("pages.db")), summary)
}

/// Asserts that each of `paths` on `host` is among the `stored` pages.
pub fn assert_stored(stored: &BTreeSet<String>, host: &str, paths: &[&str], summary: &Summary) {
    for path in paths {
        let url = format!("http://{host}/{path}");
        assert!(stored.contains(&url), "{url} not in {stored:?} {summary:?}");
    }
}

/// Makes `host` resolve, in `cfg`, to a loopback port nothing listens on:
/// every connection to it is refused at once, as to a server that is down.
pub fn resolve_to_closed_port(cfg: &mut CrawlConfig, host: &str) {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let rule = ResolveRule::parse(&format!("{host}=127.0.0.1:{port}")).unwrap();
    cfg.fetch.resolve.push(rule);
}

/// Runs a crawl to completion.
pub async fn run(cfg: CrawlConfig) -> Summary {
    mgz_crawl::crawl(cfg, Arc::new(AtomicBool::new(false)))
        .await
        .unwrap()
}

/// Canonical URLs of stored HTML pages with status 200.
pub fn stored_pages(db: &Path) -> BTreeSet<String> {
    mgz_crawl::store::stored_urls(db)
        .unwrap()
        .into_iter()
        .filter(|(_, status, ct)| {
            *status == 200 && ct.as_deref().is_some_and(|c| c.starts_with("text/html"))
        })
        .map(|(u, _, _)| u)
        .collect()
}

/// Prints the differences between two sets (for failing assertions), with
/// what the database holds for the missing URLs.
pub fn diff_db(db: &Path, stored: &BTreeSet<String>, truth: &BTreeSet<String>) -> String {
    let rows = mgz_crawl::store::stored_urls(db).unwrap();
    let notes: Vec<_> = truth
        .difference(stored)
        .take(10)
        .map(|u| (u, rows.iter().find(|r| &r.0 == u).cloned()))
        .collect();
    format!("{}; rows of missing: {notes:?}", diff(stored, truth))
}

/// Prints the differences between two sets (for failing assertions).
pub fn diff(stored: &BTreeSet<String>, truth: &BTreeSet<String>) -> String {
    let missing: Vec<_> = truth.difference(stored).take(10).collect();
    let extra: Vec<_> = stored.difference(truth).take(10).collect();
    format!(
        "missing {} (e.g. {missing:?}), extra {} (e.g. {extra:?})",
        truth.difference(stored).count(),
        stored.difference(truth).count()
    )
}

/// LSB-first bit writer for a raw DEFLATE stream.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u64, bits: u32) {
        self.acc |= value << self.n;
        self.n += bits;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    /// Huffman codes go most significant bit first.
    fn code(&mut self, code: u64, bits: u32) {
        let rev = (0..bits).fold(0, |r, i| r | (((code >> i) & 1) << (bits - 1 - i)));
        self.put(rev, bits);
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// A gzip member whose one fixed-Huffman block inflates to `size` zero
/// bytes: a literal 0, then (length 258, distance 1) copies, 13 bits each.
/// The trailer's CRC is left zero: a reader that honours its cap never gets there.
pub fn gzip_bomb(size: u64) -> Vec<u8> {
    let mut b = Bits::default();
    b.put(1, 1); // BFINAL
    b.put(1, 2); // fixed Huffman
    b.code(0x30, 8); // literal 0
    for _ in 0..(size - 1) / 258 {
        b.code(0b1100_0101, 8); // length code 285 = 258
        b.code(0, 5); // distance code 0 = 1
    }
    b.code(0, 7); // end of block
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    gz.extend(b.finish());
    gz.extend([0, 0, 0, 0]);
    gz.extend((size as u32).to_le_bytes());
    gz
}

/// A bare HTTP/1.1 server for responses no well-behaved server sends: one
/// request per connection, `respond(path)` gives the status line, the
/// content type (extra header lines may follow it after `\r\n`) and the body.
pub async fn serve_raw<F>(listener: tokio::net::TcpListener, respond: F)
where
    F: Fn(&str) -> (&'static str, String, Vec<u8>) + Send + Sync + 'static,
{
    serve_bytes(listener, move |path| {
        let (status, ct, body) = respond(path);
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        [head.into_bytes(), body].concat()
    })
    .await
}

/// Lower still: one request per connection, `respond(path)` gives every
/// byte sent back, then the connection is closed (a cut body included).
pub async fn serve_bytes<F>(listener: tokio::net::TcpListener, respond: F)
where
    F: Fn(&str) -> Vec<u8> + Send + Sync + 'static,
{
    serve_bytes_async(listener, move |path| std::future::ready(respond(&path))).await
}

/// [`serve_bytes`] with an asynchronous `respond`, which may wait before it
/// answers (a slow page).
pub async fn serve_bytes_async<F, Fut>(listener: tokio::net::TcpListener, respond: F)
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Vec<u8>> + Send + 'static,
{
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let respond = Arc::new(respond);
    while let Ok((mut sock, _)) = listener.accept().await {
        let respond = respond.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            let Ok(n) = sock.read(&mut buf).await else {
                return;
            };
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
            let bytes = respond(path).await;
            let _ = sock.write_all(&bytes).await;
        });
    }
}

/// Reads one request's head from `sock`, through its blank line, and
/// returns its path and the host name of its `Host` header (port dropped,
/// empty without one); `None` when the connection ends first.
pub async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<(String, String)> {
    let head = read_head(sock).await?;
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let host = (head.lines())
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("host"))
        })
        .map_or("", |(_, v)| v.trim())
        .split(':')
        .next()
        .unwrap_or("")
        .to_string();
    Some((path, host))
}

/// Reads one request's head from `sock`, through its blank line (the
/// request line and header lines); `None` when the connection ends first.
pub async fn read_head(sock: &mut tokio::net::TcpStream) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match sock.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// One request as a [`serve_logged`] server saw it: host, path, arrival,
/// answer sent.
pub type Seen = (String, String, std::time::Instant, std::time::Instant);

/// Answers each request with `respond(path)`'s status line and HTML body
/// after `serve_time`, one request per connection, and records every
/// request in `log` (stamped before the answer goes out: the crawler cannot
/// have finished with it earlier).
pub async fn serve_logged<F>(
    listener: tokio::net::TcpListener,
    log: Arc<std::sync::Mutex<Vec<Seen>>>,
    serve_time: Duration,
    respond: F,
) where
    F: Fn(&str) -> (&'static str, String) + Send + Sync + 'static,
{
    use tokio::io::AsyncWriteExt;
    let respond = Arc::new(respond);
    while let Ok((mut sock, _)) = listener.accept().await {
        let (log, respond) = (log.clone(), respond.clone());
        tokio::spawn(async move {
            let Some((path, host)) = read_request(&mut sock).await else {
                return;
            };
            let arrived = std::time::Instant::now();
            let (status, body) = respond(&path);
            tokio::time::sleep(serve_time).await;
            let answered = std::time::Instant::now();
            let reply = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
            let _ = sock.flush().await;
            log.lock().unwrap().push((host, path, arrived, answered));
        });
    }
}
