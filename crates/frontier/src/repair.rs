//! Repair after a journal lost batches that some keyspaces had already
//! flushed to tables.
//!
//! fjall writes every batch to its journal, then into each keyspace's
//! memtable, and flushes memtables to tables one keyspace at a time. A crash
//! or power loss cannot split a batch: fjall 3.1 fsyncs the journal before
//! every flush, so what a table holds is in the synced journal, and only
//! batches no table holds can be lost. A journal damaged in its middle (a
//! file cut short, a lost region: what `tests/corruption.rs` does) drops
//! batches from the keyspaces still in memtables while the ones already
//! flushed keep them: a batch is then half there. What the frontier derives
//! from several keyspaces at once goes out of step:
//!
//! - queue counters (`queues` records and `meta` counter records) against
//!   the pending (`disc`, `sched`) and completed (`urls`) entries;
//! - the next discovery sequence (`meta` "seq") against the positions of
//!   surviving `disc`/`sched` entries: reused, a new URL's key could
//!   overwrite a surviving entry of its queue;
//! - the seen sets (snapshot and log) against the URLs stored.
//!
//! So when [`crate::torn`] reports a cut journal, the open counts every
//! queue's entries and the highest stored position ([`count`]) and compares
//! them with what the records say ([`Counts::agree`]). A cut inside the last
//! batch (what a kill during a journal write leaves) splits nothing: the
//! counts agree and the open goes on as usual, seen sets from their
//! snapshot and log. Otherwise [`Counts::write`] stores full queue records
//! with the counted values, drops the counter records and raises "seq" past
//! every stored position (one batch, fsynced); the open reloads them and
//! rebuilds the seen sets from the store instead of their snapshot.
//! Cost: one scan of the keys of `disc` and `sched` and of `urls` (its
//! values are decoded to tell completed from pending), after a cut only:
//! ~4 s at 10M pending URLs (an open after a SIGKILL that tore the last
//! batch: 6.0 s against 1.8-1.9 s; docs/BENCHMARKS.md, "Session 15").
//! Entries of a queue whose record was lost with the tail cannot be served
//! (their queue key is unknown): they are counted and reported.

use std::collections::HashMap;

use crate::codec::{StateHead, UrlState, parse_sched_key};
use crate::disc::{DISC, parse_disc_key};
use crate::error::Result;
use crate::records::QueueRec;
use crate::recover::qid_of;
use crate::store::Store;
use crate::table::Table;

/// Entries counted in the store: a map of queue id to two counts (~40 B
/// a queue while the open runs, freed after it), and the next free
/// sequence number. Invariant: every stored pending entry is counted once,
/// in its queue's first count; every completed one in its second.
#[derive(Debug, Default)]
pub struct Counts {
    /// Queue id → (pending, completed) entries.
    per_queue: HashMap<u32, (u64, u64)>,
    /// One past the highest stored position's sequence number.
    next_seq: u64,
}

/// Counts every queue's pending (`disc`, `sched`) and completed (`urls`)
/// entries and the highest stored position.
pub fn count(store: &Store) -> Result<Counts> {
    let mut c = Counts::default();
    for kv in store.disc_iter() {
        let k = kv.key()?;
        let (qid, (_, seq)) = parse_disc_key(&k)?;
        c.per_queue.entry(qid).or_default().0 += 1;
        c.next_seq = c.next_seq.max((seq & !DISC) + 1);
    }
    for kv in store.sched.iter() {
        let k = kv.key()?;
        let (qid, _, seq) = parse_sched_key(&k)?;
        c.per_queue.entry(qid).or_default().0 += 1;
        c.next_seq = c.next_seq.max((seq & !DISC) + 1);
    }
    for kv in store.urls.iter() {
        let (k, v) = kv.into_inner()?;
        let qid = qid_of(&k, "urls key")?;
        if let StateHead::Completed { .. } = UrlState::head(&v)? {
            c.per_queue.entry(qid).or_default().1 += 1;
        }
    }
    Ok(c)
}

impl Counts {
    /// Whether the loaded `table` (queue records with their counter records
    /// applied, the sequence counter) agrees with the entries.
    pub fn agree(&self, table: &Table) -> bool {
        let queues_agree = table.queues.iter().all(|(qid, q)| {
            let (p, c) = self.per_queue.get(&qid).copied().unwrap_or_default();
            (q.rec.pending, q.rec.completed) == (p, c)
        });
        let no_orphans = self
            .per_queue
            .keys()
            .all(|qid| table.queues.get(qid).is_some());
        queues_agree && no_orphans && table.next_seq >= self.next_seq
    }

    /// Stores the counted values: full queue records, no counter records,
    /// "seq" past every stored position and at least `loaded_seq` (what
    /// the records said); one batch, fsynced.
    pub fn write(mut self, store: &Store, loaded_seq: u64) -> Result<Recount> {
        let next_seq = self.next_seq.max(loaded_seq);
        let mut batch = store.db.batch();
        let mut out = Recount {
            next_seq,
            ..Recount::default()
        };
        for kv in store.queues.iter() {
            let (k, v) = kv.into_inner()?;
            let qid = qid_of(&k, "queue key")?;
            let mut rec = QueueRec::decode(&v)?;
            (rec.pending, rec.completed) = self.per_queue.remove(&qid).unwrap_or_default();
            batch.insert(&store.queues, k, rec.encode());
            out.queues += 1;
        }
        for kv in store.meta.prefix(b"n") {
            batch.remove(&store.meta, kv.key()?);
        }
        batch.insert(&store.meta, b"seq", next_seq.to_le_bytes());
        batch.commit()?;
        store.db.persist(fjall::PersistMode::SyncAll)?;
        out.orphans = self.per_queue.values().map(|(p, c)| p + c).sum();
        if out.orphans > 0 {
            tracing::warn!(
                entries = out.orphans,
                queues = self.per_queue.len(),
                "entries of queues whose record was lost with the journal tail: not served"
            );
        }
        Ok(out)
    }
}

/// What [`Counts::write`] stored.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recount {
    /// Queue records rewritten.
    pub queues: u64,
    /// Pending and completed entries of queues without a record.
    pub orphans: u64,
    /// The next sequence number now stored.
    pub next_seq: u64,
}
