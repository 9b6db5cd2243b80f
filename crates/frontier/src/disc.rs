//! The discovery schedule (`disc`, keys of format 5, a keyspace per segment
//! since format 7): where `put_discovered` puts new URLs, in segments of
//! discovery order, so that the store only appends.
//!
//! ```text
//! disc.N seg (2) | qid (4, LE) | seq (6) | next fetch (8)  -> Body     20-byte keys
//!        seg = N = 1 + seq >> segment bits   (20: 1,048,576 URLs), at most MAX_SEG
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
//! Key shape (format 5; format 4 had `seg (4) | qid (4, BE) | seq (8) |
//! next (8)`, 24 bytes, converted at open by [`upgrade_v4`]): fjall keeps
//! keys of up to 20 bytes inline in its `ByteView`s (no heap block per key
//! in memtables and table blocks, no pointer to follow when comparing), and
//! compares the first 4 bytes before anything else. Those are the segment
//! and the low 16 bits of the qid (little-endian), which differ between
//! most neighbouring keys of a memtable, so most comparisons of a skiplist
//! insert or a compaction's merge end there (with a 4-byte segment they
//! always went on to a `memcmp`). A queue's entries in a segment stay
//! contiguous and in seq order; the order of queues inside a segment (by
//! their qid's bytes in this order) means nothing. Put phase at 10M URLs,
//! three alternating pairs: 43.3 / 43.0 / 42.8 s against 44.0 / 45.5 /
//! 46.4 s (docs/BENCHMARKS.md, "Session 14").
//!
//! Limits: a URL goes to `disc` only while its seq fits ([`fits`]: below
//! 2^48, segment at most [`MAX_SEG`], i.e. 2^36 URLs with 20 segment bits);
//! later ones go to `sched`, which takes any position (slower to write,
//! served the same).
//!
//! Invariants: every `disc` key's segment is `seg_of(seq)` of its seq and at
//! most [`MAX_SEG`]; the highest segment present is at most
//! `Store::disc_top`; a queue's entries in `disc` are found by one prefix
//! scan per segment from 1 to that top (`get` keeps per-queue marks so it
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

/// `disc` key of position (`next`, `seq`) in queue `qid` (`seq` fits, see
/// [`fits`]; a segment past [`MAX_SEG`] is written as `MAX_SEG`).
pub fn disc_key(seg: u32, qid: u32, seq: u64, next: u64) -> [u8; 20] {
    let mut k = [0u8; 20];
    k[..6].copy_from_slice(&disc_prefix(seg, qid));
    // Clamped rather than cut: a bound past the limit stays past it.
    let seq = (seq & !DISC).min(SEQ_LIMIT - 1);
    k[6..12].copy_from_slice(&seq.to_be_bytes()[2..]);
    k[12..].copy_from_slice(&next.to_be_bytes());
    k
}

/// The first 6 bytes of queue `qid`'s keys in segment `seg`.
fn disc_prefix(seg: u32, qid: u32) -> [u8; 6] {
    let seg = u16::try_from(seg).unwrap_or(u16::MAX);
    let mut p = [0u8; 6];
    p[..2].copy_from_slice(&seg.to_be_bytes());
    p[2..].copy_from_slice(&qid.to_le_bytes());
    p
}

/// Splits a `disc` key into (seg, qid, position); the seq gets its flag.
pub fn parse_disc_key(k: &[u8]) -> Result<(u32, u32, LeaseKey)> {
    let Ok(k) = <&[u8; 20]>::try_from(k) else {
        return Err(FrontierError::corrupt(
            "disc key",
            format!("{} bytes", k.len()),
        ));
    };
    let seg = u32::from(u16::from_be_bytes([k[0], k[1]]));
    if seg == 0 {
        return Err(FrontierError::corrupt("disc key", "segment 0"));
    }
    let qid = u32::from_le_bytes([k[2], k[3], k[4], k[5]]);
    let mut seq = [0u8; 8];
    seq[2..].copy_from_slice(&k[6..12]);
    let mut next = [0u8; 8];
    next.copy_from_slice(&k[12..]);
    let pos = (u64::from_be_bytes(next), DISC | u64::from_be_bytes(seq));
    Ok((seg, qid, pos))
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

/// Entries an upgrade moves per atomic batch.
const UPGRADE_BATCH: usize = 4096;

/// Converts the format-4 keys of `disc` to format 5 (values unchanged),
/// [`UPGRADE_BATCH`] entries per atomic batch (see [`move_entries`]). Keys
/// already converted are skipped. A format-4 entry whose seq does not fit
/// format 5 (more than 2^36 URLs discovered) is an error: such a store stays
/// with format 4. Returns the entries converted.
pub fn upgrade_v4(db: &Database, disc: &Keyspace, bits: u8) -> Result<u64> {
    move_entries(db, disc, |k| {
        if k.len() == 20 {
            return Ok(None);
        }
        let Some((qid, (next, seq))) = parse_v4_key(k) else {
            return Err(FrontierError::corrupt(
                "disc key",
                format!("{} bytes in a format-4 store", k.len()),
            ));
        };
        if !fits(seq, bits) {
            return Err(FrontierError::corrupt(
                "disc key",
                "seq beyond format 5's range (2^48, or segment 65,535)",
            ));
        }
        let key = disc_key(seg_of(seq, bits), qid, seq, next);
        Ok(Some((disc.clone(), key.to_vec())))
    })
}

/// Moves every entry of the format-6 `disc` keyspace (format-5 keys) into
/// its segment's keyspace, keys and values unchanged (see
/// [`move_entries`]). Returns the entries moved.
pub fn move_to_segments(
    db: &Database,
    disc: &Keyspace,
    segs: &crate::segments::Segments,
) -> Result<u64> {
    move_entries(db, disc, |k| {
        let (seg, _, _) = parse_disc_key(k)?;
        Ok(Some((segs.ensure(seg)?.clone(), k.to_vec())))
    })
}

/// Moves each entry of `disc` that `place` gives a new home (keyspace,
/// key), [`UPGRADE_BATCH`] entries per atomic batch that inserts the new
/// entries and removes the old, so a crash leaves every entry in exactly one
/// place and the next open moves the rest. Returns the entries moved.
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
            (
                self.segs.get(seg),
                PendingKey(disc_key(seg, qid, pos.1, pos.0)),
            )
        } else {
            (Some(&self.sched), PendingKey(sched_key(qid, pos.0, pos.1)))
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
        for (seg, ks) in self.segs.all() {
            for kv in ks.prefix(disc_prefix(seg, qid)) {
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

/// A `sched` or `disc` key (20 bytes each), on the stack.
pub struct PendingKey([u8; 20]);

impl AsRef<[u8]> for PendingKey {
    fn as_ref(&self) -> &[u8] {
        &self.0
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
            if self.seg > self.hi.min(MAX_SEG) {
                return None;
            }
            let Some(ks) = self.store.segs.get(self.seg) else {
                self.seg = self.seg.checked_add(1)?;
                continue;
            };
            self.store.segs.note_read(self.seg);
            let from = disc_key(self.seg, self.qid, self.from, 0);
            let to = disc_key(self.seg, self.qid, SEQ_LIMIT - 1, u64::MAX);
            self.iter = Some(ks.range(from..=to));
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
        let big = disc_key(MAX_SEG, u32::MAX, DISC | (SEQ_LIMIT - 1), u64::MAX);
        assert_eq!(
            parse_disc_key(&big).unwrap(),
            (MAX_SEG, u32::MAX, (u64::MAX, DISC | (SEQ_LIMIT - 1)))
        );
        assert!(parse_disc_key(&k[..19]).is_err());
        assert!(parse_disc_key(&[0u8; 21]).is_err());
        assert!(parse_disc_key(&[1u8; 24]).is_err());
        // Segments are 1-based.
        assert!(parse_disc_key(&disc_key(0, 1, DISC | 1, 1)).is_err());
        // A seq past the limit is clamped, never wrapped (scan bounds).
        let (_, _, (_, seq)) = parse_disc_key(&disc_key(1, 1, DISC | SEQ_LIMIT | 5, 0)).unwrap();
        assert_eq!(seq, DISC | (SEQ_LIMIT - 1));
    }

    #[test]
    fn disc_keys_sort_by_segment_then_queue_then_seq() {
        assert!(disc_key(1, 9, DISC | 5, 9) < disc_key(2, 0, DISC | 6, 0));
        assert!(disc_key(2, 7, DISC | 6, 9) < disc_key(2, 7, DISC | 7, 0));
        assert!(disc_key(2, 7, DISC | 255, 9) < disc_key(2, 7, DISC | 256, 0));
        // A queue's entries in a segment share a prefix that no other
        // queue's keys have.
        for (qid, other) in [(7, 8), (7, 7 + (1 << 16)), (0, u32::MAX)] {
            let p = disc_prefix(2, qid);
            assert!(disc_key(2, qid, DISC | 3, 4).starts_with(&p));
            assert!(!disc_key(2, other, DISC | 3, 4).starts_with(&p));
        }
        // The 4 bytes fjall compares first differ between neighbouring queues.
        assert_ne!(disc_key(2, 1, DISC, 0)[..4], disc_key(2, 2, DISC, 0)[..4]);
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

    #[test]
    fn format_4_keys_parse() {
        let mut k = [0u8; 24];
        k[..4].copy_from_slice(&3u32.to_be_bytes());
        k[4..8].copy_from_slice(&77u32.to_be_bytes());
        k[8..16].copy_from_slice(&(DISC | 12).to_be_bytes());
        k[16..].copy_from_slice(&99u64.to_be_bytes());
        assert_eq!(parse_v4_key(&k), Some((77, (99, DISC | 12))));
        assert_eq!(parse_v4_key(&k[..20]), None);
        k[8] = 0;
        assert_eq!(parse_v4_key(&k), None, "a seq without its flag");
    }
}
