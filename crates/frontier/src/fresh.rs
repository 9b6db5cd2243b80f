//! A new store, built where fsync is free and then moved into place.
//!
//! fjall makes a new database durable step by step: creating the four
//! keyspaces syncs ~80 times (each keyspace's folders, version and
//! `current` files, plus a flush of fjall's own meta keyspace per
//! keyspace), one file-system journal commit each: 0.1–0.5 s on a busy
//! disk, more than a whole small crawl. So a new store is built in a
//! scratch directory on tmpfs (`/dev/shm`, where a sync costs nothing),
//! closed, copied beside its place as `store.new`, synced, and renamed:
//!
//! ```text
//! /dev/shm/mgz-frontier-PID-N/store   fjall creates the keyspaces (no disk I/O)
//!   ──copy──▶ DIR/store.new           every file and folder written, then
//!                                     each synced (the first sync commits
//!                                     the file system's journal, the others
//!                                     find nothing left: ~2 commits in all)
//!   ──rename──▶ DIR/store, sync DIR   the store exists only once it is whole
//! ```
//!
//! Crash safety: until the rename there is no `store`, so a crash at any
//! moment leaves a directory the next open treats as new (removing a stale
//! `store.new` first); after it, the store is whole and durable, the same
//! files fjall would have written in place. Files are copied sparse (the
//! 64 MiB preallocated journal is mostly a hole). An existing store never
//! takes this path. Without a usable `/dev/shm`, or if building there
//! fails, fjall creates the store in place as before.

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{FrontierError, Result};

/// Where scratch stores are built: tmpfs on Linux.
const SCRATCH_ROOT: &str = "/dev/shm";

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Option<Scratch> {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = Path::new(SCRATCH_ROOT).join(format!("mgz-frontier-{}-{n}", std::process::id()));
        fs::create_dir(&dir).ok().map(|()| Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Creates the store at `path` (which must not exist) by running `build` on
/// a scratch path and moving the result into place. `Ok(false)`: no scratch
/// store could be built, nothing was written at `path`'s parent.
pub(crate) fn create(path: &Path, build: impl FnOnce(&Path) -> fjall::Result<()>) -> Result<bool> {
    let staged = path.with_extension("new");
    if staged.exists() {
        // Left by a crash before the rename: never part of a store.
        fs::remove_dir_all(&staged).map_err(|e| FrontierError::io(&staged, e))?;
    }
    let Some(scratch) = Scratch::new() else {
        return Ok(false);
    };
    let built = scratch.0.join("store");
    if let Err(e) = build(&built) {
        tracing::debug!(error = %e, "no scratch store; creating in place");
        return Ok(false);
    }
    let moved = copy_synced(&built, &staged).and_then(|()| {
        fs::rename(&staged, path)?;
        sync(path.parent().unwrap_or(Path::new(".")))
    });
    if let Err(e) = moved {
        let _ = fs::remove_dir_all(&staged);
        return Err(FrontierError::io(path, e));
    }
    Ok(true)
}

/// Copies the tree `src` to `dst`, then syncs every copy, files before the
/// folders that hold them.
fn copy_synced(src: &Path, dst: &Path) -> std::io::Result<()> {
    let mut written = Vec::new();
    copy_tree(src, dst, &mut written)?;
    written.iter().try_for_each(|p| sync(p))
}

/// Copies `src` to `dst`, noting each path made (a folder after its entries).
fn copy_tree(src: &Path, dst: &Path, written: &mut Vec<PathBuf>) -> std::io::Result<()> {
    fs::create_dir(dst)?;
    for entry in fs::read_dir(src)? {
        let entry = entry?;
        let to = dst.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &to, written)?;
        } else {
            copy_sparse(&entry.path(), &to)?;
            written.push(to);
        }
    }
    written.push(dst.to_path_buf());
    Ok(())
}

/// Copies one file's data extents (`SEEK_DATA`/`SEEK_HOLE`), leaving its
/// holes as holes: the journal's 64 MiB are never read.
fn copy_sparse(src: &Path, dst: &Path) -> std::io::Result<()> {
    use rustix::fs::{SeekFrom as At, seek};
    let mut from = File::open(src)?;
    let len = from.metadata()?.len();
    let mut to = File::create_new(dst)?;
    let mut pos = 0;
    while pos < len {
        let data = match seek(&from, At::Data(pos)) {
            Ok(at) => at,
            Err(rustix::io::Errno::NXIO) => break, // only a hole is left
            Err(e) => return Err(e.into()),
        };
        let hole = seek(&from, At::Hole(data))?;
        from.seek(SeekFrom::Start(data))?;
        to.seek(SeekFrom::Start(data))?;
        std::io::copy(&mut (&mut from).take(hole - data), &mut to)?;
        pos = hole;
    }
    to.set_len(len)
}

/// fsync of a file or a folder.
fn sync(path: &Path) -> std::io::Result<()> {
    File::open(path)?.sync_all()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every file under `dir` (relative path, contents), sorted.
    pub(crate) fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(tree(&p));
            } else {
                out.push((p.strip_prefix(dir).unwrap().into(), fs::read(&p).unwrap()));
            }
        }
        out.sort();
        out
    }

    use std::io::Write;

    const CHUNK: usize = 64 << 10;

    #[test]
    fn copies_files_and_holes_exactly() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("src");
        fs::create_dir_all(src.join("a/b")).unwrap();
        fs::write(src.join("empty"), b"").unwrap();
        let mut mixed = vec![0u8; 3 * CHUNK + 17];
        mixed[CHUNK + 5] = 7;
        mixed[3 * CHUNK + 16] = 9;
        fs::write(src.join("a/mixed"), &mixed).unwrap();
        // Data, a hole, data, a hole to the end.
        let mut sparse = File::create(src.join("a/b/hole")).unwrap();
        sparse.write_all(b"head").unwrap();
        sparse.seek(SeekFrom::Start(4 * CHUNK as u64)).unwrap();
        sparse.write_all(b"middle").unwrap();
        sparse.set_len(10 * CHUNK as u64).unwrap();
        let dst = d.path().join("dst");
        copy_synced(&src, &dst).unwrap();
        let (a, b) = (tree(&src), tree(&dst));
        assert_eq!(a.len(), 3);
        assert_eq!(a, b);
        // The holes stayed holes (tempdir is on a disk or tmpfs: both sparse).
        let blocks = |p: &Path| std::os::unix::fs::MetadataExt::blocks(&fs::metadata(p).unwrap());
        assert!(blocks(&dst.join("a/b/hole")) * 512 < 4 * CHUNK as u64);
    }

    #[test]
    fn a_stale_staging_copy_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("store");
        fs::create_dir_all(path.with_extension("new").join("junk")).unwrap();
        let made = create(&path, |p| {
            fs::create_dir_all(p)?;
            fs::write(p.join("f"), b"x")?;
            Ok(())
        })
        .unwrap();
        if made {
            assert_eq!(fs::read(path.join("f")).unwrap(), b"x");
            assert!(!path.join("junk").exists());
        }
        assert!(!path.with_extension("new").exists());
    }
}
