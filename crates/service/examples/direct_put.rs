//! Baseline for the `mgz serve` benchmark: the same file put straight into
//! PowerCache in batches, with no gRPC in between.
//! `cargo run --release -p mgz-service --example direct_put -- URLS STATE_DIR [BATCH] [osbuffer]`
//! (`osbuffer`: `Durability::OsBuffer`, no fsync, instead of the default group commit).
//!
//! Prints `direct put_discovered: N URLs in S s: R URLs/s`. Batches go through
//! the same pipelining as the server (up to 8 batches waiting for group commit
//! at once, on 8 threads), so the ratio measures the cost of the RPC layer.

use std::io::BufRead as _;
use std::sync::Arc;
use std::time::Instant;

use mgz_frontier::{Durability, Frontier, FrontierOptions, UrlItem};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let urls = args
        .next()
        .ok_or("usage: direct_put URLS STATE_DIR [BATCH]")?;
    let dir = args
        .next()
        .ok_or("usage: direct_put URLS STATE_DIR [BATCH]")?;
    let batch: usize = args.next().map(|b| b.parse()).transpose()?.unwrap_or(256);
    let mut options = FrontierOptions::default();
    if args.next().as_deref() == Some("osbuffer") {
        options.durability = Durability::OsBuffer;
    }
    let frontier = Arc::new(Frontier::open(&dir, options)?);
    let lines: Vec<String> = std::io::BufReader::new(std::fs::File::open(&urls)?)
        .lines()
        .collect::<Result<_, _>>()?;
    let chunks: Vec<Vec<String>> = lines.chunks(batch).map(<[String]>::to_vec).collect();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let chunks = Arc::new(chunks);
    let start = Instant::now();
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let (f, next, chunks) = (frontier.clone(), next.clone(), chunks.clone());
            std::thread::spawn(move || -> Result<u64, String> {
                let mut ok = 0;
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(chunk) = chunks.get(i) else {
                        return Ok(ok);
                    };
                    let items: Vec<UrlItem> = chunk.iter().map(UrlItem::new).collect();
                    ok += f.put_discovered(&items).map_err(|e| e.to_string())?.len() as u64;
                }
            })
        })
        .collect();
    let mut total = 0;
    for w in workers {
        total += w.join().map_err(|_| "worker panicked")??;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "direct put_discovered: {total} URLs in {secs:.2} s: {:.0} URLs/s",
        total as f64 / secs
    );
    Ok(())
}
