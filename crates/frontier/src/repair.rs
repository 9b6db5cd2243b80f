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
//! So when [`crate::torn`] reports a cut journal, the open recounts every
//! queue from its entries, raises "seq" past every stored position, writes
//! full queue records and drops the counter records (one batch, fsynced),
//! and rebuilds the seen sets from the store instead of their snapshot.
//! Cost: one scan of the keys of `disc`, `sched` and `urls` (values of
//! `urls` are decoded to tell completed from pending); only after a cut.
//! Entries of a queue whose record was lost with the tail cannot be served
//! (their queue key is unknown): they are counted and reported.

use std::collections::HashMap;

use crate::codec::{UrlState, parse_sched_key};
use crate::disc::{DISC, parse_disc_key};
use crate::error::Result;
use crate::records::QueueRec;
use crate::recover::qid_of;
use crate::store::Store;

/// What [`recount`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recount {
    /// Queue records rewritten.
    pub queues: u64,
    /// Pending and completed entries of queues without a record.
    pub orphans: u64,
    /// The next sequence number now stored.
    pub next_seq: u64,
}

/// Recounts every queue's pending and completed URLs from the store's
/// entries and raises the sequence counter past every stored position.
pub fn recount(store: &Store) -> Result<Recount> {
    let mut counts: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut next_seq = 0u64;
    for kv in store.disc.iter() {
        let k = kv.key()?;
        let (_, qid, (_, seq)) = parse_disc_key(&k)?;
        counts.entry(qid).or_default().0 += 1;
        next_seq = next_seq.max((seq & !DISC) + 1);
    }
    for kv in store.sched.iter() {
        let k = kv.key()?;
        let (qid, _, seq) = parse_sched_key(&k)?;
        counts.entry(qid).or_default().0 += 1;
        next_seq = next_seq.max((seq & !DISC) + 1);
    }
    for kv in store.urls.iter() {
        let (k, v) = kv.into_inner()?;
        let qid = qid_of(&k, "urls key")?;
        if let UrlState::Completed(_) = UrlState::decode(&v)? {
            counts.entry(qid).or_default().1 += 1;
        }
    }
    if let Some(v) = store.meta.get(b"seq")?
        && let Ok(b) = <[u8; 8]>::try_from(v.as_ref())
    {
        next_seq = next_seq.max(u64::from_le_bytes(b));
    }
    let mut batch = store.db.batch();
    let mut out = Recount {
        next_seq,
        ..Recount::default()
    };
    for kv in store.queues.iter() {
        let (k, v) = kv.into_inner()?;
        let qid = qid_of(&k, "queue key")?;
        let mut rec = QueueRec::decode(&v)?;
        (rec.pending, rec.completed) = counts.remove(&qid).unwrap_or_default();
        batch.insert(&store.queues, k, rec.encode());
        out.queues += 1;
    }
    for kv in store.meta.prefix(b"n") {
        batch.remove(&store.meta, kv.key()?);
    }
    batch.insert(&store.meta, b"seq", next_seq.to_le_bytes());
    batch.commit()?;
    store.db.persist(fjall::PersistMode::SyncAll)?;
    out.orphans = counts.values().map(|(p, c)| p + c).sum();
    if out.orphans > 0 {
        tracing::warn!(
            entries = out.orphans,
            queues = counts.len(),
            "entries of queues whose record was lost with the journal tail: not served"
        );
    }
    Ok(out)
}
