//! The dedupe loop: chunks of lines in, batched seen-set inserts, decisions out.
//!
//! Per chunk (up to 256 KiB of whole lines):
//!
//! ```text
//!   chunk ──split on \n──▶ lines ──key──▶ keys ──insert_batch──▶ fresh[i]
//!                                                                   │
//!   output ◀── print (after append log fsync) ◀── Sink::line ◀──────┘
//! ```
//!
//! Keys are slices into the chunk (plain mode) or into a reused arena
//! (canonical mode), so the loop allocates nothing per line. One
//! `insert_batch` per chunk lets backends that sort or prefetch do so;
//! `fresh[i]` is exactly what sequential inserts would have answered, so
//! repeats inside one chunk are handled like any other.
//!
//! Memory apart from the set: the chunk buffer, the longest line, and per
//! chunk one slice (16 B) and one bool per line.

use std::io::{Read, Write};

use mgz_seen::SeenSet;
use mgz_url::UrlError;

use crate::chunks::{Chunks, DEFAULT_CHUNK_BYTES};
use crate::key::{Keyed, canonical_key, content};
use crate::recent::Recent;
use crate::{DedupError, KeyMode, Sink, Stats};

/// Options of a dedupe run that do not concern the output.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// What lines are deduplicated on.
    pub key: KeyMode,
    /// In canonical mode, skip (and report) lines that are not URLs instead
    /// of deduplicating them as plain lines.
    pub strict: bool,
    /// Bytes per read; tests make it tiny to split lines across reads.
    pub chunk_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            key: KeyMode::Plain,
            strict: false,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
        }
    }
}

/// A line skipped in strict mode, as reported to the caller.
#[derive(Debug)]
pub struct Rejected<'a> {
    /// 1-based line number within the current input.
    pub line_no: u64,
    /// The line as read (with its `\n`, if any).
    pub line: &'a [u8],
    /// Why it is not a URL.
    pub error: UrlError,
}

/// Keeps the seen-set and counters across inputs.
pub struct Deduper {
    set: Box<dyn SeenSet>,
    opts: Options,
    stats: Stats,
    arena: Vec<u8>,
    lines: Vec<Line>,
    fresh: Vec<bool>,
    batch: CachedBatch,
}

/// Where strict mode reports skipped lines, and the number of the chunk's first line.
struct Reporter<'r> {
    first_line_no: u64,
    report: &'r mut dyn FnMut(Rejected<'_>),
}

/// One line of the chunk: where it ends (exclusive) and where its key lives.
#[derive(Debug, Clone, Copy)]
struct Line {
    end: usize,
    key: Span,
}

/// Where one line's key lives, decided before the batch insert.
#[derive(Debug, Clone, Copy)]
enum Span {
    /// Key is `chunk[start..end]`.
    Chunk(usize, usize),
    /// Key is `arena[start..end]`.
    Arena(usize, usize),
    /// Strict mode: line skipped, no key.
    Skipped,
}

impl Deduper {
    /// A deduper over `set` (normally empty).
    pub fn new(set: Box<dyn SeenSet>, opts: Options) -> Self {
        let set_name = set.name();
        Deduper {
            set,
            opts,
            stats: Stats::default(),
            arena: Vec::new(),
            lines: Vec::new(),
            fresh: Vec::new(),
            batch: CachedBatch::new(uses_cache(set_name)),
        }
    }

    /// Counters so far, with the set's current size.
    pub fn stats(&self) -> Stats {
        Stats {
            backend: self.set.name(),
            distinct_total: self.set.len() as u64,
            set_bytes: self.set.heap_bytes() as u64,
            cache_bytes: self.batch.recent.as_ref().map_or(0, Recent::heap_bytes) as u64,
            ..self.stats
        }
    }

    /// Reads the existing lines of the append log into the set (they count
    /// as seen, print nothing) and tells the log how the file ends.
    pub fn preload<R: Read, W: Write>(
        &mut self,
        file: R,
        sink: &mut Sink<W>,
    ) -> Result<(), DedupError> {
        let mut chunks = Chunks::new(file, self.opts.chunk_bytes);
        let mut last = None;
        while let Some(chunk) = chunks.next_chunk().map_err(DedupError::AppendFile)? {
            last = chunk.last().copied();
            self.stats.preloaded += self.key_chunk(chunk, None) as u64;
            let keys = keys(&self.lines, &self.arena, chunk);
            self.batch.insert(self.set.as_mut(), &keys, &mut self.fresh);
        }
        if let Some(log) = sink.append_log() {
            log.set_last_byte(last);
        }
        Ok(())
    }

    /// Dedupes one input into `sink`. `reject` hears of each line skipped
    /// in strict mode. Returns when the input ends or the output fails.
    pub fn run<R: Read, W: Write>(
        &mut self,
        input: R,
        sink: &mut Sink<W>,
        reject: &mut dyn FnMut(Rejected<'_>),
    ) -> Result<(), DedupError> {
        let mut chunks = Chunks::new(input, self.opts.chunk_bytes);
        let mut line_no = 0;
        while let Some(chunk) = chunks.next_chunk().map_err(DedupError::Input)? {
            let reporter = Reporter {
                first_line_no: line_no + 1,
                report: &mut *reject,
            };
            let lines = self.key_chunk(chunk, Some(reporter));
            line_no += lines as u64;
            self.stats.lines_read += lines as u64;
            let keys = keys(&self.lines, &self.arena, chunk);
            self.batch.insert(self.set.as_mut(), &keys, &mut self.fresh);
            self.decide(chunk, sink);
            sink.commit()?;
        }
        Ok(())
    }

    /// Fills `lines` with each line's end and key location; returns the count.
    fn key_chunk(&mut self, chunk: &[u8], mut reject: Option<Reporter<'_>>) -> usize {
        self.lines.clear();
        self.arena.clear();
        let mut start = 0;
        while start < chunk.len() {
            let end = memchr::memchr(b'\n', &chunk[start..]).map_or(chunk.len(), |i| start + i + 1);
            let line = &chunk[start..end];
            let key = match &self.opts.key {
                KeyMode::Plain => Span::Chunk(start, start + content(line).len()),
                KeyMode::Canonical(policy) => {
                    let from = self.arena.len();
                    match canonical_key(line, policy, &mut self.arena) {
                        Keyed::Url => Span::Arena(from, self.arena.len()),
                        Keyed::Plain(error) => match reject.as_mut() {
                            Some(Reporter {
                                first_line_no,
                                report,
                            }) if self.opts.strict => {
                                self.arena.truncate(from);
                                let line_no = *first_line_no + self.lines.len() as u64;
                                report(Rejected {
                                    line_no,
                                    line,
                                    error,
                                });
                                Span::Skipped
                            }
                            _ => Span::Arena(from, self.arena.len()),
                        },
                    }
                }
            };
            self.lines.push(Line { end, key });
            start = end;
        }
        self.lines.len()
    }

    /// Hands each line with its verdict to the sink, in input order.
    fn decide<W: Write>(&mut self, chunk: &[u8], sink: &mut Sink<W>) {
        let mut fresh = self.fresh.iter();
        let mut start = 0;
        for line in &self.lines {
            let (from, end) = (start, line.end);
            start = end;
            if matches!(line.key, Span::Skipped) {
                self.stats.rejected += 1;
                continue;
            }
            let is_new = fresh.next().copied().unwrap_or(false);
            if is_new {
                self.stats.distinct += 1;
            } else {
                self.stats.duplicates += 1;
            }
            sink.line(&chunk[from..end], is_new);
        }
    }
}

/// Whether backend `name` gets the recent-key cache. `fingerprint` answers
/// a repeat in about one run probe, so on the 10M synthetic list (~7 %
/// repeats) the cache's hash, probe and key copy per line cost more than
/// it saved: 0.79 s instead of 0.97 s of CPU for 2M lines (3 runs each).
fn uses_cache(name: &str) -> bool {
    !name.starts_with("fingerprint")
}

/// Batch inserts through the recent-key cache: cached keys are known
/// repeats; the rest go to the set in one `insert_batch`, then are cached.
struct CachedBatch {
    recent: Option<Recent>,
    hashes: Vec<u64>,
    misses: Vec<usize>,
    miss_fresh: Vec<bool>,
}

impl CachedBatch {
    fn new(use_cache: bool) -> Self {
        CachedBatch {
            recent: use_cache.then(Recent::new),
            hashes: Vec::new(),
            misses: Vec::new(),
            miss_fresh: Vec::new(),
        }
    }

    /// `fresh[i]` = what sequential `set.insert(keys[i])` would return.
    fn insert(&mut self, set: &mut dyn SeenSet, keys: &[&[u8]], fresh: &mut Vec<bool>) {
        let Some(recent) = self.recent.as_mut() else {
            set.insert_batch(keys, fresh);
            return;
        };
        self.hashes.clear();
        self.misses.clear();
        for (i, key) in keys.iter().enumerate() {
            let h = Recent::hash(key);
            self.hashes.push(h);
            if !recent.contains(key, h) {
                self.misses.push(i);
            }
        }
        let miss_keys: Vec<&[u8]> = self.misses.iter().map(|&i| keys[i]).collect();
        set.insert_batch(&miss_keys, &mut self.miss_fresh);
        fresh.clear();
        fresh.resize(keys.len(), false);
        for (&i, &is_new) in self.misses.iter().zip(&self.miss_fresh) {
            fresh[i] = is_new;
            recent.remember(keys[i], self.hashes[i]);
        }
    }
}

/// The keys of the non-skipped lines, in order (a free function so the
/// borrow of `lines`/`arena` stays apart from the mutable borrow of the set).
fn keys<'a>(lines: &[Line], arena: &'a [u8], chunk: &'a [u8]) -> Vec<&'a [u8]> {
    lines
        .iter()
        .filter_map(|line| match line.key {
            Span::Chunk(s, e) => Some(&chunk[s..e]),
            Span::Arena(s, e) => Some(&arena[s..e]),
            Span::Skipped => None,
        })
        .collect()
}
