//! The seen index across restarts: restore from snapshot + log, or rebuild
//! from the store; and taking snapshots (at close and when the log grows).
//!
//! ```text
//! open:  seen.snap ok? ──yes──▶ restore each crawl's set ─▶ replay seen-<g>.log, seen-<g+1>.log …
//!          │                                                  └─▶ append to the last, or start the
//!          │                                                      next if it ends in unmarked frames
//!          │ no / corrupt / backend without snapshot form        │ log corrupt (not a torn tail), or
//!          │                                                     │ the store's "slog" mark past what
//!          │                                                     │ the log kept (`log_covers`)
//!          ▼                                                     ▼
//!        rebuild: one scan of the `urls` keys and `sched`  ◀─────┘
//!          └─▶ write a fresh snapshot (gen g+1) and an empty log
//! snapshot: under the table lock stream every set into seen.snap.tmp (no copy
//!   of the sets) and switch to a new log generation; outside it fsync the
//!   store, then fsync and rename the snapshot into place, delete old logs.
//! ```
//! Backends without a snapshot form (`snapshot_len()` is `None`) get no log at all (nothing could use
//! it): they are rebuilt from the store at every open, as before.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use mgz_seen::SeenSet;

use crate::codec::url_key;
use crate::error::{FrontierError, Result};
use crate::frontier::{Frontier, SeenFactory};
use crate::seenlog::{self, Replay, SeenLog};
use crate::snapshot::{self, Body, CrawlPart};
use crate::store::Store;
use crate::table::{SharedSeen, Table};

/// Log bytes after which a put triggers a new snapshot.
pub const SNAPSHOT_AFTER_LOG_BYTES: u64 = 128 << 20;

/// The shared seen log (the committer appends durable marks to it).
pub type SharedLog = Arc<Mutex<SeenLog>>;

/// Fills the seen sets of `table` (control records already loaded); returns
/// the log to append to, or `None` when the backend has no snapshot form.
/// Without `trust_snapshot` (the journal was cut, see `repair`) the sets are
/// rebuilt from the store whatever the snapshot and log say.
pub fn load(
    store: &Store,
    table: &mut Table,
    opts: &crate::FrontierOptions,
    trust_snapshot: bool,
) -> Result<Option<SeenLog>> {
    let (factory, policy) = (&opts.seen, &opts.policy);
    let dir = store.dir.as_path();
    if factory().snapshot_len().is_none() {
        crate::recover::rebuild_seen(store, table, policy)?;
        remove_all(dir)?;
        return Ok(None);
    }
    match trust_snapshot.then(|| restore(store, table, factory)) {
        Some(Ok(Some(log))) => return Ok(Some(log)),
        Some(Ok(None)) | None => {}
        Some(Err(e @ FrontierError::Io { .. })) => return Err(e),
        Some(Err(e)) => {
            tracing::warn!(error = %e, "seen snapshot or log unusable: rebuilding from the store");
        }
    }
    for c in table.crawls.values_mut() {
        c.seen = SharedSeen::new(factory());
        c.dirty = false;
    }
    crate::recover::rebuild_seen(store, table, policy)?;
    let generation = log_generations(dir)?.last().map_or(0, |g| g + 1);
    let log = SeenLog::create(dir, generation)?;
    let sets = locked(table);
    let parts = parts(&sets).ok_or_else(|| {
        FrontierError::corrupt("seen snapshot", "backend stopped giving snapshots")
    })?;
    snapshot::stream(dir, generation, &parts)?.publish(dir)?;
    remove_logs_before(dir, generation)?;
    Ok(Some(log))
}

/// Snapshot + logs into `table`; `Ok(None)` when there is no snapshot.
fn restore(store: &Store, table: &mut Table, factory: &SeenFactory) -> Result<Option<SeenLog>> {
    let dir = store.dir.as_path();
    let Some(file) = snapshot::read_bytes(dir)? else {
        return Ok(None);
    };
    // Borrowed: the sets' bytes are not copied out of the file before restore.
    let snap = snapshot::SnapshotView::parse(&file)?;
    let want = factory().name();
    for c in &snap.crawls {
        // A set saved whole before the frontier split it (same stem)
        // restores whole and keeps working.
        if c.backend != want && crate::frontier::split_form(c.backend) != want {
            return Err(FrontierError::corrupt(
                "seen snapshot",
                format!("backend {} but {want} was asked for", c.backend),
            ));
        }
    }
    for (id, crawl) in table.crawls.iter_mut() {
        let Some(c) = snap.crawls.iter().find(|c| c.id == *id) else {
            crawl.seen = SharedSeen::new(factory());
            crawl.dirty = false;
            continue;
        };
        crawl.seen = SharedSeen::new(
            mgz_seen::restore(c.backend, c.bytes)
                .map_err(|e| FrontierError::corrupt("seen snapshot", e.to_string()))?,
        );
        crawl.dirty = c.dirty;
    }
    let first = snap.generation;
    drop(file); // before the log replay grows the sets
    let mut generation = first;
    let mut kept = Vec::new();
    let mut unmarked_tail = false;
    while let Some(replay) = seenlog::read(dir, generation)? {
        apply(store, table, &replay)?;
        kept.push((generation, replay.good_len));
        unmarked_tail = replay.unmarked_tail;
        generation += 1;
    }
    if let Some((g, end)) = crate::store::stored_log_mark(&store.meta)?
        && !log_covers(first, &kept, (g, end))
    {
        return Err(FrontierError::corrupt(
            "seen log",
            format!(
                "the store holds a batch whose frame ends at byte {end} of seen-{g}.log, which the log no longer has"
            ),
        ));
    }
    let last = kept.last().copied();
    let mut log = match last {
        // Frames after the last durable mark are those of writes that
        // died between their frame and their batch (a kill, a full disk):
        // their keys were taken only where the store has them. The next
        // write's mark would cover them (a mark vouches for every frame
        // before it in its file), and the next replay would trust keys
        // the store never got: seen, never stored, never served. So the
        // writes go on in a new generation; this one keeps its tail
        // checked at every replay until a snapshot retires it.
        Some((g, len)) if unmarked_tail => {
            drop(SeenLog::append_at(dir, g, len)?); // cuts a torn frame off
            SeenLog::create(dir, g + 1)?
        }
        Some((g, len)) => SeenLog::append_at(dir, g, len)?,
        None => SeenLog::create(dir, first)?,
    };
    let older = kept.iter().filter(|&&(g, _)| g < log.generation());
    log.set_older(older.map(|&(_, len)| len).sum());
    Ok(Some(log))
}

/// Whether the frame ending at `end` of log generation `g` (the store's
/// mark of its newest batch) survived: generations before the snapshot's
/// (`first`) are in the snapshot; the others must have been replayed at
/// least that far (`kept`: generation, good length).
///
/// A power cut can keep a batch while losing its frame: the seen log is
/// fsynced before the journal, but a batch committed between the two
/// fsyncs (or before one fjall makes on its own, at a flush) reaches the
/// disk in the journal while its frame, written to the OS just before it,
/// was not fsynced. Replaying such a log would leave those URLs stored but
/// unseen (a later put inserts them again); the caller rebuilds the sets
/// from the store instead.
fn log_covers(first: u64, kept: &[(u64, u64)], (g, end): (u64, u64)) -> bool {
    g < first || kept.iter().any(|&(k, len)| k == g && end <= len)
}

/// Applies one log file: dirty marks, trusted keys, and the other keys
/// only if the store has them (their batch may have died after the frame).
fn apply(store: &Store, table: &mut Table, r: &Replay) -> Result<()> {
    for id in &r.dirty {
        if let Some(c) = table.crawls.get_mut(id) {
            c.dirty = true;
        }
    }
    for k in &r.keys {
        // A write that died after its frame took sequence numbers its
        // counter record never stored: the writes after this open must not
        // take them again, or an untrusted key's position check below
        // (`pending_contains`) would find another URL there at a later
        // replay and take the dead key for stored (seen, never served).
        if let Some((_, seq)) = k.at {
            let next = (seq & !crate::disc::DISC).saturating_add(1);
            table.next_seq = table.next_seq.max(next);
        }
        let Some(c) = table.crawls.get_mut(&k.crawl) else {
            continue;
        };
        let in_sched = |pos| store.pending_contains(k.qid, pos);
        if k.trusted
            || store.urls.contains_key(url_key(k.qid, &k.key))?
            || k.at.map(in_sched).transpose()?.unwrap_or(false)
        {
            c.seen.lock().insert(&k.key);
        }
    }
    Ok(())
}

/// A crawl's id, dirty flag and locked set.
type Locked<'a> = (u32, bool, MutexGuard<'a, Box<dyn SeenSet>>);

/// Every crawl's id, dirty flag and locked set, ascending ids.
fn locked(table: &Table) -> Vec<Locked<'_>> {
    let mut sets: Vec<_> = (table.crawls.iter())
        .map(|(&id, c)| (id, c.dirty, c.seen.lock()))
        .collect();
    sets.sort_by_key(|s| s.0);
    sets
}

/// The sets of [`locked`], to stream as a snapshot; `None` if a set has
/// no snapshot form.
fn parts<'a>(sets: &'a [Locked<'_>]) -> Option<Vec<CrawlPart<'a>>> {
    let mut parts = Vec::with_capacity(sets.len());
    for (id, dirty, set) in sets {
        parts.push(CrawlPart {
            id: *id,
            dirty: *dirty,
            backend: set.name(),
            body: Body::set(&***set)?,
        });
    }
    Some(parts)
}

impl Frontier {
    /// Writes a seen snapshot now and starts a new, empty seen log, so the
    /// next open restores instead of replaying or rebuilding. Done by
    /// [`Frontier::close`] and automatically when the logs a replay reads
    /// pass 128 MiB; a no-op for backends without a snapshot form.
    pub fn snapshot_seen(&self) -> Result<()> {
        let Some(log) = &self.seen_log else {
            return Ok(());
        };
        let _one_at_a_time = self.snapshotting.lock().unwrap_or_else(|p| p.into_inner());
        let dir = self.store.dir.as_path();
        let (pending, next) = {
            let t = self.lock_unstaged();
            let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
            let next = l.generation() + 1;
            let sets = locked(&t);
            let Some(parts) = parts(&sets) else {
                return Ok(());
            };
            // Streamed under the lock, straight from the sets: no copy of
            // them (puts wait for the write to the page cache, ~0.1 s per
            // 48 MB; the fsync comes after the lock).
            let pending = snapshot::stream(dir, next, &parts)?;
            *l = SeenLog::create(dir, next)?;
            (pending, next)
        };
        // Every batch whose keys the snapshot holds was committed before the
        // switch: make them durable before the snapshot can vouch for them.
        self.store.db.persist(fjall::PersistMode::SyncAll)?;
        pending.publish(dir)?;
        remove_logs_before(dir, next)
    }

    /// Takes a snapshot if the logs a replay reads (this generation and any
    /// older ones still present) have grown past the threshold.
    pub(crate) fn maybe_snapshot(&self) -> Result<()> {
        let due = self.seen_log.as_ref().is_some_and(|log| {
            log.lock().unwrap_or_else(|p| p.into_inner()).replay_len() > SNAPSHOT_AFTER_LOG_BYTES
        });
        if due { self.snapshot_seen() } else { Ok(()) }
    }
}

/// Log generations present in `dir`, ascending.
pub(crate) fn log_generations(dir: &Path) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| FrontierError::io(dir, e))? {
        let e = e.map_err(|e| FrontierError::io(dir, e))?;
        let name = e.file_name();
        let g = name
            .to_str()
            .and_then(|n| n.strip_prefix("seen-"))
            .and_then(|n| n.strip_suffix(".log"))
            .and_then(|n| n.parse::<u64>().ok());
        out.extend(g);
    }
    out.sort_unstable();
    Ok(out)
}

fn remove_logs_before(dir: &Path, generation: u64) -> Result<()> {
    for g in log_generations(dir)? {
        if g < generation {
            let p = seenlog::log_path(dir, g);
            std::fs::remove_file(&p).map_err(|e| FrontierError::io(p, e))?;
        }
    }
    Ok(())
}

fn remove_all(dir: &Path) -> Result<()> {
    remove_logs_before(dir, u64::MAX)?;
    snapshot::remove(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mark in a generation before the snapshot's is covered by the
    /// snapshot; one in a replayed generation only up to what the replay
    /// kept; one in a generation that was not replayed never.
    /// After an open that starts a new generation (a dead tail), the
    /// snapshot is due by the bytes of every generation a replay reads.
    #[test]
    fn a_new_generation_counts_the_older_ones_toward_the_snapshot() {
        use crate::types::UrlItem;
        let dir = tempfile::tempdir().unwrap();
        let opts = || crate::FrontierOptions {
            durability: crate::Durability::OsBuffer,
            ..crate::FrontierOptions::default()
        };
        {
            let f = Frontier::open(dir.path(), opts()).unwrap();
            f.put_discovered(&[UrlItem::new("http://a.example/")])
                .unwrap();
        }
        let g = *log_generations(dir.path()).unwrap().last().unwrap();
        let path = seenlog::log_path(dir.path(), g);
        let len = std::fs::metadata(&path).unwrap().len();
        {
            // A frame with no mark after it: a write that died.
            let mut log = SeenLog::append_at(dir.path(), g, len).unwrap();
            let mut payload = Vec::new();
            seenlog::push_key(&mut payload, 0, 0, b"example.dead/");
            log.append(&payload).unwrap();
        }
        let older = std::fs::metadata(&path).unwrap().len();
        let f = Frontier::open(dir.path(), opts()).unwrap();
        let log = f.seen_log.as_ref().unwrap().lock().unwrap();
        assert_eq!(log.generation(), g + 1);
        let newest = std::fs::metadata(seenlog::log_path(dir.path(), g + 1)).unwrap();
        assert_eq!(log.replay_len(), older + newest.len());
    }

    #[test]
    fn the_log_covers_marks_up_to_what_it_kept() {
        let kept = [(4, 1000), (5, 300)];
        assert!(log_covers(4, &kept, (3, u64::MAX)), "before the snapshot");
        assert!(log_covers(4, &kept, (4, 1000)));
        assert!(!log_covers(4, &kept, (4, 1001)), "past a cut");
        assert!(log_covers(4, &kept, (5, 12)));
        assert!(!log_covers(4, &kept, (5, 301)));
        assert!(!log_covers(4, &kept, (6, 12)), "a generation lost whole");
        assert!(!log_covers(4, &[], (4, 12)), "no log left");
        assert!(log_covers(4, &[], (2, 12)));
    }
}
