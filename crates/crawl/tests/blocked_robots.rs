//! A visit whose robots.txt or sitemap is on a host blocked by a long 429:
//! handed back instead of held, and let go at once by a stop.
//!
//! Two hosts, `a.test` and `b.test`, each sending its robots.txt's
//! requests to the other: a `Sitemap:` line naming a file there, or a
//! redirect of robots.txt there (a site moved to `www.`, say). The first
//! page asked (`/` of either) answers 429 with `Retry-After: 3600`, which
//! blocks its host for an hour; the other host's visit then needs a file
//! from the blocked host. Until session 50 that request waited the hour,
//! holding its URL past its lease and a Ctrl-C for the hour: the waits of
//! robots.txt and sitemaps neither handed back nor looked at the stop flag.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mgz_crawl::net::ResolveRule;
use mgz_crawl::traps::Scope;
use mgz_crawl::{CrawlConfig, Sitemaps};
use tokio::io::AsyncWriteExt;

/// Requests seen, by `host path`.
type Asked = Arc<Mutex<BTreeMap<String, usize>>>;

/// Where a host's robots.txt sends the crawler on the other host.
#[derive(Clone, Copy)]
enum Via {
    /// `Sitemap: http://OTHER/map.xml` (an empty sitemap).
    Sitemap,
    /// A 301 to `http://OTHER/real-robots.txt` (allows everything).
    Redirect,
}

fn other(host: &str) -> &'static str {
    if host == "a.test" { "b.test" } else { "a.test" }
}

/// Serves both hosts (see the module doc): the first `/` asked, of either
/// host, is a 429 for an hour; later ones are pages.
async fn serve(listener: tokio::net::TcpListener, asked: Asked, via: Via) {
    let first_page = Arc::new(AtomicBool::new(true));
    while let Ok((mut sock, _)) = listener.accept().await {
        let (asked, first_page) = (asked.clone(), first_page.clone());
        tokio::spawn(async move {
            let Some((path, host)) = common::read_request(&mut sock).await else {
                return;
            };
            *asked
                .lock()
                .unwrap()
                .entry(format!("{host} {path}"))
                .or_default() += 1;
            let there = other(&host);
            let (status, extra, body) = match (path.as_str(), via) {
                ("/robots.txt", Via::Sitemap) => (
                    "200 OK",
                    String::new(),
                    format!("User-agent: *\nSitemap: http://{there}/map.xml\n"),
                ),
                ("/robots.txt", Via::Redirect) => (
                    "301 Moved Permanently",
                    format!("Location: http://{there}/real-robots.txt\r\n"),
                    String::new(),
                ),
                ("/real-robots.txt", _) => {
                    ("200 OK", String::new(), "User-agent: *\nAllow: /\n".into())
                }
                ("/map.xml", _) => ("200 OK", String::new(), "<urlset></urlset>".into()),
                ("/", _) if first_page.swap(false, Ordering::SeqCst) => (
                    "429 Too Many Requests",
                    "Retry-After: 3600\r\n".into(),
                    String::new(),
                ),
                _ => (
                    "200 OK",
                    String::new(),
                    "<html><body>page</body></html>".into(),
                ),
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 {extra}Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
            let _ = sock.flush().await;
        });
    }
}

/// A crawl of both hosts' `/`, one visit at a time (so the 429 has come
/// before the second visit starts).
async fn setup(via: Via) -> (tempfile::TempDir, CrawlConfig, Asked) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let asked = Asked::default();
    tokio::spawn(serve(listener, asked.clone(), via));
    let (dir, mut cfg) = common::one_host_config("a.test", addr);
    cfg.seeds.push("http://b.test/".into());
    cfg.fetch.resolve = vec![ResolveRule::parse(&format!("*.test={addr}")).unwrap()];
    // Sitemaps are read for visits above the maximum depth.
    cfg.max_depth = 1;
    cfg.scope = Scope::Any;
    cfg.concurrency = 1;
    cfg.sitemaps = Sitemaps::Robots;
    cfg.max_retry_wait = Duration::from_secs(1);
    (dir, cfg, asked)
}

/// The host whose `/` was asked (the one that got the 429), and the
/// other's file that the first visit asked on the other host.
fn blocked(asked: &BTreeMap<String, usize>) -> &'static str {
    match (asked.get("a.test /"), asked.get("b.test /")) {
        (Some(_), None) => "a.test",
        (None, Some(_)) => "b.test",
        _ => panic!("expected exactly one page asked: {asked:?}"),
    }
}

/// What the server must have seen: the first visit's robots.txt, its file
/// on the other host and its 429, then the other host's robots.txt, and
/// nothing of the blocked host after its 429.
fn check_asked(asked: &BTreeMap<String, usize>, via: Via) {
    let x = blocked(asked);
    let y = other(x);
    let file = match via {
        Via::Sitemap => "/map.xml",
        Via::Redirect => "/real-robots.txt",
    };
    let want: BTreeMap<String, usize> = [
        format!("{x} /robots.txt"),
        format!("{y} {file}"),
        format!("{x} /"),
        format!("{y} /robots.txt"),
    ]
    .into_iter()
    .map(|k| (k, 1))
    .collect();
    assert_eq!(asked, &want);
}

/// Both URLs end up waiting for the block's end in the state: the 429's,
/// and the one handed back; the crawl ends as with any far retry.
async fn handed_back(via: Via) {
    let (_dir, mut cfg, asked) = setup(via).await;
    // Half of it, 1 s, is all a visit may wait for hosts' turns.
    cfg.lease = Duration::from_secs(2);
    // The old code waited the hour out.
    let summary = tokio::time::timeout(Duration::from_secs(60), common::run(cfg))
        .await
        .expect("the crawl waited for the blocked host instead of handing the URL back");
    check_asked(&asked.lock().unwrap(), via);
    assert_eq!(summary.pages_stored, 0, "{summary:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visit_whose_sitemap_is_on_a_blocked_host_is_handed_back() {
    handed_back(Via::Sitemap).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_visit_whose_robots_txt_redirects_to_a_blocked_host_is_handed_back() {
    handed_back(Via::Redirect).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_ends_a_wait_for_a_blocked_hosts_turn_at_robots_txt() {
    let via = Via::Redirect;
    let (_dir, mut cfg, asked) = setup(via).await;
    // Long enough that the hour's block is within the visit's wait.
    cfg.lease = Duration::from_secs(3 * 3600);
    let stop = Arc::new(AtomicBool::new(false));
    let crawl = tokio::spawn(mgz_crawl::crawl(cfg, stop.clone()));
    // The 429, then the other host's visit waiting behind it.
    let deadline = Instant::now() + Duration::from_secs(20);
    while asked.lock().unwrap().len() < 4 {
        assert!(Instant::now() < deadline, "{:?}", asked.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!crawl.is_finished(), "the crawl ended without waiting");
    stop.store(true, Ordering::Relaxed);
    let stopped = Instant::now();
    // The old code held the stop for the hour.
    let summary = tokio::time::timeout(Duration::from_secs(30), crawl)
        .await
        .expect("the stop waited for the blocked host")
        .unwrap()
        .unwrap();
    let took = stopped.elapsed();
    assert!(took < Duration::from_secs(2), "the stop took {took:?}");
    check_asked(&asked.lock().unwrap(), via);
    assert_eq!(summary.pages_stored, 0, "{summary:?}");
}
