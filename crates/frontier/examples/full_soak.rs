//! One run of a disk-full soak of the frontier (driven by
//! `crates/frontier/bench/full_soak.sh`, which mounts a small tmpfs and
//! grows it between runs).
//!
//! `full_soak DIR ACKS RUN`: opens the frontier in DIR (the crawler's
//! options: OS-buffer durability, the default seen set), checks that every
//! URL listed in ACKS (acknowledged by earlier runs) is known, then works
//! like a crawl until a write fails: puts batches of new URLs over 40 hosts,
//! leases URLs and completes them. Each acknowledged put's URLs are appended
//! to ACKS before the next write. Exit code 0: stopped by a failed write
//! with nothing lost; 3: an acknowledged URL is unknown, or a URL of a put
//! that failed two runs before is seen but not stored (printed);
//! 4: the open failed; 5: no write failed (the device did not fill).
//! The driver may also SIGKILL a run (`KILL=1`): each writer names its
//! batch in ACKS.pending.wN before putting it, and the next run takes those
//! as failed puts.

use std::io::{BufRead, Write};
use std::time::Duration;

use mgz_frontier::{
    Durability, Frontier, FrontierOptions, GetParams, KnownItem, PutOutcome, UrlItem,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, acks, run] = &args[..] else {
        eprintln!("usage: full_soak DIR ACKS RUN");
        std::process::exit(2);
    };
    let run: u64 = run.parse().expect("RUN is a number");
    let opts = FrontierOptions {
        durability: Durability::OsBuffer,
        ..FrontierOptions::default()
    };
    let f = match Frontier::open(dir, opts) {
        Ok(f) => f,
        Err(e) => {
            println!("run {run}: open failed: {e}");
            std::process::exit(4);
        }
    };
    let known: Vec<String> = std::fs::File::open(acks)
        .map(|r| {
            std::io::BufReader::new(r)
                .lines()
                .map_while(Result::ok)
                .collect()
        })
        .unwrap_or_default();
    let lost: Vec<&String> = known
        .iter()
        .filter(|u| f.url_status("", u, None).is_err())
        .collect();
    let total = known.len();
    fail_if_any(run, &lost, &format!("of {total} acknowledged URLs lost"));
    // The URLs of a put that failed were never acknowledged: the frontier
    // may know them or not, but as a whole: a URL it calls seen must be
    // stored (else it is never served, and never queued again). They are
    // checked two runs after their failure, not at once: like the links of
    // a page a crawl fetches again only later, they must survive a run of
    // other writes and a second stop first (the seen-log tail bug showed
    // only then: crates/frontier/tests/seen_log_tail.rs).
    let failed_path = format!("{acks}.failed");
    let older_path = format!("{acks}.failed.old");
    // Each writer names its batch before putting it: after a kill, the
    // batches in flight are those, acknowledged or not.
    let mut in_flight = String::new();
    for w in 0..WRITERS {
        let p = format!("{acks}.pending.w{w}");
        if let Ok(s) = std::fs::read_to_string(&p) {
            in_flight.push_str(&s);
            in_flight.push('\n');
            let _ = std::fs::remove_file(&p);
        }
    }
    if !in_flight.trim().is_empty() {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&failed_path)
            .expect("ACKS.failed opens");
        f.write_all(in_flight.as_bytes())
            .expect("ACKS.failed is written");
    }
    let failed: Vec<String> = std::fs::read_to_string(&older_path)
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default();
    let aged = std::fs::rename(&failed_path, &older_path).is_ok();
    let mut dropped = Vec::new();
    for u in &failed {
        if f.url_status("", u, None).is_ok() {
            continue;
        }
        match f.put_discovered(&[UrlItem::new(u.as_str())]) {
            Ok(o) if o.first() == Some(&PutOutcome::New) => {}
            Ok(o) => dropped.push(format!("{u}: {o:?}")),
            Err(e) => {
                println!("run {run}: put after open failed: {e}");
                return;
            }
        }
    }
    let total = failed.len();
    let what = format!("of {total} URLs of the failed put are seen but not stored");
    fail_if_any(run, &dropped, &what);
    // Those put again just now are acknowledged.
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(acks)
        .expect("ACKS opens");
    for u in &failed {
        writeln!(out, "{u}").expect("ACKS is written");
    }
    if !aged {
        let _ = std::fs::remove_file(&older_path); // checked, and not replaced
    }
    let out = std::sync::Mutex::new(out);
    let failed_out = std::sync::Mutex::new(Vec::<String>::new());
    // Writers at once, as a crawl's tasks: each puts, leases and completes
    // until one of its writes fails.
    let stopped: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (f, out, failed_out) = (&f, &out, &failed_out);
                s.spawn(move || work(f, acks, run, w, out, failed_out))
            })
            .collect();
        workers
            .into_iter()
            .filter_map(|h| h.join().ok().flatten())
            .collect()
    });
    let failed_now = failed_out.into_inner().unwrap_or_else(|p| p.into_inner());
    if !failed_now.is_empty() {
        std::fs::write(&failed_path, failed_now.join("\n")).expect("ACKS.failed is written");
    }
    if let Some(first) = stopped.first() {
        println!("run {run}: {first}");
        return;
    }
    println!("run {run}: no write failed");
    std::process::exit(5);
}

/// Writer threads per run.
const WRITERS: u64 = 3;

/// One writer: returns why it stopped (its first failed write), or `None`.
fn work(
    f: &Frontier,
    acks: &str,
    run: u64,
    w: u64,
    out: &std::sync::Mutex<std::fs::File>,
    failed_out: &std::sync::Mutex<Vec<String>>,
) -> Option<String> {
    let pad = "segment".repeat((run + w) as usize % 7 + 1);
    let pending = format!("{acks}.pending.w{w}");
    let get = GetParams {
        max_queues: 16,
        max_urls_per_queue: 4,
        delay_requestable: 600,
        ..GetParams::default()
    };
    for b in 0..200_000u64 {
        let urls: Vec<String> = (0..24)
            .map(|i| {
                format!(
                    "http://h{}.soak.test/r{run}/w{w}/b{b}/{pad}/{i}",
                    (b * 7 + i) % 40
                )
            })
            .collect();
        let items: Vec<UrlItem> = urls.iter().map(|u| UrlItem::new(u.as_str())).collect();
        std::fs::write(&pending, urls.join("\n")).expect("ACKS.pending is written");
        if let Err(e) = f.put_discovered(&items) {
            failed_out
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(urls);
            return Some(format!("put failed after {b} batches: {e}"));
        }
        {
            let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
            for u in &urls {
                writeln!(o, "{u}").expect("ACKS is written");
            }
            o.flush().expect("ACKS is written");
        }
        if b % 3 == w % 3 {
            let leased = match f.get(&get) {
                Ok(l) => l,
                Err(e) => return Some(format!("get failed after {b} batches: {e}")),
            };
            let done: Vec<KnownItem> = leased
                .iter()
                .map(|r| KnownItem::completed(r.url.clone()))
                .collect();
            if let Err(e) = f.put_known(&done) {
                return Some(format!("completion failed after {b} batches: {e}"));
            }
        }
        if b % 500 == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    None
}

/// Prints `found` (a count, `what`, and up to 10 of them) and exits with 3
/// unless it is empty.
fn fail_if_any(run: u64, found: &[impl std::fmt::Display], what: &str) {
    if found.is_empty() {
        return;
    }
    println!("run {run}: {} {what}, e.g.:", found.len());
    for u in found.iter().take(10) {
        println!("  {u}");
    }
    std::process::exit(3);
}
