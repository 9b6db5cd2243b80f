//! `mgz crawl`'s limit flags at work on the synthetic web: `--max-host-urls`
//! caps the URLs queued per host and counts the rest as traps cut,
//! `--max-path-depth` and `--max-url-length` cut URLs by shape, and
//! `--max-body` stores a longer page cut at the cap with the note
//! `truncated`. Each capped crawl is compared with an uncapped one of the
//! same web, so a cap that did nothing fails the test.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{sim_crawl_to, start_sim, urls_where};
use mgz_sim::SimConfig;

/// Runs `mgz crawl` of the sim to `depth` into `dir` with `extra` flags;
/// returns its JSON summary.
fn crawl_to(
    server: &mgz_sim::SimServer,
    sim: &SimConfig,
    dir: &Path,
    depth: u32,
    extra: &[&str],
) -> serde_json::Value {
    let out = common::run_ok(sim_crawl_to(server, sim, dir, depth).args(extra));
    // With --json, stdout is that one object.
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Rows of the `pages` table per host.
fn rows_per_host(db: &Path) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for u in urls_where(db, "1") {
        *m.entry(host_and_path(&u).0.to_string()).or_default() += 1;
    }
    m
}

/// Host and path (query cut) of an absolute `http://` URL.
fn host_and_path(u: &str) -> (&str, &str) {
    let rest = u.strip_prefix("http://").unwrap_or(u);
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p))
}

/// Path segments of `u` (`/a/b/c` has 3).
fn segments(u: &str) -> usize {
    host_and_path(u)
        .1
        .split('/')
        .filter(|s| !s.is_empty())
        .count()
}

#[test]
fn limit_flags_cap_what_is_queued_and_read() {
    let mut sim = SimConfig::small(7, 6, 400);
    // Hosts with a Crawl-delay would take most of the test's time.
    sim.crawl_delay_secs = 0.01;
    let server = start_sim(&sim);
    let free = tempfile::tempdir().unwrap();
    let base = crawl_to(&server, &sim, free.path(), 3, &[]);
    let db = free.path().join("pages.db");
    let rows = rows_per_host(&db);
    let all = urls_where(&db, "1");
    let most = *rows.values().max().unwrap();
    let deepest = all.iter().map(|u| segments(u)).max().unwrap();
    let longest = all.iter().map(String::len).max().unwrap();
    let cap = 8;
    eprintln!("uncapped: {rows:?}, deepest {deepest}, longest {longest}, {base}");
    assert!(
        most > cap,
        "the web must have a host with more than {cap} URLs"
    );
    assert!(deepest >= 2 && longest > 40);

    // The capped crawls, at once (the sim answers every request the same
    // way each time, so they do not disturb one another).
    let (max_depth, max_len) = (deepest - 1, longest - 1);
    let runs: Vec<(u32, Vec<String>)> = vec![
        // Robots off here: a URL robots.txt excludes is charged to its
        // host's budget but stored as no row, so a host could end below
        // the cap by chance of which URLs came first.
        (
            3,
            vec![
                "--max-host-urls".into(),
                cap.to_string(),
                "--ignore-robots".into(),
            ],
        ),
        (3, vec!["--max-path-depth".into(), max_depth.to_string()]),
        (3, vec!["--max-url-length".into(), max_len.to_string()]),
        (0, vec!["--max-body".into(), "1K".into()]),
    ];
    let dirs: Vec<_> = runs.iter().map(|_| tempfile::tempdir().unwrap()).collect();
    let sums: Vec<serde_json::Value> = std::thread::scope(|sc| {
        let handles: Vec<_> = runs
            .iter()
            .zip(&dirs)
            .map(|((depth, args), dir)| {
                let (server, sim) = (&server, &sim);
                sc.spawn(move || {
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    crawl_to(server, sim, dir.path(), *depth, &args)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let cut = |i: usize| sums[i]["traps_cut"].as_u64().unwrap();
    let base_cut = base["traps_cut"].as_u64().unwrap();
    let db_of = |i: usize| dirs[i].path().join("pages.db");

    // Per-host budget: no host past it, and one up to it (every URL
    // admitted is a row: fetched, failed or redirected).
    let capped = rows_per_host(&db_of(0));
    assert!(capped.values().all(|&n| n <= cap), "{capped:?}");
    assert!(capped.values().any(|&n| n == cap), "{capped:?}");
    assert!(cut(0) > base_cut);

    // Path depth and URL length.
    let stored = urls_where(&db_of(1), "1");
    assert!(stored.iter().all(|u| segments(u) <= max_depth));
    assert!(stored.len() < all.len());
    assert!(cut(1) > base_cut);
    let stored = urls_where(&db_of(2), "1");
    assert!(stored.iter().all(|u| u.len() <= max_len));
    assert!(stored.len() < all.len());
    assert!(cut(2) > base_cut);

    // Body cap: pages longer than 1 KiB are stored cut, with the note.
    let conn = rusqlite::Connection::open(db_of(3)).unwrap();
    let (rows, over, truncated): (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*), sum(bytes > 1024), sum(error = 'truncated') FROM pages",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert!(
        rows > 0 && truncated > 0,
        "{rows} rows, {truncated} truncated"
    );
    assert_eq!(over, 0);
    // Exactly the pages longer than the cap were cut (the uncapped crawl
    // read them whole).
    let cut_urls = urls_where(&db_of(3), "error = 'truncated'");
    let over_cap = urls_where(&db, "bytes > 1024");
    let seeds_over: std::collections::BTreeSet<String> = urls_where(&db_of(3), "1")
        .intersection(&over_cap)
        .cloned()
        .collect();
    assert_eq!(cut_urls, seeds_over);
}
