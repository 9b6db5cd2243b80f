//! The crawler against the synthetic web: the stored page set equals the
//! sim's ground truth exactly, depths 0–3, robots on and off, and no URL is
//! requested twice.

mod common;

use std::collections::{BTreeSet, HashMap};

use common::*;

use mgz_crawl::robots_cache::{CACHE_BUDGET, CACHE_CAPACITY};

async fn check(max_depth: u32, obey_robots: bool) {
    check_with(max_depth, obey_robots, CACHE_CAPACITY, CACHE_BUDGET).await;
}

/// [`check`] with at most `robots_cache` parsed robots.txt files, and
/// `robots_bytes` estimated bytes of them, in memory.
async fn check_with(max_depth: u32, obey_robots: bool, robots_cache: usize, robots_bytes: usize) {
    let (sim, server) = small_sim(7, 30, 600).await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = crawl_config(&sim, &server, dir.path(), max_depth);
    cfg.ignore_robots = !obey_robots;
    cfg.robots_cache = robots_cache;
    cfg.robots_cache_bytes = robots_bytes;
    let summary = run(cfg).await;
    let stored = stored_pages(&dir.path().join("pages.db"));
    let truth: BTreeSet<String> = mgz_sim::truth(&sim, max_depth, obey_robots)
        .into_iter()
        .collect();
    assert!(!truth.is_empty());
    let db = dir.path().join("pages.db");
    assert!(
        stored == truth,
        "depth {max_depth} robots {obey_robots}: {} {summary:?}",
        diff_db(&db, &stored, &truth)
    );
    // Each request's arrival (µs since the sim started) and status (0: the
    // connection was closed unanswered), so a failure says how it happened.
    let mut seen: HashMap<(String, String), Vec<(u64, u16)>> = HashMap::new();
    for r in server.log() {
        seen.entry((r.host, r.path))
            .or_default()
            .push((r.time_us, r.status));
    }
    let robots_files = seen.keys().filter(|(_, p)| p == "/robots.txt").count();
    if robots_cache < CACHE_CAPACITY {
        // More origins than the cache holds: some were dropped on the way.
        assert!(
            robots_files > robots_cache,
            "{robots_files} robots.txt files"
        );
    }
    if robots_bytes < CACHE_BUDGET {
        // The rule sets fetched add up to more than the budget.
        let conn = rusqlite::Connection::open(dir.path().join("state/robots.db")).unwrap();
        let mut st = conn
            .prepare("SELECT body FROM robots WHERE status = 200")
            .unwrap();
        let total: usize = st
            .query_map([], |r| r.get::<_, Vec<u8>>(0))
            .unwrap()
            .map(|b| mgz_crawl::robots::estimated_bytes(&b.unwrap()))
            .sum();
        assert!(total > 2 * robots_bytes, "{total} B of rules");
    }
    let repeats: Vec<_> = seen.iter().filter(|(_, n)| n.len() > 1).take(5).collect();
    // 429/503 answers are retried by design; the sim marks them under /status/.
    let repeats: Vec<_> = repeats
        .into_iter()
        .filter(|((_, p), _)| !p.starts_with("/status/"))
        .collect();
    // The crawl's error counts say why a page was fetched again (a retried
    // network error is the only way; one such flake was seen under load).
    assert!(
        repeats.is_empty(),
        "requested twice: {repeats:?}; crawl: {summary:?}"
    );
    assert!(summary.pages_fetched as usize >= truth.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truth_depth_0_to_3_robots_on() {
    for d in 0..=3 {
        check(d, true).await;
    }
}

/// With room for 12 parsed robots.txt files among 30 hosts, the others are
/// dropped and read back from the state's `robots.db`: the same pages, and
/// no robots.txt asked twice (the `requested twice` check above). (Eight of
/// the hosts have an unreachable robots.txt, which is not stored and is kept
/// in memory first: with room for fewer, they would be asked again early.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truth_with_room_for_twelve_robots_files() {
    check_with(3, true, 12, CACHE_BUDGET).await;
}

/// With 100 kB for parsed robots.txt files, two of the sim's rule sets with a
/// `$` rule (compiled to a regex, ~47 kB estimated each) fit at once; the
/// others are dropped and read back from `robots.db`: the same pages, and
/// no robots.txt asked twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truth_with_a_robots_budget_of_100_kb() {
    check_with(3, true, CACHE_CAPACITY, 100_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truth_depth_0_to_3_robots_off() {
    for d in 0..=3 {
        check(d, false).await;
    }
}
