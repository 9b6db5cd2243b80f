//! The bound on response bodies held at once (`--body-memory`,
//! `mgz_crawl::body_budget`): concurrent fetches of large bodies hold at most
//! the budget plus each body's free first 256 KiB plus one body on the
//! overdraft, every body still arrives whole, and a budget smaller than one
//! body still lets the crawl through.

mod common;

use std::sync::Arc;
use std::time::Duration;

use mgz_crawl::body_budget::FREE;
use mgz_crawl::fetch::{FetchConfig, Fetcher};
use mgz_crawl::net::ResolveRule;

use common::*;

const MIB: usize = 1 << 20;

/// Body of `/big{i}`: `size` bytes, all `i as u8`, inside a tiny page.
fn big_body(i: usize, size: usize) -> Vec<u8> {
    let mut b = b"<html><title>big</title><p>".to_vec();
    b.resize(size, b'a' + (i % 26) as u8);
    b
}

fn index_of(path: &str) -> Option<usize> {
    path.strip_prefix("/big")?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_bodies_stay_within_the_budget_and_arrive_whole() {
    const FETCHES: usize = 24;
    const SIZE: usize = 2 * MIB;
    const BUDGET: usize = 4 * MIB;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_raw(listener, |path| {
        let i = index_of(path).unwrap_or(0);
        ("200 OK", "text/html".to_string(), big_body(i, SIZE))
    }));
    let cfg = FetchConfig {
        body_budget: BUDGET,
        allow_private: true,
        resolve: vec![ResolveRule::parse(&format!("big.test={addr}")).unwrap()],
        ..FetchConfig::default()
    };
    let fetcher = Arc::new(Fetcher::new(&cfg).unwrap());
    let tasks: Vec<_> = (0..FETCHES)
        .map(|i| {
            let f = fetcher.clone();
            tokio::spawn(async move {
                let r = f.get(&format!("http://big.test/big{i}")).await.unwrap();
                // Held a while, as a page waiting to be parsed and stored.
                tokio::time::sleep(Duration::from_millis(100)).await;
                assert!(!r.truncated);
                assert_eq!(r.body, big_body(i, SIZE), "body {i}");
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let b = fetcher.body_budget();
    let bound = BUDGET + FETCHES * FREE + SIZE;
    eprintln!(
        "peak {} B of bodies (bound {bound}, unbounded {}), {} on the overdraft",
        b.peak_held(),
        FETCHES * SIZE,
        b.overdrafts()
    );
    assert!(b.peak_held() <= bound, "peak {} > {bound}", b.peak_held());
    assert!(b.peak_held() >= SIZE, "peak {}", b.peak_held());
    assert!(
        b.overdrafts() >= 1,
        "24 fetches of 2 MiB fit 4 MiB without waiting?"
    );
    assert_eq!(b.held(), 0, "every lease returned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_smaller_than_one_body_still_crawls_every_page() {
    const PAGES: usize = 12;
    const SIZE: usize = 3 * MIB;
    let (dir, mut cfg) = raw_host("big.test", |path| {
        if path == "/" {
            let links: String = (0..PAGES)
                .map(|i| format!("<a href=\"/big{i}\">{i}</a>"))
                .collect();
            return ("200 OK", "text/html".into(), links.into_bytes());
        }
        let i = index_of(path).unwrap_or(0);
        ("200 OK", "text/html".into(), big_body(i, SIZE))
    })
    .await;
    cfg.fetch.body_budget = MIB;
    cfg.concurrency = 8;
    cfg.per_host = 8;
    let summary = run(cfg).await;
    let stored = stored_pages(&dir.path().join("pages.db"));
    assert_eq!(stored.len(), PAGES + 1, "{stored:?} {summary:?}");
    assert!(summary.bytes >= (PAGES * SIZE) as u64, "{summary:?}");
    assert!(summary.errors.is_empty(), "{summary:?}");
}
