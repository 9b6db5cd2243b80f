//! Fairness: 10 registrable domains, one of them spread over 1,000
//! subdomains, equal backlog; over 10,000 serves every domain gets a tenth
//! (within 20%), however the caller asks.

use std::collections::HashMap;
use std::sync::Arc;

use mgz_frontier::{
    Durability, Frontier, FrontierOptions, GetParams, KnownItem, ManualClock, UrlItem,
};

const PER_DOMAIN: usize = 2_000;

fn setup(dir: &std::path::Path) -> Frontier {
    let opts = FrontierOptions {
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        durability: Durability::OsBuffer,
        ..FrontierOptions::default()
    };
    let f = Frontier::open(dir, opts).unwrap();
    f.set_delay("", None, 0).unwrap();
    let mut items = Vec::new();
    for i in 0..PER_DOMAIN {
        items.push(UrlItem::new(format!("http://h{}.big.com/p{i}", i % 1000)));
        for d in 1..10 {
            items.push(UrlItem::new(format!("http://www.site{d}.org/p{i}")));
        }
    }
    for chunk in items.chunks(4096) {
        f.put_discovered(chunk).unwrap();
    }
    f
}

fn domain_of(url: &str) -> String {
    let host = url.split('/').nth(2).unwrap();
    let labels: Vec<_> = host.split('.').collect();
    labels[labels.len() - 2..].join(".")
}

fn shares(f: &Frontier, params: &GetParams) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    let mut served = 0;
    while served < 10_000 {
        let got = f.get(params).unwrap();
        assert!(!got.is_empty(), "backlog never runs out in this test");
        let done: Vec<_> = got.iter().map(|r| KnownItem::completed(&r.url)).collect();
        f.put_known(&done).unwrap();
        for r in got.into_iter().take(10_000 - served) {
            *counts.entry(domain_of(&r.url)).or_insert(0) += 1;
            served += 1;
        }
    }
    counts
}

fn assert_fair(counts: &HashMap<String, usize>) {
    assert_eq!(counts.len(), 10, "{counts:?}");
    for (domain, n) in counts {
        assert!(
            (800..=1200).contains(n),
            "{domain} got {n} of 10,000: {counts:?}"
        );
    }
}

#[test]
fn one_queue_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let f = setup(dir.path());
    let p = GetParams {
        max_queues: 1,
        max_urls_per_queue: 10,
        ..GetParams::default()
    };
    assert_fair(&shares(&f, &p));
}

#[test]
fn stormcrawler_style_calls() {
    let dir = tempfile::tempdir().unwrap();
    let f = setup(dir.path());
    let p = GetParams {
        max_queues: 10,
        max_urls_per_queue: 10,
        ..GetParams::default()
    };
    assert_fair(&shares(&f, &p));
}
