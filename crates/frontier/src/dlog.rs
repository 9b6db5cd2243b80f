//! The discovery log (`dlog.0`, `dlog.1`; format 10): where `put_discovered`
//! appends the entries of new URLs, in discovery order, until they are
//! moved into their `disc` segments in bulk.
//!
//! ```text
//! dlog.A  seq (8, BE, no flag) | qid (4, BE) | next fetch (8, BE)   20-byte key: a batch's first entry
//!         -> the batch's entries, each qid (4, BE) | seq (8, BE) | next (8, BE) | len (4, LE) | Body
//!   A = the active one of two keyspaces; one log entry per committed batch, the
//!   entries also kept in memory (`DlogState::buf`, bodies are views of the value)
//!         │ move: sort by (segment, qid, seq)
//!         ▼
//! disc.N  qid | seq | next -> Body   >= `dlog_ingest_min` entries: one table run
//!                                    written directly (fjall ingestion); fewer: one batch
//! then    dlog.A cleared (a journaled clear)
//! ```
//!
//! Why: a `disc` key starts with the queue id, so the URLs of one batch land
//! all over the top segment's memtable, and each insert into fjall's
//! skiplist walks down its levels in cold memory (at 10M URLs the batch
//! commit, run one at a time, was 27 % of the put's CPU, and the flushes of
//! those memtables another fifth). A `dlog` key starts with the sequence
//! number, which grows with every URL, so each insert lands at the end of
//! the skiplist, on the path the previous one warmed, and a batch's URLs
//! are one entry (a sequential insert still walks ~30 keys down the
//! skiplist: one per URL kept it at 16 % of the put's CPU); the sorted
//! entries then go to the segment as a table without passing through a
//! memtable.
//! One million 18-byte-key entries of 70 bytes into fjall 3.1 on this
//! machine: 2.9-3.4 µs each at random positions of 8 MiB memtables (flushes
//! included), 0.87 µs appended in order, 0.44 µs ingested sorted
//! (docs/BENCHMARKS.md, "Session 29").
//!
//! When entries move: once the active log passes
//! [`crate::StoreOptions::disc_memtable_bytes`], the commit turn that saw
//! it (`put`) makes the other keyspace active and hands the full one to a
//! mover thread, so puts go on while it is written (a move in the turn
//! itself held every writer for ~30-60 ms a time); if the previous move is
//! still running, the turn goes on appending and tries again next time.
//! Synchronously ([`Store::move_dlog`]): before any operation reads pending
//! entries (`Frontier::lock_store`, and `put_discovered`'s store checks),
//! which first waits for the mover; at open (what a crash left, read back
//! from both keyspaces) and at close. So a crawl that alternates small puts
//! and gets moves a few entries at a time, through one batch, much as it
//! wrote them before.
//!
//! Invariants:
//! - Every `disc` entry is in a log keyspace or in its segment. Between a
//!   move's write into the segment and its clear (or, for a quick
//!   synchronous move, the tombstones of its log keys: `Store::move_now`)
//!   it is in both, with the
//!   same key and value; a crash there leaves both and the next open moves
//!   it again, writing the same entry once more.
//! - `buf` holds exactly the entries of the active keyspace, and the mover's
//!   vector those of the other, unless `unread` is set (at open, or after a
//!   failed move): then the next synchronous move reads both keyspaces back.
//! - Nothing reads `disc` entries while a log holds any: reads take the
//!   table lock through `lock_store`, which waits for the mover and moves
//!   the active log; the open moves before it loads anything. So an entry
//!   is leased, completed or removed only once it is in its segment, and
//!   its tombstone is written after the move's clear (or log tombstones).
//! - Crash safety: an entry enters the log in the same fjall batch as its
//!   queue's counters and the sequence counter (atomic, as before). The
//!   ingestion's tables and version are fsynced before it returns, and a
//!   move's batch precedes its clear (or log tombstones, one batch) in the
//!   journal; that precedes every write made after the move. So a
//!   recovered journal that holds a tombstone of a moved entry holds that
//!   move's clear or log tombstones too: a moved entry never comes back
//!   from a log after it was removed.
//! - Entries are added to a log (and the active one switched) only in a
//!   commit turn, and a synchronous move runs with the commits drained
//!   under the table lock or at open and close; `state` orders the rest.
//!
//! Memory: the active log's memtable (up to `disc_memtable_bytes` of entries
//! and fjall's per-entry overhead, as the top segment's memtable before;
//! entries moved by quick moves count until the next clear, under their
//! tombstones),
//! the one being moved, and 48 bytes per URL of each in memory (`Moving`:
//! segment, queue, position and a 24-byte view; the bodies are views of the
//! log's value, shared with the memtable, not copied). The mover hands its
//! vector back emptied, kept as the next `buf` (so at most two vectors of a
//! full log's length exist, as before, and a new log's vector does not grow
//! by doubling into fresh pages inside commit turns).

use std::sync::MutexGuard;
use std::thread::JoinHandle;

use fjall::{Database, Keyspace, UserValue};

use crate::disc::{DISC, disc_key, seg_of};
use crate::error::{FrontierError, Result};
use crate::store::Store;
use crate::table::LeaseKey;

/// Names of the two log keyspaces.
pub const DLOG: [&str; 2] = ["dlog.0", "dlog.1"];

/// Key of the mark a move leaves in a log it clears: above every entry's
/// key (a sequence number with bit 63 set), with an empty value. fjall
/// deletes a journal only once each keyspace written in it has a table
/// holding a newer write; a log is cleared, never flushed, so without a
/// table it held every journal forever (a 10M put kept 2.3 GB of journals
/// and the next open replayed them all). The mark is flushed into a table
/// after a clear ([`write_moved`]; by synchronous moves at most every
/// [`MARK_EVERY`]) and skipped when a log is read.
const MARK_KEY: [u8; 20] = [0xff; 20];

/// Least time between two mark flushes of synchronous moves. Flushing
/// means waiting for fjall's flush worker (it polls every 10 ms), and a
/// crawl that alternates small puts and gets moves before every get: one
/// wait per move held its dispatcher ~10 ms each time (a 1,169-page crawl
/// served its first hundred pages in 250 ms; docs/BENCHMARKS.md, "Session
/// 33"). Between flushes a move leaves its mark in the log's memtable; the
/// next flush (a move after this interval, the mover, the close's
/// `flush_memtables`) writes it. A journal thus waits at most this much
/// longer for its deletion.
pub(crate) const MARK_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Entries of one segment a move writes as a table run instead of a batch
/// (the default of [`crate::StoreOptions::dlog_ingest_min`]).
/// An ingestion costs a table file, its fsync and a version write (a few
/// milliseconds) and flushes the segment's memtable; a batch costs a
/// memtable insert per entry.
pub const INGEST_MIN: usize = 16_384;

/// Bytes fjall counts per memtable entry besides its key and value.
const ENTRY_OVERHEAD: u64 = 64;

/// The active log grows to this many times its threshold while a move is
/// still running before a commit turn waits for that move.
const MAX_BEHIND: u64 = 4;

/// The 20-byte `dlog` key of a `disc` entry of queue `qid` at `pos`.
pub fn dlog_key(qid: u32, (next, seq): LeaseKey) -> [u8; 20] {
    let mut k = [0u8; 20];
    k[..8].copy_from_slice(&(seq & !DISC).to_be_bytes());
    k[8..12].copy_from_slice(&qid.to_be_bytes());
    k[12..].copy_from_slice(&next.to_be_bytes());
    k
}

/// The big-endian integer in `b` (8 bytes; callers slice exactly).
fn be_u64(b: &[u8]) -> u64 {
    b.iter().fold(0, |n, &x| n << 8 | u64::from(x))
}

/// The big-endian integer in `b` (4 bytes; callers slice exactly).
fn be_u32(b: &[u8]) -> u32 {
    b.iter().fold(0, |n, &x| n << 8 | u32::from(x))
}

/// The queue and position of a `dlog` key; `Corrupt` unless 20 bytes.
pub fn parse_dlog_key(k: &[u8]) -> Result<(u32, LeaseKey)> {
    let k: &[u8; 20] = k
        .try_into()
        .map_err(|_| FrontierError::corrupt("dlog key", format!("{} bytes, not 20", k.len())))?;
    let (seq, qid, next) = (be_u64(&k[..8]), be_u32(&k[8..12]), be_u64(&k[12..]));
    if seq & DISC != 0 {
        return Err(FrontierError::corrupt(
            "dlog key",
            "sequence number with its flag",
        ));
    }
    Ok((qid, (next, DISC | seq)))
}

/// One entry of the log.
pub(crate) struct Moving {
    seg: u32,
    qid: u32,
    pos: LeaseKey,
    /// Shared with the log's memtable (a reference count, not a copy).
    value: UserValue,
}

/// The log entries of one put's batch, encoded as its log value (see the
/// module docs), added to the batch in its commit turn
/// ([`Store::dlog_commit`]).
#[derive(Default)]
pub(crate) struct DlogBuf {
    bytes: Vec<u8>,
    /// (segment, queue, position, body offset in `bytes`, body length).
    recs: Vec<(u32, u32, LeaseKey, usize, usize)>,
}

/// Bytes of an encoded entry's head (queue, seq, next fetch, body length).
const REC_HEAD: usize = 24;

/// Appends an encoded entry to a log value under construction.
fn push_rec(bytes: &mut Vec<u8>, qid: u32, (next, seq): LeaseKey, body: &[u8]) {
    bytes.extend_from_slice(&qid.to_be_bytes());
    bytes.extend_from_slice(&(seq & !DISC).to_be_bytes());
    bytes.extend_from_slice(&next.to_be_bytes());
    let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(&body[..usize::try_from(len).unwrap_or(usize::MAX).min(body.len())]);
}

/// How many entries log value `bytes` holds (for the fuzz target:
/// [`parse_value`] on a copy); `Corrupt` on any damage.
pub fn parse_value_bytes(bytes: &[u8], bits: u8) -> Result<usize> {
    let mut out = Vec::new();
    parse_value(&UserValue::from(bytes), bits, &mut out)?;
    Ok(out.len())
}

/// The entries of log value `v` (segment bits `bits`), bodies as views of
/// it; `Corrupt` on any damage.
fn parse_value(v: &UserValue, bits: u8, out: &mut Vec<Moving>) -> Result<()> {
    let view = byteview::ByteView::from(v.clone());
    let bad = |why: &str| FrontierError::corrupt("dlog value", why.to_string());
    let mut at = 0;
    while at < view.len() {
        let head = view
            .get(at..at + REC_HEAD)
            .ok_or_else(|| bad("entry head cut short"))?;
        let (qid, seq, next) = (
            be_u32(&head[..4]),
            be_u64(&head[4..12]),
            be_u64(&head[12..20]),
        );
        if seq & DISC != 0 {
            return Err(bad("sequence number with its flag"));
        }
        let len = be_u32(&head[20..24]).swap_bytes();
        let len = usize::try_from(len).map_err(|_| bad("length"))?;
        let start = at + REC_HEAD;
        let end = start
            .checked_add(len)
            .filter(|e| *e <= view.len())
            .ok_or_else(|| bad("body cut short"))?;
        let pos = (next, DISC | seq);
        out.push(Moving {
            seg: seg_of(pos.1, bits),
            qid,
            pos,
            value: view.slice(start..end).into(),
        });
        at = end;
    }
    Ok(())
}

/// The logs' state (see the module docs).
#[derive(Default)]
pub(crate) struct DlogState {
    /// Index of the active keyspace in `Store::dlog`.
    active: usize,
    /// The active keyspace's entries.
    buf: Vec<Moving>,
    /// Bytes of `buf` as fjall counts them (the move threshold).
    bytes: u64,
    /// The move of the other keyspace, while it runs; it hands back its
    /// vector, emptied, as `spare`.
    mover: Option<JoinHandle<Result<Vec<Moving>>>>,
    /// An empty vector with the capacity of a full log, the next `buf`
    /// (growing a fresh one by doubling faulted its pages in during
    /// commit turns).
    spare: Vec<Moving>,
    /// A log keyspace may hold entries the vectors lack.
    unread: bool,
    /// When a synchronous move last flushed its mark ([`MARK_EVERY`]).
    mark_flushed: Option<std::time::Instant>,
    /// The active log's keys (one per committed batch) not yet moved, in
    /// step with `buf` (a quick move removes exactly these).
    keys: Vec<[u8; 20]>,
    /// Bytes appended to the active log since it was last cleared: quick
    /// moves leave their entries and tombstones in its memtable.
    uncleared: u64,
}

impl DlogState {
    /// A state whose logs must be read back before the first move (open).
    pub(crate) fn unread() -> DlogState {
        DlogState {
            unread: true,
            ..DlogState::default()
        }
    }
}

/// What a move writes to: the segments' keyspaces, and how.
struct Target {
    db: Database,
    /// The store's directory (for the error of a flush that found no room).
    dir: std::path::PathBuf,
    /// (segment, keyspace) of every segment the entries reach.
    segs: Vec<(u32, Keyspace)>,
    ingest_min: usize,
}

impl Store {
    /// Notes the entry of a discovered URL (a `disc` position) in `buf`, to
    /// be added to its batch, in the active log, in the commit turn
    /// ([`Store::dlog_commit`]). A position past the segments (see
    /// [`crate::disc::fits`]) is `Corrupt` here: such URLs go to `sched`.
    pub(crate) fn pending_append(
        &self,
        (qid, pos): (u32, LeaseKey),
        body: &[u8],
        buf: &mut DlogBuf,
    ) -> Result<()> {
        let seg = seg_of(pos.1, self.seg_bits);
        if self.segs.get(seg).is_none() {
            return Err(FrontierError::corrupt(
                "disc segment",
                format!("no keyspace for seq {}", pos.1 & !DISC),
            ));
        }
        let off = buf.bytes.len() + REC_HEAD;
        push_rec(&mut buf.bytes, qid, pos, body);
        let len = buf.bytes.len() - off;
        buf.recs.push((seg, qid, pos, off, len));
        Ok(())
    }

    fn dlog_state(&self) -> MutexGuard<'_, DlogState> {
        self.dlog_state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// In a commit turn: adds `buf`'s entries to `batch` in the active log,
    /// commits it with `commit`, and on success keeps them in memory; past
    /// the threshold, hands the log to the mover (see the module docs).
    pub(crate) fn dlog_commit<T>(
        &self,
        mut batch: fjall::OwnedWriteBatch,
        buf: &mut DlogBuf,
        commit: impl FnOnce(fjall::OwnedWriteBatch) -> Result<T>,
    ) -> Result<T> {
        let Some(&(_, qid0, pos0, ..)) = buf.recs.first() else {
            return commit(batch);
        };
        let ks = {
            let st = self.dlog_state();
            self.dlog[st.active].clone()
        };
        let value = UserValue::from(std::mem::take(&mut buf.bytes));
        let key = dlog_key(qid0, pos0);
        batch.insert(&ks, key, value.clone());
        let added = 20 + ENTRY_OVERHEAD + u64::try_from(value.len()).unwrap_or(u64::MAX);
        let out = commit(batch)?;
        let view = byteview::ByteView::from(value);
        let mut st = self.dlog_state();
        for (seg, qid, pos, off, len) in buf.recs.drain(..) {
            let value = view.slice(off..off + len).into();
            st.buf.push(Moving {
                seg,
                qid,
                pos,
                value,
            });
        }
        st.keys.push(key);
        st.bytes += added;
        st.uncleared += added;
        let limit = self.dlog_limit.max(1);
        if st.bytes >= limit {
            let running = st.mover.as_ref().is_some_and(|m| !m.is_finished());
            if (!running || st.bytes >= limit.saturating_mul(MAX_BEHIND))
                && let Err(e) = self.switch(&mut st)
            {
                tracing::error!("moving the discovery log into its segments failed: {e}");
            }
        }
        Ok(out)
    }

    /// Waits for the mover (an error it met is returned, and its log read
    /// back by the next move).
    fn join_mover(st: &mut DlogState) -> Result<()> {
        let Some(m) = st.mover.take() else {
            return Ok(());
        };
        let outcome = m.join().unwrap_or_else(|_| {
            Err(FrontierError::corrupt(
                "dlog move",
                "the mover thread panicked",
            ))
        });
        match outcome {
            Ok(spare) => {
                st.spare = spare;
                Ok(())
            }
            Err(e) => {
                st.unread = true;
                Err(e)
            }
        }
    }

    /// Hands the active log to a mover thread and makes the other active.
    fn switch(&self, st: &mut DlogState) -> Result<()> {
        Self::join_mover(st)?;
        if st.unread {
            // A failed move left entries only in a keyspace.
            return self.move_now(st);
        }
        let target = self.target(&st.buf)?;
        let spare = std::mem::take(&mut st.spare);
        let mut entries = std::mem::replace(&mut st.buf, spare);
        st.buf.reserve(entries.len());
        let log = self.dlog[st.active].clone();
        st.active = 1 - st.active;
        st.bytes = 0;
        // The mover clears the old log; the new one was cleared by the
        // previous move of it.
        st.keys.clear();
        st.uncleared = 0;
        let spawned = std::thread::Builder::new()
            .name("mgz-dlog-move".into())
            .spawn(move || {
                // Emptied by the move, its capacity kept.
                write_moved(
                    &target,
                    &mut entries,
                    &[log],
                    Emptying::Clear { flush: true },
                )?;
                Ok(entries)
            });
        match spawned {
            Ok(handle) => {
                st.mover = Some(handle);
                Ok(())
            }
            Err(e) => {
                st.unread = true;
                Err(FrontierError::io(self.db_dir(), e))
            }
        }
    }

    /// The segment keyspaces that `entries` reach.
    fn target(&self, entries: &[Moving]) -> Result<Target> {
        // In seq order, so a segment's entries are together.
        let mut segs: Vec<(u32, Keyspace)> = Vec::new();
        for e in entries {
            if segs.last().is_none_or(|(s, _)| *s != e.seg) {
                segs.push((e.seg, self.segs.ensure(e.seg)?.clone()));
            }
        }
        Ok(Target {
            db: self.db.clone(),
            dir: self.dir.clone(),
            segs,
            ingest_min: self.dlog_ingest_min,
        })
    }

    /// Moves every log entry into its segment now, after the mover's move
    /// if one runs (see the module docs); nothing to do when the logs are
    /// empty. On an error every entry stays in a log (a partly written move
    /// is written again by the next one: same keys, same values).
    pub fn move_dlog(&self) -> Result<()> {
        let mut st = self.dlog_state();
        Self::join_mover(&mut st)?;
        self.move_now(&mut st)
    }

    /// [`Store::move_dlog`] with the mover joined.
    ///
    /// How the log is emptied: a clear is a new version of the keyspace,
    /// which fjall writes to a file and fsyncs (with the directory) before
    /// it returns; a crawl moves before every lease, and a clear per move
    /// was ~90 version files and ~450 fsyncs a second in `mgz demo`
    /// (docs/BENCHMARKS.md, "Session 33"). So a quick move removes the
    /// batches' keys with tombstones instead (one more batch, journaled
    /// like the clear, so it too precedes every later write), and the log
    /// is cleared, its mark flushed, once [`MARK_EVERY`] has passed or
    /// `dlog_limit` bytes were appended since the last clear (the bound on
    /// what the tombstoned entries keep in the memtable).
    fn move_now(&self, st: &mut DlogState) -> Result<()> {
        let due = st.mark_flushed.is_none_or(|t| t.elapsed() >= MARK_EVERY);
        let full = st.uncleared >= self.dlog_limit.max(1);
        let (mut entries, logs, emptying) = match (st.buf.is_empty(), st.unread) {
            (true, false) => return Ok(()),
            (false, false) => (
                std::mem::take(&mut st.buf),
                vec![self.dlog[st.active].clone()],
                if due || full {
                    Emptying::Clear { flush: due }
                } else {
                    Emptying::Remove(std::mem::take(&mut st.keys))
                },
            ),
            (_, true) => {
                // Read both back; `buf` repeats the active one's entries.
                st.buf.clear();
                (
                    self.read_dlog()?,
                    self.dlog.to_vec(),
                    Emptying::Clear { flush: due },
                )
            }
        };
        st.bytes = 0;
        st.keys.clear();
        if entries.is_empty() {
            st.unread = false;
            return Ok(());
        }
        let target = self.target(&entries)?;
        let cleared = matches!(emptying, Emptying::Clear { .. });
        let flushed = matches!(emptying, Emptying::Clear { flush: true });
        match write_moved(&target, &mut entries, &logs, emptying) {
            Ok(()) => {
                st.unread = false;
                if cleared {
                    st.uncleared = 0;
                }
                if flushed {
                    st.mark_flushed = Some(std::time::Instant::now());
                }
                // The capacity back (sync moves come often when puts and
                // gets alternate).
                if st.buf.capacity() < entries.capacity() {
                    st.buf = entries;
                }
                Ok(())
            }
            Err(e) => {
                st.unread = true;
                Err(e)
            }
        }
    }

    /// Every entry of both log keyspaces, read back (the open's path).
    fn read_dlog(&self) -> Result<Vec<Moving>> {
        let mut entries = Vec::new();
        for ks in &self.dlog {
            for kv in ks.iter() {
                let (k, value) = kv.into_inner()?;
                if *k == MARK_KEY {
                    continue;
                }
                let (_, (_, first)) = parse_dlog_key(&k)?;
                let from = entries.len();
                parse_value(&value, self.seg_bits, &mut entries)?;
                if entries.get(from).is_none_or(|e| e.pos.1 != first) {
                    return Err(FrontierError::corrupt(
                        "dlog value",
                        "not the key's entries",
                    ));
                }
            }
        }
        // Each keyspace is in seq order; together they may not be.
        entries.sort_by_key(|e| e.pos.1);
        Ok(entries)
    }
}

impl Drop for Store {
    /// Waits for a move under way (its log is moved again at the next open
    /// if it failed), so the database is not written after the store is
    /// gone.
    fn drop(&mut self) {
        if let Err(e) = Self::join_mover(&mut self.dlog_state()) {
            tracing::error!("moving the discovery log into its segments failed: {e}");
        }
    }
}

/// How a move empties the logs it moved (see [`Store::move_now`]).
enum Emptying {
    /// Clear each, leave the mark, flushed into a table when `flush`.
    Clear { flush: bool },
    /// Tombstones for these keys (every key of the one log moved).
    Remove(Vec<[u8; 20]>),
}

/// Writes `entries` (whole logs) into their segments, then empties `logs`
/// as `emptying` says. Takes the entries out of `entries`, leaving its
/// capacity.
fn write_moved(
    target: &Target,
    entries: &mut Vec<Moving>,
    logs: &[Keyspace],
    emptying: Emptying,
) -> Result<()> {
    // The order of `disc` keys within a segment: queue, then seq (unique,
    // so an unstable sort gives the one order, with no scratch buffer).
    entries.sort_unstable_by_key(|e| (e.seg, e.qid, e.pos.1));
    // (segment, entries) runs, counted before the entries are taken out.
    let mut runs: Vec<(u32, usize)> = Vec::new();
    for e in entries.iter() {
        match runs.last_mut() {
            Some((seg, n)) if *seg == e.seg => *n += 1,
            _ => runs.push((e.seg, 1)),
        }
    }
    let mut rest = entries.drain(..);
    for (seg, n) in runs {
        let Some((_, ks)) = target.segs.iter().find(|(s, _)| *s == seg) else {
            return Err(FrontierError::corrupt(
                "disc segment",
                format!("no keyspace for segment {seg}"),
            ));
        };
        move_run(target, ks, rest.by_ref().take(n), n)?;
    }
    drop(rest);
    let flush = match emptying {
        Emptying::Clear { flush } => flush,
        Emptying::Remove(keys) => {
            let mut batch = target.db.batch();
            for log in logs {
                for k in &keys {
                    batch.remove(log, *k);
                }
            }
            batch.commit()?;
            return Ok(());
        }
    };
    for log in logs {
        log.clear()?;
        // A table newer than everything the log held (see [`MARK_KEY`]).
        log.insert(MARK_KEY, [])?;
        if flush {
            crate::store::flush_and_wait(&target.db, log, &target.dir)?;
        }
    }
    Ok(())
}

/// Writes one segment's `n` entries (sorted by key) into its keyspace
/// `ks`, moving their values (no reference count touched per entry).
fn move_run(
    target: &Target,
    ks: &Keyspace,
    run: impl Iterator<Item = Moving>,
    n: usize,
) -> Result<()> {
    if n >= target.ingest_min {
        let mut ing = ks.start_ingestion()?;
        for e in run {
            ing.write(disc_key(e.qid, e.pos.1, e.pos.0), e.value)?;
        }
        ing.finish()?;
    } else {
        let mut batch = target.db.batch();
        for e in run {
            batch.insert(ks, disc_key(e.qid, e.pos.1, e.pos.0), e.value);
        }
        batch.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreOptions;

    #[test]
    fn keys_round_trip_in_seq_order_and_reject_garbage() {
        let a = dlog_key(9, (1_700_000_000, DISC | 5));
        let b = dlog_key(1, (1_600_000_000, DISC | 6));
        assert!(a < b, "seq comes first");
        assert_eq!(parse_dlog_key(&a).unwrap(), (9, (1_700_000_000, DISC | 5)));
        assert!(parse_dlog_key(&a[..19]).is_err());
        let mut flagged = a;
        flagged[0] |= 0x80;
        assert!(parse_dlog_key(&flagged).is_err());
    }

    /// A store with 2^`bits` URLs per segment and `entries` (qid, seq)
    /// appended to the log, bodies `qid:seq`.
    fn logged(dir: &std::path::Path, bits: u8, entries: &[(u32, u64)]) -> Store {
        let opts = StoreOptions {
            segment_bits: bits,
            ..StoreOptions::default()
        };
        let store = Store::open(dir, opts).unwrap();
        let most = entries.iter().map(|e| e.1 + 1).max().unwrap_or(0);
        store.ensure_segments(0, most).unwrap();
        let mut buf = DlogBuf::default();
        for &(qid, seq) in entries {
            let body = format!("{qid}:{seq}");
            store
                .pending_append((qid, (seq, DISC | seq)), body.as_bytes(), &mut buf)
                .unwrap();
        }
        let batch = store.db.batch();
        store
            .dlog_commit(batch, &mut buf, |b| Ok(b.commit()?))
            .unwrap();
        store
    }

    /// Keys in the two logs besides the marks of cleared ones.
    fn logged_keys(store: &Store) -> usize {
        let keys = store.dlog.iter().flat_map(|l| l.iter());
        keys.map(|kv| kv.key().unwrap())
            .filter(|k| **k != MARK_KEY)
            .count()
    }

    #[test]
    fn a_moved_log_keeps_a_table_newer_than_its_entries() {
        // fjall deletes a journal only once each keyspace written in it has
        // a table holding a newer write (its highest persisted seqno); a
        // cleared log has none unless the move leaves its mark in one.
        // Without it a 2M-URL bench kept 6 journals (532 MB on disk) and
        // reopened in 15 s instead of 1 journal and 1 s (docs/BENCHMARKS.md,
        // "Session 29").
        let dir = tempfile::tempdir().unwrap();
        let store = logged(dir.path(), 3, &[(1, 0), (2, 1), (1, 2)]);
        assert_eq!(store.dlog[0].table_count(), 0);
        let before = store.db.seqno();
        store.move_dlog().unwrap();
        assert_eq!(logged_keys(&store), 0);
        assert_eq!(store.dlog[0].table_count(), 1, "the mark's table");
        let mark = store.dlog[0].get(MARK_KEY).unwrap();
        assert_eq!(mark.as_deref(), Some(&b""[..]));
        assert!(store.db.seqno() > before);
        let append = |seq: u64| {
            let mut buf = DlogBuf::default();
            store
                .pending_append((3, (seq, DISC | seq)), b"x", &mut buf)
                .unwrap();
            store
                .dlog_commit(store.db.batch(), &mut buf, |b| Ok(b.commit()?))
                .unwrap();
        };
        let tables = || store.dlog[1].table_count() + store.dlog[0].table_count();
        let marks = || {
            store
                .dlog
                .iter()
                .filter(|l| l.get(MARK_KEY).unwrap().is_some())
                .count()
        };
        // A move within `MARK_EVERY` of that flush neither clears nor
        // flushes: tombstones remove the entries, the mark's table stays.
        append(3);
        store.move_dlog().unwrap();
        assert_eq!(tables(), 1);
        assert_eq!(logged_keys(&store), 0);
        assert_eq!(marks(), 1);
        assert!(store.dlog_state().uncleared > 0, "not cleared");
        // Once the interval has passed, the next move clears the log and
        // flushes a new mark (the clear dropped the old table).
        store.dlog_state().mark_flushed = Some(std::time::Instant::now() - MARK_EVERY);
        append(4);
        store.move_dlog().unwrap();
        assert_eq!(tables(), 1, "the new mark's table");
        assert_eq!(marks(), 1);
        assert_eq!(store.dlog_state().uncleared, 0, "cleared");
        // Past `dlog_limit` bytes since that clear, a move clears without
        // a flush.
        append(5);
        store.dlog_state().uncleared = u64::MAX;
        store.move_dlog().unwrap();
        assert_eq!(tables(), 0, "cleared, the new mark not flushed");
        assert_eq!(marks(), 1);
        assert_eq!(logged_keys(&store), 0);
    }

    #[test]
    fn entries_removed_by_a_quick_move_stay_moved_after_a_reopen() {
        let bits = 3;
        let first = [(1, 0), (2, 1), (1, 2)];
        let dir = tempfile::tempdir().unwrap();
        let mut all = first.to_vec();
        {
            let store = logged(dir.path(), bits, &first);
            store.move_dlog().unwrap(); // clears and flushes (the first)
            for (qid, seq) in [(3u32, 3u64), (1, 4), (3, 5)] {
                store.ensure_segments(seq, 1).unwrap();
                let mut buf = DlogBuf::default();
                let body = format!("{qid}:{seq}");
                store
                    .pending_append((qid, (seq, DISC | seq)), body.as_bytes(), &mut buf)
                    .unwrap();
                store
                    .dlog_commit(store.db.batch(), &mut buf, |b| Ok(b.commit()?))
                    .unwrap();
                all.push((qid, seq));
                store.move_dlog().unwrap(); // quick: tombstones
                assert!(store.dlog_state().uncleared > 0);
            }
            assert_eq!(logged_keys(&store), 0);
            // Dropped without a close: the journal holds the tombstones.
            store.db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        assert_eq!(logged_keys(&store), 0, "nothing came back into the log");
        assert_eq!(segment_entries(&store), expected(bits, &all));
    }

    /// Every segment entry as (segment, qid, seq, body), in key order.
    fn segment_entries(store: &Store) -> Vec<(u32, u32, u64, String)> {
        let mut out = Vec::new();
        for (seg, ks) in store.segs.all() {
            for kv in ks.iter() {
                let (k, v) = kv.into_inner().unwrap();
                let (qid, pos) = crate::disc::parse_disc_key(&k).unwrap();
                out.push((
                    seg,
                    qid,
                    pos.1 & !DISC,
                    String::from_utf8(v.to_vec()).unwrap(),
                ));
            }
        }
        out
    }

    fn expected(bits: u8, entries: &[(u32, u64)]) -> Vec<(u32, u32, u64, String)> {
        let mut want: Vec<_> = entries
            .iter()
            .map(|&(q, s)| (seg_of(DISC | s, bits), q, s, format!("{q}:{s}")))
            .collect();
        want.sort();
        want
    }

    #[test]
    fn a_move_puts_each_entry_in_its_segment_by_batch_and_by_ingestion() {
        // Two segments of 2^14: the first gets INGEST_MIN entries or more
        // (ingested), the second fewer (one batch).
        let bits = 14;
        let entries: Vec<(u32, u64)> = (0..(1u64 << bits) + 300)
            .map(|s| (u32::try_from((s * 7919) % 97).unwrap(), s))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let store = logged(dir.path(), bits, &entries);
        assert!(segment_entries(&store).is_empty(), "nothing moved yet");
        assert_eq!(logged_keys(&store), 1, "one log entry: the batch");
        store.move_dlog().unwrap();
        assert_eq!(logged_keys(&store), 0, "the log is cleared");
        assert_eq!(segment_entries(&store), expected(bits, &entries));
        // Nothing to do the second time.
        store.move_dlog().unwrap();
        assert_eq!(segment_entries(&store).len(), entries.len());
    }

    #[test]
    fn an_open_moves_what_the_log_kept_and_a_second_move_of_the_same_entries_changes_nothing() {
        let bits = 3;
        let entries: Vec<(u32, u64)> = (0..40)
            .map(|s| (u32::try_from(s % 5).unwrap(), s))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        {
            let store = logged(dir.path(), bits, &entries);
            // A move whose clear was lost: the entries are in their
            // segments and still in the log.
            let mut all = store.read_dlog().unwrap();
            assert_eq!(all.len(), entries.len());
            all.sort_by_key(|e| (e.seg, e.qid));
            let target = store.target(&store.read_dlog().unwrap()).unwrap();
            for (seg, ks) in &target.segs {
                let run: Vec<Moving> = all.extract_if(.., |e| e.seg == *seg).collect();
                let n = run.len();
                move_run(&target, ks, run.into_iter(), n).unwrap();
            }
            assert!(all.is_empty());
            store.db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        assert_eq!(logged_keys(&store), 0, "the open moved the log");
        assert_eq!(segment_entries(&store), expected(bits, &entries));
    }

    #[test]
    fn full_logs_go_to_the_mover_and_a_move_collects_the_rest() {
        // A threshold of 1 KiB: each batch of 8 entries passes it, so
        // commits switch logs (when the previous move is over) and the
        // mover writes behind them, by batch and by ingestion.
        let bits = 6;
        let opts = StoreOptions {
            segment_bits: bits,
            disc_memtable_bytes: 1024,
            dlog_ingest_min: 5,
            ..StoreOptions::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), opts).unwrap();
        let mut all = Vec::new();
        for b in 0..60u64 {
            store.ensure_segments(b * 8, 8).unwrap();
            let mut buf = DlogBuf::default();
            for seq in b * 8..b * 8 + 8 {
                let qid = u32::try_from(seq % 11).unwrap();
                let body = format!("{qid}:{seq}");
                store
                    .pending_append((qid, (seq, DISC | seq)), body.as_bytes(), &mut buf)
                    .unwrap();
                all.push((qid, seq));
            }
            store
                .dlog_commit(store.db.batch(), &mut buf, |b| Ok(b.commit()?))
                .unwrap();
        }
        let moved_behind = segment_entries(&store).len();
        store.move_dlog().unwrap();
        assert_eq!(logged_keys(&store), 0);
        assert_eq!(segment_entries(&store), expected(bits, &all));
        assert!(
            moved_behind > 0,
            "the mover wrote some before the final move"
        );
    }

    #[test]
    fn log_values_round_trip_and_damage_is_an_error_not_a_panic() {
        let mut bytes = Vec::new();
        push_rec(&mut bytes, 7, (100, DISC | 5), b"a body of some length");
        push_rec(&mut bytes, 9, (101, DISC | 6), b"");
        let v = UserValue::from(bytes.clone());
        let mut out = Vec::new();
        parse_value(&v, 3, &mut out).unwrap();
        let got: Vec<_> = out
            .iter()
            .map(|e| (e.seg, e.qid, e.pos, e.value.to_vec()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    seg_of(DISC | 5, 3),
                    7,
                    (100, DISC | 5),
                    b"a body of some length".to_vec()
                ),
                (seg_of(DISC | 6, 3), 9, (101, DISC | 6), Vec::new()),
            ]
        );
        // Every cut but the one between the entries is an error.
        for cut in 1..bytes.len() {
            let r = parse_value(&UserValue::from(&bytes[..cut]), 3, &mut Vec::new());
            assert_eq!(r.is_ok(), cut == REC_HEAD + 21, "cut at {cut}");
        }
        // A flagged sequence number or a length past the end.
        let mut flagged = bytes.clone();
        flagged[4] |= 0x80;
        assert!(parse_value(&UserValue::from(flagged), 3, &mut Vec::new()).is_err());
        let mut long = bytes;
        long[20] = 0xff;
        assert!(parse_value(&UserValue::from(long), 3, &mut Vec::new()).is_err());
    }

    #[test]
    fn an_entry_for_a_segment_without_its_keyspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let mut buf = DlogBuf::default();
        let err = store
            .pending_append((1, (5, DISC | 3)), b"x", &mut buf)
            .unwrap_err();
        assert!(matches!(err, FrontierError::Corrupt { .. }), "{err}");
        assert!(buf.recs.is_empty() && buf.bytes.is_empty());
    }

    #[test]
    fn a_malformed_log_key_fails_the_open_and_keeps_the_log() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = logged(dir.path(), 3, &[(1, 0), (2, 1)]);
            store.dlog[0].insert([7u8; 5], b"junk").unwrap();
            store.db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        let err = Store::open(dir.path(), StoreOptions::default())
            .err()
            .unwrap();
        assert!(matches!(err, FrontierError::Corrupt { .. }), "{err}");
        // Nothing was cleared or moved: the log is read again next time.
        let db = fjall::Database::builder(dir.path().join("store"))
            .open()
            .unwrap();
        let ks = db
            .keyspace(DLOG[0], fjall::KeyspaceCreateOptions::default)
            .unwrap();
        assert_eq!(ks.len().unwrap(), 2, "the batch's log entry and the junk");
    }
}
