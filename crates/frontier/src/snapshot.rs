//! Seen-set snapshots: every crawl's seen set serialised by its backend
//! (`SeenSet::write_snapshot`, streamed into the file with the checksum
//! computed on the way: no copy of a set is ever made), written at close and whenever the seen log grows
//! past a threshold, so a restart costs reading one file plus the log tail.
//!
//! ```text
//! DIR/seen.snap
//!   "MGZN" | version u32 | gen u64 | crawls u32
//!   per crawl: id u32 | dirty u8 | name len u8 | backend name | len u64 | backend bytes
//!   xxh3-64 of everything before                                    (all LE)
//! ```
//! `gen` is the seen-log generation that continues it: restoring means this
//! file, then `seen-<gen>.log`, `seen-<gen+1>.log`, ... in order. Bytes per
//! URL: the backend's own (4.9 for `fingerprint`, ~45 for `hash`).
//!
//! Written to `seen.snap.tmp` ([`stream`]), then ([`Pending::publish`])
//! fsynced, renamed over the old file, directory fsynced: a crash leaves the
//! old or the new snapshot, never a mix. The store is fsynced before the
//! publish, so the snapshot never holds a key the store could lose.

use std::io::Write;
use std::path::{Path, PathBuf};

use mgz_seen::SeenSet;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{FrontierError, Result};

const MAGIC: &[u8; 4] = b"MGZN";
/// Version of the snapshot format.
pub const SNAPSHOT_VERSION: u32 = 1;

/// One crawl's part of a snapshot, owned (tests build and compare these).
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlSnap {
    /// Crawl id.
    pub id: u32,
    /// Whether the set may hold deleted URLs (answers must be checked).
    pub dirty: bool,
    /// Backend name for `mgz_seen::restore`.
    pub backend: String,
    /// The backend's bytes.
    pub bytes: Vec<u8>,
}

/// A whole snapshot, owned.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// First log generation to replay after it.
    pub generation: u64,
    /// Every crawl's set.
    pub crawls: Vec<CrawlSnap>,
}

/// Path of the snapshot file.
pub fn snap_path(dir: &Path) -> PathBuf {
    dir.join("seen.snap")
}

/// One crawl's part as it is written: its header fields and where its
/// backend bytes come from.
#[derive(Clone, Copy)]
pub struct CrawlPart<'a> {
    /// Crawl id.
    pub id: u32,
    /// Whether the set may hold deleted URLs.
    pub dirty: bool,
    /// Backend name for `mgz_seen::restore`.
    pub backend: &'a str,
    /// The backend's bytes.
    pub body: Body<'a>,
}

/// Where a crawl's backend bytes come from.
#[derive(Clone, Copy)]
pub enum Body<'a> {
    /// Bytes in memory (tests, and callers that already hold them).
    #[cfg_attr(not(test), allow(dead_code))]
    Bytes(&'a [u8]),
    /// A live set, streamed by `SeenSet::write_snapshot`: no copy of it is
    /// made (at 10M URLs that copy was 48 MB of peak RSS). `len` is what it
    /// announced ([`Body::set`]), asked once: for some backends (`compact`)
    /// computing it is a pass over the whole set.
    Set {
        /// The set.
        set: &'a dyn SeenSet,
        /// Bytes it announced.
        len: u64,
    },
}

impl<'a> Body<'a> {
    /// The body of a live set; `None` when it has no snapshot form.
    pub fn set(set: &'a dyn SeenSet) -> Option<Body<'a>> {
        Some(Body::Set {
            set,
            len: set.snapshot_len()?,
        })
    }

    /// Length of the bytes.
    pub fn len(&self) -> u64 {
        match self {
            Body::Bytes(b) => b.len() as u64,
            Body::Set { len, .. } => *len,
        }
    }

    fn write(&self, w: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Body::Bytes(b) => w.write_all(b),
            Body::Set { set, .. } => match set.write_snapshot(w)? {
                true => Ok(()),
                false => Err(std::io::Error::other("the set has no snapshot form")),
            },
        }
    }
}

/// A `Write` that checksums and counts what passes through it.
struct Summing<W> {
    inner: W,
    sum: xxhash_rust::xxh3::Xxh3Default,
    written: u64,
}

impl<W: Write> Write for Summing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sum.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Streams the file bytes of a snapshot continuing with log `generation`
/// into `w`, checksumming as it goes. A set that writes another number of
/// bytes than it announced (the length precedes its bytes) is an error.
pub fn encode_parts(
    w: &mut impl Write,
    generation: u64,
    parts: &[CrawlPart<'_>],
) -> std::io::Result<()> {
    let mut s = Summing {
        inner: w,
        sum: xxhash_rust::xxh3::Xxh3Default::new(),
        written: 0,
    };
    s.write_all(MAGIC)?;
    s.write_all(&SNAPSHOT_VERSION.to_le_bytes())?;
    s.write_all(&generation.to_le_bytes())?;
    s.write_all(&(parts.len() as u32).to_le_bytes())?;
    for c in parts {
        let name = &c.backend.as_bytes()[..c.backend.len().min(255)];
        let len = c.body.len();
        s.write_all(&c.id.to_le_bytes())?;
        s.write_all(&[u8::from(c.dirty), name.len() as u8])?;
        s.write_all(name)?;
        s.write_all(&len.to_le_bytes())?;
        let start = s.written;
        c.body.write(&mut s)?;
        let wrote = s.written - start;
        if wrote != len {
            let why = format!(
                "{} wrote {wrote} snapshot bytes, announced {len}",
                c.backend
            );
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
        }
    }
    let digest = s.sum.digest();
    s.inner.write_all(&digest.to_le_bytes())
}

/// A snapshot streamed to `seen.snap.tmp` but not yet in place: its
/// [`Pending::publish`] makes it durable and visible; dropped unpublished,
/// the temporary file is removed.
#[derive(Debug)]
pub struct Pending {
    tmp: PathBuf,
    file: Option<std::fs::File>,
}

/// Streams a snapshot continuing with log `generation` to `seen.snap.tmp`
/// in `dir` (written to the OS, not fsynced: see [`Pending::publish`]).
pub fn stream(dir: &Path, generation: u64, parts: &[CrawlPart<'_>]) -> Result<Pending> {
    let tmp = snap_path(dir).with_extension("snap.tmp");
    let f = std::fs::File::create(&tmp).map_err(|e| FrontierError::io(&tmp, e))?;
    let mut pending = Pending { tmp, file: None };
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    encode_parts(&mut w, generation, parts).map_err(|e| FrontierError::io(&pending.tmp, e))?;
    let f = w
        .into_inner()
        .map_err(|e| FrontierError::io(&pending.tmp, e.into_error()))?;
    pending.file = Some(f);
    Ok(pending)
}

impl Pending {
    /// fsyncs the file, renames it over `seen.snap` and fsyncs the
    /// directory: a crash leaves the old or the new snapshot, never a mix.
    pub fn publish(mut self, dir: &Path) -> Result<()> {
        let path = snap_path(dir);
        if let Some(f) = self.file.take() {
            f.sync_all().map_err(|e| FrontierError::io(&self.tmp, e))?;
        }
        std::fs::rename(&self.tmp, &path).map_err(|e| FrontierError::io(&path, e))?;
        self.tmp = PathBuf::new();
        sync_dir(dir)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            // Best effort: an unpublished temporary is never read.
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
impl Snapshot {
    fn parts(&self) -> Vec<CrawlPart<'_>> {
        self.crawls
            .iter()
            .map(|c| CrawlPart {
                id: c.id,
                dirty: c.dirty,
                backend: &c.backend,
                body: Body::Bytes(&c.bytes),
            })
            .collect()
    }

    /// The file bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        encode_parts(&mut b, self.generation, &self.parts()).expect("a Vec takes every write");
        b
    }

    /// Parses file bytes into owned sets; any damage is `Corrupt` (or `FormatVersion`).
    pub fn decode(bytes: &[u8]) -> Result<Snapshot> {
        let view = SnapshotView::parse(bytes)?;
        let crawls = view
            .crawls
            .into_iter()
            .map(|c| CrawlSnap {
                id: c.id,
                dirty: c.dirty,
                backend: c.backend.to_string(),
                bytes: c.bytes.to_vec(),
            })
            .collect();
        Ok(Snapshot {
            generation: view.generation,
            crawls,
        })
    }

    /// Writes the file atomically (tmp, fsync, rename, fsync of the directory).
    pub fn write(&self, dir: &Path) -> Result<()> {
        stream(dir, self.generation, &self.parts())?.publish(dir)
    }

    /// Reads the snapshot: `Ok(None)` when there is none.
    pub fn read(dir: &Path) -> Result<Option<Snapshot>> {
        read_bytes(dir)?.map(|b| Snapshot::decode(&b)).transpose()
    }
}

/// The snapshot file's bytes (parse them with [`SnapshotView::parse`], which
/// borrows the sets' bytes instead of copying them); `Ok(None)` when there is none.
pub fn read_bytes(dir: &Path) -> Result<Option<Vec<u8>>> {
    let path = snap_path(dir);
    match std::fs::read(&path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FrontierError::io(&path, e)),
    }
}

/// One crawl's part of a snapshot, borrowed from the file bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrawlView<'a> {
    /// Crawl id.
    pub id: u32,
    /// Whether the set may hold deleted URLs.
    pub dirty: bool,
    /// Backend name.
    pub backend: &'a str,
    /// The backend's bytes.
    pub bytes: &'a [u8],
}

/// A parsed snapshot borrowing the file bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotView<'a> {
    /// First log generation to replay after it.
    pub generation: u64,
    /// Every crawl's set.
    pub crawls: Vec<CrawlView<'a>>,
}

impl<'a> SnapshotView<'a> {
    /// Parses file bytes; any damage is `Corrupt` (or `FormatVersion`).
    pub fn parse(bytes: &'a [u8]) -> Result<SnapshotView<'a>> {
        let bad = |why: &str| FrontierError::corrupt("seen snapshot", why.to_string());
        if bytes.len() < 28 || &bytes[..4] != MAGIC {
            return Err(bad("bad header"));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        if u64::from_le_bytes(sum.try_into().map_err(|_| bad("sum"))?) != xxh3_64(body) {
            return Err(bad("checksum mismatch"));
        }
        let mut r = Cursor(&body[4..]);
        let version = r.u32()?;
        if version != SNAPSHOT_VERSION {
            return Err(FrontierError::FormatVersion {
                what: "seen snapshot".into(),
                found: version,
                expected: SNAPSHOT_VERSION,
            });
        }
        let generation = r.u64()?;
        let n = r.u32()?;
        let mut crawls = Vec::new();
        for _ in 0..n {
            let id = r.u32()?;
            let dirty = r.take(1)?[0] != 0;
            let name_len = usize::from(r.take(1)?[0]);
            let backend =
                std::str::from_utf8(r.take(name_len)?).map_err(|_| bad("backend name"))?;
            let len = usize::try_from(r.u64()?).map_err(|_| bad("length"))?;
            let bytes = r.take(len)?;
            crawls.push(CrawlView {
                id,
                dirty,
                backend,
                bytes,
            });
        }
        if !r.0.is_empty() {
            return Err(bad("trailing bytes"));
        }
        Ok(SnapshotView { generation, crawls })
    }
}

/// Removes the snapshot (after which the next open rebuilds from the store).
pub fn remove(dir: &Path) -> Result<()> {
    let path = snap_path(dir);
    match std::fs::remove_file(&path) {
        Ok(()) => sync_dir(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(FrontierError::io(&path, e)),
    }
}

/// fsyncs a directory so renames and new files in it are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| FrontierError::io(dir, e))
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(FrontierError::corrupt("seen snapshot", "truncated"));
        }
        let (h, t) = self.0.split_at(n);
        self.0 = t;
        Ok(h)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        Snapshot {
            generation: 5,
            crawls: vec![
                CrawlSnap {
                    id: 0,
                    dirty: false,
                    backend: "hash".into(),
                    bytes: vec![1, 2, 3],
                },
                CrawlSnap {
                    id: 4,
                    dirty: true,
                    backend: "fingerprint".into(),
                    bytes: vec![9; 40],
                },
            ],
        }
    }

    #[test]
    fn round_trip_and_every_damage_detected() {
        let s = sample();
        let b = s.encode();
        assert_eq!(Snapshot::decode(&b).unwrap(), s);
        for cut in 0..b.len() {
            assert!(Snapshot::decode(&b[..cut]).is_err(), "cut {cut}");
        }
        for i in 0..b.len() {
            let mut x = b.clone();
            x[i] ^= 0x04;
            assert!(Snapshot::decode(&x).is_err(), "flip {i}");
        }
    }

    fn filled(name: &str) -> Box<dyn SeenSet> {
        let opts = mgz_seen::BackendOptions {
            expected: 20_000,
            fpr: None,
        };
        let mut set = mgz_seen::backend(name, &opts).unwrap();
        for i in 0..20_000u32 {
            set.insert(format!("com.example{}/p/{i}", i % 50).as_bytes());
        }
        set
    }

    #[test]
    fn streamed_sets_make_the_file_their_copies_make() {
        let sets: Vec<_> = ["fingerprint", "compact", "hash"].map(filled).into();
        let copies: Vec<Vec<u8>> = sets.iter().map(|s| s.snapshot().unwrap()).collect();
        let part = |i: usize, body| CrawlPart {
            id: i as u32 * 3,
            dirty: i == 1,
            backend: sets[i].name(),
            body,
        };
        let live: Vec<_> = (0..3)
            .map(|i| part(i, Body::set(&*sets[i]).unwrap()))
            .collect();
        let held: Vec<_> = (0..3).map(|i| part(i, Body::Bytes(&copies[i]))).collect();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        encode_parts(&mut a, 7, &live).unwrap();
        encode_parts(&mut b, 7, &held).unwrap();
        assert!(a == b, "streamed file differs");
        let view = SnapshotView::parse(&a).unwrap();
        assert_eq!(view.generation, 7);
        for (i, c) in view.crawls.iter().enumerate() {
            let back = mgz_seen::restore(c.backend, c.bytes).unwrap();
            assert_eq!((c.id, c.dirty, back.len()), (i as u32 * 3, i == 1, 20_000));
        }
    }

    /// A set that announces one byte more than it writes.
    struct Lying(Box<dyn SeenSet>);

    impl SeenSet for Lying {
        fn insert(&mut self, key: &[u8]) -> bool {
            self.0.insert(key)
        }
        fn contains(&self, key: &[u8]) -> bool {
            self.0.contains(key)
        }
        fn len(&self) -> usize {
            self.0.len()
        }
        fn heap_bytes(&self) -> usize {
            0
        }
        fn guarantee(&self) -> mgz_seen::Guarantee {
            self.0.guarantee()
        }
        fn name(&self) -> &'static str {
            "hash"
        }
        fn snapshot_len(&self) -> Option<u64> {
            Some(self.0.snapshot_len()? + 1)
        }
        fn write_snapshot(&self, out: &mut dyn Write) -> std::io::Result<bool> {
            self.0.write_snapshot(out)
        }
    }

    #[test]
    fn a_miscounted_set_or_an_unpublished_file_leaves_the_old_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        sample().write(dir.path()).unwrap();
        let liar = Lying(filled("hash"));
        let parts = [CrawlPart {
            id: 0,
            dirty: false,
            backend: "hash",
            body: Body::set(&liar).unwrap(),
        }];
        let err = stream(dir.path(), 9, &parts).unwrap_err();
        assert!(err.to_string().contains("announced"), "{err}");
        let honest = filled("hash");
        let parts = [CrawlPart {
            body: Body::set(&*honest).unwrap(),
            ..parts[0]
        }];
        drop(stream(dir.path(), 9, &parts).unwrap()); // never published
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["seen.snap"], "no temporary left behind");
        assert_eq!(Snapshot::read(dir.path()).unwrap().unwrap(), sample());
        stream(dir.path(), 9, &parts)
            .unwrap()
            .publish(dir.path())
            .unwrap();
        let file = read_bytes(dir.path()).unwrap().unwrap();
        let view = SnapshotView::parse(&file).unwrap();
        assert_eq!((view.generation, view.crawls.len()), (9, 1));
        assert_eq!(
            mgz_seen::restore("hash", view.crawls[0].bytes)
                .unwrap()
                .len(),
            20_000
        );
    }

    #[test]
    fn write_read_remove() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Snapshot::read(dir.path()).unwrap().is_none());
        sample().write(dir.path()).unwrap();
        assert_eq!(Snapshot::read(dir.path()).unwrap().unwrap(), sample());
        remove(dir.path()).unwrap();
        assert!(Snapshot::read(dir.path()).unwrap().is_none());
    }
}
