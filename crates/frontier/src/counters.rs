//! Counter records: a put touches ~one queue per new URL (batches of 256
//! spread over many hosts), and rewriting each touched queue's full record
//! made that a third store entry per URL. Instead a put writes ONE counter
//! record holding the new counters of every queue it touched:
//!
//! ```text
//! meta  "n" | seq u64BE  ->  2 | n × (qid varint | pending varint | completed varint)
//!                            (format 6; ~6 B per queue at 100,000 queues)
//!                        or  1 | n × (qid u32 | pending u64 | completed u64)
//!                            (before format 6: LE, 20 B per queue; still read)
//! ```
//! At 10M URLs over 100,000 queues a put batch of 256 URLs touches ~128
//! queues, so version 1 wrote ~2.5 KB of counters per batch (~195 MB over
//! the put, a quarter of what the URLs' own entries take), all of it
//! journaled, flushed and compacted.
//!
//! At open, counter records are applied in `seq` order over the queue
//! records (each holds absolute values, so the newest wins). Every
//! [`FOLD_EVERY`] records, and in every batch that writes full queue records
//! (control, purge, delete), the pending ones are folded: the full records of
//! the queues they touched are rewritten and the counter records removed, in
//! the same atomic batch. So counter records never outlive a change made
//! through full records, and a deleted queue's id is never named by one
//! (qids can be reused after a reopen). A queue's first record is always a
//! full one (written in the batch that creates it).

use crate::codec::Reader;
use crate::error::{FrontierError, Result};
use crate::store::Store;
use crate::table::Table;

/// Counter records between two folds, at least.
pub const FOLD_EVERY: u64 = 1024;
/// ... and at least the unfolded queues / this: a fold then rewrites at most
/// this many full queue records per counter record (amortised), while an open
/// replays at most max(FOLD_EVERY, queues / FOLD_SPREAD) counter records.
pub const FOLD_SPREAD: u64 = 16;

/// Where counter records stand (part of the [`Table`]).
#[derive(Debug, Default)]
pub struct CounterLog {
    /// Sequence number of the next counter record.
    pub next: u64,
    /// First counter record not folded yet.
    pub fold_from: u64,
    /// Queues named by unfolded counter records, each once (a queue's
    /// `unfolded` flag says whether it is here: a flag test instead of a
    /// hash-set insert for every queue of every put).
    pub unfolded: Vec<u32>,
}

/// `meta` key of counter record `seq`.
pub fn counter_key(seq: u64) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = b'n';
    k[1..].copy_from_slice(&seq.to_be_bytes());
    k
}

/// Version byte of counter records written now (varints).
const RECORD_VERSION: u8 = 2;

fn encode(entries: &[(u32, u64, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 6 * entries.len());
    out.push(RECORD_VERSION);
    for &(qid, pending, completed) in entries {
        crate::codec::put_varint(&mut out, u64::from(qid));
        crate::codec::put_varint(&mut out, pending);
        crate::codec::put_varint(&mut out, completed);
    }
    out
}

/// Decodes a counter record (version 2, or 1 from before format 6) into
/// (qid, pending, completed) triples.
pub fn decode(bytes: &[u8]) -> Result<Vec<(u32, u64, u64)>> {
    let mut r = Reader::new(bytes, "counter record");
    match r.u8()? {
        1 => {
            let body = bytes.len() - 1;
            if !body.is_multiple_of(20) {
                return Err(FrontierError::corrupt("counter record", "bad length"));
            }
            (0..body / 20)
                .map(|_| Ok((r.u32()?, r.u64()?, r.u64()?)))
                .collect()
        }
        RECORD_VERSION => {
            let mut out = Vec::new();
            while !r.is_empty() {
                let qid = u32::try_from(r.varint()?)
                    .map_err(|_| FrontierError::corrupt("counter record", "qid over 32 bits"))?;
                out.push((qid, r.varint()?, r.varint()?));
            }
            Ok(out)
        }
        v => Err(FrontierError::FormatVersion {
            what: "counter record".into(),
            found: v.into(),
            expected: RECORD_VERSION.into(),
        }),
    }
}

impl Table {
    /// Persists the counters of `qids` after a put: a full record for a
    /// queue never stored, one counter record for the rest; folds now and
    /// then (see [`FOLD_SPREAD`]). Also stores the sequence counter.
    pub fn write_counters(
        &mut self,
        qids: impl IntoIterator<Item = u32>,
        store: &Store,
        batch: &mut fjall::OwnedWriteBatch,
    ) {
        let mut entries = Vec::new();
        for qid in qids {
            let Some(q) = self.queues.get_mut(&qid) else {
                continue;
            };
            if q.stored {
                entries.push((qid, q.rec.pending, q.rec.completed));
                if !q.unfolded {
                    q.unfolded = true;
                    self.counters.unfolded.push(qid);
                }
            } else {
                q.stored = true;
                batch.insert(&store.queues, qid.to_be_bytes(), q.rec.encode());
            }
        }
        if !entries.is_empty() {
            let seq = self.counters.next;
            self.counters.next += 1;
            batch.insert(&store.meta, counter_key(seq), encode(&entries));
        }
        batch.insert(&store.meta, b"seq", self.next_seq.to_le_bytes());
        let every = FOLD_EVERY.max(self.counters.unfolded.len() as u64 / FOLD_SPREAD);
        if self.counters.next - self.counters.fold_from >= every {
            self.fold_counters(store, batch);
        }
    }

    /// Rewrites the full records of every queue named by a pending counter
    /// record and removes those records.
    pub fn fold_counters(&mut self, store: &Store, batch: &mut fjall::OwnedWriteBatch) {
        for qid in std::mem::take(&mut self.counters.unfolded) {
            if let Some(q) = self.queues.get_mut(&qid) {
                q.stored = true;
                q.unfolded = false;
                batch.insert(&store.queues, qid.to_be_bytes(), q.rec.encode());
            }
        }
        for seq in self.counters.fold_from..self.counters.next {
            batch.remove(&store.meta, counter_key(seq));
        }
        self.counters.fold_from = self.counters.next;
    }
}

/// Applies the counter records in `store` to the loaded queues (at open).
pub fn load(store: &Store, table: &mut Table) -> Result<()> {
    let mut first = None;
    for kv in store.meta.prefix(b"n") {
        let (k, v) = kv.into_inner()?;
        let seq: [u8; 8] = k
            .get(1..)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| FrontierError::corrupt("counter key", "not 9 bytes"))?;
        let seq = u64::from_be_bytes(seq);
        first.get_or_insert(seq);
        table.counters.next = seq + 1;
        for (qid, pending, completed) in decode(&v)? {
            if let Some(q) = table.queues.get_mut(&qid) {
                q.rec.pending = pending;
                q.rec.completed = completed;
                if !q.unfolded {
                    q.unfolded = true;
                    table.counters.unfolded.push(qid);
                }
            }
        }
    }
    table.counters.fold_from = first.unwrap_or(table.counters.next);
    // Pending counts may have risen (see `Table::grows`).
    table.grows += 1;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-1 record, as binaries before format 6 wrote them.
    fn encode_v1(entries: &[(u32, u64, u64)]) -> Vec<u8> {
        let mut out = vec![1];
        for &(qid, pending, completed) in entries {
            out.extend_from_slice(&qid.to_le_bytes());
            out.extend_from_slice(&pending.to_le_bytes());
            out.extend_from_slice(&completed.to_le_bytes());
        }
        out
    }

    #[test]
    fn round_trip_and_garbage() {
        let e = vec![(1, 2, 3), (u32::MAX, u64::MAX, 0), (99_999, 150, 0)];
        assert_eq!(decode(&encode(&e)).unwrap(), e);
        assert_eq!(decode(&encode(&[])).unwrap(), vec![]);
        // Small counters take a few bytes: the version, three 1-byte
        // varints, then 3 + 2 + 1 bytes.
        assert_eq!(encode(&[(1, 2, 3), (99_999, 150, 0)]).len(), 1 + 3 + 6);
        let b = encode(&e);
        // A cut inside an entry is an error; at an entry boundary it is a
        // shorter record (the store's checksums catch torn values).
        let ends = [1, 4, 4 + 5 + 10 + 1];
        for cut in 1..b.len() {
            if !ends.contains(&cut) {
                assert!(decode(&b[..cut]).is_err(), "cut {cut}");
            }
        }
        assert!(decode(&[]).is_err());
        assert!(decode(&[9]).is_err());
        // qid over 32 bits.
        assert!(decode(&[2, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0]).is_err());
    }

    #[test]
    fn version_1_records_are_read() {
        let e = vec![(1, 2, 3), (u32::MAX, u64::MAX, 0)];
        let b = encode_v1(&e);
        assert_eq!(decode(&b).unwrap(), e);
        for cut in 0..b.len() {
            if cut != 1 && cut != 21 {
                assert!(decode(&b[..cut]).is_err(), "cut {cut}");
            }
        }
        assert!(encode(&e).len() < b.len());
    }
}
