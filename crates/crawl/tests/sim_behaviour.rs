//! Politeness, traps and redirect loops against the synthetic web.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_host_sees_its_delay() {
    let (sim, server) = small_sim(11, 12, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = crawl_config(&sim, &server, dir.path(), 2);
    cfg.delay = Duration::from_millis(150);
    cfg.per_host = 1;
    let summary = run(cfg).await;
    assert!(summary.pages_fetched > 20, "{summary:?}");
    let mut by_host: HashMap<String, Vec<(u64, String, u16)>> = HashMap::new();
    for r in server.log() {
        by_host
            .entry(r.host)
            .or_default()
            .push((r.time_us, r.path, r.status));
    }
    // Arrival stamps carry a little scheduling jitter on a loaded machine;
    // the gates space request *starts*, so allow 5 ms.
    let min_gap_us = 150_000 - 5_000;
    for (host, mut times) in by_host {
        times.sort_unstable();
        for w in times.windows(2) {
            assert!(
                w[1].0 - w[0].0 >= min_gap_us,
                "{host}: two requests {} µs apart: {w:?}",
                w[1].0 - w[0].0
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traps_are_bounded_and_loops_end() {
    let (sim, server) = small_sim(3, 20, 300).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = crawl_config(&sim, &server, dir.path(), 12);
    let summary = run(cfg).await;
    let stored = stored_pages(&dir.path().join("pages.db"));
    for url in &stored {
        assert!(mgz_sim::admissible(url), "stored a trap URL {url}");
    }
    assert!(summary.traps_cut > 0, "{summary:?}");
    // Every cut is counted under the limit that made it.
    assert_eq!(
        summary.traps_by_kind.values().sum::<u64>(),
        summary.traps_cut,
        "{summary:?}"
    );
    assert!(
        summary.errors.get("redirect_loop").copied().unwrap_or(0) > 0,
        "{summary:?}"
    );
    // Deep crawls of a small web stay small: the traps did not run away.
    assert!(summary.pages_fetched < 20 * 300, "{summary:?}");
    let truth: std::collections::BTreeSet<String> =
        mgz_sim::truth(&sim, 12, true).into_iter().collect();
    assert!(stored == truth, "{}", diff(&stored, &truth));
}
