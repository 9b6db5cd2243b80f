//! The on-disk side: a versioned format file plus one fjall database with
//! four keyspaces and one more per `disc` segment (layout drawn in the crate
//! README).
//!
//! ```text
//! DIR/FORMAT          16 bytes: "MGZF" | version u32 LE | xxh3-64 of the first 8 bytes
//! DIR/store/          fjall database
//!     meta    "c"+crawl id -> CrawlRec    "seq" -> next seq    "active" -> u8
//!             "dseg" -> segment bits of `disc` (u8, written when the store is made)
//!             "slog" -> seen-log generation u64 LE | end offset u64 LE of the frame
//!                       of the newest batch that wrote one (see `seenidx`)
//!     queues  qid          -> QueueRec
//!     urls    qid | URL key             -> UrlState (completed: body but the URL, which the key gives;
//!                                          or pointer of an indexed pending URL)
//!     sched   qid | next fetch | seq    -> Body (pending URLs put with a schedule, FIFO by key order)
//!     disc.N  qid | seq | next          -> Body (discovered pending URLs of segment N, appended;
//!                                          18-byte keys, see `disc`; one keyspace per segment, see `segments`)
//!     dlog.0, dlog.1  seq | qid | next  -> Body (discovered URLs not yet moved into their segment;
//!                                          20-byte keys in discovery order; two, see `dlog`)
//! ```

use std::path::{Path, PathBuf};

use fjall::{Database, Keyspace, KeyspaceCreateOptions};
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{FrontierError, Result};

/// Version of the on-disk layout; bumped on any incompatible change.
/// 2: counter records (`meta` "n" keys) hold queue counters between folds.
/// 3: pending URLs may lack a `urls` entry (see `pending`); seen-log key
///    records may carry a schedule position (tag 4).
/// 4: discovered URLs go to the `disc` keyspace (see `disc`).
/// 5: `disc` keys of 20 bytes (see `disc`).
/// 6: bodies written with value version 2 (varints, scheme left out; see
///    `codec::BODY_VERSION`); version-1 values are still read.
/// 7: `disc` entries in one keyspace per segment (`disc.N`, see
///    `segments`) instead of one `disc` keyspace; keys and values unchanged.
/// 8: `disc` keys of 18 bytes, queue first and big-endian, no segment (see
///    `disc`).
/// 9: completed URLs' `urls` values leave the URL out; it is rebuilt from
///    the entry's key (`codec::UrlState::completed_value`). Values of
///    earlier versions, which hold it, are still read, so a version-8
///    directory is a valid version-9 one as it is.
/// 10: discovered URLs are appended to the `dlog` keyspace and moved into
///    their segments in bulk (see `dlog`). A binary of version 9 would not
///    read entries left there, so it must refuse the directory; a version-9
///    directory (no `dlog`) is a valid version-10 one as it is.
/// Versions 1 to 7 are valid version-9 directories once their `disc`
/// keyspace, if any, is emptied into the segment keyspaces with format-8
/// keys ([`crate::disc::move_to_segments`], which also reads format-4
/// keys) and removed, and the format-5 keys of their segment keyspaces are
/// rewritten ([`crate::disc::convert_segment`]); both are resumable (no
/// counter records, every pending URL indexed, no `disc` entries; version-1
/// values are read as they are). So they are upgraded in place at open,
/// then `FORMAT` says 10. An older binary then refuses the directory with a
/// `FormatVersion` error (it would not read the new keys and values).
pub const FORMAT_VERSION: u32 = 10;
const MAGIC: &[u8; 4] = b"MGZF";

/// Tuning of the embedded store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreOptions {
    /// Block cache bytes: 8 MiB. It holds data blocks of the queues being
    /// scanned and the index partitions that find them (see `keyspace`);
    /// at 10M URLs, 16 MiB gave the same `get` rate for 14-19 MB more peak
    /// RSS (docs/BENCHMARKS.md, "Session 10").
    pub cache_bytes: u64,
    /// Memtable bytes of each keyspace before it is flushed: 6 MiB. fjall
    /// keeps up to 4 sealed memtables per keyspace besides the active one,
    /// and in the `get` phase two keyspaces churn (`sched` tombstones,
    /// `urls` completions), so this sets much of the peak RSS: at 10M URLs
    /// 8 → 6 MiB took it from 202-211 to 190-192 MB (20 B/URL is the bound)
    /// for ~10 % more CPU and a ~10 % lower put rate; 4 MiB cost a quarter
    /// of the put rate (docs/BENCHMARKS.md, "Session 10").
    pub memtable_bytes: u64,
    /// Tables in level 0 that trigger a leveled compaction into level 1.
    /// 16 (fjall's default is 4): compaction runs less often while writes
    /// stream in; at 10M URLs the put phase took 31 % less CPU and `get`
    /// was faster, with the same disk, peak RSS and restart (docs/
    /// BENCHMARKS.md, "Session 6"). Fixed when a keyspace is created: fjall
    /// keeps a keyspace's compaction settings in its own metadata, so older
    /// directories keep the threshold they were made with. Clamped to
    /// 2..=[`MAX_L0_THRESHOLD`].
    pub l0_threshold: u8,
    /// The same for the `disc` segments' keyspaces: 20, [`MAX_L0_THRESHOLD`].
    /// A segment is written once, by the puts that fill it, and merged into
    /// one run on its first read (`segcompact`). With 16 and 6 MiB memtables
    /// (~23 flushes for 1M synthetic URLs: fjall counts ~64 B per entry
    /// besides its key and value) each segment was also merged once while it
    /// filled, a rewrite of every discovered URL that nothing had read yet.
    /// With 20 and [`StoreOptions::disc_memtable_bytes`] of 8 MiB it fills
    /// with ~18 tables and none is merged. At 10M URLs: put-phase writes
    /// 3.2 → 2.7 GB, CPU −7 %, `mgz serve`'s CPU for a 10M PutDiscovered
    /// −10 % (docs/BENCHMARKS.md, "Session 22").
    pub disc_l0_threshold: u8,
    /// Memtable bytes of the `disc` segments' keyspaces: 8 MiB (see
    /// [`StoreOptions::disc_l0_threshold`]); also the size of the discovery
    /// log (entries and fjall's per-entry overhead) past which a put moves
    /// it into the segments (see `dlog`), so a segment still fills with
    /// runs of about this size. Only the top segment's memtable
    /// fills to it; the others are sealed every `segments::REMOVALS_PER_MEMTABLE`
    /// removals, so the `get` phase's peak RSS is unchanged (19.5–19.8 B/URL at 10M).
    pub disc_memtable_bytes: u64,
    /// Background threads that flush memtables and compact tables; 0
    /// (the default) means the number of cores, clamped to 3..=4.
    ///
    /// fjall's own default is min(cores, 4), so 2 on a 2-core machine and
    /// 1 on one core. Neither is kept. In fjall 3.1 the first of several
    /// workers never compacts: it puts every compaction request back on
    /// the queue and takes it again, a busy loop for as long as the other
    /// workers are busy (a fifth of `mgz serve`'s CPU during a 10M put
    /// with 2 workers). With a third worker they wait far less. At
    /// 10M URLs on 2 cores, 3 workers put 8–48 % faster than 2 (median 14 %) with
    /// 14–32 % less CPU, for a peak RSS 0–8 % higher (two compactions can
    /// run at once); 4 measured the same as 3 (docs/BENCHMARKS.md, "Session 9: fjall's
    /// worker pool"). A single worker can deadlock: it blocks sending a
    /// flush request into its own queue once writers have filled that
    /// queue with rotation requests (reproduced here at 10M, and reported
    /// upstream as fjall-rs/fjall#323); more workers make that unlikely.
    pub worker_threads: u8,
    /// Segment bits of the `disc` keyspaces of a NEW store (0: 20, so
    /// 1,048,576 discovered URLs per segment; see `disc`). An existing store
    /// keeps the value it was made with (meta "dseg"). Small values only
    /// make tests cross segments often.
    pub segment_bits: u8,
    /// Target size of the tables compaction writes for `disc` segments; 0
    /// (the default) keeps fjall's, 64 MiB. Fixed when a segment's keyspace
    /// is made.
    ///
    /// Measured at 10M URLs and not made the default: 16 MiB tables wrote
    /// 13 % fewer bytes in the put phase (3.85 against 4.44 GB; a level-0
    /// compaction rewrites the level-1 tables overlapping the segment being
    /// filled, and a big one there holds much of the previous segment too),
    /// but fjall sizes level 1 as 16 tables (the level-0 threshold), so
    /// `disc` spilled into level 2, where the tombstones of completed URLs
    /// did not reach their entries: 1.86 against 1.08 GB on disk once
    /// everything was completed (docs/BENCHMARKS.md, "Session 16").
    pub disc_table_bytes: u64,
    /// Target size of the tables compaction writes for `urls`: 16 MiB (0
    /// keeps fjall's 64 MiB). Fixed when the keyspace is made. In the `get`
    /// phase every completion adds a small `urls` entry (~9-byte value), so
    /// a 64 MiB table held ~2M keys and its writer 16 MB of filter hashes;
    /// with 16 MiB tables and partitioned filters (see `keyspace`), 10M
    /// URLs ran with 2.5-10 % less CPU and a peak RSS of 19.1 B/URL on
    /// average (18.6-19.8) against 19.8 (19.5-20.0); disk +3 %
    /// (docs/BENCHMARKS.md, "Session 24").
    pub urls_table_bytes: u64,
    /// Entries of one segment from which a move of the discovery log
    /// writes them as a table run instead of a batch (see `dlog`): 16,384.
    /// Small values only make tests take the ingestion path.
    pub dlog_ingest_min: usize,
    /// Table files the store keeps open at once (fjall's descriptor
    /// cache, least recently used closed first); 0 keeps fjall's default,
    /// 900. A crawl under a low open-file limit sets less, so that its
    /// sockets have room (`mgz_crawl::sockets::plan`).
    pub max_open_files: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        // Memtables small on purpose: RAM is for the seen set (100M URLs in
        // ~2 GB) and the write path gains little from bigger ones (fjall
        // keeps up to 4 sealed memtables per keyspace besides the active
        // one; 4 MiB was tried, see docs/BENCHMARKS.md). A trusted seen
        // set makes point reads rare (at 8 MiB, when every put still read
        // `urls`, its filter and index blocks were evicted and re-read on
        // every read; index blocks are now partitioned, see `keyspace`).
        StoreOptions {
            cache_bytes: 8 << 20,
            memtable_bytes: 6 << 20,
            l0_threshold: 16,
            disc_l0_threshold: MAX_L0_THRESHOLD,
            disc_memtable_bytes: 8 << 20,
            worker_threads: 0,
            segment_bits: 0,
            disc_table_bytes: 0,
            urls_table_bytes: 16 << 20,
            dlog_ingest_min: crate::dlog::INGEST_MIN,
            max_open_files: 0,
        }
    }
}

/// The open database and its keyspaces.
pub struct Store {
    /// The database (journal, persist).
    pub db: Database,
    /// Counters and crawl records.
    pub meta: Keyspace,
    /// Queue records.
    pub queues: Keyspace,
    /// URL → state.
    pub urls: Keyspace,
    /// Pending URLs put with a schedule, in serve order.
    pub sched: Keyspace,
    /// Discovered pending URLs: a keyspace per segment (see `disc`,
    /// `segments`).
    pub segs: crate::segments::Segments,
    /// Segment bits of `disc` (fixed when the store is made).
    pub seg_bits: u8,
    /// Discovered URLs not yet in their segment: the two log keyspaces
    /// (see `dlog`).
    pub dlog: [Keyspace; 2],
    /// Which log is active, its entries, the move under way (see `dlog`).
    pub(crate) dlog_state: std::sync::Mutex<crate::dlog::DlogState>,
    /// `StoreOptions::disc_memtable_bytes`: the move threshold.
    pub(crate) dlog_limit: u64,
    /// `StoreOptions::dlog_ingest_min`.
    pub(crate) dlog_ingest_min: usize,
    /// Whether recovery cut a journal short at this open: batches may be
    /// half there (see `repair`).
    pub(crate) journal_cut: bool,
    /// The state directory.
    pub dir: PathBuf,
}

/// The database's folder inside state directory `dir` (fjall's journals
/// and keyspaces).
fn db_path(dir: &Path) -> PathBuf {
    dir.join("store")
}

impl Store {
    /// The database's folder (see [`db_path`]).
    pub fn db_dir(&self) -> PathBuf {
        db_path(&self.dir)
    }

    /// Opens or creates the state in `dir`.
    pub fn open(dir: &Path, opts: StoreOptions) -> Result<Store> {
        std::fs::create_dir_all(dir).map_err(|e| FrontierError::io(dir, e))?;
        let upgrade = check_format_file(dir)?;
        let path = db_path(dir);
        // A new store is built off-disk and moved in (see `fresh`); it has
        // no torn tail to look for.
        #[cfg(target_os = "linux")]
        let fresh = !path.exists() && crate::fresh::create(&path, |p| build_new(p, opts))?;
        #[cfg(not(target_os = "linux"))]
        let fresh = false;
        let tails = match fresh {
            true => crate::torn::JournalTails::default(),
            false => crate::torn::JournalTails::scan(&path),
        };
        let db = builder(&path, opts).open().map_err(|e| at(dir, e))?;
        let journal_cut = tails.warn_if_truncated() > 0;
        let ks = |name: &str| keyspace(&db, name, opts).map_err(|e| at(dir, e));
        let meta = ks("meta")?;
        let seg_bits = segment_bits(&meta, opts)?;
        // A segment is merged again after each quarter of its URLs is
        // removed (see `segments`).
        let remerge = (1u64 << seg_bits.min(62)) / 4;
        let segs = crate::segments::Segments::open(&db, opts)?.with_remerge(remerge);
        // Whatever FORMAT says: a `disc` keyspace left by a cut-short
        // upgrade is emptied too.
        if db.keyspace_exists(LEGACY_DISC) {
            let disc = ks(LEGACY_DISC)?;
            let moved = crate::disc::move_to_segments(&db, &disc, &segs, seg_bits)?;
            db.persist(fjall::PersistMode::SyncAll)?;
            db.delete_keyspace(disc).map_err(|e| at(dir, e))?;
            tracing::info!(
                entries = moved,
                "disc entries moved into one keyspace per segment"
            );
        }
        if let Some(found) = upgrade {
            // Format-5 keys in segment keyspaces: a format-7 store, or one
            // whose move into segments was begun by a format-7 binary.
            let mut converted = 0;
            // Format 8 has its keys already; 9 changed only new values, 10
            // added the `dlog` keyspace (made below when missing).
            for (_, seg) in segs.all().filter(|_| found < 8) {
                converted += crate::disc::convert_segment(&db, seg)?;
            }
            tracing::info!(entries = converted, "disc keys converted to format 8");
            db.persist(fjall::PersistMode::SyncAll)?;
            write_format_file(&dir.join("FORMAT"))?;
            tracing::info!(from = found, to = FORMAT_VERSION, "state format upgraded");
        }
        let store = Store {
            meta,
            queues: ks("queues")?,
            urls: ks("urls")?,
            sched: ks("sched")?,
            dlog: [ks(crate::dlog::DLOG[0])?, ks(crate::dlog::DLOG[1])?],
            dlog_state: std::sync::Mutex::new(crate::dlog::DlogState::unread()),
            dlog_limit: opts.disc_memtable_bytes,
            dlog_ingest_min: opts.dlog_ingest_min.max(1),
            segs,
            seg_bits,
            journal_cut,
            db,
            dir: dir.to_path_buf(),
        };
        // What a crash left in the log goes to its segments before anything
        // reads them (see `dlog`).
        store.move_dlog()?;
        Ok(store)
    }

    /// Writes every memtable to a table and waits, so the next open has no
    /// journal to replay (at close: replaying up to `max_journaling_size`
    /// was most of a restart).
    ///
    /// Every memtable is sealed first and then waited for together, so
    /// fjall's flush workers write them side by side (one at a time, each
    /// wait was a poll interval or more: ~8 ms of a one-page crawl's close).
    pub fn flush_memtables(&self) -> Result<()> {
        self.move_dlog()?;
        let [d0, d1] = &self.dlog;
        let fixed = [&self.meta, &self.queues, &self.urls, &self.sched, d0, d1];
        let mut sealed = Vec::new();
        for ks in fixed.into_iter().chain(self.segs.all().map(|(_, ks)| ks)) {
            if ks.rotate_memtable()? {
                sealed.push(ks);
            }
        }
        wait_flushed(&self.db, &sealed, &self.dir)
    }

    /// Bytes on disk under the state directory.
    pub fn disk_bytes(&self) -> u64 {
        self.db.disk_space().unwrap_or(0) + 16
    }
}

/// The database builder of a store at `path`.
fn builder(path: &Path, opts: StoreOptions) -> fjall::DatabaseBuilder<Database> {
    let builder = Database::builder(path);
    let builder = match opts.max_open_files {
        0 => builder,
        n => builder.max_cached_files(Some(n)),
    };
    builder
        .cache_size(opts.cache_bytes)
        .manual_journal_persist(true)
        // Bounds what a restart after a crash replays (fjall's minimum).
        .max_journaling_size(64 << 20)
        // Journal values as they are: fjall compresses those of 4 KiB and
        // more with LZ4 by default, and a put batch's discovery-log entry
        // (`dlog`) is one such value, compressed in the commit turn that
        // every writer waits for (4 % of the put's CPU at 10M URLs).
        // Entries say how they were written, so older journals still read.
        .journal_compression(fjall::CompressionType::None)
        .worker_threads(worker_threads(opts.worker_threads))
}

/// The flush/compaction thread count for the option `n` (see
/// [`StoreOptions::worker_threads`]).
fn worker_threads(n: u8) -> usize {
    match n {
        0 => std::thread::available_parallelism().map_or(3, |c| c.get().clamp(3, 4)),
        n => usize::from(n),
    }
}

/// Highest level-0 threshold a store is made with. fjall 3.1 slows every
/// write once a keyspace has 20 level-0 tables and halts writes at 30
/// (`Keyspace::local_backpressure`), and a leveled compaction starts only
/// at the threshold: with 30 or more the writers wait forever (seen here
/// with 32: the put stopped for good after ~20 s at 10M URLs).
pub const MAX_L0_THRESHOLD: u8 = 20;
const _: () = assert!(
    MAX_L0_THRESHOLD < 30,
    "fjall halts writes at 30 level-0 tables"
);

/// The level-0 threshold a keyspace is made with for option `n`.
fn l0_threshold(n: u8) -> u8 {
    n.clamp(2, MAX_L0_THRESHOLD)
}

/// Seals `ks`'s memtable and waits until fjall's flush workers have written
/// it to a table. fjall's own `rotate_memtable_and_wait` (a test helper)
/// polls for that forever; a flush that fails (a full disk) stops its worker
/// and poisons the database, and the sealed memtable then never goes: a
/// crawl on a full disk hung holding the table lock. This one polls the
/// poison too and returns its error; when the device has no room left the
/// error says so (fjall logs the flush's own error, but returns only
/// "poisoned").
pub(crate) fn flush_and_wait(db: &Database, ks: &Keyspace, dir: &Path) -> Result<()> {
    if !ks.rotate_memtable()? {
        return Ok(());
    }
    wait_flushed(db, &[ks], dir)
}

/// Longest pause between two looks at sealed memtables in
/// [`wait_flushed`]; the first is [`FLUSH_POLL_FIRST`], each next twice the
/// last. A small memtable is written in well under a millisecond, a big one
/// (up to the memtable limit) in tens: the first looks come soon, the later
/// ones cost little CPU.
const FLUSH_POLL_MAX: std::time::Duration = std::time::Duration::from_millis(2);
/// First pause of [`wait_flushed`].
const FLUSH_POLL_FIRST: std::time::Duration = std::time::Duration::from_micros(50);

/// Waits until none of `sealed` holds a sealed memtable (fjall's flush
/// workers have written them all to tables), or returns the error that
/// poisoned the database ([`explain`]ed).
fn wait_flushed(db: &Database, sealed: &[&Keyspace], dir: &Path) -> Result<()> {
    let mut pause = FLUSH_POLL_FIRST;
    while sealed.iter().any(|ks| ks.sealed_memtable_count() > 0) {
        if let Err(e) = db.persist(fjall::PersistMode::Buffer) {
            return Err(explain(e.into(), dir));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(FLUSH_POLL_MAX);
    }
    Ok(())
}

/// `e`, or `DiskFull` when it is fjall's "poisoned" and the file system of
/// `dir` has no free blocks: a flush or compaction worker that found no room
/// poisons the database, and every later write gets only "poisoned" (fjall
/// logs the worker's own error), which hid the cause from the user.
pub(crate) fn explain(e: FrontierError, dir: &Path) -> FrontierError {
    match e {
        FrontierError::Poisoned(_) if no_room(dir) => FrontierError::DiskFull(format!(
            "{}: the store stopped after a table could not be written (no space left on the device)",
            dir.display()
        )),
        e => e,
    }
}

/// Whether the file system holding `dir` has no free blocks left for us.
#[cfg(target_os = "linux")]
fn no_room(dir: &Path) -> bool {
    rustix::fs::statvfs(dir).is_ok_and(|st| st.f_bavail == 0)
}

#[cfg(not(target_os = "linux"))]
fn no_room(_dir: &Path) -> bool {
    false
}

/// Opens keyspace `name` (a `disc` segment's too), creating it with the
/// store's options.
pub(crate) fn open_keyspace(db: &Database, name: &str, opts: StoreOptions) -> Result<Keyspace> {
    keyspace(db, name, opts).map_err(FrontierError::from)
}

/// Opens keyspace `name`, creating it with the store's options.
fn keyspace(db: &Database, name: &str, opts: StoreOptions) -> fjall::Result<Keyspace> {
    let disc = name == LEGACY_DISC || crate::segments::segment_of_name(name).is_some();
    let (mem, l0) = match disc {
        true => (opts.disc_memtable_bytes, opts.disc_l0_threshold),
        // The log is moved and cleared at `disc_memtable_bytes` (see
        // `dlog`), before fjall would flush it.
        false if crate::dlog::DLOG.contains(&name) => (
            opts.disc_memtable_bytes.saturating_mul(4),
            opts.l0_threshold,
        ),
        false => (opts.memtable_bytes, opts.l0_threshold),
    };
    let leveled = fjall::compaction::Leveled::default().with_l0_threshold(l0_threshold(l0));
    let mem = mem.max(1 << 20);
    let leveled = match opts.disc_table_bytes {
        n if n > 0 && disc => leveled.with_table_target_size(n.max(1 << 20)),
        _ if name == "urls" && opts.urls_table_bytes > 0 => {
            leveled.with_table_target_size(opts.urls_table_bytes.max(1 << 20))
        }
        _ => leveled,
    };
    db.keyspace(name, || {
        let o = KeyspaceCreateOptions::default()
            .manual_journal_persist(true)
            .max_memtable_size(mem)
            .compaction_strategy(std::sync::Arc::new(leveled));
        // Index blocks partitioned from level 1 (fjall: from level 3): a
        // table's index is then a small top level plus 4 KiB partitions
        // that go through the block cache, instead of one block per table
        // (~1.3 MB for 64 MiB of `urls`) pinned in RAM for levels 0 and 1.
        // With the level-0 threshold of 16, level 1 holds up to 1 GiB, so
        // at 10M URLs nearly every index was pinned: partitioned, peak RSS
        // fell by 27-29 MB at the same put and get rates (docs/BENCHMARKS.md,
        // "Session 10").
        let o = o.index_block_partitioning_policy(fjall::config::PartitioningPolicy::new([
            false, true, true, true,
        ]));
        match name {
            // `sched` is read by range scans (a queue's pending URLs), which
            // bloom filters cannot answer; its only point reads check the
            // seen log's unconfirmed keys when it is replayed after a crash
            // (`seenidx::apply`), which then search each table's index
            // instead. Without filters, flushes and compactions skip hashing
            // every key, the filters of level 0 are not pinned in RAM, and a
            // compaction does not buffer 8 bytes per key for one (at 10M URLs, one run
            // each: put-phase CPU 108.6 s against 128.2 s; docs/BENCHMARKS.md,
            // "Session 10").
            // `disc` segments likewise (see `disc`).
            _ if name == "sched" || crate::dlog::DLOG.contains(&name) || disc => {
                o.filter_policy(fjall::config::FilterPolicy::disabled())
            }
            // `urls` keeps its filters (status and known-URL lookups are
            // point reads, mostly of absent keys before a URL completes),
            // partitioned from level 1 like the index: a compaction's table
            // writer then holds the hashes of one 4 KiB filter partition at
            // a time instead of 8 bytes per key of the whole table, and the
            // partitions go through the block cache instead of being pinned
            // (level 0 keeps whole, pinned filters: one memtable each).
            // `StoreOptions::urls_table_bytes` says what the two together
            // measured. fjall keeps this and the table size in the
            // keyspace's metadata: stores made earlier keep whole filters
            // and 64 MiB tables.
            "urls" => o.filter_block_partitioning_policy(fjall::config::PartitioningPolicy::new([
                false, true, true, true,
            ])),
            _ => o,
        }
    })
}

/// Name of the single `disc` keyspace of formats 4 to 6 (see
/// [`FORMAT_VERSION`]).
const LEGACY_DISC: &str = "disc";

/// Creates a store with its four keyspaces at `path` and closes it (the
/// `disc` segments' are made as the first URL of each arrives).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn build_new(path: &Path, opts: StoreOptions) -> fjall::Result<()> {
    let db = builder(path, opts).open()?;
    for name in ["meta", "queues", "urls", "sched"] {
        keyspace(&db, name, opts)?;
    }
    db.persist(fjall::PersistMode::SyncAll)
}

/// The sequence counter (meta "seq": the next seq to give, u64 LE); 0 in a
/// store that never gave one. Any other length is `Corrupt`.
pub(crate) fn stored_next_seq(meta: &Keyspace) -> Result<u64> {
    let Some(v) = meta.get(b"seq")? else {
        return Ok(0);
    };
    let b: [u8; 8] = v
        .as_ref()
        .try_into()
        .map_err(|_| FrontierError::corrupt("meta seq", "not 8 bytes"))?;
    Ok(u64::from_le_bytes(b))
}

/// Adds to `batch` the seen-log mark of the frame written for it (meta
/// "slog": generation u64 LE | end offset u64 LE), so that an open can tell
/// a log that lost frames the store kept (see `seenidx`).
pub(crate) fn note_log_mark(
    meta: &Keyspace,
    batch: &mut fjall::OwnedWriteBatch,
    (generation, end): (u64, u64),
) {
    let mut v = [0u8; 16];
    v[..8].copy_from_slice(&generation.to_le_bytes());
    v[8..].copy_from_slice(&end.to_le_bytes());
    batch.insert(meta, b"slog", v);
}

/// The seen-log mark of the newest committed batch that wrote a frame
/// (see [`note_log_mark`]); `None` in a store written before it existed.
/// Any other length is `Corrupt`.
pub(crate) fn stored_log_mark(meta: &Keyspace) -> Result<Option<(u64, u64)>> {
    let Some(v) = meta.get(b"slog")? else {
        return Ok(None);
    };
    let mut r = crate::codec::Reader::new(&v, "meta slog");
    let mark = (r.u64()?, r.u64()?);
    r.finish()?;
    Ok(Some(mark))
}

/// The store's `disc` segment bits: the recorded value, else (a new or
/// pre-format-4 store) the option's, recorded now (before any `disc` entry
/// can be written: the journal keeps writes in order).
fn segment_bits(meta: &Keyspace, opts: StoreOptions) -> Result<u8> {
    if let Some(v) = meta.get(b"dseg")? {
        return match v.as_ref() {
            [b @ 1..=40] => Ok(*b),
            _ => Err(FrontierError::corrupt(
                "meta dseg",
                "not one byte in 1..=40",
            )),
        };
    }
    let bits = match opts.segment_bits {
        0 => crate::disc::DEFAULT_SEGMENT_BITS,
        b => b.clamp(1, 40),
    };
    meta.insert(b"dseg", [bits])?;
    Ok(bits)
}

/// A store error at open, naming the directory.
fn at(dir: &Path, e: fjall::Error) -> FrontierError {
    match e {
        fjall::Error::Io(source) => FrontierError::io(db_path(dir), source),
        fjall::Error::Locked => FrontierError::InUse { path: db_path(dir) },
        other => FrontierError::from(other),
    }
}

/// The 16 bytes of the format file.
pub fn format_bytes(version: u32) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(MAGIC);
    b[4..8].copy_from_slice(&version.to_le_bytes());
    let sum = xxh3_64(&b[..8]);
    b[8..].copy_from_slice(&sum.to_le_bytes());
    b
}

/// Creates `DIR/FORMAT` in a new directory, or checks the existing one;
/// `Some(version)` when it names an older version this one upgrades (1 to
/// 9): the file is rewritten once the store is (see [`FORMAT_VERSION`]).
fn check_format_file(dir: &Path) -> Result<Option<u32>> {
    let path = dir.join("FORMAT");
    match std::fs::read(&path) {
        Ok(bytes) => match parse_format(&bytes) {
            Err(FrontierError::FormatVersion {
                found: found @ 1..=9,
                ..
            }) => Ok(Some(found)),
            other => other.map(|()| None).map_err(|e| e.in_file(&path)),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if db_path(dir).exists() {
                return Err(FrontierError::corrupt(
                    "FORMAT",
                    "missing while a store exists",
                ));
            }
            write_format_file(&path).map(|()| None)
        }
        Err(e) => Err(FrontierError::io(path, e)),
    }
}

fn parse_format(bytes: &[u8]) -> Result<()> {
    if bytes.len() != 16 || &bytes[..4] != MAGIC {
        return Err(FrontierError::corrupt("FORMAT", "bad length or magic"));
    }
    let sum = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default());
    if sum != xxh3_64(&bytes[..8]) {
        return Err(FrontierError::corrupt("FORMAT", "checksum mismatch"));
    }
    let found = u32::from_le_bytes(bytes[4..8].try_into().unwrap_or_default());
    if found != FORMAT_VERSION {
        return Err(FrontierError::FormatVersion {
            what: "FORMAT".into(),
            found,
            expected: FORMAT_VERSION,
        });
    }
    Ok(())
}

fn write_format_file(path: &Path) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&format_bytes(FORMAT_VERSION))?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| FrontierError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "Poisoned" becomes `DiskFull` only when the device is really full:
    /// with room left it stays what it was, and other errors pass as they are.
    #[test]
    fn poisoned_is_called_disk_full_only_without_room() {
        let dir = tempfile::tempdir().unwrap();
        let poisoned = FrontierError::from(fjall::Error::Poisoned);
        assert!(matches!(
            explain(poisoned, dir.path()),
            FrontierError::Poisoned(_)
        ));
        let other = FrontierError::InvalidArgument("x".into());
        assert!(matches!(
            explain(other, dir.path()),
            FrontierError::InvalidArgument(_)
        ));
        assert!(!no_room(dir.path()), "a temporary directory has room");
    }

    /// Level-0 thresholds at which fjall would halt writers for good are
    /// brought down to the highest safe one; tiny ones up to 2.
    #[test]
    fn level0_threshold_stays_below_fjalls_write_halt() {
        assert_eq!(l0_threshold(32), MAX_L0_THRESHOLD);
        assert_eq!(l0_threshold(u8::MAX), MAX_L0_THRESHOLD);
        assert_eq!(l0_threshold(16), 16);
        assert_eq!(l0_threshold(0), 2);
    }

    /// A journal written with fjall's default (values of 4 KiB and more
    /// compressed with LZ4, as every store before this setting) replays
    /// under the store's uncompressed setting: each journal entry names its
    /// compression. The values are only in the journal when it is reopened
    /// (never flushed: the first open of a keyspace made its memtable).
    #[test]
    fn a_journal_with_lz4_values_replays_under_the_uncompressed_setting() {
        let d = tempfile::tempdir().unwrap();
        let path = db_path(d.path());
        let big: Vec<u8> = (0..20_000u32)
            .flat_map(|i| (i % 97).to_le_bytes())
            .collect();
        {
            let db = Database::builder(&path)
                .manual_journal_persist(true)
                .journal_compression(fjall::CompressionType::Lz4)
                .open()
                .unwrap();
            let ks = db
                .keyspace("dlog.0", fjall::KeyspaceCreateOptions::default)
                .unwrap();
            ks.insert(b"big", &big[..]).unwrap();
            ks.insert(b"small", b"x").unwrap();
            db.persist(fjall::PersistMode::SyncAll).unwrap();
            assert_eq!(ks.approximate_len(), 2);
        }
        // The value is on disk compressed (a journal holds it, no table).
        let files = crate::fresh::tests::tree(&path);
        let raw = &big[..4096];
        assert!(
            files
                .iter()
                .all(|(_, f)| !f.windows(raw.len()).any(|w| w == raw)),
            "the value was stored uncompressed"
        );
        let db = builder(&path, StoreOptions::default()).open().unwrap();
        let ks = db
            .keyspace("dlog.0", fjall::KeyspaceCreateOptions::default)
            .unwrap();
        assert_eq!(ks.get(b"big").unwrap().as_deref(), Some(&big[..]));
        assert_eq!(ks.get(b"small").unwrap().as_deref(), Some(&b"x"[..]));
    }

    /// Segment keyspaces take the `disc_*` options and the others the
    /// general ones: with the level-0 threshold at 20 for segments and 2 for
    /// the rest, six flushed overlapping tables stay in a segment while the
    /// `urls` keyspace's are merged (polled for up to 20 s).
    #[test]
    fn segment_keyspaces_take_their_own_compaction_options() {
        let d = tempfile::tempdir().unwrap();
        let opts = StoreOptions {
            l0_threshold: 2,
            disc_l0_threshold: 20,
            ..StoreOptions::default()
        };
        let s = Store::open(d.path(), opts).unwrap();
        let seg = open_keyspace(&s.db, &crate::segments::keyspace_name(1), opts).unwrap();
        for i in 0..6u32 {
            for ks in [&seg, &s.urls] {
                // Overlapping tables, so fjall cannot just move them down.
                for k in [0, i + 1, 1000] {
                    ks.insert(k.to_be_bytes(), i.to_be_bytes()).unwrap();
                }
                ks.rotate_memtable_and_wait().unwrap();
            }
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while s.urls.table_count() >= 6 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            s.urls.table_count() < 6,
            "urls' tables are merged from 2 on"
        );
        assert_eq!(seg.table_count(), 6, "a segment keeps its 6 flushed tables");
        assert_eq!(seg.len().unwrap(), 8);
    }

    /// `urls` compactions write tables of `urls_table_bytes` (fjall's 64
    /// MiB with 0): three overlapping flushes of ~3 MiB each, merged into
    /// level 1 (threshold 2), come out as four or more 1 MiB tables, or as
    /// one (counts that only the merge can make); point reads through the
    /// partitioned filters find every key and no absent one, before and
    /// after a reopen (polled for up to 20 s).
    #[test]
    fn urls_tables_take_their_target_size_and_filters_still_answer() {
        for (bytes, many) in [(1 << 20, true), (0, false)] {
            let d = tempfile::tempdir().unwrap();
            let opts = StoreOptions {
                urls_table_bytes: bytes,
                l0_threshold: 2,
                // Flushed only when the test rotates: three level-0 tables.
                memtable_bytes: 64 << 20,
                ..StoreOptions::default()
            };
            let key = |i: u32| format!("{i:08}-{:016x}", xxh3_64(&i.to_be_bytes()));
            {
                let s = Store::open(d.path(), opts).unwrap();
                for r in 0..3 {
                    for i in (r..300_000u32).step_by(3) {
                        // Values that do not compress to nothing.
                        let v = xxh3_64(&i.to_le_bytes()).to_le_bytes();
                        s.urls.insert(key(i), v).unwrap();
                    }
                    s.urls.rotate_memtable_and_wait().unwrap();
                }
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
                let settled = |n: usize| if many { n >= 4 } else { n == 1 };
                while !settled(s.urls.table_count()) && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                let tables = s.urls.table_count();
                assert!(settled(tables), "{bytes} B target: {tables} tables");
            }
            let s = Store::open(d.path(), opts).unwrap();
            for i in (0..300_000u32).step_by(997) {
                assert!(s.urls.contains_key(key(i)).unwrap(), "key {i}");
                assert!(!s.urls.contains_key(key(i) + "x").unwrap(), "absent {i}");
            }
        }
    }

    /// 0 picks 3 or 4 threads whatever the core count (never fjall's 1 or
    /// 2, see `StoreOptions::worker_threads`); other values are taken as
    /// given, and a store opens and flushes with one of them.
    #[test]
    fn worker_threads_default_is_three_or_four() {
        assert!((3..=4).contains(&worker_threads(0)));
        assert_eq!(worker_threads(2), 2);
        assert_eq!(worker_threads(6), 6);
        let d = tempfile::tempdir().unwrap();
        let opts = StoreOptions {
            worker_threads: 5,
            ..StoreOptions::default()
        };
        let s = Store::open(d.path(), opts).unwrap();
        s.urls.insert(b"k", b"v").unwrap();
        s.flush_memtables().unwrap();
        assert_eq!(s.urls.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    }

    /// `flush_memtables` seals the memtable of every keyspace written to
    /// and returns once all are tables: none is left sealed, each written
    /// keyspace gained a table, an unwritten one none, and the values read
    /// back after a reopen.
    #[test]
    fn flush_memtables_writes_every_written_keyspace_to_a_table() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(d.path(), StoreOptions::default()).unwrap();
        let written = [&s.meta, &s.queues, &s.urls];
        let before: Vec<usize> = written.iter().map(|ks| ks.table_count()).collect();
        let sched_before = s.sched.table_count();
        for (i, ks) in written.iter().enumerate() {
            for j in 0..200u32 {
                ks.insert(format!("k{i}-{j}"), format!("v{j}")).unwrap();
            }
        }
        s.flush_memtables().unwrap();
        for (ks, before) in written.iter().zip(before) {
            assert_eq!(ks.sealed_memtable_count(), 0);
            assert!(ks.table_count() > before, "a table per written keyspace");
        }
        assert_eq!(s.sched.table_count(), sched_before, "nothing to flush");
        drop(s);
        let s = Store::open(d.path(), StoreOptions::default()).unwrap();
        assert_eq!(s.urls.get("k2-199").unwrap().as_deref(), Some(&b"v199"[..]));
        assert_eq!(s.meta.get("k0-0").unwrap().as_deref(), Some(&b"v0"[..]));
    }

    /// A crash while a new store was copied in leaves `store.new` and no
    /// `store`: the next open starts over and gets a working store.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_half_made_new_store_is_started_over() {
        let d = tempfile::tempdir().unwrap();
        write_format_file(&d.path().join("FORMAT")).unwrap();
        let half = d.path().join("store.new/keyspaces");
        std::fs::create_dir_all(&half).unwrap();
        std::fs::write(half.join("junk"), b"torn").unwrap();
        {
            let s = Store::open(d.path(), StoreOptions::default()).unwrap();
            s.urls.insert("k", "v").unwrap();
            s.db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        assert!(!d.path().join("store.new").exists());
        let s = Store::open(d.path(), StoreOptions::default()).unwrap();
        assert_eq!(s.urls.get("k").unwrap().as_deref(), Some(&b"v"[..]));
    }

    /// The `disc` segment bits are the store's: recorded when it is made,
    /// kept over a reopen with other options, and a damaged record is a
    /// typed error at open.
    #[test]
    fn segment_bits_are_recorded_and_checked() {
        let d = tempfile::tempdir().unwrap();
        let with = |bits| StoreOptions {
            segment_bits: bits,
            ..StoreOptions::default()
        };
        {
            let s = Store::open(d.path(), with(5)).unwrap();
            assert_eq!(s.seg_bits, 5);
            s.db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        {
            let s = Store::open(d.path(), with(9)).unwrap();
            assert_eq!(s.seg_bits, 5, "an existing store keeps its value");
            s.meta.insert(b"dseg", [0u8]).unwrap();
            s.db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        assert!(matches!(
            Store::open(d.path(), with(9)),
            Err(FrontierError::Corrupt { .. })
        ));
        assert_eq!(
            Store::open(tempfile::tempdir().unwrap().path(), with(0))
                .unwrap()
                .seg_bits,
            20
        );
    }

    /// A sequence counter of the wrong length is a typed error when the
    /// frontier's open reads it (`recover::load`), not a panic.
    #[test]
    fn malformed_sequence_counter_is_corrupt() {
        let d = tempfile::tempdir().unwrap();
        {
            let s = Store::open(d.path(), StoreOptions::default()).unwrap();
            assert_eq!(stored_next_seq(&s.meta).unwrap(), 0, "absent: 0");
            s.meta.insert(b"seq", 7u64.to_le_bytes()).unwrap();
            assert_eq!(stored_next_seq(&s.meta).unwrap(), 7);
            s.meta.insert(b"seq", [1u8, 2, 3]).unwrap();
            s.db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        {
            let s = Store::open(d.path(), StoreOptions::default()).unwrap();
            assert!(matches!(
                stored_next_seq(&s.meta),
                Err(FrontierError::Corrupt { .. })
            ));
        }
        assert!(matches!(
            crate::Frontier::open(d.path(), crate::FrontierOptions::default()),
            Err(FrontierError::Corrupt { .. })
        ));
    }

    /// The seen-log mark round-trips; one of the wrong length is `Corrupt`
    /// when read, and the frontier's open then rebuilds the seen sets from
    /// the store (the log cannot be shown complete) instead of failing.
    #[test]
    fn seen_log_mark_round_trips_and_a_malformed_one_rebuilds() {
        let d = tempfile::tempdir().unwrap();
        let url = crate::UrlItem::new("http://a.example/x");
        {
            let f = crate::Frontier::open(d.path(), crate::FrontierOptions::default()).unwrap();
            assert_eq!(
                f.put_discovered(std::slice::from_ref(&url)).unwrap(),
                [crate::PutOutcome::New]
            );
        }
        {
            let s = Store::open(d.path(), StoreOptions::default()).unwrap();
            let (generation, end) = stored_log_mark(&s.meta).unwrap().expect("a put writes it");
            assert!(end > 0, "generation {generation}, end {end}");
            let mut b = s.db.batch();
            note_log_mark(&s.meta, &mut b, (3, u64::MAX));
            b.commit().unwrap();
            assert_eq!(stored_log_mark(&s.meta).unwrap(), Some((3, u64::MAX)));
            s.meta.insert(b"slog", [1u8; 17]).unwrap();
            assert!(matches!(
                stored_log_mark(&s.meta),
                Err(FrontierError::Corrupt { .. })
            ));
            s.meta.insert(b"slog", [1u8; 15]).unwrap();
            assert!(matches!(
                stored_log_mark(&s.meta),
                Err(FrontierError::Corrupt { .. })
            ));
            s.db.persist(fjall::PersistMode::SyncAll).unwrap();
        }
        let logs = || crate::seenidx::log_generations(d.path()).unwrap();
        let before = logs();
        let f = crate::Frontier::open(d.path(), crate::FrontierOptions::default()).unwrap();
        assert_eq!(f.put_discovered(&[url]).unwrap(), [crate::PutOutcome::Seen]);
        // Rebuilt: a fresh snapshot starts a new log generation.
        assert!(logs() > before, "{:?} -> {:?}", before, logs());
    }

    #[test]
    fn format_file_checks() {
        assert!(parse_format(&format_bytes(FORMAT_VERSION)).is_ok());
        assert!(matches!(
            parse_format(&format_bytes(FORMAT_VERSION + 1)),
            Err(FrontierError::FormatVersion { found, .. }) if found == FORMAT_VERSION + 1
        ));
        let mut b = format_bytes(FORMAT_VERSION);
        b[5] ^= 1;
        assert!(matches!(
            parse_format(&b),
            Err(FrontierError::Corrupt { .. })
        ));
        assert!(parse_format(&b[..3]).is_err());
    }
}
