//! A broad crawl under a low open-file limit (`mgz_crawl::sockets`): every
//! socket is a descriptor, and a crawl over hundreds of hosts used to keep
//! each host's connection open until its idle timeout, past a limit of
//! 512, and fail on its own store ("Too many open files"). Now the limit
//! is shared out (the store's files, the requests in flight, the idle
//! connections) and the crawl reaches the sim's truth; and `mgz` raises
//! its soft limit to the hard one before it starts.

mod common;

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use mgz_sim::SimConfig;

/// `mgz crawl` of `sim`'s seeds to depth 3 with robots.txt obeyed, 200
/// fetches in flight and a 100 ms delay (an idle connection is kept
/// 600 ms), under an open-file limit of `soft` and `hard`.
fn crawl(
    server: &mgz_sim::SimServer,
    sim: &SimConfig,
    dir: &Path,
    soft: u64,
    hard: u64,
) -> Command {
    let mut c = common::sim_crawl_wide(server, sim, dir, 3, (100, 2, 200));
    let lim = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: runs in the child between fork and exec; setrlimit is
    // async-signal-safe and `lim` is a plain struct copied into the closure.
    unsafe {
        c.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    c
}

/// This process's hard open-file limit.
fn hard_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    if ok { lim.rlim_max } else { 0 }
}

fn assert_truth(sim: &SimConfig, dir: &Path) {
    let truth: BTreeSet<String> = mgz_sim::truth(sim, 3, true).into_iter().collect();
    let got = common::urls_where(&dir.join("pages.db"), common::HTML_PAGES);
    let missing: Vec<_> = truth.difference(&got).take(5).collect();
    let extra: Vec<_> = got.difference(&truth).take(5).collect();
    assert!(got == truth, "missing {missing:?} extra {extra:?}");
}

#[test]
fn a_broad_crawl_fits_a_low_open_file_limit() {
    let mut sim = SimConfig::small(13, 400, 800);
    sim.crawl_delay_secs = 0.01;
    sim.seed_count = sim.hosts;
    // Pages spread over hosts evenly enough that no host's delay holds
    // the crawl's end for long.
    sim.zipf_exponent = 0.5;
    let server = common::start_sim(&sim);
    assert!(mgz_sim::seeds(&sim).len() >= 300, "a broad crawl");

    // Soft and hard limit 256: nothing to raise. The plan gives the store
    // 64 files and lowers --concurrency 200 to 32, so that the requests
    // in flight and the connections kept fit beside them.
    let tight = tempfile::tempdir().unwrap();
    let out = common::run_ok(&mut crawl(&server, &sim, tight.path(), 256, 256));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    eprintln!("{summary}");
    assert!(!log.contains("Too many open files"), "{log}");
    assert!(log.contains("--concurrency 200 lowered to 32"), "{log}");
    assert_truth(&sim, tight.path());

    // Soft 256 under this process's hard limit: `mgz` raises the soft one
    // first, so nothing is lowered.
    let hard = hard_limit();
    if hard < 4096 {
        eprintln!("the rest skipped: a hard open-file limit of {hard} leaves nothing to raise");
        return;
    }
    let raised = tempfile::tempdir().unwrap();
    let out = common::run_ok(&mut crawl(&server, &sim, raised.path(), 256, hard));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        !log.contains("lowered") && !log.contains("Too many open files"),
        "{log}"
    );
    assert_truth(&sim, raised.path());
}
