//! The discovery schedule (`disc`, format 4): where `put_discovered` puts
//! new URLs, in segments of discovery order, so that the store only appends.
//!
//! ```text
//! disc   seg (4) | qid (4) | seq (8) | next fetch (8)  -> Body     24-byte keys
//!        seg = 1 + (seq without its flag bit) >> segment bits   (20: 1,048,576 URLs)
//! sched  qid (4) | next fetch (8) | seq (8)             -> Body     20-byte keys
//! ```
//!
//! Why: `sched` sorts a queue's URLs together, so the URLs of one batch
//! land all over its key space and every leveled compaction rewrote most of
//! it (at 10M URLs / 100,000 hosts compaction was ~40 % of the put's CPU).
//! A `disc` key starts with its segment, and segments only grow: the
//! tables fjall flushes overlap only within the current segment, older
//! segments move down the levels without being rewritten.
//!
//! Positions ([`LeaseKey`] = (next fetch, seq)) name an entry in either
//! keyspace: a `disc` entry's seq carries [`DISC`] (bit 63), the only
//! difference, so leases, `urls` pointers and seen-log positions keep their
//! 16 bytes, and positions written before format 4 (no flag) are `sched`
//! ones. A segment is derived from the seq, never stored apart from the key.
//!
//! Order. Within a queue URLs are served by next fetch, then discovery
//! order. A discovered URL is due when it is put (next fetch = the put's
//! time), so within `disc` a queue's entries in (segment, seq) order are in
//! (next fetch, seq) order as long as the clock does not go back; `get`
//! merges that stream with the queue's `sched` range by (next fetch, seq
//! without flag). If the system clock steps back, URLs discovered after the
//! step may be served after earlier ones that are due later: order only,
//! nothing is lost (`get` never skips an unleased entry below its marks).
//!
//! Entries of `put_known` with a schedule stay in `sched`: their next
//! fetch is the caller's, so discovery order says nothing about it.
//!
//! Invariants: every `disc` key's segment is `seg_of(seq)` of its seq; the
//! highest segment present is at most `Store::disc_top`; a queue's entries
//! in `disc` are found by one prefix scan per segment from 1 to that top
//! (`get` keeps per-queue marks so it reads only from where it stopped).

use std::sync::atomic::Ordering;

use fjall::{Keyspace, OwnedWriteBatch, UserValue};

use crate::codec::{parse_sched_key, sched_key};
use crate::error::{FrontierError, Result};
use crate::store::Store;
use crate::table::LeaseKey;

/// Flag bit of a `disc` entry's seq.
pub const DISC: u64 = 1 << 63;

/// Segment bits of a new store: 2^20 discovered URLs per segment.
pub const DEFAULT_SEGMENT_BITS: u8 = 20;

/// Whether position `pos` is a `disc` entry.
pub fn is_disc(pos: LeaseKey) -> bool {
    pos.1 & DISC != 0
}

/// Serving order of a position across both keyspaces.
pub fn order(pos: LeaseKey) -> (u64, u64) {
    (pos.0, pos.1 & !DISC)
}

/// Segment of `disc` seq `seq` with `bits` segment bits (1-based).
pub fn seg_of(seq: u64, bits: u8) -> u32 {
    let s = 1 + ((seq & !DISC) >> bits.min(62));
    u32::try_from(s).unwrap_or(u32::MAX)
}

/// First `disc` seq of segment `seg` (≥ 1).
pub fn seg_start(seg: u32, bits: u8) -> u64 {
    let idx = u64::from(seg.max(1) - 1);
    DISC | (idx << bits.min(62)).min(!DISC)
}

/// `disc` key of position (`next`, `seq`) in queue `qid`.
pub fn disc_key(seg: u32, qid: u32, seq: u64, next: u64) -> [u8; 24] {
    let mut k = [0u8; 24];
    k[..4].copy_from_slice(&seg.to_be_bytes());
    k[4..8].copy_from_slice(&qid.to_be_bytes());
    k[8..16].copy_from_slice(&seq.to_be_bytes());
    k[16..].copy_from_slice(&next.to_be_bytes());
    k
}

/// Splits a `disc` key into (seg, qid, position).
pub fn parse_disc_key(k: &[u8]) -> Result<(u32, u32, LeaseKey)> {
    let bad = || FrontierError::corrupt("disc key", format!("{} bytes", k.len()));
    if k.len() != 24 {
        return Err(bad());
    }
    let u32_at = |i: usize| k[i..i + 4].try_into().map(u32::from_be_bytes);
    let u64_at = |i: usize| k[i..i + 8].try_into().map(u64::from_be_bytes);
    let (seg, qid) = (u32_at(0).map_err(|_| bad())?, u32_at(4).map_err(|_| bad())?);
    let (seq, next) = (
        u64_at(8).map_err(|_| bad())?,
        u64_at(16).map_err(|_| bad())?,
    );
    if seq & DISC == 0 {
        return Err(FrontierError::corrupt("disc key", "seq without its flag"));
    }
    Ok((seg, qid, (next, seq)))
}

impl Store {
    /// The keyspace and key of position `pos` of queue `qid` (the key on
    /// the stack: this runs once per new URL).
    pub fn pending_key(&self, qid: u32, pos: LeaseKey) -> (&Keyspace, PendingKey) {
        let mut key = PendingKey([0; 24], 24);
        if is_disc(pos) {
            let seg = seg_of(pos.1, self.seg_bits);
            key.0 = disc_key(seg, qid, pos.1, pos.0);
            (&self.disc, key)
        } else {
            key.0[..20].copy_from_slice(&sched_key(qid, pos.0, pos.1));
            key.1 = 20;
            (&self.sched, key)
        }
    }

    /// Adds the entry of a pending URL to `batch`.
    pub fn pending_insert(
        &self,
        batch: &mut OwnedWriteBatch,
        qid: u32,
        pos: LeaseKey,
        body: Vec<u8>,
    ) {
        if is_disc(pos) {
            self.disc_top
                .fetch_max(seg_of(pos.1, self.seg_bits), Ordering::Relaxed);
        }
        let (ks, k) = self.pending_key(qid, pos);
        batch.insert(ks, k.as_ref(), body);
    }

    /// Adds the removal of a pending URL's entry to `batch`.
    pub fn pending_remove(&self, batch: &mut OwnedWriteBatch, qid: u32, pos: LeaseKey) {
        let (ks, k) = self.pending_key(qid, pos);
        batch.remove(ks, k.as_ref());
    }

    /// The body bytes of a pending URL, if its entry exists.
    pub fn pending_get(&self, qid: u32, pos: LeaseKey) -> Result<Option<UserValue>> {
        let (ks, k) = self.pending_key(qid, pos);
        Ok(ks.get(k)?)
    }

    /// Whether a pending URL's entry exists.
    pub fn pending_contains(&self, qid: u32, pos: LeaseKey) -> Result<bool> {
        let (ks, k) = self.pending_key(qid, pos);
        Ok(ks.contains_key(k)?)
    }

    /// Highest `disc` segment that may hold entries.
    pub fn disc_top(&self) -> u32 {
        self.disc_top.load(Ordering::Relaxed)
    }

    /// Calls `f(position, body bytes)` on every pending entry of queue
    /// `qid` (`sched` first, then `disc` segment by segment) until it
    /// returns false. One prefix scan per segment.
    pub fn for_each_pending(
        &self,
        qid: u32,
        mut f: impl FnMut(LeaseKey, UserValue) -> Result<bool>,
    ) -> Result<()> {
        for kv in self.sched.prefix(qid.to_be_bytes()) {
            let (k, v) = kv.into_inner()?;
            let (_, next, seq) = parse_sched_key(&k)?;
            if !f((next, seq), v)? {
                return Ok(());
            }
        }
        for seg in 1..=self.disc_top() {
            let mut prefix = [0u8; 8];
            prefix[..4].copy_from_slice(&seg.to_be_bytes());
            prefix[4..].copy_from_slice(&qid.to_be_bytes());
            for kv in self.disc.prefix(prefix) {
                let (k, v) = kv.into_inner()?;
                let (_, _, pos) = parse_disc_key(&k)?;
                if !f(pos, v)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The `disc` entries of queue `qid` from seq `from` (flagged) through
    /// segment `hi`, in seq order.
    pub fn disc_scan(&self, qid: u32, from: u64, hi: u32) -> DiscScan<'_> {
        DiscScan {
            store: self,
            qid,
            seg: seg_of(from, self.seg_bits),
            from,
            hi,
            iter: None,
        }
    }
}

/// A `sched` (20 bytes) or `disc` (24 bytes) key, on the stack.
pub struct PendingKey([u8; 24], usize);

impl AsRef<[u8]> for PendingKey {
    fn as_ref(&self) -> &[u8] {
        &self.0[..self.1]
    }
}

/// Iterator of [`Store::disc_scan`]: one range scan per segment.
pub struct DiscScan<'a> {
    store: &'a Store,
    qid: u32,
    seg: u32,
    from: u64,
    hi: u32,
    iter: Option<fjall::Iter>,
}

impl Iterator for DiscScan<'_> {
    type Item = Result<(LeaseKey, UserValue)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(it) = &mut self.iter {
                if let Some(kv) = it.next() {
                    return Some(kv.into_inner().map_err(Into::into).and_then(|(k, v)| {
                        let (_, _, pos) = parse_disc_key(&k)?;
                        Ok((pos, v))
                    }));
                }
                self.iter = None;
                self.seg = self.seg.checked_add(1)?;
            }
            if self.seg > self.hi {
                return None;
            }
            let from = disc_key(self.seg, self.qid, self.from, 0);
            let to = disc_key(self.seg, self.qid, u64::MAX, u64::MAX);
            self.iter = Some(self.store.disc.range(from..=to));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_follow_seqs() {
        assert_eq!(seg_of(DISC, 20), 1);
        assert_eq!(seg_of(DISC | ((1 << 20) - 1), 20), 1);
        assert_eq!(seg_of(DISC | (1 << 20), 20), 2);
        assert_eq!(seg_of(seg_start(1, 3), 3), 1);
        for seg in [2, 7, 1000] {
            assert_eq!(seg_of(seg_start(seg, 3), 3), seg);
            assert_eq!(seg_of(seg_start(seg, 3) - 1, 3), seg - 1);
        }
        assert!(is_disc((5, DISC | 9)) && !is_disc((5, 9)));
        assert_eq!(order((5, DISC | 9)), (5, 9));
    }

    #[test]
    fn disc_keys_round_trip_and_reject_garbage() {
        let k = disc_key(3, 77, DISC | 12, 1_700_000_000);
        assert_eq!(
            parse_disc_key(&k).unwrap(),
            (3, 77, (1_700_000_000, DISC | 12))
        );
        assert!(parse_disc_key(&k[..23]).is_err());
        assert!(parse_disc_key(&[0u8; 25]).is_err());
        // A seq without the flag is not a `disc` entry.
        assert!(parse_disc_key(&disc_key(3, 77, 12, 5)).is_err());
        // Keys sort by segment first, then queue, then discovery order.
        assert!(disc_key(1, 9, DISC | 5, 9) < disc_key(2, 0, DISC | 6, 0));
        assert!(disc_key(2, 0, DISC | 6, 9) < disc_key(2, 0, DISC | 7, 0));
    }
}
