//! The `disc` segments (format 7): one fjall keyspace per segment, named
//! `disc.<seg>` (`disc.1`, `disc.2`, ...), opened or made on first use.
//!
//! ```text
//! Segments
//! ├─ table: 256 × lazily made [256 × OnceLock<Seg>]     seg = hi·256 + lo, 1..=MAX_SEG
//! │     Seg { ks: Keyspace "disc.<seg>", removals: AtomicU32, removed: AtomicU64, merge_asked: AtomicBool }
//! ├─ top: AtomicU32        highest segment with a keyspace (0: none)
//! ├─ make: Mutex<()>       held while a keyspace is made
//! └─ compactor             merges a segment's tables on its first read below the top
//! ```
//!
//! Why a keyspace per segment. In one `disc` keyspace every table flushed
//! while a segment fills spans that segment's whole key range (its keys go
//! by queue, then seq), so each level-0 compaction merged with, and
//! rewrote, the level-1 tables already holding the segment, and a table
//! cut at fjall's 64 MiB target straddled two segments, so the next
//! segment's compactions rewrote the previous one too. With a keyspace per
//! segment a compaction only ever merges tables of one segment, and a
//! filled segment is left alone until removals reach it. Measured at 10M
//! URLs (docs/BENCHMARKS.md, "Session 17"): the put phase wrote 25 % fewer
//! bytes and spent 15-30 % less CPU (put-only and full runs).
//!
//! Removals. Completing or rescheduling a discovered URL writes a tombstone
//! into its segment's keyspace. Each keyspace has its own memtable, so with
//! removals spread over many segments their memtables would together hold
//! far more than one keyspace's (up to fjall's 64 MiB journal bound; at 10M
//! URLs the `get` phase's peak heap rose from 145 to 178 MB). A segment below
//! the top therefore has its memtable sealed (and flushed by fjall's
//! workers) every [`REMOVALS_PER_MEMTABLE`] removals; the top segment's
//! memtable fills to `disc_memtable_bytes` as before.
//!
//! Reads. The first time a queue's URLs are read from a segment below the
//! top (`Store::disc_scan`), the segment is handed to `segcompact`, which
//! merges its ~18 level-0 tables into one run in the background: a queue's
//! read then seeks one table per segment instead of each of them.
//! Completions then write tombstones into the segment, flushed into more
//! tables, and a read walks through them and the entries they remove
//! (at 100M URLs the `get` phase slowed pass after pass). So each time a
//! quarter of a segment's URLs (2^bits / 4, [`Segments::with_remerge`]) has
//! been removed since, it is handed to `segcompact` again: the merge drops
//! the tombstones with their entries. 10M URLs with 77 segments: `get`
//! 33–37k → 48k URLs/s; with the default 10: 74k → 84k (docs/BENCHMARKS.md,
//! "Session 21").
//!
//! Invariants: `table[seg]` is set only once its keyspace exists in the
//! database (made or found at open), and then never changes; `top` is the
//! highest such segment, so every `disc` entry's segment is at most `top`.
//! Keyspaces are made under `make`, so two writers never race to make one.
//!
//! Cost: a lookup is two atomic loads and two indexed reads; memory is a few
//! KiB for the outer table and for each 256 segments in use, and fjall's
//! per-keyspace state (a memtable, a version, its tables' pinned blocks).
//! 2^36 URLs would take 65,535 keyspaces; at 10^8 URLs there are 96.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use fjall::{Database, Keyspace};

use crate::disc::MAX_SEG;
use crate::error::{FrontierError, Result};
use crate::store::StoreOptions;

/// Removals (tombstones) a segment below the top takes before its memtable
/// is sealed: ~16K tombstones are ~1 MiB of memtable. At 10M URLs, 16,384
/// kept the peak heap of `get` at 145 MB, where leaving it to fjall
/// reached 178 MB (docs/BENCHMARKS.md, "Session 17").
pub const REMOVALS_PER_MEMTABLE: u32 = 16_384;

/// Prefix of a segment keyspace's name.
const PREFIX: &str = "disc.";

/// One segment: its keyspace and the removals since its memtable was sealed.
struct Seg {
    ks: Keyspace,
    removals: AtomicU32,
    /// Removals since it was last handed to the compactor for them.
    removed: AtomicU64,
    /// Handed to the compactor already (since this open).
    merge_asked: AtomicBool,
}

/// The segment keyspaces of one database.
pub struct Segments {
    db: Database,
    opts: StoreOptions,
    table: [OnceLock<Box<[OnceLock<Seg>]>>; 256],
    top: AtomicU32,
    make: Mutex<()>,
    compactor: crate::segcompact::Compactor,
    /// Removals after which a segment below the top is merged again.
    remerge: u64,
}

/// The name of segment `seg`'s keyspace.
pub fn keyspace_name(seg: u32) -> String {
    format!("{PREFIX}{seg}")
}

/// The segment a keyspace name stands for, if it is one.
pub fn segment_of_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix(PREFIX)?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seg: u32 = digits.parse().ok()?;
    (1..=MAX_SEG).contains(&seg).then_some(seg)
}

impl Segments {
    /// The segments of `db` that exist already (every keyspace named
    /// `disc.<seg>`), opened with `opts` for the ones made later.
    pub fn open(db: &Database, opts: StoreOptions) -> Result<Segments> {
        let segs = Segments {
            db: db.clone(),
            opts,
            table: std::array::from_fn(|_| OnceLock::new()),
            top: AtomicU32::new(0),
            make: Mutex::new(()),
            compactor: crate::segcompact::Compactor::default(),
            remerge: u64::MAX,
        };
        for name in db.list_keyspace_names() {
            if let Some(seg) = segment_of_name(&name) {
                segs.ensure(seg)?;
            }
        }
        Ok(segs)
    }

    /// Merges a segment below the top again (in the background, as on its
    /// first read) each time `n` of its URLs have been removed since, so
    /// that reads stop walking through the tombstones of completed URLs.
    pub fn with_remerge(mut self, n: u64) -> Segments {
        self.remerge = n.max(1);
        self
    }

    fn slot(&self, seg: u32) -> Option<&OnceLock<Seg>> {
        let (hi, lo) = ((seg >> 8) as usize, (seg & 0xff) as usize);
        self.table.get(hi)?.get()?.get(lo)
    }

    fn seg(&self, seg: u32) -> Option<&Seg> {
        self.slot(seg)?.get()
    }

    /// Segment `seg`'s keyspace, if it exists.
    pub fn get(&self, seg: u32) -> Option<&Keyspace> {
        self.seg(seg).map(|s| &s.ks)
    }

    /// Segment `seg`'s keyspace, made if it does not exist yet.
    pub fn ensure(&self, seg: u32) -> Result<&Keyspace> {
        if let Some(ks) = self.get(seg) {
            return Ok(ks);
        }
        if !(1..=MAX_SEG).contains(&seg) {
            return Err(FrontierError::corrupt(
                "disc segment",
                format!("{seg} is outside 1..={MAX_SEG}"),
            ));
        }
        let _made = self.make.lock().unwrap_or_else(|p| p.into_inner());
        let (hi, lo) = ((seg >> 8) as usize, (seg & 0xff) as usize);
        let inner = self.table[hi].get_or_init(|| (0..256).map(|_| OnceLock::new()).collect());
        if inner[lo].get().is_none() {
            let ks = crate::store::open_keyspace(&self.db, &keyspace_name(seg), self.opts)?;
            let _ = inner[lo].set(Seg {
                ks,
                removals: AtomicU32::new(0),
                removed: AtomicU64::new(0),
                merge_asked: AtomicBool::new(false),
            });
            self.top.fetch_max(seg, Ordering::Release);
        }
        inner[lo]
            .get()
            .map(|s| &s.ks)
            .ok_or_else(|| FrontierError::corrupt("disc segment", "keyspace not recorded"))
    }

    /// Makes every segment from that of `first` through that of `last`
    /// (seqs), so the writes of a batch find their keyspaces.
    pub fn ensure_range(&self, first: u32, last: u32) -> Result<()> {
        for seg in first.max(1)..=last.min(MAX_SEG) {
            self.ensure(seg)?;
        }
        Ok(())
    }

    /// Highest segment with a keyspace (0: none).
    pub fn top(&self) -> u32 {
        self.top.load(Ordering::Acquire)
    }

    /// The segments' keyspaces, lowest segment first.
    pub fn all(&self) -> impl Iterator<Item = (u32, &Keyspace)> {
        (1..=self.top().min(MAX_SEG)).filter_map(|s| Some((s, self.get(s)?)))
    }

    /// Notes a read of segment `seg`: the first below the top hands its
    /// keyspace to the compactor (see the module doc).
    pub fn note_read(&self, seg: u32) {
        if seg >= self.top() {
            return;
        }
        // A load first: after the first read this is a plain read of a
        // shared line, not a write on every queue's scan.
        if let Some(s) = self.seg(seg)
            && !s.merge_asked.load(Ordering::Relaxed)
            && !s.merge_asked.swap(true, Ordering::Relaxed)
        {
            self.compactor.submit(s.ks.clone());
        }
    }

    /// Counts one removal from segment `seg`; below the top, every
    /// [`REMOVALS_PER_MEMTABLE`]-th seals its memtable (see the module doc).
    /// A failed seal is only logged: fjall seals it once it is full anyway.
    pub fn note_removal(&self, seg: u32) {
        if seg >= self.top() {
            return;
        }
        let Some(s) = self.seg(seg) else {
            return;
        };
        if s.removed.fetch_add(1, Ordering::Relaxed) + 1 >= self.remerge {
            s.removed.store(0, Ordering::Relaxed);
            self.compactor.submit(s.ks.clone());
        }
        if s.removals.fetch_add(1, Ordering::Relaxed) + 1 < REMOVALS_PER_MEMTABLE {
            return;
        }
        s.removals.store(0, Ordering::Relaxed);
        // fjall 3.1 marks `rotate_memtable` as hidden API; it is the public
        // way to seal one keyspace's memtable without waiting for its flush.
        if let Err(e) = s.ks.rotate_memtable() {
            tracing::error!("sealing the memtable of segment {seg} failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_not_segments() {
        for seg in [1, 2, 255, 256, 65_535] {
            assert_eq!(segment_of_name(&keyspace_name(seg)), Some(seg));
        }
        for name in [
            "disc",
            "disc.",
            "disc.0",
            "disc.01",
            "disc.65536",
            "disc.-1",
            "disc.1a",
            "disc.+1",
            "sched",
            "urls",
            "xdisc.1",
        ] {
            assert_eq!(segment_of_name(name), None, "{name}");
        }
    }

    #[test]
    fn segments_are_made_once_found_again_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let opts = StoreOptions::default();
        {
            let db = Database::builder(dir.path()).open().unwrap();
            let segs = Segments::open(&db, opts).unwrap();
            assert_eq!((segs.top(), segs.get(1).is_none()), (0, true));
            segs.ensure_range(2, 3).unwrap();
            segs.ensure(300).unwrap();
            let a = segs.ensure(3).unwrap().clone();
            a.insert("k", "v").unwrap();
            assert_eq!(segs.get(3).unwrap().get("k").unwrap().unwrap(), "v");
            assert_eq!(segs.top(), 300);
            let have: Vec<u32> = segs.all().map(|(s, _)| s).collect();
            assert_eq!(have, vec![2, 3, 300]);
            assert!(segs.ensure(0).is_err());
            assert!(segs.ensure(MAX_SEG + 1).is_err());
            db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        let db = Database::builder(dir.path()).open().unwrap();
        let segs = Segments::open(&db, opts).unwrap();
        let have: Vec<u32> = segs.all().map(|(s, _)| s).collect();
        assert_eq!((have, segs.top()), (vec![2, 3, 300], 300));
        assert_eq!(segs.get(3).unwrap().get("k").unwrap().unwrap(), "v");
    }

    /// A fresh database with segments 1 and 2 (2 is the top); the directory
    /// lives as long as the returned guard.
    fn two_segments() -> (tempfile::TempDir, Segments) {
        two_segments_remerging(u64::MAX)
    }

    /// [`two_segments`] merging a segment again every `remerge` removals.
    fn two_segments_remerging(remerge: u64) -> (tempfile::TempDir, Segments) {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder(dir.path()).open().unwrap();
        let segs = Segments::open(&db, StoreOptions::default())
            .unwrap()
            .with_remerge(remerge);
        segs.ensure_range(1, 2).unwrap();
        (dir, segs)
    }

    #[test]
    fn removals_below_the_top_seal_the_memtable_every_budget() {
        let (_dir, segs) = two_segments();
        for seg in [1, 2] {
            segs.get(seg).unwrap().insert("k", "v").unwrap();
        }
        let sealed = |seg| {
            let ks = segs.get(seg).unwrap();
            ks.sealed_memtable_count() + ks.table_count()
        };
        for _ in 0..REMOVALS_PER_MEMTABLE - 1 {
            segs.note_removal(1);
            segs.note_removal(2);
        }
        assert_eq!((sealed(1), sealed(2)), (0, 0));
        segs.note_removal(1);
        segs.note_removal(2);
        // Segment 1 is below the top: sealed (then flushed); the top is not.
        assert!(sealed(1) >= 1, "segment 1 sealed");
        assert_eq!(sealed(2), 0, "the top segment is left to fjall");
    }

    /// A read below the top merges that segment's tables into one, once,
    /// in the background; reads of the top do not; the compactor is done
    /// when the segments are dropped; and the entries are all still there.
    #[test]
    fn the_first_read_below_the_top_merges_the_segment() {
        let (_dir, segs) = two_segments();
        for seg in [1, 2] {
            let ks = segs.get(seg).unwrap();
            for t in 0..4 {
                for i in 0..50 {
                    ks.insert(format!("k{i:03}-{t}"), "v").unwrap();
                }
                ks.rotate_memtable_and_wait().unwrap();
            }
            assert_eq!(ks.table_count(), 4);
        }
        let (one, two) = (segs.get(1).unwrap().clone(), segs.get(2).unwrap().clone());
        segs.note_read(2);
        segs.note_read(1);
        segs.note_read(1);
        drop(segs);
        assert_eq!(one.table_count(), 1, "segment 1 merged");
        assert_eq!(two.table_count(), 4, "the top is left to fjall");
        assert_eq!(one.iter().count(), 200);
    }

    /// Removals merge a segment below the top again, each `remerge` of
    /// them: its tombstones and the entries they remove are gone from its
    /// tables, the rest is still there; the top is left to fjall.
    #[test]
    fn removals_merge_a_segment_again() {
        let (_dir, segs) = two_segments_remerging(30);
        for seg in [1, 2] {
            let ks = segs.get(seg).unwrap();
            for i in 0..100 {
                ks.insert(format!("k{i:03}"), "v").unwrap();
            }
            ks.rotate_memtable_and_wait().unwrap();
            for i in 0..30 {
                ks.remove(format!("k{i:03}")).unwrap();
            }
            ks.rotate_memtable_and_wait().unwrap();
            assert_eq!(ks.table_count(), 2);
        }
        let (one, two) = (segs.get(1).unwrap().clone(), segs.get(2).unwrap().clone());
        for _ in 0..29 {
            segs.note_removal(1);
            segs.note_removal(2);
        }
        // 29 of 30: nothing asked yet (the compactor would merge on drop).
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(one.table_count(), 2, "not merged before the 30th");
        assert_eq!(one.approximate_len(), 130, "100 entries and 30 tombstones");
        segs.note_removal(1);
        segs.note_removal(2);
        drop(segs);
        assert_eq!(one.table_count(), 1, "segment 1 merged again");
        assert_eq!(two.table_count(), 2, "the top is left to fjall");
        assert_eq!(one.iter().count(), 70);
        // What the merge wrote: the 70 live entries, no tombstones.
        assert_eq!(one.approximate_len(), 70);
    }
}
