//! Baseline for the `mgz serve` benchmark: the same file put straight into
//! PowerCache, with no gRPC in between, written the way a PutDiscovered
//! stream of `mgz serve` writes it (`rpc::pipeline`): chunks of up to 16,384
//! URLs, one `put_discovered_nowait` in flight, up to 8 written chunks waiting
//! for their group commit on a second thread. So the ratio server / baseline
//! is the cost of the RPC layer, not of a different write pattern.
//!
//! `cargo run --release -p mgz-service --example direct_put -- URLS STATE_DIR [CHUNK] [osbuffer] [put-only|loop-only] [seen=NAME]`
//! (`osbuffer`: `Durability::OsBuffer`, no fsync, instead of the default group commit;
//! `seen=NAME`: the seen-set backend, default `fingerprint` like `mgz serve`;
//! `put-only`: stop after the put; `loop-only`: no put and no drain, only the
//! crawler loop on a store already holding the URLs of `URLS`, delay 0).
//!
//! Then, on the same store with the crawl delay set to 0 (as the benchmark
//! does over gRPC), the library side of the two serving figures:
//! - drain: one `get` with no limits, leases of 1 s;
//! - crawler loop (after those leases ran out): `get` 100 per queue, every
//!   served URL completed by `put_known_nowait` in chunks of 8,192, the
//!   durability waits on the second thread; until every URL was served.
//!
//! Prints one line per phase: `direct <phase>: N URLs in S s: R URLs/s`.

use std::io::BufRead as _;
use std::time::Instant;

use mgz_frontier::{
    Commit, Durability, Frontier, FrontierOptions, GetParams, KnownItem, UrlItem, UrlRecord,
};

type Waits = std::sync::mpsc::SyncSender<Commit>;

const USAGE: &str =
    "usage: direct_put URLS STATE_DIR [CHUNK] [osbuffer] [put-only|loop-only] [seen=NAME]";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let urls = args.next().ok_or(USAGE)?;
    let dir = args.next().ok_or(USAGE)?;
    let chunk: usize = args
        .next()
        .map(|b| b.parse())
        .transpose()?
        .unwrap_or(16_384);
    let mut options = FrontierOptions::default();
    let mut seen = "fingerprint".to_owned();
    let (mut put_only, mut loop_only) = (false, false);
    for arg in args {
        match arg.strip_prefix("seen=") {
            Some(name) => seen = name.to_owned(),
            None if arg == "osbuffer" => options.durability = Durability::OsBuffer,
            None if arg == "put-only" => put_only = true,
            None if arg == "loop-only" => loop_only = true,
            None => return Err(format!("unknown argument {arg:?}; {USAGE}").into()),
        }
    }
    // The same expected size as `mgz serve`.
    options.seen = mgz_frontier::seen_factory(&seen, 10_000_000)?;
    let frontier = Frontier::open(&dir, options)?;
    let lines: Vec<String> = std::io::BufReader::new(std::fs::File::open(&urls)?)
        .lines()
        .collect::<Result<_, _>>()?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Commit>(8);
    let waiter = std::thread::spawn(move || -> Result<(), String> {
        for commit in rx {
            commit.wait().map_err(|e| e.to_string())?;
        }
        Ok(())
    });
    let total = if loop_only {
        lines.len()
    } else {
        let start = Instant::now();
        let total = put_all(&frontier, &lines, chunk, &tx)?;
        report("put_discovered", total, start);
        if put_only {
            return Ok(());
        }
        drain(&frontier)?;
        total
    };
    let start = Instant::now();
    let (served, t90) = crawl_loop(&frontier, total, &tx)?;
    report("crawler loop (get 100/queue + put_known)", served, start);
    println!("direct crawler loop: 90 % served in {t90:.2} s");
    drop(tx);
    waiter.join().map_err(|_| "waiter panicked")??;
    Ok(())
}

/// Delay 0, then one `get` with no limits; its 1 s leases have run out on return.
fn drain(frontier: &Frontier) -> mgz_frontier::Result<()> {
    frontier.set_delay("", None, 0)?;
    let start = Instant::now();
    let drained = frontier.get(&get_params(0, 1))?.len();
    report("drain (get, no limits)", drained, start);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    Ok(())
}

fn report(phase: &str, n: usize, start: Instant) {
    let secs = start.elapsed().as_secs_f64();
    println!(
        "direct {phase}: {n} URLs in {secs:.2} s: {:.0} URLs/s",
        n as f64 / secs
    );
}

fn get_params(per_queue: u32, lease_s: u32) -> GetParams {
    GetParams {
        max_urls_per_queue: per_queue,
        delay_requestable: lease_s,
        ..GetParams::default()
    }
}

/// PutDiscovered's write pattern: chunks written one at a time, waits aside.
fn put_all(
    f: &Frontier,
    lines: &[String],
    chunk: usize,
    tx: &Waits,
) -> mgz_frontier::Result<usize> {
    let mut total = 0;
    for part in lines.chunks(chunk.max(1)) {
        let items: Vec<UrlItem> = part.iter().map(UrlItem::new).collect();
        let (outcomes, commit) = f.put_discovered_nowait(&items)?;
        total += outcomes.len();
        if part.len() < chunk || total == lines.len() {
            commit.wait()?; // the last chunk: the put ends when it is durable
        } else if tx.send(commit).is_err() {
            break; // the waiter failed: its error is reported at the join
        }
    }
    Ok(total)
}

/// Serves and completes until `total` URLs were served or 5 s pass idle;
/// returns the URLs served and the seconds it took to serve 90 % of `total`.
fn crawl_loop(f: &Frontier, total: usize, tx: &Waits) -> mgz_frontier::Result<(usize, f64)> {
    let (start, mut t90) = (Instant::now(), f64::NAN);
    let (mut served, mut idle) = (0, Instant::now());
    while served < total && idle.elapsed().as_secs() < 5 {
        let recs = f.get(&get_params(100, 0))?;
        if recs.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(20));
            continue;
        }
        served += recs.len();
        if t90.is_nan() && served * 10 >= total * 9 {
            t90 = start.elapsed().as_secs_f64();
        }
        let done: Vec<KnownItem> = recs.into_iter().map(completed).collect();
        for part in done.chunks(8192) {
            let (_, commit) = f.put_known_nowait(part)?;
            if tx.send(commit).is_err() {
                return Ok((served, t90));
            }
        }
        idle = Instant::now(); // idle counts from the end of the completions
    }
    Ok((served, t90))
}

fn completed(r: UrlRecord) -> KnownItem {
    let item = UrlItem {
        crawl: r.crawl,
        url: r.url,
        key: Some(r.key),
        metadata: r.metadata,
        depth: r.depth,
        created: r.created,
    };
    KnownItem {
        item,
        next_fetch: 0,
    }
}
