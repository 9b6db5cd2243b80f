//! Crash safety: a child process puts and completes URLs, printing each
//! acknowledged one, and is killed with SIGKILL at random moments, 20 times
//! over the same state directory (every other time only after its first
//! acknowledged completion, see `run_child`). Afterwards every acknowledged URL must be
//! there with its acknowledged state, and no completed URL may be served.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use mgz_frontier::{Frontier, FrontierOptions, GetParams, KnownItem, StoreOptions, UrlItem};
use rand::Rng;

const ROUNDS: usize = 20;

/// Options of child and parent: `disc` segments of 32 URLs, so the kills
/// also land while a segment's keyspace is being made and first written.
/// With `moves`, the discovery log moves into the segments every 2 KiB
/// (each batch) from the put's commit turn, always as ingested tables (see the crate's
/// `dlog`), so the kills also land inside those moves.
fn opts(moves: bool) -> FrontierOptions {
    let mut store = StoreOptions {
        segment_bits: 5,
        ..StoreOptions::default()
    };
    if moves {
        store.disc_memtable_bytes = 2048;
        store.dlog_ingest_min = 1;
    }
    FrontierOptions {
        store,
        ..FrontierOptions::default()
    }
}

/// Whether this child runs with [`opts`]`(true)`.
fn child_moves() -> bool {
    std::env::var_os("MGZ_CRASH_MOVES").is_some()
}

/// The child: writes until killed. Run only by `sigkill_at_random_moments`.
#[test]
#[ignore = "child process of sigkill_at_random_moments"]
fn crash_child() {
    let dir = std::env::var("MGZ_CRASH_DIR").expect("run by the crash test");
    let round = std::env::var("MGZ_CRASH_ROUND").unwrap();
    let moves = child_moves();
    let f = Frontier::open(&dir, opts(moves)).unwrap();
    let mut out = std::io::stdout().lock();
    writeln!(out, "READY").unwrap();
    out.flush().unwrap();
    let mut previous: Vec<String> = Vec::new();
    for b in 0.. {
        let urls: Vec<String> = (0..16)
            .map(|i| format!("http://h{}.crash.test/r{round}/b{b}/i{i}", i % 5))
            .collect();
        let items: Vec<_> = urls.iter().map(|u| UrlItem::new(u.as_str())).collect();
        f.put_discovered(&items).unwrap();
        for u in &urls {
            writeln!(out, "D {u}").unwrap();
        }
        // With moves, completions (which move the log first) only every
        // other batch, so the put's own threshold moves it in between.
        let take = match (moves, b % 2) {
            (false, _) => 8,
            (true, 0) => 16,
            (true, _) => 0,
        };
        let done: Vec<_> = previous
            .iter()
            .take(take)
            .map(|u| KnownItem {
                item: UrlItem::new(u.as_str()),
                next_fetch: 0,
            })
            .collect();
        f.put_known(&done).unwrap();
        for d in &done {
            writeln!(out, "K {}", d.item.url).unwrap();
        }
        out.flush().unwrap();
        previous = urls;
    }
}

/// Runs one child until killed; returns the lines it printed.
fn run_child(dir: &std::path::Path, round: usize, moves: bool, rng: &mut impl Rng) -> Vec<String> {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    if moves {
        cmd.env("MGZ_CRASH_MOVES", "1");
    }
    let mut child = cmd
        .args(["--exact", "crash_child", "--ignored", "--nocapture"])
        .env("MGZ_CRASH_DIR", dir)
        .env("MGZ_CRASH_ROUND", round.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // Even rounds: armed once the child is writing. Odd rounds: once it
    // has acknowledged its first completion, so every other kill lands
    // after completions and moves have begun however slow the machine is
    // (a loaded CI host once let most rounds end before any completion).
    let after_completion = round % 2 == 1;
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut armed = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let ready = match after_completion {
                false => line == "READY",
                true => line.starts_with("K "),
            };
            if ready && !armed {
                armed = true;
                let _ = tx.send(());
            }
            lines.push(line);
        }
        lines
    });
    // Kill only once armed, at a random moment after.
    let _ = rx.recv_timeout(Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(rng.random_range(20..400)));
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    reader.join().unwrap()
}

#[test]
fn sigkill_at_random_moments() {
    kill_and_check(false);
}

#[test]
fn sigkill_while_the_discovery_log_moves() {
    kill_and_check(true);
}

fn kill_and_check(moves: bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::rng();
    let mut acked: HashMap<String, bool> = HashMap::new(); // url -> completed
    for round in 0..ROUNDS {
        for line in run_child(dir.path(), round, moves, &mut rng) {
            if let Some(u) = line.strip_prefix("D ") {
                acked.entry(u.to_string()).or_insert(false);
            } else if let Some(u) = line.strip_prefix("K ") {
                acked.insert(u.to_string(), true);
            }
        }
    }
    let completed = acked.values().filter(|c| **c).count();
    eprintln!(
        "{} URLs acknowledged ({completed} completed) over {ROUNDS} kills",
        acked.len()
    );
    assert!(
        acked.len() > 100 && completed > 50,
        "the children acknowledged too little"
    );
    let f = Frontier::open(dir.path(), opts(moves)).unwrap();
    for (url, completed) in &acked {
        let rec = f
            .url_status("", url, None)
            .unwrap_or_else(|e| panic!("{url} lost: {e}"));
        if *completed {
            assert_eq!(rec.next_fetch, 0, "{url} was acknowledged completed");
        }
    }
    f.set_delay("", None, 0).unwrap();
    let served: HashSet<String> = f
        .get(&GetParams::default())
        .unwrap()
        .into_iter()
        .map(|r| r.url)
        .collect();
    // A URL acknowledged pending may since have been completed by a write
    // that was durable but not yet acknowledged: the store decides.
    for url in acked.keys() {
        let stored_completed = f.url_status("", url, None).unwrap().next_fetch == 0;
        assert_ne!(served.contains(url), stored_completed, "{url}");
    }
}
