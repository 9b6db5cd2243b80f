//! `mgz demo`, the README's main command, end to end on a small synthetic
//! web: it crawls, prints the summary, the seen set's cost against a
//! `HashSet<String>` of the same URLs and an example search, and what it
//! prints agrees with the database it leaves (`--state`).

mod common;

use std::process::Command;

/// The number after `label` at the start of one of `out`'s lines.
fn number_after(out: &str, label: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} line in:\n{out}"));
    line[label.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number in {line:?}"))
}

/// The two `(N B/URL)` figures of the seen-set line: the set's, then the
/// `HashSet<String>`'s.
fn bytes_per_url(out: &str) -> (f64, f64) {
    let line = out
        .lines()
        .find(|l| l.starts_with("seen-set cost"))
        .unwrap_or_else(|| panic!("no seen-set line in:\n{out}"));
    let figures: Vec<f64> = line
        .split('(')
        .skip(1)
        .filter_map(|p| p.split_once(" B/URL)"))
        .filter_map(|(n, _)| n.parse().ok())
        .collect();
    assert_eq!(figures.len(), 2, "{line}");
    (figures[0], figures[1])
}

#[test]
fn the_demo_crawls_reports_and_searches() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("demo");
    let out = common::run_ok(Command::new(env!("CARGO_BIN_EXE_mgz")).args([
        "demo",
        "--hosts",
        "20",
        "--pages",
        "600",
        "--state",
        state.to_str().unwrap(),
    ]));
    let out = String::from_utf8_lossy(&out.stdout);
    let fetched = number_after(&out, "pages fetched");
    let stored = number_after(&out, "pages stored");
    assert!(stored > 0 && fetched >= stored, "{out}");
    // The summary's count is the database's pages stored with status 200.
    let db = state.join("pages.db");
    let rows = common::urls_where(&db, "status = 200").len() as u64;
    assert_eq!(rows, stored, "{out}");
    let (seen, hashset) = bytes_per_url(&out);
    assert!(seen > 0.0 && seen < hashset, "{out}");
    // The example search found pages of the synthetic web.
    let search = out
        .split_once("example: mgz search \"politeness\"")
        .unwrap_or_else(|| panic!("no example search in:\n{out}"))
        .1;
    let hits: Vec<&str> = (search.lines())
        .map(str::trim)
        .filter(|l| l.starts_with("http://") && l.contains(".sim/"))
        .collect();
    assert!(!hits.is_empty(), "{out}");
    // With --state the database stays, so there is no note about its removal.
    assert!(!out.contains("removed now"), "{out}");
    let stored_urls = common::urls_where(&db, "status = 200");
    for hit in hits {
        assert!(stored_urls.contains(hit), "{hit} is not a stored page");
    }
}

/// Without `--state` the demo's database lives in a temporary directory that
/// is gone when it exits: the output must not leave a user with a command
/// that fails, so it says the directory was removed and how to keep it.
#[test]
fn the_demo_without_state_says_its_database_is_gone() {
    let out = common::run_ok(
        Command::new(env!("CARGO_BIN_EXE_mgz")).args(["demo", "--hosts", "20", "--pages", "600"]),
    );
    let out = String::from_utf8_lossy(&out.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("example: mgz search"))
        .unwrap_or_else(|| panic!("no example search in:\n{out}"));
    let db = line
        .split_once("--db ")
        .unwrap_or_else(|| panic!("no --db in {line}"))
        .1;
    assert!(!std::path::Path::new(db).exists(), "{db} still exists");
    assert!(out.contains("temporary directory, removed now"), "{out}");
    assert!(out.contains("mgz demo --state DIR"), "{out}");
}

#[test]
fn the_demo_prints_its_summary_as_json() {
    let out = common::run_ok(
        Command::new(env!("CARGO_BIN_EXE_mgz"))
            .args(["demo", "--hosts", "20", "--pages", "600", "--json"]),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stored = v["pages_stored"].as_u64().unwrap();
    assert!(stored > 0, "{v}");
    assert!(v["pages_fetched"].as_u64().unwrap() >= stored, "{v}");
    assert_eq!(v["seen_backend"], "fingerprint", "{v}");
    assert!(v["seen_bytes"].as_u64().unwrap() > 0, "{v}");
}
