//! Proxies: the crawl connects directly unless `--proxy` names one, so an
//! `http_proxy` in the environment cannot silently send it elsewhere (past
//! `--resolve` and the SSRF guard, which a proxy's own name lookups
//! escape); with `--proxy` every request goes through that proxy.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

const HOST: &str = "px.test";

fn site(path: &str) -> (&'static str, String, Vec<u8>) {
    // A proxy is sent the absolute URL, a server the path.
    let path = path.strip_prefix("http://px.test").unwrap_or(path);
    let html = |b: &str| ("200 OK", "text/html".to_string(), b.as_bytes().to_vec());
    match path {
        "/robots.txt" => ("404 Not Found", "text/plain".into(), Vec::new()),
        "/" => html("<a href=/a.html>a</a><a href=http://10.0.0.1/private>p</a>"),
        _ => html("<title>a</title>"),
    }
}

/// One test (the environment is the process's): environment proxies are
/// ignored, then an explicit proxy is used.
#[test]
fn environment_proxies_are_ignored_and_an_explicit_proxy_is_used() {
    // A proxy that refuses every connection, as the environment names it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    for var in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
    ] {
        // SAFETY: set before the runtime and any other thread of this test
        // binary (its only test) exist.
        unsafe { std::env::set_var(var, &dead) };
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // Directly, through `--resolve`, whatever the environment says.
        let (dir, mut cfg) = common::raw_host(HOST, site).await;
        cfg.robots_retries = 0;
        cfg.fetch.connect_timeout = Duration::from_secs(5);
        let summary = tokio::time::timeout(Duration::from_secs(60), common::run(cfg))
            .await
            .expect("crawl bounded");
        let stored = common::stored_pages(&dir.path().join("pages.db"));
        common::assert_stored(&stored, HOST, &["", "a.html"], &summary);

        // Through an explicit proxy on loopback: it sees absolute URLs for
        // px.test, which nothing resolves here; the private IP-literal link
        // is refused without reaching it; the guard is on (no
        // `allow_private`), yet the proxy the user named is reachable.
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = seen.clone();
        let (dir, mut cfg) = common::raw_host(HOST, move |target: &str| {
            log.lock().unwrap().push(target.to_string());
            site(target)
        })
        .await;
        // The server is the proxy, named, and resolved to loopback by a
        // `--resolve` rule: the guard trusts the proxy's name, and only its
        // name is resolved here.
        let addr = cfg.fetch.resolve[0].addr();
        let rule = mgz_crawl::net::ResolveRule::parse(&format!("proxy.test={addr}")).unwrap();
        cfg.fetch.resolve = vec![rule];
        cfg.fetch.proxy = Some(format!("http://proxy.test:{}", addr.port()));
        cfg.fetch.allow_private = false;
        cfg.fetch.connect_timeout = Duration::from_secs(5);
        cfg.robots_retries = 0;
        cfg.scope = mgz_crawl::traps::Scope::Any;
        let summary = tokio::time::timeout(Duration::from_secs(60), common::run(cfg))
            .await
            .expect("crawl bounded");
        let stored = common::stored_pages(&dir.path().join("pages.db"));
        common::assert_stored(&stored, HOST, &["", "a.html"], &summary);
        let seen = seen.lock().unwrap().clone();
        for target in [
            "http://px.test/",
            "http://px.test/a.html",
            "http://px.test/robots.txt",
        ] {
            assert!(seen.iter().any(|t| t == target), "{target} not in {seen:?}");
        }
        assert!(!seen.iter().any(|t| t.contains("10.0.0.1")), "{seen:?}");
        assert!(summary.errors.contains_key("ssrf_blocked"), "{summary:?}");
    });
}
