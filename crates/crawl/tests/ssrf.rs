//! The SSRF guard refuses loopback, private and metadata addresses reached
//! through `--resolve`, without opening a connection, unless private
//! addresses are allowed.

mod common;

use std::net::TcpListener;

use mgz_crawl::net::ResolveRule;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guard_refuses_without_connecting() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = mgz_crawl::CrawlConfig {
        seeds: vec![
            "http://loop.test/".into(),
            "http://ten.test/".into(),
            "http://meta.test/latest".into(),
        ],
        state_dir: dir.path().join("state"),
        db: dir.path().join("pages.db"),
        scope: mgz_crawl::traps::Scope::Any,
        progress: false,
        ..mgz_crawl::CrawlConfig::default()
    };
    cfg.fetch.resolve = vec![
        ResolveRule::parse(&format!("loop.test=127.0.0.1:{port}")).unwrap(),
        ResolveRule::parse("ten.test=10.0.0.1:80").unwrap(),
        ResolveRule::parse("meta.test=169.254.169.254:80").unwrap(),
    ];
    let summary = common::run(cfg).await;
    assert_eq!(summary.errors.get("ssrf_blocked"), Some(&3), "{summary:?}");
    assert_eq!(summary.pages_fetched, 0);
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the guard let a connection through: {accepted:?}"
    );
    let rows = mgz_crawl::store::stored_urls(&dir.path().join("pages.db")).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|(_, status, _)| *status == 0));
}
