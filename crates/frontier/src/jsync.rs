//! The group committer's fsync of the store's journal, with fjall's journal
//! lock free while the disk works.
//!
//! `Database::persist(SyncData)` holds fjall's journal writer lock for the
//! whole fsync, and every batch commit takes that lock: while the committer
//! waited for the disk, no put could commit. The commit stage is the put
//! path's serial stage (fjall inserts a batch into its memtables under the
//! same lock), so each fsync stalled the whole put for its duration
//! (docs/BENCHMARKS.md, "Session 28").
//!
//! Instead the committer asks fjall only to hand its journal buffer to the
//! OS (`PersistMode::Buffer`: under the lock, no disk wait) and then runs
//! `fdatasync` on the active journal file through a descriptor of its own,
//! outside the lock. fsync acts on the file, not on the descriptor.
//!
//! Why that covers every batch committed before the call: fjall 3 keeps its
//! journals as `<id>.jnl` in the database folder and appends to the highest
//! id; before it moves to a new file it syncs the old one (`Writer::rotate`:
//! `persist(SyncAll)`, then the next file is created, under the writer
//! lock). After the buffer hand-off every committed byte is in the OS's copy
//! of the journal that was active then, or of an older one already synced.
//! The newest journal listed afterwards is that one, or a newer one whose
//! existence shows the older ones were synced. If the folder holds no
//! journal by that name (a layout this code does not know), the locked
//! fsync is used; a test checks the layout so an fjall upgrade that changes
//! it fails loudly rather than syncing the wrong file.

use std::fs::File;
use std::path::{Path, PathBuf};

use fjall::{Database, PersistMode};

use crate::error::{FrontierError, Result};

/// Syncs one database's journal; keeps the active file open between calls.
#[derive(Debug)]
pub(crate) struct JournalSync {
    /// The database folder (where fjall keeps `<id>.jnl`).
    dir: PathBuf,
    /// The newest journal seen and a descriptor of it.
    open: Option<(u64, File)>,
}

impl JournalSync {
    /// For the database at `dir`.
    pub(crate) fn new(dir: PathBuf) -> Self {
        JournalSync { dir, open: None }
    }

    /// Makes every batch committed before the call durable (fdatasync).
    pub(crate) fn sync(&mut self, db: &Database) -> Result<()> {
        db.persist(PersistMode::Buffer)?;
        let Some(id) = newest_journal(&self.dir)? else {
            db.persist(PersistMode::SyncData)?;
            return Ok(());
        };
        let path = journal_path(&self.dir, id);
        let file = match &self.open {
            Some((open_id, f)) if *open_id == id => f,
            _ => match File::open(&path) {
                Ok(f) => &self.open.insert((id, f)).1,
                // Gone between the listing and the open (fjall moved on and
                // removed it): the locked fsync is always right.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    db.persist(PersistMode::SyncData)?;
                    return Ok(());
                }
                Err(e) => return Err(FrontierError::io(&path, e)),
            },
        };
        file.sync_data().map_err(|e| FrontierError::io(&path, e))
    }
}

fn journal_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id}.jnl"))
}

/// The highest `<id>.jnl` in `dir`, if any.
fn newest_journal(dir: &Path) -> Result<Option<u64>> {
    let mut newest = None;
    for e in std::fs::read_dir(dir).map_err(|e| FrontierError::io(dir, e))? {
        let e = e.map_err(|e| FrontierError::io(dir, e))?;
        let id = (e.file_name().to_str())
            .and_then(|n| n.strip_suffix(".jnl"))
            .and_then(|n| n.parse::<u64>().ok());
        newest = newest.max(id);
    }
    Ok(newest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database whose memtables are flushed (and whose journal moves on)
    /// only when a test asks, so nothing happens in the background.
    fn open(dir: &Path) -> (Database, fjall::Keyspace) {
        let db = Database::builder(dir)
            .max_journaling_size(1 << 30)
            .open()
            .unwrap();
        let big = || fjall::KeyspaceCreateOptions::default().max_memtable_size(1 << 30);
        let ks = db.keyspace("k", big).unwrap();
        (db, ks)
    }

    /// `n` bytes no compressor shrinks (xorshift), different per `seed`.
    fn noise(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// The layout the module relies on: after the buffer hand-off a
    /// committed batch's bytes are in the newest `<id>.jnl` of the folder
    /// (fjall preallocates the file, so its contents are searched, not its
    /// length), also once fjall has moved to its next journal (it does past
    /// 64 MB, at a memtable flush). Fails if an fjall version keeps its
    /// journal elsewhere or names it otherwise.
    #[test]
    fn committed_bytes_are_in_the_newest_journal() {
        let dir = tempfile::tempdir().unwrap();
        let (db, ks) = open(dir.path());
        let mut sync = JournalSync::new(dir.path().to_path_buf());
        let mut put = |round: u64| {
            let value = noise(round, 24 << 20);
            ks.insert(round.to_be_bytes(), &value).unwrap();
            sync.sync(&db).unwrap();
            let id = newest_journal(dir.path()).unwrap().expect("a journal file");
            assert_eq!(sync.open.as_ref().map(|o| o.0), Some(id));
            let text = std::fs::read(journal_path(dir.path(), id)).unwrap();
            let probe = &value[4 << 20..(4 << 20) + 64];
            let found = text.windows(64).any(|w| w == probe);
            assert!(found, "round {round}: value not in journal {id}");
            id
        };
        let first = put(0);
        for round in 1..3 {
            assert_eq!(put(round), first, "round {round}");
        }
        // Past 64 MB of journal, a flush makes fjall sync it and start the next.
        ks.rotate_memtable_and_wait().unwrap();
        let next = newest_journal(dir.path()).unwrap().unwrap();
        assert!(next > first, "still journal {first}");
        assert_eq!(put(3), next);
    }

    #[test]
    fn the_newest_journal_is_the_highest_id() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(newest_journal(dir.path()).unwrap(), None);
        for name in ["3.jnl", "10.jnl", "9.jnl", "11.log", "x.jnl", "12.jnl.tmp"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        assert_eq!(newest_journal(dir.path()).unwrap(), Some(10));
    }

    /// A folder without journals of that name, or with one that is gone
    /// before it is opened (a dangling link stands in for a journal fjall
    /// removed meanwhile): the locked fsync runs. A folder that cannot be
    /// read is an error.
    #[test]
    fn unknown_or_vanished_journals_fall_back_to_the_locked_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let (db, ks) = open(dir.path());
        ks.insert("a", "b").unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let mut sync = JournalSync::new(elsewhere.path().to_path_buf());
        sync.sync(&db).unwrap();
        assert!(sync.open.is_none());
        #[cfg(unix)]
        {
            let target = elsewhere.path().join("gone");
            std::os::unix::fs::symlink(target, elsewhere.path().join("5.jnl")).unwrap();
            sync.sync(&db).unwrap();
            assert!(sync.open.is_none());
        }
        let missing = JournalSync::new(dir.path().join("no-such-dir")).sync(&db);
        assert!(matches!(missing, Err(FrontierError::Io { .. })));
    }
}
