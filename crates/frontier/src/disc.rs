//! The discovery schedule (`disc`, a keyspace per segment since format 7,
//! keys of format 8): where `put_discovered` puts new URLs, in segments of
//! discovery order, so that the store only appends.
//!
//! ```text
//! disc.N qid (4, BE) | seq (6) | next fetch (8)         -> Body     18-byte keys
//!        N = seg_of(seq) = 1 + seq >> segment bits   (20: 1,048,576 URLs), at most MAX_SEG
//!        seq without its flag bit, < 2^48
//! sched  qid (4) | next fetch (8) | seq (8)                 -> Body     20-byte keys
//! ```
//!
//! Why: `sched` sorts a queue's URLs together, so the URLs of one batch
//! land all over its key space and every leveled compaction rewrote most of
//! it (at 10M URLs / 100,000 hosts compaction was ~40 % of the put's CPU).
//! A `disc` key belongs to its segment, and segments only grow: the
//! tables fjall flushes overlap only within the current segment. Each
//! segment is its own keyspace (`segments`), so a compaction never merges
//! tables of two segments (in one keyspace it did, see `segments`).
//!
//! Positions ([`LeaseKey`] = (next fetch, seq)) name an entry in either
//! keyspace: a `disc` entry's seq carries [`DISC`] (bit 63), the only
//! difference, so leases, `urls` pointers and seen-log positions keep their
//! 16 bytes, and positions written before format 4 (no flag) are `sched`
//! ones. A segment is derived from the seq, never stored.
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
//! Key shape (format 8). Within a segment, keys go by queue id, and a
//! queue's entries are contiguous and in seq order. Each round of the
//! `get` ring visits domains in the order of the queue id each serves next
//! (`ring`), so a `get` pass reads each segment front to back and its 4 KiB
//! blocks are loaded once for the ~10-40 queues they hold, not once per
//! queue. Format 5 began with the
//! segment and the queue id little-endian (neighbouring queues far apart):
//! the 10M crawler loop under `mgz serve` served 45,380 URLs/s with it and
//! 83,451/s with big-endian queue ids (docs/BENCHMARKS.md, "Session 20").
//! The segment is left out (each segment has its own keyspace, and it
//! follows from the seq): the first 4 bytes, which fjall compares before
//! anything else, are then the queue id, which differs between most
//! neighbouring keys of a memtable, so most comparisons of a skiplist
//! insert or a compaction's merge end there. fjall keeps keys of up to 20
//! bytes inline in its `ByteView`s (no heap block per key). Older keys:
//! format 4 had `seg (4) | qid (4, BE) | seq (8) | next (8)`, 24 bytes;
//! formats 5 to 7 `seg (2) | qid (4, LE) | seq (6) | next (8)`, 20 bytes;
//! both are converted at open ([`move_to_segments`], [`convert_segment`]).
//!
//! Limits: a URL goes to `disc` only while its seq fits ([`fits`]: below
//! 2^48, segment at most [`MAX_SEG`], i.e. 2^36 URLs with 20 segment bits);
//! later ones go to `sched`, which takes any position (slower to write,
//! served the same).
//!
//! Invariants: every `disc` key lives in the keyspace of segment
//! `seg_of(seq)` of its seq, at most [`MAX_SEG`]; the highest segment
//! present is at most `Store::disc_top`; a queue's entries in `disc` are
//! found by one prefix scan per segment from 1 to that top (`get` keeps per-queue marks so it
//! reads only from where it stopped).

use fjall::{Database, Keyspace, OwnedWriteBatch, UserValue};

use crate::codec::{parse_sched_key, sched_key};
use crate::error::{FrontierError, Result};
use crate::store::Store;
use crate::table::LeaseKey;

/// Flag bit of a `disc` entry's seq.
pub const DISC: u64 = 1 << 63;

/// Segment bits of a new store: 2^20 discovered URLs per segment.
pub const DEFAULT_SEGMENT_BITS: u8 = 20;

/// Highest segment a `disc` key can name (2 bytes).
pub const MAX_SEG: u32 = 65_535;

/// Seqs of `disc` entries are below this (6 bytes in the key).
pub const SEQ_LIMIT: u64 = 1 << 48;

/// Whether a URL with seq `seq` may go to `disc` (see the module docs).
pub fn fits(seq: u64, bits: u8) -> bool {
    let seq = seq & !DISC;
    seq < SEQ_LIMIT && seg_of(seq, bits) <= MAX_SEG
}

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

/// `disc` key (format 8) of position (`next`, `seq`) in queue `qid`; it
/// goes into the keyspace of segment `seg_of(seq)` (`seq` fits, see
/// [`fits`]).
pub fn disc_key(qid: u32, seq: u64, next: u64) -> [u8; 18] {
    let mut k = [0u8; 18];
    k[..4].copy_from_slice(&disc_prefix(qid));
    // Clamped rather than cut: a bound past the limit stays past it.
    let seq = (seq & !DISC).min(SEQ_LIMIT - 1);
    k[4..10].copy_from_slice(&seq.to_be_bytes()[2..]);
    k[10..].copy_from_slice(&next.to_be_bytes());
    k
}

/// The first 4 bytes of queue `qid`'s keys in any segment.
fn disc_prefix(qid: u32) -> [u8; 4] {
    qid.to_be_bytes()
}

/// Splits a `disc` key (format 8) into (qid, position); the seq gets its
/// flag. Its segment is `seg_of` the seq.
pub fn parse_disc_key(k: &[u8]) -> Result<(u32, LeaseKey)> {
    let Ok(k) = <&[u8; 18]>::try_from(k) else {
        return Err(FrontierError::corrupt(
            "disc key",
            format!("{} bytes", k.len()),
        ));
    };
    let qid = u32::from_be_bytes([k[0], k[1], k[2], k[3]]);
    let mut seq = [0u8; 8];
    seq[2..].copy_from_slice(&k[4..10]);
    let mut next = [0u8; 8];
    next.copy_from_slice(&k[10..]);
    Ok((
        qid,
        (u64::from_be_bytes(next), DISC | u64::from_be_bytes(seq)),
    ))
}

/// A format-5 `disc` key (formats 5 to 7: 20 bytes, `seg u16 BE | qid u32
/// LE | seq 48 bits BE | next u64 BE`) as (seg, qid, position).
fn parse_v5_key(k: &[u8]) -> Option<(u32, u32, LeaseKey)> {
    let k = <&[u8; 20]>::try_from(k).ok()?;
    let seg = u32::from(u16::from_be_bytes([k[0], k[1]]));
    let qid = u32::from_le_bytes([k[2], k[3], k[4], k[5]]);
    let mut seq = [0u8; 8];
    seq[2..].copy_from_slice(&k[6..12]);
    let next = u64::from_be_bytes(k[12..].try_into().ok()?);
    (seg > 0).then_some((seg, qid, (next, DISC | u64::from_be_bytes(seq))))
}

/// A format-4 `disc` key (24 bytes: `seg u32 | qid u32 | seq u64 | next
/// u64`, big-endian, seq flagged) as (qid, position).
fn parse_v4_key(k: &[u8]) -> Option<(u32, LeaseKey)> {
    let k = <&[u8; 24]>::try_from(k).ok()?;
    let qid = u32::from_be_bytes([k[4], k[5], k[6], k[7]]);
    let seq = u64::from_be_bytes(k[8..16].try_into().ok()?);
    let next = u64::from_be_bytes(k[16..].try_into().ok()?);
    (seq & DISC != 0).then_some((qid, (next, seq)))
}

/// Segment, queue and position of a key of the legacy `disc` keyspace
/// (formats 4 to 6: format-4 or format-5 keys).
fn parse_legacy_key(k: &[u8], bits: u8) -> Result<(u32, u32, LeaseKey)> {
    if let Some(found) = parse_v5_key(k) {
        return Ok(found);
    }
    let Some((qid, (next, seq))) = parse_v4_key(k) else {
        return Err(FrontierError::corrupt(
            "disc key",
            format!("{} bytes, not a format-4 or format-5 key", k.len()),
        ));
    };
    if !fits(seq, bits) {
        return Err(FrontierError::corrupt(
            "disc key",
            "seq beyond the range of disc keys (2^48, or segment 65,535)",
        ));
    }
    Ok((seg_of(seq, bits), qid, (next, seq)))
}

/// Entries an upgrade moves per atomic batch.
const UPGRADE_BATCH: usize = 4096;

/// Moves every entry of the legacy `disc` keyspace (formats 4 to 6) into
/// its segment's keyspace with a format-8 key, values unchanged (see
/// [`move_entries`]). Returns the entries moved.
pub fn move_to_segments(
    db: &Database,
    disc: &Keyspace,
    segs: &crate::segments::Segments,
    bits: u8,
) -> Result<u64> {
    move_entries(db, disc, |k| {
        let (seg, qid, (next, seq)) = parse_legacy_key(k, bits)?;
        Ok(Some((
            segs.ensure(seg)?.clone(),
            disc_key(qid, seq, next).to_vec(),
        )))
    })
}

/// Rewrites the format-5 keys of segment keyspace `ks` (format 7) as
/// format-8 keys, values unchanged; keys already converted are skipped (see
/// [`move_entries`]). Returns the keys rewritten.
pub fn convert_segment(db: &Database, ks: &Keyspace) -> Result<u64> {
    move_entries(db, ks, |k| {
        if k.len() == 18 {
            return Ok(None);
        }
        let Some((_, qid, (next, seq))) = parse_v5_key(k) else {
            return Err(FrontierError::corrupt(
                "disc key",
                format!("{} bytes in a format-7 segment", k.len()),
            ));
        };
        Ok(Some((ks.clone(), disc_key(qid, seq, next).to_vec())))
    })
}

/// Moves each entry of `disc` that `place` gives a new home (keyspace,
/// key), [`UPGRADE_BATCH`] entries per atomic batch that inserts the new
/// entries and removes the old, so a crash leaves every entry in exactly one
/// place and the next open moves the rest. The scan reads a snapshot taken
/// at its start, so entries it moves within `disc` are not met again.
/// Returns the entries moved.
fn move_entries(
    db: &Database,
    disc: &Keyspace,
    mut place: impl FnMut(&[u8]) -> Result<Option<(Keyspace, Vec<u8>)>>,
) -> Result<u64> {
    let mut batch = db.batch();
    let (mut pending, mut moved) = (0usize, 0u64);
    for kv in disc.iter() {
        let (k, v) = kv.into_inner()?;
        let Some((ks, key)) = place(&k)? else {
            continue;
        };
        batch.insert(&ks, key, v);
        batch.remove(disc, k);
        pending += 1;
        moved += 1;
        if pending == UPGRADE_BATCH {
            std::mem::replace(&mut batch, db.batch()).commit()?;
            pending = 0;
        }
    }
    batch.commit()?;
    Ok(moved)
}

impl Store {
    /// The keyspace and key of position `pos` of queue `qid` (the key on
    /// the stack: this runs once per new URL).
    /// `None` for a `disc` position whose segment has no keyspace (so no
    /// entry).
    pub fn pending_key(&self, qid: u32, pos: LeaseKey) -> (Option<&Keyspace>, PendingKey) {
        if is_disc(pos) {
            let seg = seg_of(pos.1, self.seg_bits);
            let k = disc_key(qid, pos.1, pos.0);
            let mut key = PendingKey([0; 20], k.len());
            key.0[..k.len()].copy_from_slice(&k);
            (self.segs.get(seg), key)
        } else {
            (
                Some(&self.sched),
                PendingKey(sched_key(qid, pos.0, pos.1), 20),
            )
        }
    }

    /// Adds the entry of a pending URL to `batch`. A `disc` position's
    /// segment must have its keyspace already ([`Store::ensure_segments`],
    /// called under the table lock before seqs are given); if not, this is
    /// a `Corrupt` error and nothing is added.
    pub fn pending_insert(
        &self,
        batch: &mut OwnedWriteBatch,
        qid: u32,
        pos: LeaseKey,
        body: &[u8],
    ) -> Result<()> {
        match self.pending_key(qid, pos) {
            (Some(ks), k) => {
                batch.insert(ks, k.as_ref(), body);
                Ok(())
            }
            (None, _) => Err(FrontierError::corrupt(
                "disc segment",
                format!("no keyspace for seq {}", pos.1 & !DISC),
            )),
        }
    }

    /// Adds the removal of a pending URL's entry to `batch` (nothing when
    /// its `disc` segment has no keyspace: then there is no entry).
    pub fn pending_remove(&self, batch: &mut OwnedWriteBatch, qid: u32, pos: LeaseKey) {
        if let (Some(ks), k) = self.pending_key(qid, pos) {
            batch.remove(ks, k.as_ref());
            if is_disc(pos) {
                self.segs.note_removal(seg_of(pos.1, self.seg_bits));
            }
        }
    }

    /// The body bytes of a pending URL, if its entry exists.
    pub fn pending_get(&self, qid: u32, pos: LeaseKey) -> Result<Option<UserValue>> {
        match self.pending_key(qid, pos) {
            (Some(ks), k) => Ok(ks.get(k)?),
            (None, _) => Ok(None),
        }
    }

    /// Whether a pending URL's entry exists.
    pub fn pending_contains(&self, qid: u32, pos: LeaseKey) -> Result<bool> {
        match self.pending_key(qid, pos) {
            (Some(ks), k) => Ok(ks.contains_key(k)?),
            (None, _) => Ok(false),
        }
    }

    /// Highest `disc` segment that may hold entries: the highest with a
    /// keyspace.
    pub fn disc_top(&self) -> u32 {
        self.segs.top()
    }

    /// Makes the keyspaces of the segments that the next `n` seqs from
    /// `next_seq` fall in (those that fit `disc` keys). Called under the
    /// table lock before a batch's positions are given, so a failure leaves
    /// nothing decided.
    pub fn ensure_segments(&self, next_seq: u64, n: u64) -> Result<()> {
        if n == 0 || !fits(next_seq, self.seg_bits) {
            return Ok(());
        }
        let last = next_seq.saturating_add(n - 1);
        self.segs.ensure_range(
            seg_of(next_seq, self.seg_bits),
            seg_of(last, self.seg_bits).min(MAX_SEG),
        )
    }

    /// Every `disc` entry, segment by segment, in key order.
    pub fn disc_iter(&self) -> impl Iterator<Item = fjall::Guard> + '_ {
        self.segs.all().flat_map(|(_, ks)| ks.iter())
    }

    /// Calls `f(queue id, position, body bytes)` on every pending entry
    /// of every queue (`sched` first, then `disc` segment by segment)
    /// until it returns false: one pass over each keyspace, for a census
    /// (one prefix scan per queue and keyspace costs a seek each).
    pub fn for_each_pending_all(
        &self,
        mut f: impl FnMut(u32, LeaseKey, UserValue) -> Result<bool>,
    ) -> Result<()> {
        for kv in self.sched.iter() {
            let (k, v) = kv.into_inner()?;
            let (qid, next, seq) = parse_sched_key(&k)?;
            if !f(qid, (next, seq), v)? {
                return Ok(());
            }
        }
        for (_, ks) in self.segs.all() {
            for kv in ks.iter() {
                let (k, v) = kv.into_inner()?;
                let (qid, pos) = parse_disc_key(&k)?;
                if !f(qid, pos, v)? {
                    return Ok(());
                }
            }
        }
        Ok(())
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
        for (_, ks) in self.segs.all() {
            for kv in ks.prefix(disc_prefix(qid)) {
                let (k, v) = kv.into_inner()?;
                let (_, pos) = parse_disc_key(&k)?;
                if !f(pos, v)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// A `sched` key (20 bytes) or a `disc` key (18), on the stack: the bytes
/// and the length used.
pub struct PendingKey([u8; 20], usize);

impl AsRef<[u8]> for PendingKey {
    fn as_ref(&self) -> &[u8] {
        &self.0[..self.1]
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
        let k = disc_key(77, DISC | 12, 1_700_000_000);
        assert_eq!(
            parse_disc_key(&k).unwrap(),
            (77, (1_700_000_000, DISC | 12))
        );
        let big = disc_key(u32::MAX, DISC | (SEQ_LIMIT - 1), u64::MAX);
        assert_eq!(
            parse_disc_key(&big).unwrap(),
            (u32::MAX, (u64::MAX, DISC | (SEQ_LIMIT - 1)))
        );
        assert!(parse_disc_key(&k[..17]).is_err());
        assert!(parse_disc_key(&[0u8; 19]).is_err());
        assert!(parse_disc_key(&[1u8; 20]).is_err(), "a format-5 key");
        assert!(parse_disc_key(&[1u8; 24]).is_err());
        // A seq past the limit is clamped, never wrapped (scan bounds).
        let (_, (_, seq)) = parse_disc_key(&disc_key(1, DISC | SEQ_LIMIT | 5, 0)).unwrap();
        assert_eq!(seq, DISC | (SEQ_LIMIT - 1));
    }

    #[test]
    fn disc_keys_sort_by_queue_then_seq() {
        assert!(disc_key(1, DISC | 9, 9) < disc_key(2, DISC | 5, 0));
        assert!(disc_key(7, DISC | 6, 9) < disc_key(7, DISC | 7, 0));
        assert!(disc_key(7, DISC | 255, 9) < disc_key(7, DISC | 256, 0));
        // Neighbouring queue ids are neighbours in key order (a `get` pass
        // over queues in id order reads a segment front to back).
        assert!(disc_key(255, DISC | 9, 9) < disc_key(256, DISC, 0));
        assert!(disc_key(65_535, DISC | 9, 9) < disc_key(65_536, DISC, 0));
        // A queue's entries share a prefix that no other queue's keys have.
        for (qid, other) in [(7, 8), (7, 7 + (1 << 16)), (0, u32::MAX)] {
            let p = disc_prefix(qid);
            assert!(disc_key(qid, DISC | 3, 4).starts_with(&p));
            assert!(!disc_key(other, DISC | 3, 4).starts_with(&p));
        }
        // The 4 bytes fjall compares first differ between neighbouring queues.
        assert_ne!(disc_key(1, DISC, 0)[..4], disc_key(2, DISC, 0)[..4]);
    }

    #[test]
    fn legacy_keys_parse() {
        // Format 5: seg u16 BE | qid u32 LE | seq 48 bits BE | next u64 BE.
        let mut k5 = [0u8; 20];
        k5[..2].copy_from_slice(&3u16.to_be_bytes());
        k5[2..6].copy_from_slice(&77u32.to_le_bytes());
        k5[6..12].copy_from_slice(&12u64.to_be_bytes()[2..]);
        k5[12..].copy_from_slice(&99u64.to_be_bytes());
        assert_eq!(parse_v5_key(&k5), Some((3, 77, (99, DISC | 12))));
        assert_eq!(parse_legacy_key(&k5, 20).unwrap(), (3, 77, (99, DISC | 12)));
        assert_eq!(parse_v5_key(&k5[..18]), None);
        // Segments are 1-based.
        k5[..2].copy_from_slice(&[0, 0]);
        assert_eq!(parse_v5_key(&k5), None);
        assert!(parse_legacy_key(&k5, 20).is_err());
        assert!(parse_legacy_key(b"short", 20).is_err());
        // Format 4: 24 bytes, its segment recomputed from the seq.
        let v4 = |seq: u64| {
            let mut k = [0u8; 24];
            k[..4].copy_from_slice(&9u32.to_be_bytes());
            k[4..8].copy_from_slice(&77u32.to_be_bytes());
            k[8..16].copy_from_slice(&seq.to_be_bytes());
            k[16..].copy_from_slice(&99u64.to_be_bytes());
            k
        };
        let seq = DISC | (5 << 20) | 12;
        assert_eq!(parse_v4_key(&v4(seq)), Some((77, (99, seq))));
        assert_eq!(parse_legacy_key(&v4(seq), 20).unwrap(), (6, 77, (99, seq)));
        assert_eq!(parse_v4_key(&v4(12)), None, "a seq without its flag");
        assert!(parse_legacy_key(&v4(12), 20).is_err());
        assert!(
            parse_legacy_key(&v4(DISC | SEQ_LIMIT), 40).is_err(),
            "beyond 2^48"
        );
    }

    #[test]
    fn seqs_fit_while_key_fields_hold_them() {
        assert!(fits(DISC | 5, 20));
        assert!(fits(((MAX_SEG as u64) << 20) - 1, 20));
        assert!(!fits((MAX_SEG as u64) << 20, 20));
        assert!(fits(SEQ_LIMIT - 1, 40));
        assert!(!fits(SEQ_LIMIT, 40));
        assert!(!fits(u64::MAX, 1));
    }
}
