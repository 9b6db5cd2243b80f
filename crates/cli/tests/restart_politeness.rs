//! Politeness across restarts: a crawl stopped (SIGKILL or SIGTERM) and
//! rerun at once still spaces each host's requests by the host's delay
//! (`--delay`, raised to its robots.txt `Crawl-delay`), counted from the
//! requests of the run before. Until session 48 a rerun started with fresh
//! gates and asked every busy host again within milliseconds of the last
//! request the stopped run had sent it.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mgz_sim::{Sim, SimConfig, SimServer};

mod common;
use common::sigterm;

/// `--delay` of these crawls.
const DELAY_MS: u64 = 700;
/// The sim's `Crawl-delay` (hosts whose robots.txt announces one).
const CRAWL_DELAY_MS: u64 = 1_200;

fn crawl(server: &SimServer, sim: &SimConfig, dir: &Path) -> Command {
    let mut c = common::sim_crawl_paced(server, sim, dir, 5, DELAY_MS, 1);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    c
}

/// The shortest gap the crawl owes `host`: its `Crawl-delay` when its
/// robots.txt has one, else `--delay`.
fn owed_ms(sim: &Sim, host: &str) -> u64 {
    let robots = sim.respond(host, "/robots.txt").rendered;
    let text = String::from_utf8_lossy(&robots.body);
    if robots.status == 200 && text.contains("Crawl-delay") {
        CRAWL_DELAY_MS.max(DELAY_MS)
    } else {
        DELAY_MS
    }
}

#[test]
fn a_crawl_stopped_and_rerun_at_once_still_spaces_each_hosts_requests() {
    let mut sim = SimConfig::small(23, 6, 400);
    sim.crawl_delay_secs = CRAWL_DELAY_MS as f32 / 1000.0;
    let model = Sim::new(&sim).unwrap();
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    // Each run is stopped while every host still has pages queued: SIGKILL,
    // SIGTERM (a clean stop), SIGKILL; each rerun starts at once.
    let stops = [("KILL", 2_500), ("TERM", 3_000), ("KILL", 3_000)];
    let mut restarts_us = Vec::new();
    let mut requests_before = 0;
    for (signal, after_ms) in stops {
        restarts_us.push(server.log().last().map_or(0, |r| r.time_us));
        let mut child = crawl(&server, &sim, dir.path()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(after_ms));
        assert!(
            child.try_wait().unwrap().is_none(),
            "the crawl ended before its stop"
        );
        if signal == "KILL" {
            child.kill().unwrap();
        } else {
            sigterm(&child);
        }
        child.wait().unwrap();
        let requests = server.log().len();
        assert!(
            requests > requests_before,
            "a run sent no request: its restart waited more than its delay"
        );
        requests_before = requests;
    }

    let mut by_host: HashMap<String, Vec<u64>> = HashMap::new();
    for r in server.log() {
        by_host.entry(r.host).or_default().push(r.time_us);
    }
    let mut across_restarts = 0;
    for (host, mut times) in by_host {
        times.sort_unstable();
        // Arrival stamps carry a little scheduling jitter; the gates space
        // request starts, so allow 5 ms.
        let min_gap_us = owed_ms(&model, &host) * 1000 - 5_000;
        for w in times.windows(2) {
            let restart = restarts_us.iter().any(|&t| w[0] <= t && t < w[1]);
            across_restarts += usize::from(restart);
            assert!(
                w[1] - w[0] >= min_gap_us,
                "{host}: two requests {} ms apart (owed {} ms){}",
                (w[1] - w[0]) / 1000,
                min_gap_us / 1000 + 5,
                if restart { ", across a restart" } else { "" }
            );
        }
    }
    // The check covered gaps that span a restart, host by host.
    assert!(
        across_restarts >= 6,
        "{across_restarts} gaps across restarts"
    );
}
