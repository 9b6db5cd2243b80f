//! `compact`: an exact, dynamic, enumerable set of byte keys.
//!
//! An LSM of compressed sorted runs under a small hashed buffer:
//!
//! ```text
//! CompactSet
//! ├─ buffer: KeyBuffer (arena + hash table), <= clamp(len/64, 256, 65536) keys
//! │     │ full: sort, count bytes, build a Huffman code, freeze
//! │     ▼
//! └─ runs (oldest, largest first): [run][run][run]…   each a Run:
//!       filter (10 bits/key) · index of block first keys · blocks of 32
//!       front-coded keys, Huffman-coded with the run's own code
//! ```
//!
//! Keys are `key_bytes()` (reversed host first), so sorting groups a host's
//! URLs and front coding stores each shared host and path prefix once per
//! block; the Huffman code squeezes what remains (mostly path tails).
//!
//! Invariants: a key lives in exactly one place (buffer or one run), since
//! `insert` checks everything first; so runs are disjoint and a merge is a
//! union of known size. Runs are merged size-tiered: a run's tier is
//! `⌊log4(len / 256)⌋`; once four runs share the newest tier they merge
//! (a streaming k-way merge over their decoders), and a run never stays
//! behind a bigger newer one. So at most 3 runs per tier, and every key is
//! rewritten about `log4(n / buffer)` times.
//!
//! Bytes per key ≈ 0.6 × (2 + front-coded suffix) + (suffix + 6) / 32 + 1.25
//! (filter) + buffer share (<= ~1/64 of the keys at ~10 bytes more than
//! their length) + ~1.2 KiB per run. On the wiki sample that is ≈ 11 bytes.
//!
//! Cost: `insert`/`contains` hash once (xxh3), probe the buffer, probe each
//! run's filter (one cache line), and decode at most one block (32 keys) in
//! each run whose filter says yes (~1% of runs for an absent key).

mod buffer;
mod filter;
mod huffman;
mod run;

use xxhash_rust::xxh3::xxh3_64;

use crate::{Guarantee, SeenSet};
use buffer::KeyBuffer;
use huffman::Code;
use run::{Run, RunBuilder, RunCursor};

/// Fewest keys a full buffer holds before it is frozen.
const MIN_BUFFER: usize = 256;
/// Most keys the buffer holds.
const MAX_BUFFER: usize = 65_536;
/// Most bytes of keys the buffer holds (64 KiB keys fill it quickly).
const MAX_BUFFER_BYTES: usize = 32 << 20;
/// Runs per tier before they merge; tiers grow by this factor.
const TIER: usize = 8;
/// Runs stay below 4 GiB of blocks (u32 offsets); bigger merges are skipped.
const MAX_RUN_KEYS: usize = 1 << 27;

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
    runs: Vec<Run>,
    len: usize,
}

fn tier(len: usize) -> u32 {
    (len / MIN_BUFFER).max(1).ilog(TIER)
}

impl CompactSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    fn buffer_cap(&self) -> usize {
        (self.len / 64).clamp(MIN_BUFFER, MAX_BUFFER)
    }

    /// Freezes the buffer into a run and merges runs as the tiers require.
    fn flush(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let keys = self.buffer.sorted();
        let code = Code::from_freqs(&run::histogram(keys.iter().copied()));
        let mut b = RunBuilder::new(keys.len(), code);
        keys.iter().for_each(|k| b.push(k));
        let run = b.finish();
        self.buffer.clear();
        self.runs.push(run);
        while let Some(from) = self.merge_start() {
            let tail = self.runs.split_off(from);
            self.runs.push(merge(&tail));
        }
    }

    /// Where the runs to merge next begin, if any merge is due.
    fn merge_start(&self) -> Option<usize> {
        let n = self.runs.len();
        let newest = tier(self.runs.last()?.len());
        let same = self
            .runs
            .iter()
            .rev()
            .take_while(|r| tier(r.len()) <= newest)
            .count();
        let from = if same >= TIER {
            n - same
        } else if n >= 2 && self.runs[n - 2].len() < self.runs[n - 1].len() {
            n - 2
        } else {
            return None;
        };
        let total: usize = self.runs[from..].iter().map(Run::len).sum();
        (total <= MAX_RUN_KEYS).then_some(from)
    }

    /// Every key, in increasing byte order.
    pub fn iter(&self) -> Iter<'_> {
        let mut cursors: Vec<RunCursor<'_>> = self.runs.iter().map(Run::cursor).collect();
        let live = cursors.iter_mut().map(RunCursor::advance).collect();
        Iter {
            cursors,
            live,
            buffer: self.buffer.sorted(),
            next_buffered: 0,
        }
    }

    #[cfg(test)]
    fn run_lens(&self) -> Vec<usize> {
        self.runs.iter().map(Run::len).collect()
    }
}

/// The disjoint union of `runs` as one run, coded with their pooled histogram.
fn merge(runs: &[Run]) -> Run {
    let mut freqs = [0u64; 256];
    runs.iter()
        .for_each(|r| r.code().add_estimate(r.symbols(), &mut freqs));
    let total = runs.iter().map(Run::len).sum();
    let mut b = RunBuilder::new(total, Code::from_freqs(&freqs));
    let mut cursors: Vec<RunCursor<'_>> = runs.iter().map(Run::cursor).collect();
    let mut live: Vec<bool> = cursors.iter_mut().map(RunCursor::advance).collect();
    while let Some(i) = smallest(&cursors, &live, None) {
        b.push(cursors[i].key());
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
        let hash = xxh3_64(key);
        if self.buffer.contains(key, hash) || self.runs.iter().any(|r| r.contains(key, hash)) {
            return false;
        }
        self.buffer.insert_new(key, hash);
        self.len += 1;
        if self.buffer.len() >= self.buffer_cap() || self.buffer.arena_len() >= MAX_BUFFER_BYTES {
            self.flush();
        }
        true
    }

    fn contains(&self, key: &[u8]) -> bool {
        let hash = xxh3_64(key);
        self.buffer.contains(key, hash) || self.runs.iter().any(|r| r.contains(key, hash))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn heap_bytes(&self) -> usize {
        let runs: usize = self.runs.iter().map(Run::heap_bytes).sum();
        self.buffer.heap_bytes() + runs + self.runs.capacity() * std::mem::size_of::<Run>()
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::Exact
    }

    fn name(&self) -> &'static str {
        "compact"
    }
}

#[cfg(test)]
mod tests;
