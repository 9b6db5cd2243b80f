//! Seen-set snapshots: every crawl's seen set serialised by its backend
//! (`SeenSet::snapshot`), written at close and whenever the seen log grows
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
//! Written to `seen.snap.tmp`, fsynced, renamed over the old file, directory
//! fsynced: a crash leaves the old or the new snapshot, never a mix. The store
//! is fsynced before, so the snapshot never holds a key the store could lose.

use std::io::Write;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{FrontierError, Result};

const MAGIC: &[u8; 4] = b"MGZN";
/// Version of the snapshot format.
pub const SNAPSHOT_VERSION: u32 = 1;

/// One crawl's part of a snapshot.
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

/// A whole snapshot.
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

impl Snapshot {
    /// The file bytes.
    #[cfg(test)]
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = self.encode_into(&mut b);
        b
    }

    /// Streams the file bytes into `w`, checksumming as it goes (no copy of
    /// the sets: at 10M URLs a copy of the file was 48 MB of peak RSS).
    pub fn encode_into(&self, w: &mut impl Write) -> std::io::Result<()> {
        let mut sum = xxhash_rust::xxh3::Xxh3Default::new();
        let mut put = |bytes: &[u8]| -> std::io::Result<()> {
            sum.update(bytes);
            w.write_all(bytes)
        };
        put(MAGIC)?;
        put(&SNAPSHOT_VERSION.to_le_bytes())?;
        put(&self.generation.to_le_bytes())?;
        put(&(self.crawls.len() as u32).to_le_bytes())?;
        for c in &self.crawls {
            let name = &c.backend.as_bytes()[..c.backend.len().min(255)];
            put(&c.id.to_le_bytes())?;
            put(&[u8::from(c.dirty), name.len() as u8])?;
            put(name)?;
            put(&(c.bytes.len() as u64).to_le_bytes())?;
            put(&c.bytes)?;
        }
        let digest = sum.digest();
        w.write_all(&digest.to_le_bytes())
    }

    /// Parses file bytes into owned sets; any damage is `Corrupt` (or `FormatVersion`).
    #[cfg(test)]
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
        let path = snap_path(dir);
        let tmp = path.with_extension("snap.tmp");
        let io = |e| FrontierError::io(&tmp, e);
        let f = std::fs::File::create(&tmp).map_err(io)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        self.encode_into(&mut w).map_err(io)?;
        let f = w.into_inner().map_err(|e| io(e.into_error()))?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(|e| FrontierError::io(&path, e))?;
        sync_dir(dir)
    }

    /// Reads the snapshot: `Ok(None)` when there is none.
    #[cfg(test)]
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
