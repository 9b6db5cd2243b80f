//! The storage floor of `mgz bench frontier`: the same stream inserted into
//! a bare fjall keyspace (URL → empty value; no parsing, no dedupe, no
//! queues) in batches of 256, fsynced at most every 50 ms.
//!
//! It runs in a child process (`mgz bench frontier --baseline-only`) just
//! before the frontier phases: in the same process its memtables (fjall's
//! default 64 MiB) and the allocator's retained free memory would make up
//! most of the frontier's peak RSS at 1M URLs.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;

use super::frontier::Stream;

/// Runs [`put`] in a child process; returns its items per second.
pub fn in_child(dir: &Path, urls: u64, hosts: u64) -> anyhow::Result<f64> {
    let exe = std::env::current_exe().context("finding the mgz binary")?;
    let out = std::process::Command::new(exe)
        .args(["bench", "frontier", "--baseline-only"])
        .args(["--urls", &urls.to_string(), "--hosts", &hosts.to_string()])
        .arg("--dir")
        .arg(dir)
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running the baseline child")?;
    anyhow::ensure!(
        out.status.success(),
        "baseline child failed: {}",
        out.status
    );
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .with_context(|| format!("baseline child printed {text:?}"))
}

/// Inserts the `2 × urls` items of the stream into a fresh fjall database in
/// `dir` (removed after); returns items per second.
pub fn put(dir: &Path, urls: u64, hosts: u64) -> anyhow::Result<f64> {
    let db = fjall::Database::builder(dir).open()?;
    let ks = db.keyspace("urls", fjall::KeyspaceCreateOptions::default)?;
    let stream = Stream {
        urls,
        hosts: hosts.max(1),
    };
    let len = 2 * urls;
    let t = Instant::now();
    let mut last_sync = Instant::now();
    let mut batch = db.batch();
    for i in 0..len {
        batch.insert(&ks, stream.item(i).into_bytes(), []);
        if batch.len() == 256 || i + 1 == len {
            std::mem::replace(&mut batch, db.batch()).commit()?;
            if last_sync.elapsed().as_millis() >= 50 {
                db.persist(fjall::PersistMode::SyncData)?;
                last_sync = Instant::now();
            }
        }
    }
    db.persist(fjall::PersistMode::SyncData)?;
    let rate = len as f64 / t.elapsed().as_secs_f64();
    drop((ks, db));
    let _ = std::fs::remove_dir_all(dir);
    Ok(rate)
}
