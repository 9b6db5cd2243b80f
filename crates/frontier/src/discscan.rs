//! Reading queues' `disc` entries for `get`, with segment iterators shared
//! by the queues that one `get` call visits.
//!
//! ```text
//! get call ─ DiscCursors { segment → up to 8 Cursors }   (dropped when the call ends)
//!   Cursor: fjall range iterator opened at key `start`
//!           entries handed out: exactly the keys in [start, last]
//!           head: the next entry, read but not handed out
//!   lease(q7)  ─ DiscScan(q7) ─ seg 1: a cursor at (q7, from) ─ take while head's queue is q7
//!                             ─ seg 2: …                     ─ …
//!   lease(q9)  ─ DiscScan(q9) ─ seg 1: the same cursor stepped on to (q9, from), take …
//! ```
//!
//! Why: a segment holds the URLs of all queues for its stretch of
//! discovery order, so a queue whose URLs came in over the whole put has a
//! few in each segment. Serving it opened a range in every segment: at
//! 100M URLs over 1M hosts (100 segments, about one URL per queue per
//! segment) one range per URL served, each a table index lookup and a
//! block load. A `get` call visits queues in runs of ascending ids (each
//! round of the domain ring is sorted by the queue id each domain serves
//! next, see `ring`; a call that spans two rounds holds two runs), the
//! order of a segment's keys, so a cursor per run and segment, stepped
//! forward, serves them.
//!
//! Choice of cursor for a scan starting at `target`: one whose head is at
//! or past it (nothing to read), else the one closest behind it if its
//! queue id is within [`NEAR_QIDS`] and [`MAX_STEP`] steps reach it, else
//! a new range at `target` (the cost of the old way), replacing the least
//! recently used of the segment's [`CURSORS_PER_SEG`].
//!
//! Invariants: a cursor is used for a scan starting at `target` only if
//! `target >= start` and `target > last`: no entry at or past `target` has
//! been handed out, so none is missed. The cursors live for one `get`
//! call, under the table lock with the commits drained, so no `disc` entry
//! is added while they are open (and each iterator reads a snapshot
//! anyway). Memory: at most [`CURSORS_PER_SEG`] iterators (a snapshot and
//! the current block of each table) per segment the call touches.
//!
//! Errors: a malformed key read by a cursor ends the scan with `Corrupt`
//! and drops that cursor (nothing is removed). A cursor reads one entry
//! ahead, so the scan of a queue whose range reaches the bad key with
//! nothing of its own left fails too.

use std::collections::HashMap;

use fjall::{Keyspace, UserValue};

use crate::disc::{MAX_SEG, disc_key, parse_disc_key, seg_of};
use crate::error::Result;
use crate::store::Store;
use crate::table::LeaseKey;

/// Entries a cursor steps over to reach a scan's first key before a new
/// one is opened there instead (a step reads one entry; an open looks up
/// the table index and loads a block).
const MAX_STEP: usize = 64;

/// Queue ids a cursor may be behind a scan's queue and still be stepped
/// (further, the entries between are likely more than [`MAX_STEP`]).
const NEAR_QIDS: u32 = 16;

/// Cursors kept per segment: a call that serves a domain's hosts in turn
/// visits several ascending runs of queue ids at once (one per host of a
/// domain), and each run keeps its own cursor.
const CURSORS_PER_SEG: usize = 8;

/// The open segment iterators of one `get` call.
#[derive(Default)]
pub struct DiscCursors {
    open: HashMap<u32, Vec<Cursor>>,
    /// Scans positioned so far (orders cursors by last use).
    tick: u64,
    /// Ranges opened so far (read by the tests).
    pub opened: u64,
}

/// One segment iterator and its position (see the module docs).
struct Cursor {
    iter: fjall::Iter,
    start: [u8; 18],
    last: Option<[u8; 18]>,
    head: Option<Entry>,
    /// `DiscCursors::tick` of its last use.
    used: u64,
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
            used: 0,
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

    /// Sort key of the cursors that may serve `target` (see
    /// [`DiscCursors::position`]): the head's key, or past every key when it
    /// has none (nothing left: as good as positioned).
    fn reach(&self) -> [u8; 18] {
        self.head.as_ref().map_or([u8::MAX; 18], |e| e.key)
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
    /// Leaves one of segment `seg`'s cursors on the first entry at or past
    /// `target` and returns its index: one already there, or the one closest
    /// behind it if near enough to step, or a new one (replacing the least
    /// recently used when the segment has [`CURSORS_PER_SEG`]).
    fn position(
        &mut self,
        store: &Store,
        seg: u32,
        ks: &Keyspace,
        target: [u8; 18],
    ) -> Result<usize> {
        self.tick += 1;
        let tick = self.tick;
        let cursors = self.open.entry(seg).or_default();
        let there = cursors
            .iter()
            .enumerate()
            .filter(|(_, c)| c.serves(&target))
            .map(|(i, c)| (c.reach() >= target, c.reach(), i));
        // Positioned ones first (the lowest head), else the highest head.
        let best = there.min_by(|a, b| match (a.0, b.0) {
            (true, true) => a.1.cmp(&b.1),
            (false, false) => b.1.cmp(&a.1),
            (x, y) => y.cmp(&x),
        });
        if let Some((_, _, i)) = best {
            let c = &mut cursors[i];
            let near = c
                .head
                .as_ref()
                .is_none_or(|e| target_qid(&target).saturating_sub(e.qid) <= NEAR_QIDS);
            if near {
                match c.step_to(&target) {
                    Ok(true) => {
                        c.used = tick;
                        return Ok(i);
                    }
                    Ok(false) => {}
                    Err(e) => {
                        cursors.swap_remove(i);
                        return Err(e);
                    }
                }
            }
        }
        store.segs.note_read(seg);
        self.opened += 1;
        let mut c = Cursor::open(ks, target)?;
        c.used = tick;
        if cursors.len() < CURSORS_PER_SEG {
            cursors.push(c);
            return Ok(cursors.len() - 1);
        }
        let lru = (0..cursors.len())
            .min_by_key(|&i| cursors[i].used)
            .unwrap_or(0);
        cursors[lru] = c;
        Ok(lru)
    }

    /// The head of cursor `i` of segment `seg` if it belongs to queue
    /// `qid`, handed out.
    fn take(&mut self, seg: u32, i: usize, qid: u32) -> Result<Option<(LeaseKey, UserValue)>> {
        let Some(cursors) = self.open.get_mut(&seg) else {
            return Ok(None);
        };
        let Some(c) = cursors.get_mut(i) else {
            return Ok(None);
        };
        if c.head.as_ref().is_none_or(|e| e.qid != qid) {
            return Ok(None);
        }
        match c.advance() {
            Ok(e) => Ok(e.map(|e| (e.pos, e.value))),
            Err(e) => {
                cursors.swap_remove(i);
                Err(e)
            }
        }
    }
}

/// The queue id of a `disc` key.
fn target_qid(k: &[u8; 18]) -> u32 {
    u32::from_be_bytes([k[0], k[1], k[2], k[3]])
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
            at: None,
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
    /// The cursor of segment `seg` positioned for this queue.
    at: Option<usize>,
}

impl Iterator for DiscScan<'_> {
    type Item = Result<(LeaseKey, UserValue)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(i) = self.at {
                match self.cursors.take(self.seg, i, self.qid) {
                    Ok(Some(found)) => return Some(Ok(found)),
                    Ok(None) => {
                        self.at = None;
                        self.seg = self.seg.checked_add(1)?;
                    }
                    Err(e) => {
                        // Nothing more from this scan after an error.
                        self.at = None;
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
            match self.cursors.position(self.store, self.seg, ks, target) {
                Ok(i) => self.at = Some(i),
                Err(e) => {
                    self.seg = u32::MAX;
                    return Some(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::disc::DISC;
    use crate::store::StoreOptions;

    /// A store with 2^`bits` URLs per segment holding `entries` (qid, seq)
    /// as `disc` entries whose body is `qid:seq`.
    fn store_bits(dir: &std::path::Path, entries: &[(u32, u64)], bits: u8) -> Store {
        let opts = StoreOptions {
            segment_bits: bits,
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

    /// [`store_bits`] with 4 URLs per segment.
    fn store_with(dir: &std::path::Path, entries: &[(u32, u64)]) -> Store {
        store_bits(dir, entries, 2)
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

    /// Queue `qid`'s entries, in seq order (all of them: at most 9).
    fn expected_all(entries: &[(u32, u64)], qid: u32) -> Vec<(u64, String)> {
        let mut v: Vec<_> = entries
            .iter()
            .filter(|&&(q, _)| q == qid)
            .map(|&(q, s)| (s, format!("{q}:{s}")))
            .collect();
        v.sort();
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
    fn interleaved_runs_of_queue_ids_keep_a_cursor_each() {
        let d = tempfile::tempdir().unwrap();
        // 400 queues, 1,600 URLs, 512 per segment: every queue in each of
        // the 4 segments.
        let entries: Vec<(u32, u64)> = (0..1600).map(|s| ((s % 400) as u32, s)).collect();
        let store = store_bits(d.path(), &entries, 9);
        let mut c = DiscCursors::default();
        // Domains of four hosts 100 ids apart, served host by host: four
        // ascending runs, interleaved.
        for base in 0..100 {
            for run in 0..4 {
                let qid = base + 100 * run;
                assert_eq!(
                    scan(&store, &mut c, qid, 0, 4, 9),
                    expected_all(&entries, qid)
                );
            }
        }
        // At most a cursor per run and segment (segment 4 holds only the
        // queues from 336 on), where a range per queue and segment is 1,600.
        assert!((4..=16).contains(&c.opened), "{} ranges opened", c.opened);
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

    /// A malformed key in a segment (a torn or foreign write) ends each
    /// scan whose reading reaches it with a `Corrupt` error: the queue it
    /// sorts in, whether a cursor steps onto it or a range starts there, and
    /// a queue just before it whose range holds nothing else (a cursor reads
    /// one entry ahead). The cursor that met it is dropped; scans that do not
    /// reach it, through the same cursors, return every entry, and nothing is
    /// removed.
    #[test]
    fn a_malformed_key_fails_the_scans_that_reach_it_and_only_those() {
        use crate::error::FrontierError;
        let d = tempfile::tempdir().unwrap();
        // Segment 1 holds seqs 0-3, segment 2 seqs 4-7.
        let entries = [(1, 0), (1, 1), (1, 2), (2, 3), (4, 4), (4, 5)];
        let store = store_with(d.path(), &entries);
        // 11 bytes: queue 1, seq 1, sorting between the keys of seqs 1 and 2.
        let bad = [0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0xff];
        store.segs.get(1).unwrap().insert(bad, b"x").unwrap();
        // 5 bytes: queue 3 (no entries of its own), first in segment 2.
        store
            .segs
            .get(2)
            .unwrap()
            .insert([0, 0, 0, 3, 0xff], b"y")
            .unwrap();
        let corrupt = |r: Option<Result<(LeaseKey, UserValue)>>| {
            matches!(r, Some(Err(FrontierError::Corrupt { .. })))
        };
        let mut c = DiscCursors::default();
        // Stepping onto it: seq 0 is handed out, reading past seq 1 fails.
        let mut s = store.disc_scan(&mut c, 1, DISC, 9);
        let (pos, v) = s.next().unwrap().unwrap();
        assert_eq!((pos.1 & !DISC, &v[..]), (0, &b"1:0"[..]));
        assert!(corrupt(s.next()), "the scan meets the bad key");
        assert!(s.next().is_none(), "and ends there");
        assert!(
            c.open.get(&1).is_none_or(|v| v.is_empty()),
            "its cursor dropped"
        );
        // Scans that do not reach a bad key, through the same cursors.
        assert_eq!(scan(&store, &mut c, 2, 0, 1, 9), expected_all(&entries, 2));
        assert_eq!(
            scan(&store, &mut c, 1, 2, 1, 9),
            expected(&entries, 1, 2, 1, 9)
        );
        assert_eq!(scan(&store, &mut c, 4, 0, 9, 9), expected_all(&entries, 4));
        // A range whose first key is bad: queue 3 in segment 2, and queue 2,
        // whose range there starts before it with nothing in between.
        for qid in [3, 2] {
            let mut s = store.disc_scan(&mut c, qid, DISC, 9);
            if qid == 2 {
                assert_eq!(s.next().unwrap().unwrap().0.1 & !DISC, 3, "segment 1 first");
            }
            assert!(
                corrupt(s.next()),
                "queue {qid}: opening at the bad key fails"
            );
            assert!(s.next().is_none());
        }
        // Nothing was removed: fresh cursors still read queue 1's last entry
        // and queue 4's, and the bad keys are where they were.
        let mut fresh = DiscCursors::default();
        assert_eq!(
            scan(&store, &mut fresh, 1, 2, 1, 9),
            vec![(2, "1:2".to_string())]
        );
        assert_eq!(
            scan(&store, &mut fresh, 4, 0, 9, 9),
            expected_all(&entries, 4)
        );
        assert_eq!(
            store.segs.get(1).unwrap().get(bad).unwrap().as_deref(),
            Some(&b"x"[..])
        );
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
