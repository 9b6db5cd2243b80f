//! [`Frontier`]: opening, recovery and the shared plumbing of every operation.
//!
//! Concurrency: one mutex guards the in-memory [`Table`]; every write builds
//! one fjall batch under that mutex (so the seen set, the counters and the
//! store change together) and then waits for group commit *outside* it, so
//! concurrent writers share fsyncs. URL parsing happens before the lock.
//! `put_discovered` also commits its batch after releasing the lock, in the
//! order batches were decided (`order`); every other operation drains those
//! commits when it takes the lock ([`Frontier::lock`]).

use std::sync::{Arc, Mutex, MutexGuard};

use mgz_seen::SeenSet;

use crate::clock::{Clock, SystemClock};
use crate::commit::{Commit, Committer, Durability};
use crate::error::{FrontierError, Result};
use crate::records::{CrawlRec, DEFAULT_DELAY_MS, QueueRec, crawl_meta_key};
use crate::seenidx::SharedLog;
use crate::store::{Store, StoreOptions};
use crate::table::{Crawl, Table};
use crate::types::MAX_KEY_LEN;

/// Builds an empty seen set for a crawl.
pub type SeenFactory = Arc<dyn Fn() -> Box<dyn SeenSet> + Send + Sync>;

/// How to open a frontier.
#[derive(Clone)]
pub struct FrontierOptions {
    /// When writes are acknowledged (default: group commit every 50 ms).
    pub durability: Durability,
    /// Cache and memtable sizes of the store.
    pub store: StoreOptions,
    /// Seen-set backend for each crawl (default: `mgz_seen::hash::HashSeen`).
    pub seen: SeenFactory,
    /// Time source (default: system clock).
    pub clock: Arc<dyn Clock>,
    /// Canonicalisation policy applied to every URL.
    pub policy: mgz_url::Policy,
    /// A "seen" answer of a backend whose false-positive rate per lookup is
    /// at most this is trusted without reading the store (default 1e-9:
    /// `fingerprint`'s 2^-36 ≈ 1.5e-11 qualifies, `bloom`'s 1% does not).
    /// 0 checks every "seen" answer of a probabilistic backend in the store.
    pub trust_seen_fpr: f64,
}

impl Default for FrontierOptions {
    fn default() -> Self {
        FrontierOptions {
            durability: Durability::default(),
            store: StoreOptions::default(),
            seen: Arc::new(|| Box::new(mgz_seen::hash::HashSeen::new())),
            clock: Arc::new(SystemClock),
            policy: mgz_url::Policy::safe(),
            trust_seen_fpr: 1e-9,
        }
    }
}

impl std::fmt::Debug for FrontierOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrontierOptions")
            .field("durability", &self.durability)
            .field("store", &self.store)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

/// The durable, fair and polite frontier (PowerCache). `Send + Sync`: share it
/// with an `Arc`; every method takes `&self`.
pub struct Frontier {
    pub(crate) store: Store,
    pub(crate) committer: Committer,
    pub(crate) table: Mutex<Table>,
    pub(crate) opts: FrontierOptions,
    /// The seen log (`None`: the backend has no snapshot form).
    pub(crate) seen_log: Option<SharedLog>,
    /// Held while a snapshot is written (one at a time).
    pub(crate) snapshotting: Mutex<()>,
    /// Order of the commits made outside the table lock.
    pub(crate) order: crate::order::CommitOrder<crate::put::CommitJob>,
    /// Run by `put_discovered` between its two holds of the table lock
    /// (tests only: see `put`).
    #[cfg(test)]
    pub(crate) between_holds: Mutex<Option<crate::put::Hook>>,
}

impl std::fmt::Debug for Frontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frontier")
            .field("dir", &self.store.dir)
            .finish_non_exhaustive()
    }
}

impl Frontier {
    /// Opens (or creates) the frontier stored in `dir`, rebuilding the
    /// in-memory queue heads and seen sets from the store.
    pub fn open(dir: impl AsRef<std::path::Path>, opts: FrontierOptions) -> Result<Frontier> {
        let started = std::time::Instant::now();
        let store = Store::open(dir.as_ref(), opts.store)?;
        let store_s = started.elapsed().as_secs_f64();
        let mut table = Table::load(&store, &opts.seen)?;
        // A cut journal may have split batches across keyspaces (see `repair`).
        let mut trust_snapshot = true;
        if store.journal_cut {
            let counts = crate::repair::count(&store)?;
            if !counts.agree(&table) {
                let r = counts.write(&store, table.next_seq)?;
                tracing::warn!(
                    queues = r.queues,
                    next_seq = r.next_seq,
                    "journal cut in its middle: queue counters recounted, seen sets rebuilt \
                     from the store"
                );
                table = Table::load(&store, &opts.seen)?;
                trust_snapshot = false;
            }
        }
        let seen_log = crate::seenidx::load(&store, &mut table, &opts, trust_snapshot)?
            .map(|log| Arc::new(Mutex::new(log)));
        table.logging = seen_log.is_some();
        tracing::info!(
            store_s,
            load_s = started.elapsed().as_secs_f64() - store_s,
            queues = table.queues.len(),
            "frontier opened"
        );
        let committer = Committer::start(
            store.db.clone(),
            store.db_dir(),
            opts.durability,
            seen_log.clone(),
        )?;
        Ok(Frontier {
            store,
            committer,
            table: Mutex::new(table),
            opts,
            seen_log,
            snapshotting: Mutex::new(()),
            order: crate::order::CommitOrder::default(),
            #[cfg(test)]
            between_holds: Mutex::new(None),
        })
    }

    /// The table, once the store holds every change it records (commits
    /// of `put_discovered` still under way are waited for).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Table> {
        let t = self.lock_undrained();
        self.order.drain();
        t
    }

    /// [`Frontier::lock`] once no `put_discovered` call is between its two
    /// holds of the lock (see [`Table::seen_staged`]; no new one starts
    /// while it waits): every key in a seen set then belongs to a decided
    /// batch, committed once this returns.
    pub(crate) fn lock_unstaged(&self) -> MutexGuard<'_, Table> {
        loop {
            let mut t = self.lock_undrained();
            if t.seen_staged == 0 {
                t.staging_paused = false;
                self.order.drain();
                return t;
            }
            t.staging_paused = true;
            drop(t);
            // Each is one seen-set batch insert away (tens of µs).
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }

    /// [`Frontier::lock`] for an operation that reads pending entries: also
    /// moves the discovery log into the segments (see `dlog`), so the store
    /// holds every change the table has where reads look.
    pub(crate) fn lock_store(&self) -> Result<MutexGuard<'_, Table>> {
        let t = self.lock_undrained();
        self.settle()?;
        Ok(t)
    }

    /// Waits for the commits under way (see `order`) and moves the
    /// discovery log; the caller holds the table lock, so nothing is added
    /// meanwhile.
    pub(crate) fn settle(&self) -> Result<()> {
        self.order.drain();
        (self.store.move_dlog()).map_err(|e| crate::store::explain(e, &self.store.dir))
    }

    /// The table, possibly ahead of the store by the batches of
    /// `put_discovered` calls still committing: for `put_discovered`, which
    /// drains before any store read (see `order`).
    pub(crate) fn lock_undrained(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn now_ms(&self) -> u64 {
        self.opts.clock.now_ms()
    }

    /// Writes the seen-log frame of this write (before the store may hold
    /// the batch), commits `batch` and registers it with the group committer.
    /// A failure poisons the committer (see [`Committer::poison`]).
    pub(crate) fn commit(&self, t: &mut Table, batch: fjall::OwnedWriteBatch) -> Result<Commit> {
        let outcome = self
            .log_frame(t)
            .and_then(|mark| self.commit_marked(batch, mark));
        if let Err(e) = &outcome {
            self.committer.poison(e);
        }
        outcome
    }

    /// Commits `batch`, whose seen-log frame (if any) ends at `mark`, with
    /// that mark (see [`crate::store::note_log_mark`]), and registers it with
    /// the group committer.
    pub(crate) fn commit_marked(
        &self,
        mut batch: fjall::OwnedWriteBatch,
        mark: Option<(u64, u64)>,
    ) -> Result<Commit> {
        if let Some(m) = mark {
            crate::store::note_log_mark(&self.store.meta, &mut batch, m);
        }
        batch
            .commit()
            .map_err(|e| crate::store::explain(e.into(), &self.store.dir))?;
        self.committer.written(mark)
    }

    /// Writes the seen-log frame of the write under way; returns its mark.
    pub(crate) fn log_frame(&self, t: &mut Table) -> Result<Option<(u64, u64)>> {
        let mark = self.log_frame_of(&t.log_buf);
        t.log_buf.clear();
        mark
    }

    /// Writes `records` (a write's seen-log records, taken from the table)
    /// as one frame; returns its mark. Callers outside the table lock call
    /// it in their commit turn (see `order`), so frames keep decision order.
    pub(crate) fn log_frame_of(&self, records: &[u8]) -> Result<Option<(u64, u64)>> {
        let Some(log) = &self.seen_log else {
            return Ok(None);
        };
        if records.is_empty() {
            return Ok(None);
        }
        let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
        let appended = l.append(records);
        Ok(Some((l.generation(), appended?)))
    }

    /// Makes every write so far durable now (fsync), without waiting for the group interval.
    pub fn flush(&self) -> Result<()> {
        self.committer.sync_now()
    }

    /// Closes: makes every write durable, flushes the memtables to tables
    /// (so the next open replays no journal) and writes a seen snapshot (so
    /// the next open restores instead of rebuilding). Dropping without
    /// `close` is safe too: the next open replays the seen log. The flush
    /// comes first so that the memtables are freed before the snapshot
    /// holds a copy of the seen sets (peak RSS at close).
    pub fn close(self) -> Result<()> {
        self.checkpoint()
    }

    /// What [`Frontier::close`] does, leaving the frontier open: for an
    /// owner that shares it (an `Arc`, as the crawler does) at the end of a
    /// run. Writes that come after it are replayed at the next open, as
    /// they would be without it.
    pub fn checkpoint(&self) -> Result<()> {
        self.committer.sync_now()?;
        self.store.flush_memtables()?;
        self.snapshot_seen()
    }

    /// Bytes the state directory takes on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.store.disk_bytes()
    }

    /// Heap bytes of the seen sets of every crawl.
    pub fn seen_bytes(&self) -> usize {
        self.lock()
            .crawls
            .values()
            .map(|c| c.seen.lock().heap_bytes())
            .sum()
    }

    /// Whether `get` serves URLs (see [`Frontier::set_active`]).
    pub fn is_active(&self) -> bool {
        self.lock().active
    }
}

/// Checks a crawl id and queue key against [`MAX_KEY_LEN`].
pub(crate) fn check_len(what: &str, s: &str) -> Result<()> {
    if s.len() > MAX_KEY_LEN {
        return Err(FrontierError::InvalidArgument(format!(
            "{what} is {} bytes, over {MAX_KEY_LEN}",
            s.len()
        )));
    }
    Ok(())
}

impl Table {
    /// The id of crawl `name`, creating it (record added to `batch`) if new.
    pub(crate) fn crawl_id(
        &mut self,
        name: &str,
        store: &Store,
        batch: &mut fjall::OwnedWriteBatch,
        seen: &SeenFactory,
    ) -> u32 {
        if let Some(&id) = self.crawl_ids.get(name) {
            return id;
        }
        let id = self.next_crawl;
        self.next_crawl += 1;
        let rec = CrawlRec {
            name: name.to_string(),
            default_delay_ms: DEFAULT_DELAY_MS,
        };
        batch.insert(&store.meta, crawl_meta_key(id), rec.encode());
        self.add_crawl(id, rec, seen);
        id
    }

    pub(crate) fn add_crawl(&mut self, id: u32, rec: CrawlRec, seen: &SeenFactory) {
        self.crawl_ids.insert(rec.name.clone(), id);
        self.next_crawl = self.next_crawl.max(id + 1);
        self.crawls.insert(
            id,
            Crawl {
                rec,
                seen: crate::table::SharedSeen::new(seen()),
                dirty: false,
            },
        );
    }

    /// The qid of `key` in `crawl`, creating the queue if new (its record is
    /// written by the caller once counters are final).
    pub(crate) fn queue_id(&mut self, crawl: u32, key: &str) -> u32 {
        self.queue_id_hashed(crawl, key, crate::keyindex::text_hash(key))
    }

    /// [`Table::queue_id`] with the key's `keyindex::text_hash` already computed.
    pub(crate) fn queue_id_hashed(&mut self, crawl: u32, key: &str, h: u64) -> u32 {
        if let Some(qid) = self.keys.find_hashed(&self.queues, crawl, key, h) {
            return qid;
        }
        let qid = self.next_qid;
        let rec = QueueRec {
            crawl,
            key: key.into(),
            ..QueueRec::default()
        };
        self.insert_queue(qid, rec);
        qid
    }

    /// Adds the full records of `qids` and the sequence counter to
    /// `batch`, folding pending counter records first (see `counters`).
    pub(crate) fn write_queues(
        &mut self,
        qids: impl IntoIterator<Item = u32>,
        store: &Store,
        batch: &mut fjall::OwnedWriteBatch,
    ) {
        self.fold_counters(store, batch);
        for qid in qids {
            if let Some(q) = self.queues.get_mut(&qid) {
                q.stored = true;
                batch.insert(&store.queues, qid.to_be_bytes(), q.rec.encode());
            }
        }
        batch.insert(&store.meta, b"seq", self.next_seq.to_le_bytes());
    }
}

/// A [`SeenFactory`] for the `mgz-seen` backend called `name` (`hash`,
/// `fingerprint`, `compact`, `bloom`, ...), sized for `expected` URLs per
/// crawl. Unknown names and impossible sizes are reported here, once, so
/// the factory itself cannot fail.
///
/// `fingerprint` and `compact` are taken in their split forms
/// (`fingerprint-parts`, `compact-parts`: 64 independent parts, see
/// `mgz_seen::parted`): an LSM set rebuilds its largest run when it merges,
/// and whole, at 10M URLs, that put a 48 MB copy of the set on top of the
/// frontier's peak RSS; split, a merge copies 1/64 of it.
pub fn seen_factory(name: &str, expected: usize) -> Result<SeenFactory, mgz_seen::SeenError> {
    let opts = mgz_seen::BackendOptions {
        expected,
        fpr: None,
    };
    let name = split_form(name);
    mgz_seen::backend(name, &opts)?;
    let name = name.to_string();
    Ok(Arc::new(move || {
        // Same arguments as the call above, which succeeded: the fallback is
        // unreachable, and keeps this closure free of panics.
        mgz_seen::backend(&name, &opts)
            .unwrap_or_else(|_| Box::new(mgz_seen::hash::HashSeen::new()))
    }))
}

/// The registry name the frontier builds for backend `name` (see
/// [`seen_factory`]).
pub fn split_form(name: &str) -> &str {
    match name {
        "fingerprint" => "fingerprint-parts",
        "compact" => "compact-parts",
        other => other,
    }
}
