//! `compact`: an exact, dynamic, enumerable set of byte keys.
//!
//! An LSM of compressed sorted runs under a small hashed buffer:
//!
//! ```text
//! CompactSet
//! ├─ buffer: KeyBuffer (arena + hash table), <= clamp(len/128, 256, 65536) keys
//! │     (len/256 with background merges)
//! │     │ full: sort, freeze into a run coded with the current codes
//! │     ▼
//! ├─ runs (oldest, largest first): [run][run][run]…   each a Run:
//! │     filter (10 bits/key) · head words · index of block first keys ·
//! │     blocks of 32 front-coded keys, varints and suffix text Huffman-coded
//! ├─ codes: two canonical Huffman codes (varint bytes of lcps and text
//! │     lengths in bits; text bytes + words)
//! │     shared by every run: learned from the first frozen buffer, relearned
//! │     once with the dictionary, then fixed (runs keep their generation)
//! └─ dict: up to 256 frequent words, learned once from the first 4096 keys;
//!       a whole-word letter run in a suffix is one text symbol (256 + id)
//! ```
//!
//! Keys are `key_bytes()` (reversed host first), so sorting groups a host's
//! URLs and front coding stores each shared host and path prefix once per
//! block; the dictionary and the Huffman codes squeeze what remains.
//!
//! Invariants: a key lives in exactly one place (buffer or one run), since
//! `insert` checks everything first; so runs are disjoint and a merge is a
//! union of known size. The dictionary never changes once trained, and a
//! code generation never changes once made, so every run stays decodable
//! (runs frozen before training have no word symbols). Runs are merged
//! size-tiered: a run's tier is `⌊log4(len / 256)⌋`; once four runs share
//! the newest tier they merge (a streaming k-way merge over their decoders,
//! re-coded with the current codes), and an older run of a lower tier than
//! the newest joins it. So at most 3 runs per tier, and every key is
//! rewritten about `log4(n / buffer)` times (the buffer grows with the set:
//! about 4 rewrites at 1M and 10M keys). Tiers of 8 were measured: 10 %
//! faster inserts at 1M for +0.6 B/key, +2.5 B/key on the PostgreSQL hrefs.
//!
//! Bytes per key (measured parts, 300K synthetic keys / 10K Wikipedia URLs,
//! before the codes were shared): blocks (Huffman of lcp, length, suffix)
//! 8.7 / 9.4, filter 1.25, index (first keys, front-coded, uncoded) 1.0 /
//! 0.6, block offsets and head words 0.15, buffer 0.25 / 0.1, codes ~5 KiB
//! per generation (were ~2.5 KiB per run), dictionary ~3 KiB.
//! [`CompactSet::space_parts`] reports them; docs/BENCHMARKS.md has totals.
//!
//! Cost: `insert`/`contains` hash once (xxh3), probe the buffer, probe each
//! run's filter (one cache line; `insert_batch` first reads the lines of the
//! whole batch in a tight loop per run so the misses overlap), and for a run whose filter says yes
//! (~1% of runs for an absent key, the owning run for a present one) find
//! the block through the head words (one small array) and up to 16 index
//! entries, then scan that block up to the key, jumping over the text of
//! keys that the lcps already place below it (each key's text length is
//! stored in bits; the batch path keeps the block's first key from that
//! index scan instead of decoding the index again).
//! Common prefixes are compared 8 bytes at a time. `insert_batch` first
//! finds the keys repeated within the batch (`batch`: a table that lives for
//! the call) and looks only their first copies up, run by run, decoding a
//! block once for all the batch's keys in it (dup-heavy link streams), then
//! adds the new keys. Inserts also pay the
//! merges: each key is decoded and re-encoded a few times; re-encoding copies
//! the key's text codes as bits from the old run (same code generation:
//! `RunBuilder::push_recoded`), decoding again only the symbols before the
//! new lcp and tokenising again only a letter run that it cuts; a builder
//! adds key hashes to its filter 256 at a time (misses overlap). This is
//! still the slow part: see docs/BENCHMARKS.md.
//!
//! Background merges ([`CompactSet::with_background_merges`], used by
//! `mgz dedup`): runs are shared (`Arc`), and a due merge is handed to one
//! process-wide thread (`merger`) while inserts go on. At most one merge
//! per set is in flight; it replaces `runs[from..from + count]` when it is
//! installed (at the set's next insert after it finishes), and until then
//! the set reads those runs, so answers never depend on timing. Merges due
//! among the newer runs behind it run on the caller's thread as usual, so
//! the run count stays what the tiers allow; past `MAX_RUNS_BEHIND` runs the
//! caller waits. The work is the same; on two cores `mgz dedup --seen
//! compact` ran in about 55 % of its one-thread wall time at the same peak
//! RSS (the buffer is halved, since its extra tier of merges runs on the
//! other core; docs/BENCHMARKS.md, "Session 11").

mod batch;
mod buffer;
mod dict;
mod filter;
mod huffman;
mod merger;
mod run;
mod snapshot;

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};

use xxhash_rust::xxh3::xxh3_64;

use crate::{Guarantee, SeenSet};
use buffer::KeyBuffer;
use dict::Dict;
use run::{Codes, DecodedBlock, Probe, Run, RunBuilder, RunCursor};

/// Fewest keys a full buffer holds before it is frozen.
const MIN_BUFFER: usize = 256;
/// Most keys the buffer holds.
const MAX_BUFFER: usize = 65_536;
/// Most bytes of keys the buffer holds (64 KiB keys fill it quickly).
const MAX_BUFFER_BYTES: usize = 32 << 20;
/// Runs per tier before they merge; tiers grow by this factor.
const TIER: usize = 4;
/// Runs stay below 4 GiB of blocks (u32 offsets); bigger merges are skipped.
const MAX_RUN_KEYS: usize = 1 << 27;
/// Runs a set with background merges may hold while its merge is in
/// flight before it waits for it (about twice what the tiers keep).
const MAX_RUNS_BEHIND: usize = 32;
/// Batch keys bound for one block from which `contains_many` decodes the
/// block whole instead of scanning it once per key (scans jump over the
/// text of keys that cannot match). PostgreSQL hrefs, `seen_time`, ns per
/// insert: 2 → 195–197, 4 → 173, 8 → 175, never → 201–223.
const DECODE_WHOLE_AT: usize = 4;
/// Keys the word dictionary learns from (it is trained once, then fixed).
const TRAIN_KEYS: usize = 4096;
/// Primary decode table bits of the first codes (learned from one buffer)
/// and of the codes learned with the dictionary (2 × 2^bits bytes each).
const FIRST_TABLE_BITS: u32 = 9;
const TRAINED_TABLE_BITS: u32 = 10;

/// Exact set of byte keys, stored compressed; see the module docs.
///
/// ```
/// use mgz_seen::{SeenSet, compact::CompactSet};
/// let mut set = CompactSet::new();
/// let urls: Vec<String> = (0..20_000)
///     .map(|i| format!("org.example.www/articles/{}/{}", i % 97, i * 7))
///     .collect();
/// for url in &urls {
///     assert!(set.insert(url.as_bytes()));
/// }
/// assert!(!set.insert(urls[5].as_bytes()));
/// assert!(!set.contains(b"org.example.www/articles/1/2"));
/// assert_eq!(set.iter().count(), 20_000);
/// // About 40 bytes per key as text; a few bytes each here.
/// assert!(set.heap_bytes() < 20_000 * 8);
/// ```
#[derive(Debug, Default)]
pub struct CompactSet {
    buffer: KeyBuffer,
    /// Oldest (largest) first; shared with a merge in flight, which only reads them.
    runs: Vec<Arc<Run>>,
    /// Trained once, at the first freeze of at least `TRAIN_KEYS` keys.
    dict: Option<Arc<Dict>>,
    /// The Huffman codes new runs and merges use: learned from the first
    /// frozen buffer, relearned once with the dictionary, then fixed. Older
    /// runs keep the generation they were coded with.
    codes: Option<Arc<Codes>>,
    len: usize,
    /// Merges go to the background thread ([`CompactSet::with_background_merges`]).
    background: bool,
    /// The merge in flight: it replaces `runs[from..from + count]`.
    pending: Option<Pending>,
}

/// A merge handed to the background thread.
#[derive(Debug)]
struct Pending {
    from: usize,
    count: usize,
    result: Receiver<Run>,
}

/// The dictionary of runs frozen before training: no words, all literal.
static EMPTY: Dict = Dict::EMPTY;

fn tier(len: usize) -> u32 {
    (len / MIN_BUFFER).max(1).ilog(TIER)
}

impl CompactSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same set, but merges run on a background thread (one per process,
    /// shared by every set built this way) while inserts go on: on two cores
    /// the caller's thread spends about half the time per insert; the work
    /// is the same. Answers do not depend on it: until a merge is installed
    /// the set reads the runs it merges. While one is in flight, merges among
    /// the newer runs run on the caller's thread, up to the tier the one in
    /// flight will make; past `MAX_RUNS_BEHIND` runs the set waits for it.
    /// Snapshots, iteration and `heap_bytes` see whichever runs are
    /// installed; [`SeenSet::settle`] waits for the rest.
    pub fn with_background_merges(mut self) -> Self {
        self.background = true;
        self
    }

    fn buffer_cap(&self) -> usize {
        // Half the buffer when merges run elsewhere: the extra tier of merges
        // lands on the background thread, the bytes are saved here.
        let div = if self.background { 256 } else { 128 };
        (self.len / div).clamp(MIN_BUFFER, MAX_BUFFER)
    }

    /// Freezes the buffer into a run and merges runs as the tiers require.
    fn flush(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        if self.dict.is_none() && self.len >= TRAIN_KEYS {
            // Once: learn words from every key so far (a few thousand).
            let all: Vec<Vec<u8>> = self.iter().collect();
            let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
            let dict = Dict::train(run::suffixes(&refs));
            self.codes = Some(Arc::new(Codes::learn(&refs, &dict, TRAINED_TABLE_BITS)));
            self.dict = Some(Arc::new(dict));
        }
        let keys = self.buffer.sorted();
        let dict = self.dict.as_deref().unwrap_or(&EMPTY);
        let codes = self
            .codes
            .get_or_insert_with(|| Arc::new(Codes::learn(&keys, dict, FIRST_TABLE_BITS)))
            .clone();
        // The newest run's bytes per key, scaled to this buffer.
        let sizes = self.runs.last().map_or([0, 0], |r| {
            let per = |bytes: usize| bytes * keys.len() / r.len().max(1);
            let s = r.sizes();
            [per(s[0]), per(s[1])]
        });
        let mut b = RunBuilder::new(keys.len(), codes, dict, sizes);
        keys.iter().for_each(|k| b.push(k));
        let run = b.finish();
        self.buffer.clear();
        self.runs.push(Arc::new(run));
        self.merge_due(false);
    }

    /// Installs a finished background merge and runs (or hands out) the
    /// merges now due. The background thread takes one merge at a time;
    /// while it runs, merges among the newer runs behind it are done here,
    /// so the number of runs stays what the tiers allow. With `wait` (or
    /// past `MAX_RUNS_BEHIND` runs) waits for the merge in flight.
    fn merge_due(&mut self, wait: bool) {
        loop {
            if let Some(p) = &self.pending {
                let got = if wait || self.runs.len() > MAX_RUNS_BEHIND {
                    Some(p.result.recv().ok())
                } else {
                    match p.result.try_recv() {
                        Ok(run) => Some(Some(run)),
                        Err(TryRecvError::Empty) => None,
                        Err(TryRecvError::Disconnected) => Some(None),
                    }
                };
                if let Some(got) = got {
                    let Pending { from, count, .. } = self.pending.take().expect("checked above");
                    let run = got.unwrap_or_else(|| {
                        // The job was lost: merge here.
                        let dict = self.dict.as_deref().unwrap_or(&EMPTY);
                        merge(&self.runs[from..from + count], self.codes(), dict)
                    });
                    self.runs.splice(from..from + count, [Arc::new(run)]);
                }
            }
            // Runs a merge in flight reads stay as they are until it lands,
            // and the runs behind it may not outgrow what it will make.
            let lo = self.pending.as_ref().map_or(0, |p| p.from + p.count);
            let Some((from, to)) = self.merge_range(lo) else {
                return;
            };
            if let Some(p) = &self.pending {
                let landing = tier(keys_in(&self.runs[p.from..p.from + p.count]));
                if tier(keys_in(&self.runs[from..to])) > landing {
                    return;
                }
            }
            let codes = self.codes();
            if self.background && self.pending.is_none() {
                let inputs: Vec<Arc<Run>> = self.runs[from..to].to_vec();
                let dict = self.dict.clone();
                let (tx, result) = mpsc::channel();
                let job: merger::Job = Box::new(move || {
                    let run = merge(&inputs, codes, dict.as_deref().unwrap_or(&EMPTY));
                    // The set may be gone: then nobody wants the run.
                    let _ = tx.send(run);
                });
                // Without a background thread the job runs here, and its run
                // is installed on the next turn.
                if let Err(job) = merger::submit(job) {
                    job();
                }
                self.pending = Some(Pending {
                    from,
                    count: to - from,
                    result,
                });
            } else {
                let dict = self.dict.as_deref().unwrap_or(&EMPTY);
                let run = merge(&self.runs[from..to], codes, dict);
                self.runs.splice(from..to, [Arc::new(run)]);
            }
        }
    }

    /// The runs to merge next among `runs[lo..]`, if any merge is due: the
    /// newest runs as [`CompactSet::merge_start`] says (the only case of a
    /// foreground set), else, where a background merge landed among smaller
    /// runs, the oldest group of `TIER` or more consecutive runs of one tier,
    /// or a group followed by a run of a higher tier (which it joins).
    fn merge_range(&self, lo: usize) -> Option<(usize, usize)> {
        let n = self.runs.len();
        if let Some(from) = self.merge_start(lo) {
            return Some((from, n));
        }
        let mut i = lo;
        while i < n {
            let t = tier(self.runs[i].len());
            let j = i + self.runs[i..]
                .iter()
                .take_while(|r| tier(r.len()) == t)
                .count();
            let end = match () {
                () if j - i >= TIER => j,
                () if j < n && tier(self.runs[j].len()) > t => j + 1,
                () => {
                    i = j;
                    continue;
                }
            };
            if keys_in(&self.runs[i..end]) <= MAX_RUN_KEYS {
                return Some((i, end));
            }
            i = j;
        }
        None
    }

    /// Installs a background merge that has finished (its inputs and its
    /// run are both alive until then), without waiting for one that has not.
    #[inline]
    fn install_finished(&mut self) {
        if self.pending.is_some() {
            self.merge_due(false);
        }
    }

    /// The current codes (they exist once a run does).
    fn codes(&self) -> Arc<Codes> {
        self.codes.clone().expect("codes exist once a run does")
    }

    /// Where the runs to merge next begin, if any merge is due.
    /// Only runs from `lo` on are considered.
    fn merge_start(&self, lo: usize) -> Option<usize> {
        let n = self.runs.len();
        let newest = tier(self.runs[lo..].last()?.len());
        let same = self.runs[lo..]
            .iter()
            .rev()
            .take_while(|r| tier(r.len()) <= newest)
            .count();
        let from = if same >= TIER {
            n - same
        } else if n >= lo + 2 && tier(self.runs[n - 2].len()) < newest {
            n - 2
        } else {
            return None;
        };
        (keys_in(&self.runs[from..]) <= MAX_RUN_KEYS).then_some(from)
    }

    fn contains_hashed(&self, key: &[u8], hash: u64) -> bool {
        let dict = self.dict.as_deref().unwrap_or(&EMPTY);
        self.buffer.contains(key, hash) || self.runs.iter().any(|r| r.contains(key, hash, dict))
    }

    /// Which of `keys` (with xxh3 `hashes`) the set holds, run-major: each
    /// run's filter is probed for the whole batch in turn (independent cache
    /// misses overlap), and each block any key points into is decoded once
    /// for all of them (dup-heavy link streams hit the same blocks).
    fn contains_many(&self, keys: &[&[u8]], hashes: &[u64]) -> Vec<bool> {
        let dict = self.dict.as_deref().unwrap_or(&EMPTY);
        let mut found: Vec<bool> = keys
            .iter()
            .zip(hashes)
            .map(|(k, &h)| self.buffer.contains(k, h))
            .collect();
        // (run, block, key, first key) for every key a run's filter and index
        // send to a block; the block's first key (from the index scan) is
        // kept in `firsts` at `first_at` so that it is not decoded again.
        let mut wanted: Vec<(u32, u32, u32, usize, usize)> = Vec::new();
        let (mut first, mut firsts) = (Vec::new(), Vec::new());
        for (r, run) in self.runs.iter().enumerate() {
            run.touch_filter(hashes);
            for (i, key) in keys.iter().enumerate() {
                if found[i] {
                    continue;
                }
                match run.locate(key, hashes[i], &mut first) {
                    Probe::Absent => {}
                    Probe::Present => found[i] = true,
                    Probe::Block(b) => {
                        wanted.push((r as u32, b as u32, i as u32, firsts.len(), first.len()));
                        firsts.extend_from_slice(&first);
                    }
                }
            }
        }
        wanted.sort_unstable();
        let mut block = DecodedBlock::default();
        let mut decoded = None;
        for (j, &(r, b, i, at, n)) in wanted.iter().enumerate() {
            let (run, key) = (&self.runs[r as usize], keys[i as usize]);
            let shared = |k: usize| wanted.get(k).is_some_and(|w| (w.0, w.1) == (r, b));
            if decoded == Some((r, b)) || (1..DECODE_WHOLE_AT).all(|d| shared(j + d)) {
                // Many keys in this block: decode it whole, once.
                if decoded != Some((r, b)) {
                    run.decode_block(b as usize, dict, &mut block);
                    decoded = Some((r, b));
                }
                found[i as usize] |= block.contains(key);
            } else {
                // Few keys: each decodes only up to where it would be.
                let first = &firsts[at..at + n];
                found[i as usize] |= run.block_contains(b as usize, first, key, dict);
            }
        }
        found
    }

    /// Adds `key`, known absent; freezes the buffer when full.
    fn add_new(&mut self, key: &[u8], hash: u64) {
        self.buffer.insert_new(key, hash);
        self.len += 1;
        if self.buffer.len() >= self.buffer_cap() || self.buffer.arena_len() >= MAX_BUFFER_BYTES {
            self.flush();
        }
    }

    /// Every key, in increasing byte order.
    pub fn iter(&self) -> Iter<'_> {
        let dict = self.dict.as_deref().unwrap_or(&EMPTY);
        let mut cursors: Vec<RunCursor<'_>> = self.runs.iter().map(|r| r.cursor(dict)).collect();
        let live = cursors.iter_mut().map(RunCursor::advance).collect();
        Iter {
            cursors,
            live,
            buffer: self.buffer.sorted(),
            next_buffered: 0,
        }
    }

    /// Heap bytes of the code generations in use, each counted once.
    fn codes_bytes(&self) -> usize {
        let mut seen: Vec<*const Codes> = Vec::new();
        let all = self
            .runs
            .iter()
            .map(|r| r.codes())
            .chain(self.codes.as_ref());
        all.filter(|c| {
            let new = !seen.contains(&Arc::as_ptr(c));
            seen.push(Arc::as_ptr(c));
            new
        })
        .map(|c| c.heap_bytes() + std::mem::size_of::<Codes>())
        .sum()
    }

    /// Heap bytes by part, for tuning: buffer, Huffman codes, filters,
    /// index, offsets, blocks.
    #[doc(hidden)]
    pub fn space_parts(&self) -> [usize; 6] {
        let mut parts = [self.buffer.heap_bytes(), self.codes_bytes(), 0, 0, 0, 0];
        for r in &self.runs {
            for (p, b) in parts[1..].iter_mut().zip(r.parts()) {
                *p += b;
            }
        }
        parts
    }

    #[cfg(test)]
    fn run_lens(&self) -> Vec<usize> {
        self.runs.iter().map(|r| r.len()).collect()
    }
}

/// Keys in `runs`.
fn keys_in(runs: &[Arc<Run>]) -> usize {
    runs.iter().map(|r| r.len()).sum()
}

/// The disjoint union of `runs` as one run, coded with `codes`.
fn merge(runs: &[Arc<Run>], codes: Arc<Codes>, dict: &Dict) -> Run {
    let total = runs.iter().map(|r| r.len()).sum();
    // Runs of the current code generation were tokenised with `dict`: their
    // symbols carry over. Older runs (frozen before the dictionary) are
    // tokenised again, so their keys gain the words.
    let carry: Vec<bool> = runs
        .iter()
        .map(|r| Arc::ptr_eq(r.codes(), &codes))
        .collect();
    let sizes = runs
        .iter()
        .map(|r| r.sizes())
        .fold([0, 0], |a, s| [a[0] + s[0], a[1] + s[1]]);
    let mut b = RunBuilder::new(total, codes, dict, sizes);
    let mut cursors: Vec<RunCursor<'_>> = runs.iter().map(|r| r.cursor(dict)).collect();
    let mut live: Vec<bool> = cursors.iter_mut().map(RunCursor::advance).collect();
    while let Some(i) = smallest(&cursors, &live, None) {
        let coding = cursors[i].coding().filter(|_| carry[i]);
        b.push_recoded(cursors[i].key(), coding);
        live[i] = cursors[i].advance();
    }
    b.finish()
}

/// Index of the live cursor with the smallest key, also compared to `other`
/// (`usize::MAX` when `other` is smaller).
fn smallest(cursors: &[RunCursor<'_>], live: &[bool], other: Option<&[u8]>) -> Option<usize> {
    let mut best: Option<(usize, &[u8])> = other.map(|k| (usize::MAX, k));
    for (i, c) in cursors.iter().enumerate() {
        if live[i] && best.is_none_or(|(_, k)| c.key() < k) {
            best = Some((i, c.key()));
        }
    }
    best.map(|(i, _)| i)
}

/// Iterator over a [`CompactSet`]'s keys in increasing order.
pub struct Iter<'a> {
    cursors: Vec<RunCursor<'a>>,
    live: Vec<bool>,
    buffer: Vec<&'a [u8]>,
    next_buffered: usize,
}

impl Iterator for Iter<'_> {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        let buffered = self.buffer.get(self.next_buffered).copied();
        match smallest(&self.cursors, &self.live, buffered)? {
            usize::MAX => {
                self.next_buffered += 1;
                buffered.map(<[u8]>::to_vec)
            }
            i => {
                let key = self.cursors[i].key().to_vec();
                self.live[i] = self.cursors[i].advance();
                Some(key)
            }
        }
    }
}

impl SeenSet for CompactSet {
    fn insert(&mut self, key: &[u8]) -> bool {
        self.install_finished();
        let hash = xxh3_64(key);
        if self.contains_hashed(key, hash) {
            return false;
        }
        self.add_new(key, hash);
        true
    }

    /// Looks the batch's distinct keys up first ([`CompactSet::contains_many`]),
    /// then adds the new ones in order. A key repeated within the batch is
    /// looked up once: its later copies answer `false` (its first copy was
    /// either in the set or added by then). Link streams repeat a page's
    /// navigation links many times per batch (the PostgreSQL hrefs: 26 % of
    /// a 1,024-key batch is distinct), so most keys skip the runs entirely.
    /// The distinct keys cannot make each other present, so no key needs
    /// looking up again after a freeze inside the batch.
    fn insert_batch(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) {
        self.install_finished();
        let hashes: Vec<u64> = keys.iter().map(|k| xxh3_64(k)).collect();
        let first = batch::first_copies(keys, &hashes);
        let distinct: Vec<usize> = (0..keys.len()).filter(|&i| first[i] == i).collect();
        let (dkeys, dhashes): (Vec<&[u8]>, Vec<u64>) =
            distinct.iter().map(|&i| (keys[i], hashes[i])).unzip();
        let present = self.contains_many(&dkeys, &dhashes);
        out.clear();
        out.resize(keys.len(), false);
        for (j, &i) in distinct.iter().enumerate() {
            if !present[j] {
                self.add_new(keys[i], hashes[i]);
                out[i] = true;
            }
        }
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hashed(key, xxh3_64(key))
    }

    /// Waits for the merge in flight, if any, and runs every merge then due:
    /// the runs are what the tiers say, as after a foreground insert.
    fn settle(&mut self) {
        self.merge_due(true);
    }

    fn len(&self) -> usize {
        self.len
    }

    fn heap_bytes(&self) -> usize {
        // Each run sits in its own `Arc` allocation (two counters and the `Run`).
        let arc = std::mem::size_of::<Run>() + 2 * std::mem::size_of::<usize>();
        let runs: usize = self.runs.iter().map(|r| r.heap_bytes() + arc).sum();
        let dict = self.dict.as_ref().map_or(0, |d| d.heap_bytes());
        dict + self.codes_bytes()
            + self.buffer.heap_bytes()
            + runs
            + self.runs.capacity() * std::mem::size_of::<Arc<Run>>()
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::Exact
    }

    fn name(&self) -> &'static str {
        "compact"
    }

    fn snapshot(&self) -> Option<Vec<u8>> {
        Some(self.to_snapshot())
    }

    fn write_snapshot(&self, out: &mut dyn std::io::Write) -> std::io::Result<bool> {
        self.stream_snapshot(out).map(|()| true)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_background;
