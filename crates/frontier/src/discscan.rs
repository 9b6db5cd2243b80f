//! Reading queues' `disc` entries for `get`, with one iterator per segment
//! shared by every queue that one `get` call visits.
//!
//! ```text
//! get call ─ DiscCursors { segment → Cursor }   (dropped when the call ends)
//!   Cursor: fjall range iterator opened at key `start`
//!           entries handed out: exactly the keys in [start, last]
//!           head: the next entry, read but not handed out
//!   lease(q7)  ─ DiscScan(q7) ─ seg 1: position at (q7, from) ─ take while head's queue is q7
//!                             ─ seg 2: …                    ─ …
//!   lease(q9)  ─ DiscScan(q9) ─ seg 1: step forward from the head to (q9, from), take …
//! ```
//!
//! Why: a segment holds the URLs of all queues for its stretch of
//! discovery order, so a queue whose URLs came in over the whole put has a
//! few in each segment. Serving it opened a range in every segment: at
//! 100M URLs over 1M hosts (100 segments, about one URL per queue per
//! segment) one range per URL served, each a table index lookup and a
//! block load. A `get` pass visits queues mostly in id order (see `disc`),
//! the order of a segment's keys, so one iterator per segment, stepped
//! forward, serves the call.
//!
//! Invariants: a cursor is used for a scan whose first key is `target` only
//! if `target >= start` and `target > last`: no entry at or past `target`
//! has been handed out, so none is missed. The cursor steps over at most
//! [`MAX_STEP`] entries to reach `target`; further away, or behind, it is
//! reopened at `target` (one range open, as before). The cursors live for
//! one `get` call, under the table lock with the commits drained, so no
//! `disc` entry is added while they are open (and each iterator reads a
//! snapshot anyway). Memory: one iterator (its snapshot and current
//! blocks) per segment the call touches.

use std::collections::HashMap;

use fjall::{Keyspace, UserValue};

use crate::disc::{MAX_SEG, disc_key, parse_disc_key, seg_of};
use crate::error::Result;
use crate::store::Store;
use crate::table::LeaseKey;

/// Entries a cursor steps over to reach a scan's first key before it is
/// reopened there instead (a step reads one entry; an open looks up the
/// table index and loads a block).
const MAX_STEP: usize = 64;

/// The open segment iterators of one `get` call.
#[derive(Default)]
pub struct DiscCursors {
    open: HashMap<u32, Cursor>,
    /// Ranges opened (for the call's counters and tests).
    pub opened: u64,
}

/// One segment's iterator and its position (see the module docs).
struct Cursor {
    iter: fjall::Iter,
    start: [u8; 18],
    last: Option<[u8; 18]>,
    head: Option<Entry>,
}

/// A `disc` entry read from a segment.
struct Entry {
    key: [u8; 18],
    qid: u32,
    pos: LeaseKey,
    value: UserValue,
}

impl Cursor {
    fn open(ks: &Keyspace, target: [u8; 18]) -> Result<Self> {
        let mut c = Cursor {
            iter: ks.range(target..),
            start: target,
            last: None,
            head: None,
        };
        c.head = c.read()?;
        Ok(c)
    }

    fn read(&mut self) -> Result<Option<Entry>> {
        let Some(kv) = self.iter.next() else {
            return Ok(None);
        };
        let (k, value) = kv.into_inner()?;
        let (qid, pos) = parse_disc_key(&k)?;
        let mut key = [0u8; 18];
        key.copy_from_slice(&k);
        Ok(Some(Entry {
            key,
            qid,
            pos,
            value,
        }))
    }

    /// Hands out the head and reads the next one.
    fn advance(&mut self) -> Result<Option<Entry>> {
        let next = self.read()?;
        let old = std::mem::replace(&mut self.head, next);
        if let Some(e) = &old {
            self.last = Some(e.key);
        }
        Ok(old)
    }

    /// Whether no entry at or past `target` has been handed out.
    fn serves(&self, target: &[u8; 18]) -> bool {
        *target >= self.start && self.last.is_none_or(|l| *target > l)
    }

    /// Steps to the first entry at or past `target`; false if that is more
    /// than [`MAX_STEP`] entries away.
    fn step_to(&mut self, target: &[u8; 18]) -> Result<bool> {
        for _ in 0..=MAX_STEP {
            match &self.head {
                Some(e) if e.key < *target => {}
                _ => return Ok(true),
            }
            self.advance()?;
        }
        Ok(false)
    }
}

impl DiscCursors {
    /// Leaves segment `seg`'s cursor on the first entry at or past
    /// `target`, reusing the open one when it can.
    fn position(&mut self, store: &Store, seg: u32, ks: &Keyspace, target: [u8; 18]) -> Result<()> {
        if let Some(c) = self.open.get_mut(&seg)
            && c.serves(&target)
        {
            match c.step_to(&target) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => {
                    self.open.remove(&seg);
                    return Err(e);
                }
            }
        }
        store.segs.note_read(seg);
        self.opened += 1;
        let c = Cursor::open(ks, target)?;
        self.open.insert(seg, c);
        Ok(())
    }

    /// Segment `seg`'s head if it belongs to queue `qid`, handed out.
    fn take(&mut self, seg: u32, qid: u32) -> Result<Option<(LeaseKey, UserValue)>> {
        let Some(c) = self.open.get_mut(&seg) else {
            return Ok(None);
        };
        if c.head.as_ref().is_none_or(|e| e.qid != qid) {
            return Ok(None);
        }
        match c.advance() {
            Ok(e) => Ok(e.map(|e| (e.pos, e.value))),
            Err(e) => {
                self.open.remove(&seg);
                Err(e)
            }
        }
    }
}

impl Store {
    /// The `disc` entries of queue `qid` from seq `from` (flagged) through
    /// segment `hi`, in seq order, read through `cursors`.
    pub fn disc_scan<'a>(
        &'a self,
        cursors: &'a mut DiscCursors,
        qid: u32,
        from: u64,
        hi: u32,
    ) -> DiscScan<'a> {
        DiscScan {
            store: self,
            cursors,
            qid,
            seg: seg_of(from, self.seg_bits),
            from,
            hi,
            on: false,
        }
    }
}

/// Iterator of [`Store::disc_scan`]: the queue's entries segment by segment.
pub struct DiscScan<'a> {
    store: &'a Store,
    cursors: &'a mut DiscCursors,
    qid: u32,
    seg: u32,
    from: u64,
    hi: u32,
    /// Whether segment `seg`'s cursor has been positioned for this queue.
    on: bool,
}

impl Iterator for DiscScan<'_> {
    type Item = Result<(LeaseKey, UserValue)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.on {
                match self.cursors.take(self.seg, self.qid) {
                    Ok(Some(found)) => return Some(Ok(found)),
                    Ok(None) => {
                        self.on = false;
                        self.seg = self.seg.checked_add(1)?;
                    }
                    Err(e) => {
                        // Nothing more from this scan after an error.
                        self.on = false;
                        self.seg = u32::MAX;
                        return Some(Err(e));
                    }
                }
            }
            if self.seg > self.hi.min(MAX_SEG) {
                return None;
            }
            let Some(ks) = self.store.segs.get(self.seg) else {
                self.seg = self.seg.checked_add(1)?;
                continue;
            };
            let target = disc_key(self.qid, self.from, 0);
            if let Err(e) = self.cursors.position(self.store, self.seg, ks, target) {
                self.seg = u32::MAX;
                return Some(Err(e));
            }
            self.on = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::disc::DISC;
    use crate::store::StoreOptions;

    /// A store with 4 URLs per segment holding `entries` (qid, seq) as
    /// `disc` entries whose body is `qid:seq`.
    fn store_with(dir: &std::path::Path, entries: &[(u32, u64)]) -> Store {
        let opts = StoreOptions {
            segment_bits: 2,
            ..StoreOptions::default()
        };
        let store = Store::open(dir, opts).unwrap();
        let most = entries.iter().map(|e| e.1 + 1).max().unwrap_or(0);
        store.ensure_segments(0, most).unwrap();
        let mut batch = store.db.batch();
        for &(qid, seq) in entries {
            let body = format!("{qid}:{seq}");
            store
                .pending_insert(&mut batch, qid, (seq, DISC | seq), body.as_bytes())
                .unwrap();
        }
        batch.commit().unwrap();
        store
    }

    /// The first `take` entries of a scan, as (seq, body).
    fn scan(
        store: &Store,
        c: &mut DiscCursors,
        qid: u32,
        from: u64,
        hi: u32,
        take: usize,
    ) -> Vec<(u64, String)> {
        store
            .disc_scan(c, qid, DISC | from, hi)
            .take(take)
            .map(|r| {
                let (pos, v) = r.unwrap();
                (pos.1 & !DISC, String::from_utf8(v.to_vec()).unwrap())
            })
            .collect()
    }

    /// What a scan must return: queue `qid`'s entries from seq `from` in
    /// segments up to `hi`, in seq order.
    fn expected(
        entries: &[(u32, u64)],
        qid: u32,
        from: u64,
        hi: u32,
        take: usize,
    ) -> Vec<(u64, String)> {
        let mut v: Vec<_> = entries
            .iter()
            .filter(|&&(q, s)| q == qid && s >= from && seg_of(s, 2) <= hi)
            .map(|&(q, s)| (s, format!("{q}:{s}")))
            .collect();
        v.sort();
        v.truncate(take);
        v
    }

    #[test]
    fn queues_in_id_order_share_one_iterator_per_segment() {
        let d = tempfile::tempdir().unwrap();
        // 6 queues, 24 URLs in discovery order, each queue in every segment.
        let entries: Vec<(u32, u64)> = (0..24).map(|s| ((s % 6) as u32 + 1, s)).collect();
        let store = store_with(d.path(), &entries);
        let mut c = DiscCursors::default();
        for qid in 1..=6 {
            let got = scan(&store, &mut c, qid, 0, 6, usize::MAX);
            assert_eq!(got, expected(&entries, qid, 0, 6, usize::MAX));
            assert_eq!(got.len(), 4);
        }
        assert_eq!(c.opened, 6, "one range per segment for the whole pass");
        // Behind the cursors: reopened, and still complete.
        let got = scan(&store, &mut c, 2, 0, 6, usize::MAX);
        assert_eq!(got, expected(&entries, 2, 0, 6, usize::MAX));
        assert_eq!(c.opened, 12);
    }

    #[test]
    fn a_far_target_reopens_and_a_partial_scan_loses_nothing() {
        let d = tempfile::tempdir().unwrap();
        // Queue 1 has 3 URLs in segment 1, queues 2..=200 one each after.
        let mut entries = vec![(1, 0), (1, 1), (1, 2)];
        entries.extend((3..202).map(|s| (s as u32 - 1, s)));
        let store = store_with(d.path(), &entries);
        let mut c = DiscCursors::default();
        // One URL of queue 1: the cursor's head is its second.
        assert_eq!(
            scan(&store, &mut c, 1, 0, 1, 1),
            expected(&entries, 1, 0, 1, 1)
        );
        // Queue 1 again from its second URL: nothing handed out at or past it.
        assert_eq!(
            scan(&store, &mut c, 1, 1, 1, 9),
            expected(&entries, 1, 1, 1, 9)
        );
        assert_eq!(c.opened, 1);
        // And from its first: that one was handed out, so a new range.
        assert_eq!(
            scan(&store, &mut c, 1, 0, 1, 9),
            expected(&entries, 1, 0, 1, 9)
        );
        assert_eq!(c.opened, 2);
        // A queue far past the head of segment 1 (more than MAX_STEP
        // entries, here none in segment 1 at all) and across segments.
        let hi = seg_of(201, 2);
        for qid in [150, 199, 3] {
            assert_eq!(
                scan(&store, &mut c, qid, 0, hi, 9),
                expected(&entries, qid, 0, hi, 9)
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any order of scans (queues, starts, last segments, scans cut
        /// short) through one set of cursors returns what a fresh range per
        /// segment would.
        #[test]
        fn cursors_match_fresh_scans(
            qids in prop::collection::vec(1u32..12, 1..60),
            scans in prop::collection::vec((1u32..13, 0u64..70, 1u32..20, 0usize..6), 1..40),
        ) {
            let entries: Vec<(u32, u64)> = qids.iter().enumerate().map(|(s, &q)| (q, s as u64)).collect();
            let d = tempfile::tempdir().unwrap();
            let store = store_with(d.path(), &entries);
            let mut c = DiscCursors::default();
            for (qid, from, hi, take) in scans {
                let take = if take == 0 { usize::MAX } else { take };
                prop_assert_eq!(
                    scan(&store, &mut c, qid, from, hi, take),
                    expected(&entries, qid, from, hi, take)
                );
            }
        }
    }
}
