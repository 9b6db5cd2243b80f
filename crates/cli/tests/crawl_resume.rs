//! `mgz crawl --state DIR` killed with SIGKILL at random moments, then rerun:
//! it reaches exactly the sim's ground truth, and pages are fetched again
//! only if they were in flight at a kill; with `--warc`, the file reads
//! through and holds every stored page; SIGTERM and `--max-time` stop it
//! cleanly;
//! `--max-pages` is one budget for every run of the crawl; a smaller
//! `--max-depth` on a rerun fetches nothing deeper, and new `--exclude`
//! patterns apply to the URLs queued before; another `--policy` is refused;
//! a larger `--max-depth` follows the links the last depth had, killed or not.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mgz_sim::{SimConfig, SimServer};

mod common;
use common::warc_records;

use common::{CONCURRENCY, sigterm, sim_crawl};

fn crawl_cmd(server: &SimServer, sim: &SimConfig, dir: &Path) -> Command {
    let mut c = sim_crawl(server, sim, dir);
    c.stdout(Stdio::piped()).stderr(Stdio::null());
    c
}

fn stored(db: &Path) -> BTreeSet<String> {
    common::urls_where(db, common::HTML_PAGES)
}

/// Asserts that the crawl in `dir` stored exactly the sim's depth-3 truth;
/// returns it.
fn assert_truth(sim: &SimConfig, dir: &Path) -> BTreeSet<String> {
    let truth: BTreeSet<String> = mgz_sim::truth(sim, 3, true).into_iter().collect();
    let got = stored(&dir.join("pages.db"));
    let missing: Vec<_> = truth.difference(&got).take(5).collect();
    let extra: Vec<_> = got.difference(&truth).take(5).collect();
    assert!(got == truth, "missing {missing:?} extra {extra:?}");
    got
}

#[test]
fn sigkill_then_resume_reaches_the_truth() {
    let mut sim = SimConfig::small(5, 30, 600);
    sim.crawl_delay_secs = 0.05;
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    // Deterministic "random" kill moments between 0.3 and 1.5 s.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut kills = 0;
    for _ in 0..6 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let wait = Duration::from_millis(300 + x % 1200);
        let mut child = crawl_cmd(&server, &sim, dir.path()).spawn().unwrap();
        std::thread::sleep(wait);
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(kills >= 5, "only {kills} runs were still going when killed");
    let out = crawl_cmd(&server, &sim, dir.path()).output().unwrap();
    assert!(out.status.success(), "final run failed");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(summary["pages_fetched"].is_u64());

    let got = assert_truth(&sim, dir.path());

    // robots.txt is cached per process, so each run asks again; error pages
    // are retried by design. Every other repeat was in flight at a kill.
    let mut count: HashMap<(String, String), u32> = HashMap::new();
    for r in server.log() {
        if r.path != "/robots.txt" && !r.path.starts_with("/status/") {
            *count.entry((r.host, r.path)).or_default() += 1;
        }
    }
    let repeats: u32 = count.values().map(|n| n - 1).sum();
    assert!(
        repeats as usize <= kills * CONCURRENCY,
        "{repeats} repeated requests after {kills} kills with {CONCURRENCY} in flight"
    );
    eprintln!("{kills} kills, {repeats} repeated page requests");

    // `mgz status` on the stopped crawl: its totals agree with the database.
    let out = common::run_ok(
        Command::new(env!("CARGO_BIN_EXE_mgz"))
            .args(["status", "--json", "--state"])
            .arg(dir.path().join("state"))
            .arg("--db")
            .arg(dir.path().join("pages.db")),
    );
    let totals: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("pages.db")).unwrap();
    let rows: u64 = conn
        .query_row("SELECT count(*) FROM pages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(totals["fetched"], rows);
    assert_eq!(totals["in_flight"], 0, "nothing leased in a stopped crawl");
    assert!(
        totals["completed"].as_u64().unwrap() >= got.len() as u64,
        "{totals}"
    );
    let missing = Command::new(env!("CARGO_BIN_EXE_mgz"))
        .args(["status", "--state"])
        .arg(dir.path().join("no-such-state"))
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("holds no crawl state"));
}

/// With `--warc`, kills at random moments: the resumed crawl's file reads
/// through (a record torn by a kill is cut off before appending) and holds
/// a response for every page the database stored.
#[test]
fn sigkill_with_warc_keeps_every_stored_page_readable() {
    let mut sim = SimConfig::small(7, 20, 400);
    sim.crawl_delay_secs = 0.05;
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc");
    let crawl = || {
        let mut c = crawl_cmd(&server, &sim, dir.path());
        c.arg("--warc").arg(&warc);
        c
    };
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut kills = 0;
    for _ in 0..6 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut child = crawl().spawn().unwrap();
        std::thread::sleep(Duration::from_millis(200 + x % 1200));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(kills >= 4, "only {kills} runs were still going when killed");
    let out = crawl().output().unwrap();
    assert!(out.status.success(), "final run failed");

    let records = warc_records(&std::fs::read(&warc).unwrap());
    let responses: BTreeSet<&str> = records
        .iter()
        .filter(|(t, _)| t == "response")
        .map(|(_, u)| u.as_str())
        .collect();
    let urls = common::urls_where(&dir.path().join("pages.db"), "status > 0");
    assert!(urls.len() > 100, "{} pages", urls.len());
    let without: Vec<_> = urls
        .iter()
        .filter(|u| !responses.contains(u.as_str()))
        .take(5)
        .collect();
    assert!(
        without.is_empty(),
        "stored without a response record: {without:?}"
    );
    let infos = records.iter().filter(|(t, _)| t == "warcinfo").count();
    // One per run that opened the file before it was killed (a kill can
    // come before the open, or tear the warcinfo itself).
    assert!(
        (1..=7).contains(&infos),
        "{infos} warcinfo records for 7 runs"
    );

    // The Python reference reader, when CI made its venv.
    let venv = std::env::var_os("MGZ_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv"));
    let warcio = venv.join("bin/warcio");
    if !warcio.exists() {
        eprintln!("warcio check SKIPPED: no venv at {}", venv.display());
        return;
    }
    let out = Command::new(&warcio)
        .arg("index")
        .arg(&warc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "warcio index failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let indexed = String::from_utf8_lossy(&out.stdout).lines().count();
    assert_eq!(indexed, records.len(), "warcio read every record");
}

/// SIGTERM (what `docker stop`, systemd and Kubernetes send) stops the crawl
/// the way Ctrl-C does: in-flight fetches finish, the summary is printed,
/// exit 0; the same command then resumes to the truth. (It used to kill the
/// process outright: safe, but no summary and a signal exit.)
#[test]
fn sigterm_stops_cleanly_and_the_crawl_resumes() {
    let mut sim = SimConfig::small(9, 30, 600);
    sim.crawl_delay_secs = 0.05;
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    let child = crawl_cmd(&server, &sim, dir.path()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    sigterm(&child);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = summary["pages_fetched"].as_u64().unwrap();
    assert!(first > 0, "{summary}");
    let out = crawl_cmd(&server, &sim, dir.path()).output().unwrap();
    assert!(out.status.success());
    let truth: BTreeSet<String> = mgz_sim::truth(&sim, 3, true).into_iter().collect();
    let got = stored(&dir.path().join("pages.db"));
    assert!(
        got == truth,
        "{} stored, {} in the truth",
        got.len(),
        truth.len()
    );
    assert!(
        first < truth.len() as u64,
        "the first run was not stopped early"
    );
}

/// `--max-time`: the crawl stops itself the way Ctrl-C stops it (summary,
/// exit 0, nothing lost), and the same state goes on to the truth.
#[test]
fn max_time_stops_the_crawl_cleanly_and_a_rerun_goes_on() {
    let mut sim = SimConfig::small(13, 30, 600);
    sim.crawl_delay_secs = 0.05;
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    // 300 ms between requests to a host: the crawl needs several seconds.
    let started = std::time::Instant::now();
    let out = common::sim_crawl_paced(&server, &sim, dir.path(), 3, 300, 1)
        .args(["--max-time", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(err.contains("--max-time 1 s reached"), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = summary["pages_fetched"].as_u64().unwrap();
    assert!(first > 0, "{summary}");
    // Stopped near its limit, not at the crawl's end (a bound for a loaded
    // machine, not a timing claim).
    assert!(took < Duration::from_secs(30), "{took:?}");
    let out = crawl_cmd(&server, &sim, dir.path()).output().unwrap();
    assert!(out.status.success());
    let got = assert_truth(&sim, dir.path());
    assert!(
        first < got.len() as u64,
        "the first run was not stopped early"
    );
}

/// `pages_fetched` of a finished run's JSON summary.
fn fetched(out: &std::process::Output) -> u64 {
    assert!(out.status.success(), "{:?}", out.status);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    summary["pages_fetched"].as_u64().unwrap()
}

#[test]
fn max_pages_is_a_budget_for_every_run_of_a_crawl() {
    let sim = SimConfig::small(11, 30, 600);
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pages.db");
    let run = |max: &str| {
        let mut c = crawl_cmd(&server, &sim, dir.path());
        c.args(["--max-pages", max]).output().unwrap()
    };
    // Each fetch brings at most one response, and a run leases only what
    // its budget leaves (the sim has thousands of pages): exactly 40.
    let first = fetched(&run("40"));
    assert_eq!(first, 40);
    let rows = common::urls_where(&db, "1").len();
    // The same command again: the budget is spent, nothing is fetched (it
    // used to grant a fresh budget of 40 to every rerun).
    let out = run("40");
    assert_eq!(fetched(&out), 0);
    assert_eq!(common::urls_where(&db, "1").len(), rows);
    let budget = dir.path().join("state").join(mgz_crawl::budget::FILE);
    assert_eq!(
        std::fs::read_to_string(&budget).unwrap(),
        format!("{first}\n")
    );
    // A larger budget goes on from where the crawl stopped.
    let third = fetched(&run("70"));
    assert_eq!(third, 30);
    assert_eq!(
        std::fs::read_to_string(&budget).unwrap(),
        format!("{}\n", first + third)
    );
    // Another crawl (another state directory) has its own budget.
    let other = tempfile::tempdir().unwrap();
    let mut c = crawl_cmd(&server, &sim, other.path());
    assert_eq!(fetched(&c.args(["--max-pages", "5"]).output().unwrap()), 5);
}

#[test]
fn a_damaged_budget_file_stops_the_crawl_and_is_kept() {
    let sim = SimConfig::small(12, 5, 50);
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let budget = state.join(mgz_crawl::budget::FILE);
    std::fs::write(&budget, b"12 pages\n").unwrap();
    let out = crawl_cmd(&server, &sim, dir.path())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("state file") && err.contains("responses") && err.contains("not a count"),
        "{err}"
    );
    assert_eq!(std::fs::read(&budget).unwrap(), b"12 pages\n");
    assert!(!state.join("frontier").exists(), "nothing else was opened");
}

#[test]
fn a_smaller_max_depth_on_a_rerun_fetches_nothing_deeper() {
    let sim = SimConfig::small(13, 10, 200);
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pages.db");
    let run = |depth: u32, extra: &[&str]| {
        let mut c = common::sim_crawl_to(&server, &sim, dir.path(), depth);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c.args(extra).output().unwrap()
    };
    let deepest = || -> i64 {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("SELECT max(depth) FROM pages", [], |r| r.get(0))
            .unwrap()
    };
    // Breadth-first: 30 pages are the seeds and depth-1 pages, and the
    // links of those are queued at depth 2.
    assert_eq!(fetched(&run(3, &["--max-pages", "30"])), 30);
    assert_eq!(deepest(), 1);
    // Rerun to depth 1: the depth-1 pages are finished, the queued depth-2
    // URLs are not served (they were, before: 200-odd pages at depth 2).
    let out = run(1, &[]);
    assert!(fetched(&out) > 0);
    assert_eq!(deepest(), 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("deeper than --max-depth 1"), "{err}");
    // They stayed in the state: a rerun to depth 2 fetches them.
    assert!(fetched(&run(2, &[])) > 0);
    assert_eq!(deepest(), 2);
}

#[test]
fn an_exclude_added_on_a_rerun_applies_to_the_urls_queued_before() {
    let sim = SimConfig::small(14, 10, 200);
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pages.db");
    let run = |extra: &[&str]| {
        let mut c = crawl_cmd(&server, &sim, dir.path());
        c.stderr(Stdio::piped()).args(extra).output().unwrap()
    };
    // Half the hosts: `site-0.sim` .. `site-4.sim` (and their subdomains).
    const PATTERN: &str = r"site-[0-4]\.sim/";
    let matching = || {
        let re = regex::Regex::new(PATTERN).unwrap();
        let all = common::urls_where(&db, "1");
        all.iter().filter(|u| re.is_match(u)).count()
    };
    assert_eq!(fetched(&run(&["--max-pages", "30"])), 30);
    let before = matching();
    assert!(before > 0);
    let out = run(&["--exclude", PATTERN]);
    assert!(fetched(&out) > 0);
    // Nothing matching was fetched by the rerun (it used to fetch every
    // matching URL the first run had queued).
    assert_eq!(matching(), before);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("do not match this run's --include/--exclude"),
        "{err}"
    );
}

#[test]
fn a_rerun_with_another_policy_is_refused_and_the_crawl_goes_on_with_its_own() {
    let sim = SimConfig::small(15, 10, 200);
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut c = crawl_cmd(&server, &sim, dir.path());
        c.stderr(Stdio::piped()).args(extra).output().unwrap()
    };
    assert_eq!(fetched(&run(&["--max-pages", "30"])), 30);
    // `aggressive` strips the sim's `www.`: settles under other URLs than
    // the leases, which stalled the crawl for the 10-minute lease timeout.
    let out = run(&["--policy", "aggressive"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rerun with --policy safe"), "{err}");
    let out = run(&[]);
    assert!(fetched(&out) > 0);
    let truth: BTreeSet<String> = mgz_sim::truth(&sim, 3, true).into_iter().collect();
    assert_eq!(stored(&dir.path().join("pages.db")), truth);
}

/// Page requests per URL the sim served (robots.txt and status pages left out).
fn page_requests(server: &SimServer) -> HashMap<String, u32> {
    let mut count = HashMap::new();
    for r in server.log() {
        if r.path != "/robots.txt" && !r.path.starts_with("/status/") {
            *count
                .entry(format!("http://{}{}", r.host, r.path))
                .or_default() += 1;
        }
    }
    count
}

#[test]
fn a_larger_max_depth_on_a_rerun_follows_the_links_the_last_depth_had() {
    let sim = SimConfig::small(16, 20, 600);
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pages.db");
    let run =
        |depth: u32| common::run_ok(&mut common::sim_crawl_to(&server, &sim, dir.path(), depth));
    let truth =
        |depth| -> BTreeSet<String> { mgz_sim::truth(&sim, depth, true).into_iter().collect() };
    // Each deeper rerun reaches exactly the truth of its depth: the links
    // of the last depth's pages were kept (they were lost: a rerun found
    // nothing to do).
    let mut before = 0;
    for depth in 1..=3 {
        run(depth);
        let got = stored(&db);
        assert_eq!(got, truth(depth), "depth {depth}");
        assert!(
            got.len() > before,
            "depth {depth} added no page: a web too small to test"
        );
        before = got.len();
    }
    // No page of the truth was requested twice (a rerun at the same depth
    // fetches nothing either).
    run(3);
    let count = page_requests(&server);
    let twice: Vec<_> = truth(3)
        .into_iter()
        .filter(|u| count.get(u).copied().unwrap_or(0) != 1)
        .collect();
    assert!(twice.is_empty(), "requested other than once: {twice:?}");
}

#[test]
fn a_deeper_rerun_killed_at_random_moments_still_reaches_the_truth() {
    let mut sim = SimConfig::small(17, 30, 800);
    sim.crawl_delay_secs = 0.05;
    let server = common::start_sim(&sim);
    let dir = tempfile::tempdir().unwrap();
    common::run_ok(&mut common::sim_crawl_to(&server, &sim, dir.path(), 1));
    let edge = std::fs::read_to_string(dir.path().join("state/edge")).unwrap();
    assert!(edge.starts_with("mgz-edge 1\n2 http://"), "{edge:.200}");
    let mut kills = 0;
    for wait_ms in [150, 700, 400, 1100] {
        let mut child = common::sim_crawl_to(&server, &sim, dir.path(), 3)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(wait_ms));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(kills >= 3, "only {kills} runs were still going when killed");
    common::run_ok(&mut common::sim_crawl_to(&server, &sim, dir.path(), 3));
    let truth = assert_truth(&sim, dir.path());
    let repeats: u32 = page_requests(&server)
        .into_iter()
        .filter(|(u, _)| truth.contains(u))
        .map(|(_, n)| n - 1)
        .sum();
    assert!(
        repeats as usize <= kills * CONCURRENCY,
        "{repeats} repeated requests after {kills} kills with {CONCURRENCY} in flight"
    );
}
