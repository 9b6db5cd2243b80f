//! Links cut by `--max-depth`, kept for a deeper rerun: `STATE/edge`.
//!
//! A crawl to depth D fetches the pages at depth D but does not queue their
//! links. Without a record of them, rerunning the crawl with a larger
//! `--max-depth` found nothing to do: every page within D was fetched, and
//! the links that lead deeper were gone. So a crawl whose state directory
//! outlives it appends those links here (their depth is D + 1), and a later
//! run whose `max_depth` reaches an entry's depth puts it into the frontier
//! before its first fetch. From there it is a link like any other: the
//! frontier's dedupe, the run's scope, patterns and traps when it is put,
//! robots.txt and politeness when it is fetched. They are kept out of the
//! frontier meanwhile so they cost a run that cannot fetch them nothing but
//! an append: in the frontier they would be leased and handed back all
//! through the last wave, and a URL kept there first at D + 1 would be
//! "seen" when a late path (a retried page, `--loose-depth`) reaches it
//! within D, and never fetched.
//!
//! ```text
//! file:  "mgz-edge 1\n" (HEADER) then one entry per line
//! entry: DEPTH " " URL "\n"    DEPTH decimal u32, URL canonical
//!                              (no spaces or control characters)
//! ```
//!
//! Invariants and durability:
//! - A page's entries go to the kernel in one `write`, before the page's row
//!   is stored and its URL completed (the order of its WARC records), so
//!   every stored page's cut links are in the file after a SIGKILL. Only a
//!   failed write (a full disk) leaves a line cut short, and that page is
//!   not stored: its URL is fetched again when the crawl resumes.
//! - Opening reads the file through ([`Edge::replay`]): entries within the
//!   run's depth are handed to the caller to put; the others are written to
//!   `edge.tmp`, which replaces the file once every due entry is put (a
//!   kill before that leaves the old file, whose due entries are put again
//!   and answered "seen"). A last line without its newline is dropped (its
//!   page was not stored, see above); any other line that is not an entry
//!   stops the crawl with [`CrawlError::State`] and leaves the file as it is.
//! - A URL is written once per file and depth: the kept entries and this
//!   run's are remembered in a [`FingerprintSet`] (5.2–5.7 bytes an entry,
//!   measured,
//!   2^-36 false positives per lookup, the frontier's default bound: such a
//!   link would not be kept).
//!
//! Links are kept after the run's scope, patterns and trap limits admit
//! them (out-of-scope links are most of a page's), and before the frontier
//! is asked: a link the crawl already knows is kept too, and answered
//! "seen" when put.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mgz_seen::SeenSet;
use mgz_seen::fingerprint::{DEFAULT_EPSILON, FingerprintSet};

use crate::{CrawlError, state_file};

/// Name of the file in the state directory.
pub const FILE: &str = "edge";
/// First line of the file: its format.
pub const HEADER: &[u8] = b"mgz-edge 1\n";
/// Longest line read: a URL past the longest `--max-url-length` anyone
/// would set, and still a bounded allocation for a file that is not ours.
pub const MAX_LINE: usize = 1 << 20;
/// Due entries handed to the caller at once.
pub const CHUNK: usize = 4096;

/// The cut links of a crawl with a kept state directory.
pub struct Edge {
    path: PathBuf,
    inner: Mutex<Inner>,
}

struct Inner {
    /// Open for appending once the first entry of this run is written.
    file: Option<File>,
    /// URLs in the file (kept by earlier runs, or written by this one).
    urls: FingerprintSet,
    /// Entries in the file.
    entries: u64,
}

/// What [`Edge::replay`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replayed {
    /// Entries handed to the caller (within the run's depth).
    pub due: u64,
    /// Entries kept for a deeper run (duplicates dropped).
    pub kept: u64,
    /// A last line cut short (dropped).
    pub torn: bool,
}

fn set() -> FingerprintSet {
    FingerprintSet::new(1 << 16, DEFAULT_EPSILON).expect("valid epsilon")
}

impl Edge {
    /// The edge of the state directory `dir`; nothing is read yet.
    pub fn new(dir: &Path) -> Edge {
        Edge {
            path: dir.join(FILE),
            inner: Mutex::new(Inner {
                file: None,
                urls: set(),
                entries: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries in the file now.
    pub fn entries(&self) -> u64 {
        self.lock().entries
    }

    /// Heap bytes of the set of URLs in the file (measured 5.2 B an entry
    /// at 100,000 entries, 5.7 at 1,000,000: `tests.rs`).
    pub fn heap_bytes(&self) -> usize {
        self.lock().urls.heap_bytes()
    }

    /// Reads the file (see the module docs): calls `put(depth, urls)` for
    /// the entries at depths up to `max_depth`, at most [`CHUNK`] URLs of one
    /// depth at a time, and then replaces the file with the rest. Call once,
    /// before [`Edge::keep`].
    pub async fn replay<F, Fut>(&self, max_depth: u32, mut put: F) -> Result<Replayed, CrawlError>
    where
        F: FnMut(u32, Vec<String>) -> Fut,
        Fut: std::future::Future<Output = Result<(), CrawlError>>,
    {
        let file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Replayed::default()),
            Err(e) => return Err(state_file::bad(&self.path, format!("unreadable: {e}"))),
        };
        let tmp = self.path.with_extension("tmp");
        let result = self.replay_into(file, &tmp, max_depth, &mut put).await;
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    async fn replay_into<F, Fut>(
        &self,
        file: File,
        tmp: &Path,
        max_depth: u32,
        put: &mut F,
    ) -> Result<Replayed, CrawlError>
    where
        F: FnMut(u32, Vec<String>) -> Fut,
        Fut: std::future::Future<Output = Result<(), CrawlError>>,
    {
        let bad = |reason: String| state_file::bad(&self.path, reason);
        let write_err =
            |e: std::io::Error| bad(format!("{} cannot be written: {e}", tmp.display()));
        let mut entries = Entries::new(BufReader::new(file));
        let mut out = BufWriter::new(File::create(tmp).map_err(write_err)?);
        out.write_all(HEADER).map_err(write_err)?;
        let mut done = Replayed::default();
        let mut chunk: Vec<String> = Vec::new();
        let mut chunk_depth = 0;
        let mut key = Vec::new();
        while let Some((depth, url)) = entries.next_entry().map_err(bad)? {
            if depth <= max_depth {
                if !chunk.is_empty() && (chunk_depth != depth || chunk.len() >= CHUNK) {
                    put(chunk_depth, std::mem::take(&mut chunk)).await?;
                }
                chunk_depth = depth;
                chunk.push(url);
                done.due += 1;
                continue;
            }
            let mut inner = self.lock();
            if inner.urls.insert(set_key(&mut key, depth, &url)) {
                writeln!(out, "{depth} {url}").map_err(write_err)?;
                inner.entries += 1;
                done.kept += 1;
            }
        }
        if !chunk.is_empty() {
            put(chunk_depth, chunk).await?;
        }
        done.torn = entries.torn();
        let out = out.into_inner().map_err(|e| write_err(e.into_error()))?;
        drop(out);
        if done.kept == 0 {
            std::fs::remove_file(tmp).map_err(write_err)?;
            std::fs::remove_file(&self.path).map_err(|e| bad(format!("cannot be removed: {e}")))?;
        } else {
            std::fs::rename(tmp, &self.path).map_err(write_err)?;
        }
        Ok(done)
    }

    /// Appends `urls` at `depth`, those not in the file yet, in one write;
    /// returns how many were written.
    pub fn keep<'a>(
        &self,
        depth: u32,
        urls: impl IntoIterator<Item = &'a str>,
    ) -> Result<usize, CrawlError> {
        let mut inner = self.lock();
        let mut buf = Vec::new();
        if inner.file.is_none() && inner.entries == 0 {
            buf.extend_from_slice(HEADER);
        }
        let head = buf.len();
        let mut n = 0;
        let mut key = Vec::new();
        for url in urls {
            if !is_entry_url(url) || !inner.urls.insert(set_key(&mut key, depth, url)) {
                continue;
            }
            // Writing to a Vec cannot fail.
            let _ = writeln!(buf, "{depth} {url}");
            n += 1;
        }
        if buf.len() == head {
            return Ok(0);
        }
        let bad =
            |e: std::io::Error| state_file::bad(&self.path, format!("cannot be written: {e}"));
        if inner.file.is_none() {
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(bad)?;
            inner.file = Some(f);
        }
        let f = inner.file.as_mut().expect("opened above");
        f.write_all(&buf).map_err(bad)?;
        inner.entries += n as u64;
        Ok(n)
    }
}

/// The key of an entry in [`Inner::urls`]: the URL at its depth, so a URL
/// kept deeper by one run and shallower by a later one (a smaller
/// `--max-depth`, then a larger) is written at both and put at the least
/// depth a run reaches. Built in `buf`, reused from key to key.
fn set_key<'a>(buf: &'a mut Vec<u8>, depth: u32, url: &str) -> &'a [u8] {
    buf.clear();
    buf.extend_from_slice(&depth.to_le_bytes());
    buf.extend_from_slice(url.as_bytes());
    buf
}

/// A URL an entry can hold: not empty, no spaces or control characters
/// (canonical URLs percent-encode them).
fn is_entry_url(url: &str) -> bool {
    !url.is_empty() && !url.bytes().any(|b| b <= b' ' || b == 0x7f)
}

/// `DEPTH SP URL` (the newline already taken off).
fn parse_entry(line: &[u8]) -> Result<(u32, &str), String> {
    let text = std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?;
    let (depth, url) = text
        .split_once(' ')
        .ok_or_else(|| "not DEPTH URL".to_string())?;
    let depth = depth
        .parse::<u32>()
        .map_err(|_| format!("depth {depth:?} is not a number"))?;
    if !is_entry_url(url) {
        return Err(format!("URL {url:?} is empty or has spaces"));
    }
    Ok((depth, url))
}

/// The entries of an edge file, in order (see the module docs).
pub struct Entries<R> {
    lines: Lines<R>,
    line_no: u64,
    torn: bool,
}

impl<R: BufRead> Entries<R> {
    /// Reads the file from its start.
    pub fn new(r: R) -> Self {
        Entries {
            lines: Lines { r },
            line_no: 0,
            torn: false,
        }
    }

    /// Whether the file ended in a line cut short (dropped).
    pub fn torn(&self) -> bool {
        self.torn
    }

    /// The next entry, `None` at the end; `Err` says what is wrong and
    /// where (the reading stops there).
    pub fn next_entry(&mut self) -> Result<Option<(u32, String)>, String> {
        loop {
            let line = match self.lines.next().map_err(|e| format!("unreadable: {e}"))? {
                None => return Ok(None),
                Some(Line::Whole(l)) => l,
                Some(Line::Torn(l)) => {
                    // Dropped: see the module docs. A header cut short means
                    // a file whose first write failed: nothing in it.
                    if self.line_no == 0 && !HEADER.starts_with(&l) {
                        return Err("not an edge file (no mgz-edge header)".into());
                    }
                    self.torn = true;
                    return Ok(None);
                }
                Some(Line::TooLong) => {
                    return Err(format!(
                        "line {} is longer than {MAX_LINE} bytes",
                        self.line_no + 1
                    ));
                }
            };
            self.line_no += 1;
            if self.line_no == 1 {
                if line != HEADER[..HEADER.len() - 1] {
                    return Err(format!(
                        "not an edge file (its first line is {:?}, not mgz-edge 1)",
                        String::from_utf8_lossy(&line[..line.len().min(64)])
                    ));
                }
                continue;
            }
            let (depth, url) =
                parse_entry(&line).map_err(|r| format!("line {}: {r}", self.line_no))?;
            return Ok(Some((depth, url.to_string())));
        }
    }
}

enum Line {
    Whole(Vec<u8>),
    Torn(Vec<u8>),
    TooLong,
}

/// Lines of at most [`MAX_LINE`] bytes, telling a last line without its
/// newline apart.
struct Lines<R> {
    r: R,
}

impl<R: BufRead> Lines<R> {
    fn next(&mut self) -> std::io::Result<Option<Line>> {
        let mut line = Vec::new();
        let n = self
            .r
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            return Ok(Some(Line::Whole(line)));
        }
        if line.len() > MAX_LINE {
            return Ok(Some(Line::TooLong));
        }
        Ok(Some(Line::Torn(line)))
    }
}

#[cfg(test)]
mod tests;
