//! Crawling over HTTPS: a site behind TLS on 127.0.0.1 (rustls with a
//! certificate made by rcgen), trusted through `--ca-cert`
//! (`FetchConfig::ca_certs`) or not. A certificate that is not trusted, or
//! not for the host, is a `tls` error recorded at once: asking again cannot
//! change it, so the server sees one handshake per URL.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mgz_crawl::CrawlConfig;
use mgz_crawl::net::ResolveRule;

type Respond = dyn Fn(&str) -> (&'static str, String) + Send + Sync;

/// A TLS site on a free loopback port: one thread per connection, one
/// request each (`Connection: close`). Counts connections accepted and
/// logs the paths asked.
struct TlsSite {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    asked: Arc<Mutex<Vec<String>>>,
}

/// A certificate for `names` (self-signed: it is its own CA) and its PEM.
fn certificate(names: &[&str]) -> (rcgen::CertifiedKey<rcgen::KeyPair>, String) {
    let names = names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let cert = rcgen::generate_simple_self_signed(names).unwrap();
    let pem = cert.cert.pem();
    (cert, pem)
}

fn serve(cert: &rcgen::CertifiedKey<rcgen::KeyPair>, respond: Arc<Respond>) -> TlsSite {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.der().clone()], key.into())
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let site = TlsSite {
        addr: listener.local_addr().unwrap(),
        accepted: Arc::default(),
        asked: Arc::default(),
    };
    let (accepted, asked) = (site.accepted.clone(), site.asked.clone());
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(sock) = sock else { return };
            accepted.fetch_add(1, Ordering::SeqCst);
            let (config, asked, respond) = (config.clone(), asked.clone(), respond.clone());
            std::thread::spawn(move || {
                let _ = sock.set_read_timeout(Some(Duration::from_secs(20)));
                let Ok(conn) = rustls::ServerConnection::new(config) else {
                    return;
                };
                let mut tls = rustls::StreamOwned::new(conn, sock);
                // The handshake runs inside the first read; a client that
                // refuses the certificate ends it there.
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                asked.lock().unwrap().push(path.clone());
                let (status, body) = respond(&path);
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(reply.as_bytes());
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    site
}

/// A crawl of `https://site.test/` served at `addr`, trusting `ca` (a PEM
/// file written into the state's temporary directory) when given.
fn config(addr: SocketAddr, ca: Option<&str>) -> (tempfile::TempDir, CrawlConfig) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = CrawlConfig {
        seeds: vec!["https://site.test/".into()],
        state_dir: dir.path().join("state"),
        db: dir.path().join("pages.db"),
        delay: Duration::ZERO,
        backoff: Duration::from_millis(100),
        robots_retries: 0,
        progress: false,
        ..CrawlConfig::default()
    };
    c.fetch.resolve = vec![ResolveRule::parse(&format!("site.test={addr}")).unwrap()];
    c.fetch.allow_private = true;
    if let Some(pem) = ca {
        let path: PathBuf = dir.path().join("ca.pem");
        std::fs::write(&path, pem).unwrap();
        c.fetch.ca_certs = vec![path];
    }
    (dir, c)
}

fn site_pages(path: &str) -> (&'static str, String) {
    match path {
        "/robots.txt" => ("200 OK", "User-agent: *\nDisallow: /private/\n".into()),
        "/" => (
            "200 OK",
            r#"<title>Home</title><a href="/a">a</a> <a href="b">b</a>
               <a href="/private/x">private</a> <a href="https://site.test/a#top">again</a>"#
                .into(),
        ),
        "/a" => ("200 OK", r#"<title>A</title><a href="/">home</a>"#.into()),
        "/b" => ("200 OK", "<title>B</title>a page over TLS".into()),
        _ => ("404 Not Found", String::new()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_over_https_is_crawled_with_its_ca_and_robots_txt() {
    let (cert, pem) = certificate(&["site.test"]);
    let site = serve(&cert, Arc::new(site_pages));
    let (dir, mut cfg) = config(site.addr, Some(&pem));
    let warc = dir.path().join("crawl.warc");
    cfg.warc = Some(warc.clone());
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    // The archive holds each page's exchange under its https URL, the
    // request as sent inside the TLS connection.
    let warc = String::from_utf8_lossy(&std::fs::read(&warc).unwrap()).into_owned();
    for page in ["", "a", "b"] {
        let uri = format!("WARC-Target-URI: https://site.test/{page}\r\n");
        assert_eq!(warc.matches(&uri).count(), 2, "{uri:?} in {warc}");
    }
    assert!(warc.contains("GET /b HTTP/1.1\r\n"), "{warc}");
    let want: BTreeSet<String> = [
        "https://site.test/",
        "https://site.test/a",
        "https://site.test/b",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(stored, want, "{summary:?}");
    let mut asked = site.asked.lock().unwrap().clone();
    asked.sort();
    // robots.txt read over TLS (its Disallow kept /private/x out), each
    // page asked once.
    assert_eq!(asked, ["/", "/a", "/b", "/robots.txt"], "{summary:?}");
    assert_eq!(summary.robots_excluded, 1, "{summary:?}");
    assert!(summary.errors.is_empty(), "{summary:?}");
}

/// Every error row of the database: (url, error).
fn error_rows(db: &std::path::Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT url, error FROM pages WHERE error IS NOT NULL ORDER BY url")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Crawls `https://site.test/` served with `cert`, trusting `ca`, robots.txt
/// ignored; returns the error rows, the summary's error counts and the
/// connections the server accepted.
async fn refused(
    cert: &rcgen::CertifiedKey<rcgen::KeyPair>,
    ca: Option<&str>,
) -> (Vec<(String, String)>, BTreeMap<String, u64>, usize) {
    let site = serve(cert, Arc::new(site_pages));
    let (dir, mut cfg) = config(site.addr, ca);
    cfg.ignore_robots = true;
    let summary = tokio::time::timeout(Duration::from_secs(60), common::run(cfg))
        .await
        .expect("the crawl ended");
    let db = dir.path().join("pages.db");
    assert!(common::stored_pages(&db).is_empty(), "{summary:?}");
    assert!(
        site.asked.lock().unwrap().is_empty(),
        "no request got through"
    );
    let accepted = site.accepted.load(Ordering::SeqCst);
    (error_rows(&db), summary.errors, accepted)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_certificate_is_a_tls_error_recorded_without_retries() {
    let (cert, _) = certificate(&["site.test"]);
    let (rows, errors, accepted) = refused(&cert, None).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].0, "https://site.test/");
    // The cause, as rustls names it: the issuer is not a trusted root.
    assert!(rows[0].1.starts_with("http tls:"), "{rows:?}");
    assert!(rows[0].1.contains("UnknownIssuer"), "{rows:?}");
    assert_eq!(errors.get("tls"), Some(&1), "{errors:?}");
    // One handshake: a certificate error is not retried (it was three
    // more, `MAX_RETRIES`, each after a back-off).
    assert_eq!(accepted, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_certificate_for_another_name_is_refused() {
    // The CA is trusted, but the certificate names other.test only.
    let (cert, pem) = certificate(&["other.test"]);
    let (rows, errors, accepted) = refused(&cert, Some(&pem)).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(rows[0].1.contains("not valid for name"), "{rows:?}");
    assert_eq!(errors.get("tls"), Some(&1), "{errors:?}");
    assert_eq!(accepted, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_txt_behind_an_untrusted_certificate_leaves_the_host_unreachable() {
    let (cert, _) = certificate(&["site.test"]);
    let site = serve(&cert, Arc::new(site_pages));
    let (dir, cfg) = config(site.addr, None);
    let summary = tokio::time::timeout(Duration::from_secs(60), common::run(cfg))
        .await
        .expect("the crawl ended");
    assert!(
        common::stored_pages(&dir.path().join("pages.db")).is_empty(),
        "{summary:?}"
    );
    // RFC 9309: an unreachable robots.txt disallows the host; the page is
    // never asked for, and nothing got past the handshake.
    assert_eq!(
        summary.errors.get("robots_unreachable"),
        Some(&1),
        "{summary:?}"
    );
    assert!(site.asked.lock().unwrap().is_empty());
    assert_eq!(site.accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_from_http_to_https_is_followed() {
    let (cert, pem) = certificate(&["site.test"]);
    let site = serve(&cert, Arc::new(site_pages));
    // The plain site moved: every path to the same path over TLS, on the
    // TLS site's port (URLs carry their ports here, so one name serves both).
    let tls_port = site.addr.port();
    let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_port = plain.local_addr().unwrap().port();
    tokio::spawn(common::serve_raw(plain, move |path| {
        let to = format!("https://site.test:{tls_port}{path}");
        (
            "301 Moved Permanently",
            format!("text/html\r\nLocation: {to}"),
            Vec::new(),
        )
    }));
    let (dir, mut cfg) = config(site.addr, Some(&pem));
    cfg.seeds = vec![format!("http://site.test:{plain_port}/b")];
    cfg.fetch.resolve = vec![ResolveRule::parse("site.test=127.0.0.1").unwrap()];
    let summary = common::run(cfg).await;
    let db = dir.path().join("pages.db");
    let stored = common::stored_pages(&db);
    let want = format!("https://site.test:{tls_port}/b");
    assert_eq!(stored, BTreeSet::from([want.clone()]), "{summary:?}");
    let rows = mgz_crawl::store::stored_urls(&db).unwrap();
    let hop = format!("http://site.test:{plain_port}/b");
    assert!(
        rows.iter()
            .any(|(u, status, _)| *u == hop && *status == 301),
        "{rows:?}"
    );
    assert!(summary.errors.is_empty(), "{summary:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insecure_accepts_untrusted_and_misnamed_certificates() {
    // `--insecure`: what the two tests above refuse, crawled as a trusted
    // site would be.
    for names in [["site.test"], ["other.test"]] {
        let (cert, _) = certificate(&names);
        let site = serve(&cert, Arc::new(site_pages));
        let (dir, mut cfg) = config(site.addr, None);
        cfg.fetch.accept_invalid_certs = true;
        let summary = common::run(cfg).await;
        let stored = common::stored_pages(&dir.path().join("pages.db"));
        assert_eq!(stored.len(), 3, "{names:?}: {stored:?} {summary:?}");
        assert!(summary.errors.is_empty(), "{names:?}: {summary:?}");
    }
}

/// A CONNECT proxy on a free loopback port: every tunnel goes to `to`,
/// whatever it asks for (the proxy resolves names, not the crawler); the
/// targets asked are logged.
async fn connect_proxy(to: SocketAddr) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let asked = Arc::<Mutex<Vec<String>>>::default();
    let log = asked.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match client.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
                log.lock().unwrap().push(line);
                let Ok(mut server) = tokio::net::TcpStream::connect(to).await else {
                    return;
                };
                if client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
                    .is_ok()
                {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    (addr, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_through_a_proxy_tunnels_and_still_checks_the_certificate() {
    let (cert, pem) = certificate(&["site.test"]);
    let site = serve(&cert, Arc::new(site_pages));
    let (proxy, tunnels) = connect_proxy(site.addr).await;
    // Trusted: the pages come through the tunnel.
    let (dir, mut cfg) = config(site.addr, Some(&pem));
    cfg.fetch.proxy = Some(format!("http://{proxy}"));
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    assert_eq!(stored.len(), 3, "{stored:?} {summary:?}");
    let tunnels = tunnels.lock().unwrap().clone();
    assert!(!tunnels.is_empty());
    for t in &tunnels {
        // The proxy is asked for the host by name, on https's port.
        assert!(t.starts_with("CONNECT site.test:443 "), "{tunnels:?}");
    }
    // Not trusted: the tunnel opens, the certificate is still refused.
    let (proxy, _) = connect_proxy(site.addr).await;
    let (dir, mut cfg) = config(site.addr, None);
    cfg.fetch.proxy = Some(format!("http://{proxy}"));
    cfg.ignore_robots = true;
    let summary = common::run(cfg).await;
    assert!(common::stored_pages(&dir.path().join("pages.db")).is_empty());
    assert_eq!(summary.errors.get("tls"), Some(&1), "{summary:?}");
}
