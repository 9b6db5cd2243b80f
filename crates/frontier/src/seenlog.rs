//! The seen log: an append-only file of the keys added to the seen sets
//! since the last snapshot (see `snapshot`), so a restart restores the
//! snapshot and replays this short tail instead of rescanning the store.
//!
//! ```text
//! DIR/seen-<gen>.log
//!   header  "MGZL" | version u32 | gen u64 | xxh3-64 of the first 16 B      24 B
//!   frame   len u32 | payload (len B) | xxh3-64 of (len ‖ payload)          12 B + payload
//!   payload records, each led by a tag byte:
//!     1 key        crawl u32 | qid u32 | klen u16 | key        11 B + key (~70 B per URL)
//!     2 durable    offset u64: every frame ending at or before it is in the fsynced store
//!     3 dirty      crawl u32: URLs of that crawl were deleted (its "seen" answers need checking)
//!     4 key at     crawl u32 | qid u32 | next u64 | seq u64 | klen u16 | key
//!                  a pending URL without a `urls` entry: its `sched` key is (qid, next, seq)
//! ```
//! All integers little-endian.
//!
//! Invariants: one frame per write call, written (to the OS) *before* the
//! store batch it describes is committed, so after a process kill the log
//! holds every key the store holds. The converse does not hold (the batch may
//! be lost after its frame was written), so at replay keys in frames after the
//! last `durable` mark are checked against the store before they are trusted.
//! A mark vouches for every frame before it in its file, so a file that
//! ends in such unchecked frames is never appended to again: the open after
//! it starts the next generation (`seenidx::restore`), and the dead frames
//! stay checked at every replay until a snapshot retires the file.
//! A frame cut short at the end of the file (a torn write) is truncated with a
//! warning; a bad frame followed by more data is corruption and makes the
//! caller rebuild the seen sets from the store.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{FrontierError, Result};

const MAGIC: &[u8; 4] = b"MGZL";
/// Version of the seen-log format.
pub const LOG_VERSION: u32 = 1;
const HEADER: usize = 24;
pub(crate) const TAG_KEY: u8 = 1;
pub(crate) const TAG_DURABLE: u8 = 2;
pub(crate) const TAG_DIRTY: u8 = 3;
pub(crate) const TAG_KEY_AT: u8 = 4;

/// Path of log generation `gen` in `dir`.
pub fn log_path(dir: &Path, generation: u64) -> PathBuf {
    dir.join(format!("seen-{generation}.log"))
}

/// Appends a key record to a frame payload under construction.
pub fn push_key(buf: &mut Vec<u8>, crawl: u32, qid: u32, key: &[u8]) {
    let len = u16::try_from(key.len()).unwrap_or(u16::MAX);
    buf.push(TAG_KEY);
    buf.extend_from_slice(&crawl.to_le_bytes());
    buf.extend_from_slice(&qid.to_le_bytes());
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(&key[..usize::from(len)]);
}

/// Appends a key record of an unindexed pending URL at schedule position
/// `(next_fetch, seq)` to a frame payload under construction.
pub fn push_key_at(buf: &mut Vec<u8>, (crawl, qid): (u32, u32), key: &[u8], at: (u64, u64)) {
    let len = u16::try_from(key.len()).unwrap_or(u16::MAX);
    buf.push(TAG_KEY_AT);
    buf.extend_from_slice(&crawl.to_le_bytes());
    buf.extend_from_slice(&qid.to_le_bytes());
    buf.extend_from_slice(&at.0.to_le_bytes());
    buf.extend_from_slice(&at.1.to_le_bytes());
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(&key[..usize::from(len)]);
}

/// Appends a dirty record to a frame payload under construction.
pub fn push_dirty(buf: &mut Vec<u8>, crawl: u32) {
    buf.push(TAG_DIRTY);
    buf.extend_from_slice(&crawl.to_le_bytes());
}

/// An open log generation, positioned at its end.
#[derive(Debug)]
pub struct SeenLog {
    file: File,
    path: PathBuf,
    generation: u64,
    len: u64,
    frame: Vec<u8>,
    /// Bytes of the older generations a replay still reads before this one
    /// (left by opens that started a new generation after a dead tail).
    older: u64,
}

impl SeenLog {
    /// Creates log generation `gen` (replacing any file of that name), durable.
    pub fn create(dir: &Path, generation: u64) -> Result<SeenLog> {
        let path = log_path(dir, generation);
        let io = |e| FrontierError::io(&path, e);
        let mut file = File::create(&path).map_err(io)?;
        let h = header(generation);
        // A header that did not fully reach the disk (no room) would make
        // the next open call the log corrupt: the file goes with the error.
        let written = file.write_all(&h).and_then(|()| file.sync_all());
        if let Err(e) = written {
            drop(file);
            let _ = std::fs::remove_file(&path);
            return Err(io(e));
        }
        crate::snapshot::sync_dir(dir)?;
        Ok(SeenLog {
            file,
            path,
            generation,
            len: HEADER as u64,
            frame: Vec::new(),
            older: 0,
        })
    }

    /// Reopens an existing generation for appending after `len` good bytes
    /// (the file is cut there: a torn tail goes away).
    pub fn append_at(dir: &Path, generation: u64, len: u64) -> Result<SeenLog> {
        let path = log_path(dir, generation);
        let io = |e| FrontierError::io(&path, e);
        let file = OpenOptions::new().write(true).open(&path).map_err(io)?;
        file.set_len(len).map_err(io)?;
        let mut log = SeenLog {
            file,
            path,
            generation,
            len,
            frame: Vec::new(),
            older: 0,
        };
        log.seek_end()?;
        Ok(log)
    }

    fn seek_end(&mut self) -> Result<()> {
        use std::io::Seek;
        self.file
            .seek(std::io::SeekFrom::Start(self.len))
            .map_err(|e| FrontierError::io(&self.path, e))?;
        Ok(())
    }

    /// This generation's number.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Bytes the next replay reads: this generation and the older ones
    /// still present (see [`SeenLog::set_older`]).
    pub fn replay_len(&self) -> u64 {
        self.len.saturating_add(self.older)
    }

    /// Notes `bytes` of older generations that the next replay still reads
    /// before this one, so the snapshot that retires them is due by their
    /// total, not by this file alone.
    pub fn set_older(&mut self, bytes: u64) {
        self.older = bytes;
    }

    /// Writes one frame holding `payload` (to the OS, not fsynced); returns
    /// the offset after it.
    pub fn append(&mut self, payload: &[u8]) -> Result<u64> {
        let len = u32::try_from(payload.len())
            .map_err(|_| FrontierError::InvalidArgument("seen-log frame over 4 GiB".into()))?;
        self.frame.clear();
        push_frame(&mut self.frame, len, payload);
        if let Err(e) = self.file.write_all(&self.frame) {
            // A partial frame would hide every later one: cut it off.
            let _ = self.file.set_len(self.len);
            let _ = self.seek_end();
            return Err(FrontierError::io(&self.path, e));
        }
        self.len += self.frame.len() as u64;
        Ok(self.len)
    }

    /// Records that every frame ending at or before `offset` is durable in the store.
    pub fn mark_durable(&mut self, offset: u64) -> Result<()> {
        let mut p = [0u8; 9];
        p[0] = TAG_DURABLE;
        p[1..].copy_from_slice(&offset.to_le_bytes());
        self.append(&p).map(|_| ())
    }

    /// A second descriptor of this generation's file, to fsync it without
    /// holding the log (see [`SyncHandle`]); fsynced before the store's
    /// journal, so an fsynced store batch always has its keys in the log
    /// even after a power cut.
    pub fn sync_handle(&self) -> Result<SyncHandle> {
        let file = (self.file.try_clone()).map_err(|e| FrontierError::io(&self.path, e))?;
        Ok(SyncHandle {
            file,
            path: self.path.clone(),
        })
    }
}

/// A descriptor of a log generation for fsync alone: fsync acts on the
/// file, so it covers every frame appended through the log's own
/// descriptor before the call, while appends go on meanwhile.
#[derive(Debug)]
pub struct SyncHandle {
    file: File,
    path: PathBuf,
}

impl SyncHandle {
    /// fdatasyncs the file.
    pub fn sync(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| FrontierError::io(&self.path, e))
    }
}

/// One key record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRec {
    /// Crawl id.
    pub crawl: u32,
    /// Queue id.
    pub qid: u32,
    /// URL key bytes.
    pub key: Vec<u8>,
    /// Whether a `durable` mark covers it (else check it against the store).
    pub trusted: bool,
    /// Schedule position (next_fetch, seq) of a URL logged without a `urls` entry.
    pub at: Option<(u64, u64)>,
}

/// What a log file holds.
#[derive(Debug, Default)]
pub struct Replay {
    /// Key records in order.
    pub keys: Vec<KeyRec>,
    /// Crawls marked dirty.
    pub dirty: Vec<u32>,
    /// Length of the good prefix (where appending resumes).
    pub good_len: u64,
    /// Whether frames follow the last durable mark: their keys were
    /// checked against the store, not trusted. A mark appended after them
    /// would vouch for them at the next replay, so such a log is not
    /// appended to again (see `seenidx::restore`).
    pub unmarked_tail: bool,
}

/// Reads log generation `gen`. `Ok(None)`: the file does not exist.
/// A torn last frame is dropped with a warning; anything else that does not
/// parse is `Err(Corrupt)`.
pub fn read(dir: &Path, generation: u64) -> Result<Option<Replay>> {
    let path = log_path(dir, generation);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(FrontierError::io(&path, e)),
    };
    parse(&bytes, generation, &path).map(Some)
}

/// A log file of generation 0 holding `payloads` as good frames, then
/// `tail` as it is (for the fuzz target: checksums a fuzzer cannot forge).
pub(crate) fn log_bytes<'a>(payloads: impl Iterator<Item = &'a [u8]>, tail: &[u8]) -> Vec<u8> {
    let mut out = header(0);
    for p in payloads {
        let len = u32::try_from(p.len()).unwrap_or(u32::MAX);
        push_frame(&mut out, len, p);
    }
    out.extend_from_slice(tail);
    out
}

/// The header of log generation `generation` (see the module docs).
fn header(generation: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&LOG_VERSION.to_le_bytes());
    h.extend_from_slice(&generation.to_le_bytes());
    let sum = xxh3_64(&h);
    h.extend_from_slice(&sum.to_le_bytes());
    h
}

/// Appends one frame to `out`: `len` (the payload's length) | payload |
/// xxh3-64 of both.
fn push_frame(out: &mut Vec<u8>, len: u32, payload: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(payload);
    let sum = xxh3_64(&out[start..]);
    out.extend_from_slice(&sum.to_le_bytes());
}

/// Parses the bytes of log generation `generation` (read from `path`, which
/// only names it in the torn-tail warning); see [`read`].
pub(crate) fn parse(bytes: &[u8], generation: u64, path: &Path) -> Result<Replay> {
    check_header(bytes, generation)?;
    let mut replay = Replay::default();
    let mut frames: Vec<(u64, std::ops::Range<usize>)> = Vec::new();
    let mut durable = 0u64;
    let mut at = HEADER;
    while at < bytes.len() {
        match frame_at(bytes, at) {
            Some(payload) => {
                let end = payload.end + 8;
                if let Some(mark) = durable_mark(&bytes[payload.clone()]) {
                    durable = durable.max(mark);
                } else {
                    frames.push((end as u64, payload));
                }
                at = end;
            }
            None if is_torn_tail(bytes, at) => {
                tracing::warn!(
                    path = %path.display(),
                    dropped = bytes.len() - at,
                    "seen log: torn tail truncated to the last good frame"
                );
                break;
            }
            None => {
                return Err(FrontierError::corrupt(
                    "seen log",
                    format!("bad frame at {at}"),
                ));
            }
        }
    }
    replay.good_len = at.min(bytes.len()) as u64;
    replay.unmarked_tail = frames.last().is_some_and(|&(end, _)| end > durable);
    for (end, range) in frames {
        parse_payload(&bytes[range], end <= durable, &mut replay)?;
    }
    Ok(replay)
}

fn check_header(bytes: &[u8], generation: u64) -> Result<()> {
    if bytes.len() < HEADER || &bytes[..4] != MAGIC {
        return Err(FrontierError::corrupt("seen log", "bad header"));
    }
    let sum = u64::from_le_bytes(bytes[16..24].try_into().unwrap_or_default());
    if sum != xxh3_64(&bytes[..16]) {
        return Err(FrontierError::corrupt("seen log", "header checksum"));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().unwrap_or_default());
    if version != LOG_VERSION {
        return Err(FrontierError::FormatVersion {
            what: "seen log".into(),
            found: version,
            expected: LOG_VERSION,
        });
    }
    if u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default()) != generation {
        return Err(FrontierError::corrupt("seen log", "generation mismatch"));
    }
    Ok(())
}

/// The payload range of a good frame starting at `at`.
fn frame_at(bytes: &[u8], at: usize) -> Option<std::ops::Range<usize>> {
    let len = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
    let end = at.checked_add(4 + len)?;
    let sum = u64::from_le_bytes(bytes.get(end..end + 8)?.try_into().ok()?);
    (sum == xxh3_64(&bytes[at..end])).then_some(at + 4..end)
}

/// A bad frame is a torn write only if it is the last thing in the file:
/// its declared length reaches (or passes) the end.
fn is_torn_tail(bytes: &[u8], at: usize) -> bool {
    let Some(len) = bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
    else {
        return true;
    };
    at + 4 + len as usize + 8 >= bytes.len()
}

fn durable_mark(payload: &[u8]) -> Option<u64> {
    match payload {
        [TAG_DURABLE, rest @ ..] if rest.len() == 8 => rest.try_into().ok().map(u64::from_le_bytes),
        _ => None,
    }
}

fn parse_payload(mut p: &[u8], trusted: bool, out: &mut Replay) -> Result<()> {
    let bad = || FrontierError::corrupt("seen log", "bad record");
    while let Some((&tag, rest)) = p.split_first() {
        let crawl = u32::from_le_bytes(
            rest.get(..4)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        );
        match tag {
            TAG_DIRTY => {
                out.dirty.push(crawl);
                p = &rest[4..];
            }
            TAG_KEY | TAG_KEY_AT => {
                let (rec, used) = key_record(rest, tag == TAG_KEY_AT).ok_or_else(bad)?;
                out.keys.push(KeyRec {
                    crawl,
                    trusted,
                    ..rec
                });
                p = &rest[used..];
            }
            _ => return Err(bad()),
        }
    }
    Ok(())
}

/// Parses a key record after its tag (`rest` starts with the crawl id);
/// returns it (crawl and trust left to the caller) and the bytes it took.
fn key_record(rest: &[u8], with_at: bool) -> Option<(KeyRec, usize)> {
    let u64_at = |i: usize| rest.get(i..i + 8)?.try_into().ok().map(u64::from_le_bytes);
    let qid = u32::from_le_bytes(rest.get(4..8)?.try_into().ok()?);
    let (at, head) = if with_at {
        (Some((u64_at(8)?, u64_at(16)?)), 24)
    } else {
        (None, 8)
    };
    let klen = usize::from(u16::from_le_bytes(
        rest.get(head..head + 2)?.try_into().ok()?,
    ));
    let key = rest.get(head + 2..head + 2 + klen)?;
    let rec = KeyRec {
        crawl: 0,
        qid,
        key: key.to_vec(),
        trusted: false,
        at,
    };
    Some((rec, head + 2 + klen))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log whose last key frame has no durable mark after it ends in an
    /// unmarked tail; one marked past it does not; a mark short of it does.
    #[test]
    fn the_unmarked_tail_is_the_frames_past_the_last_mark() {
        let mut key = Vec::new();
        push_key(&mut key, 0, 0, b"com.example/a");
        let mark = |at: u64| {
            let mut p = vec![TAG_DURABLE];
            p.extend_from_slice(&at.to_le_bytes());
            p
        };
        let key_end = (HEADER + 4 + key.len() + 8) as u64;
        let path = Path::new("t.log");
        let cases: [(Vec<Vec<u8>>, bool); 4] = [
            (vec![key.clone()], true),
            (vec![key.clone(), mark(key_end)], false),
            (vec![key.clone(), mark(key_end - 1)], true),
            (vec![mark(0)], false),
        ];
        for (frames, unmarked) in cases {
            let bytes = log_bytes(frames.iter().map(Vec::as_slice), &[]);
            let r = parse(&bytes, 0, path).unwrap();
            assert_eq!(r.unmarked_tail, unmarked, "{frames:?}");
            assert_eq!(r.good_len, bytes.len() as u64);
        }
    }

    fn write_sample(dir: &Path) -> u64 {
        let mut log = SeenLog::create(dir, 3).unwrap();
        let mut p = Vec::new();
        push_key(&mut p, 0, 7, b"com.example/a");
        push_key(&mut p, 0, 7, b"com.example/b");
        let end = log.append(&p).unwrap();
        log.mark_durable(end).unwrap();
        p.clear();
        push_dirty(&mut p, 0);
        push_key(&mut p, 1, 9, b"org.x/");
        log.append(&p).unwrap()
    }

    #[test]
    fn round_trip_with_durable_marks() {
        let dir = tempfile::tempdir().unwrap();
        let len = write_sample(dir.path());
        let r = read(dir.path(), 3).unwrap().unwrap();
        assert_eq!(r.good_len, len);
        assert_eq!(r.dirty, vec![0]);
        let keys: Vec<_> = r
            .keys
            .iter()
            .map(|k| (k.key.as_slice(), k.trusted))
            .collect();
        assert_eq!(
            keys,
            vec![
                (&b"com.example/a"[..], true),
                (&b"com.example/b"[..], true),
                (&b"org.x/"[..], false)
            ]
        );
        assert!(read(dir.path(), 4).unwrap().is_none());
    }

    #[test]
    fn key_records_with_a_schedule_position_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SeenLog::create(dir.path(), 0).unwrap();
        let mut p = Vec::new();
        push_key_at(&mut p, (2, 5), b"com.example/a", (1_700, 42));
        push_key(&mut p, 2, 5, b"com.example/b");
        log.append(&p).unwrap();
        let r = read(dir.path(), 0).unwrap().unwrap();
        let got: Vec<_> = r.keys.iter().map(|k| (k.crawl, k.qid, k.at)).collect();
        assert_eq!(got, vec![(2, 5, Some((1_700, 42))), (2, 5, None)]);
        assert_eq!(r.keys[0].key, b"com.example/a");
        for cut in 1..p.len() {
            let mut out = Replay::default();
            let _ = parse_payload(&p[..cut], false, &mut out);
        }
    }

    #[test]
    fn torn_tail_is_dropped_and_appending_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let len = write_sample(dir.path());
        let path = log_path(dir.path(), 3);
        for cut in 1..20 {
            let f = OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(len - cut).unwrap();
            let r = read(dir.path(), 3).unwrap().unwrap();
            assert_eq!(r.keys.len(), 2, "cut {cut}");
            let mut log = SeenLog::append_at(dir.path(), 3, r.good_len).unwrap();
            let mut p = Vec::new();
            push_dirty(&mut p, 0);
            push_key(&mut p, 1, 9, b"org.x/");
            assert_eq!(log.append(&p).unwrap(), len);
        }
    }

    #[test]
    fn bit_flips_never_panic_and_inner_damage_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let len = write_sample(dir.path());
        let path = log_path(dir.path(), 3);
        let good = std::fs::read(&path).unwrap();
        for i in 0..len as usize {
            let mut b = good.clone();
            b[i] ^= 0x10;
            std::fs::write(&path, &b).unwrap();
            match read(dir.path(), 3) {
                Ok(Some(r)) => assert!(r.keys.len() <= 3),
                Ok(None) => panic!("file exists"),
                Err(_) => {}
            }
        }
        // Damage in the first frame, with a whole frame after it: corruption.
        let mut b = good.clone();
        b[HEADER + 6] ^= 1;
        std::fs::write(&path, &b).unwrap();
        assert!(matches!(
            read(dir.path(), 3),
            Err(FrontierError::Corrupt { .. })
        ));
    }
}
