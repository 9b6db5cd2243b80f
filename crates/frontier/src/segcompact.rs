//! Merges a filled `disc` segment's tables into one sorted run, on a
//! background thread, the first time a queue's URLs are read from it.
//!
//! ```text
//! DiscScan opens segment N < top ─ Segments::note_read ─▶ submit(disc.N) (once per open)
//!                       ─channel─▶ "mgz-segments" thread: major_compact(disc.N)
//! ```
//!
//! Why: a segment fills with ~18 flushed tables (1M synthetic URLs in
//! 8 MiB memtables; below the segments' level-0 threshold of 20, so none
//! is merged while it fills, see `StoreOptions::disc_l0_threshold`), each
//! spanning the segment's whole key range (keys go by queue, then seq).
//! Left so, every read of a queue's pending URLs seeks in each of them:
//! after a 10M-URL put into `mgz serve` with one stream, serving the 8M
//! due URLs (1,000 per queue) took 163 s where format 6 took 29 s
//! (docs/BENCHMARKS.md, "Session 18"). Merged once, a segment is one run
//! and a seek reads one table. Merging every segment as soon as the put
//! moved past it cost the 10M put phase 15 % more CPU; merging on the
//! first read leaves a put-only phase as it was, and a segment that is
//! never read is never merged.
//!
//! Invariants: at most one worker thread per store, started on the first
//! submit; dropping the compactor closes the channel and waits for the
//! thread, so no keyspace handle outlives the store (a reopen in the same
//! process would find the database still open). A failed compaction is
//! logged and changes nothing (fjall's compactions are atomic).

use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

use fjall::Keyspace;

/// The background merger of filled segments.
#[derive(Default)]
pub struct Compactor {
    tx: Mutex<Option<Sender<Keyspace>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl Compactor {
    /// Queues `ks` for a major compaction (skipped when it has at most one
    /// table by then).
    pub fn submit(&self, ks: Keyspace) {
        let mut tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        if tx.is_none() {
            let (send, recv) = channel::<Keyspace>();
            let spawned = std::thread::Builder::new()
                .name("mgz-segments".into())
                .spawn(move || {
                    for ks in recv {
                        if ks.table_count() <= 1 {
                            continue;
                        }
                        if let Err(e) = ks.major_compact() {
                            tracing::warn!("merging the tables of {}: {e}", ks.name());
                        }
                    }
                });
            match spawned {
                Ok(handle) => {
                    *self.worker.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
                    *tx = Some(send);
                }
                // Without a thread the segment stays as fjall leaves it.
                Err(e) => {
                    tracing::warn!("no thread to merge filled segments: {e}");
                    return;
                }
            }
        }
        if let Some(send) = tx.as_ref() {
            let _ = send.send(ks);
        }
    }
}

impl Drop for Compactor {
    fn drop(&mut self) {
        self.tx.get_mut().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(handle) = self
            .worker
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = handle.join();
        }
    }
}
