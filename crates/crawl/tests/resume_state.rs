//! What a resumed crawl remembers besides the frontier: robots.txt answers
//! (trusted 24 h, so not fetched again) and the per-host page budget; and
//! that a run that ends cleanly leaves its frontier checkpointed.

mod common;

use std::collections::{HashMap, HashSet};

use common::*;
use mgz_sim::SimServer;

/// `(host, path)` of the requests logged after the first `skip`.
fn requests_since(server: &SimServer, skip: usize) -> Vec<(String, String, u16)> {
    server
        .log()
        .into_iter()
        .skip(skip)
        .map(|r| (r.host, r.path, r.status))
        .collect()
}

fn robots_hosts(reqs: &[(String, String, u16)], definite: bool) -> HashSet<String> {
    reqs.iter()
        .filter(|(_, p, s)| p == "/robots.txt" && (!definite || (200..500).contains(s)))
        .map(|(h, _, _)| h.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_crawl_does_not_refetch_robots() {
    let (sim, server) = small_sim(21, 10, 120).await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = crawl_config(&sim, &server, dir.path(), 3);
    cfg.max_pages = 40;
    run(cfg.clone()).await;
    // The run ended cleanly: its frontier was checkpointed, so the resume
    // restores the seen snapshot instead of replaying a log of every URL.
    let frontier = dir.path().join("state/frontier");
    assert!(frontier.join("seen.snap").metadata().unwrap().len() > 64);
    for e in std::fs::read_dir(&frontier).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().starts_with("seen-") {
            let len = e.metadata().unwrap().len();
            assert!(len <= 64, "{:?}: {len} bytes", e.file_name());
        }
    }
    let first = requests_since(&server, 0);
    let answered = robots_hosts(&first, true);
    assert!(
        answered.len() >= 3,
        "first run read few robots.txt: {answered:?}"
    );
    cfg.max_pages = 0;
    run(cfg).await;
    let second = requests_since(&server, first.len());
    let again: Vec<_> = robots_hosts(&second, false)
        .intersection(&answered)
        .cloned()
        .collect();
    assert!(again.is_empty(), "robots.txt fetched again for {again:?}");
    // The resumed crawl still obeys them: it reaches the truth with robots on.
    let stored = stored_pages(&dir.path().join("pages.db"));
    let truth = mgz_sim::truth(&sim, 3, true).into_iter().collect();
    assert!(stored == truth, "{}", diff(&stored, &truth));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_robots_state_means_refetch_not_crash() {
    let (sim, server) = small_sim(22, 4, 60).await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = crawl_config(&sim, &server, dir.path(), 2);
    cfg.max_pages = 10;
    run(cfg.clone()).await;
    let first = requests_since(&server, 0);
    let answered = robots_hosts(&first, true);
    assert!(!answered.is_empty());
    let db = dir.path().join("state").join("robots.db");
    std::fs::write(&db, vec![0xa5; 64 * 1024]).unwrap();
    cfg.max_pages = 0;
    run(cfg).await;
    let second = requests_since(&server, first.len());
    let refetched = robots_hosts(&second, false);
    assert!(
        refetched.is_superset(&answered),
        "{refetched:?} ⊉ {answered:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_budget_keeps_counting_across_resume() {
    const BUDGET: u64 = 15;
    let (sim, server) = small_sim(23, 3, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = crawl_config(&sim, &server, dir.path(), 6);
    cfg.traps.host_budget = BUDGET;
    cfg.ignore_robots = true;
    cfg.max_pages = 8;
    run(cfg.clone()).await;
    cfg.max_pages = 0;
    let summary = run(cfg).await;
    assert!(summary.traps_cut > 0, "the budget never bit: {summary:?}");
    let mut per_host: HashMap<String, HashSet<String>> = HashMap::new();
    for (host, path, _) in requests_since(&server, 0) {
        per_host.entry(host).or_default().insert(path);
    }
    for (host, paths) in &per_host {
        assert!(
            paths.len() as u64 <= BUDGET,
            "{host}: {} distinct URLs fetched over two runs, budget {BUDGET}: {paths:?}",
            paths.len()
        );
    }
    assert!(
        per_host.values().any(|p| p.len() as u64 == BUDGET),
        "{per_host:?}"
    );
}
