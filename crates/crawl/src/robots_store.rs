//! robots.txt outcomes persisted in the state directory, so a resumed crawl
//! trusts what it fetched less than [`CACHE_TTL`] ago instead of asking every
//! host again.
//!
//! ```text
//! STATE/robots.db (SQLite, WAL, PRAGMA user_version = FORMAT)
//!   robots(origin TEXT PK, status INTEGER, body BLOB ≤ 500 KiB, fetched_at INTEGER unix s)
//! ```
//! Only definite outcomes are kept (2xx rules, 4xx/3xx "allow all"): an
//! unreachable robots.txt is asked again anyway. A row is written after the
//! origin's sitemaps were read, so a crawl killed in between reads them again.
//! The store is a cache: a corrupt or foreign file (other version, not a
//! database) is set aside as `robots.db.corrupt` and the crawl starts with an
//! empty one — robots.txt is then simply fetched again. A file that cannot be
//! opened or set up for another reason (a full disk, permissions) is left as
//! it is for the next run, and this run persists nothing. Cost: one row per
//! origin (the body, usually < 1 KiB).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, params};

use crate::robots::{CACHE_TTL, MAX_ROBOTS_BYTES};

/// Format version of `robots.db`.
pub const FORMAT: i64 = 1;

/// One remembered robots.txt response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedRobots {
    /// `scheme://host:port`.
    pub origin: String,
    /// HTTP status of the robots.txt response.
    pub status: u16,
    /// Body, capped at 500 KiB.
    pub body: Vec<u8>,
    /// Unix seconds of the fetch.
    pub fetched_at: u64,
}

/// The persisted cache; `None` inside when even a fresh file cannot be made
/// (then nothing is remembered, the crawl goes on).
pub struct RobotsStore {
    conn: Option<Mutex<Connection>>,
}

fn open_checked(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    // No syncs while the file is set up (see `store::SCHEMA`).
    conn.execute_batch("PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL;")?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    if version == 0 && tables == 0 {
        conn.execute_batch(&format!(
            "CREATE TABLE robots(origin TEXT PRIMARY KEY, status INTEGER NOT NULL, \
             body BLOB NOT NULL, fetched_at INTEGER NOT NULL); PRAGMA user_version = {FORMAT};"
        ))?;
    } else if version != FORMAT {
        return Err(rusqlite::Error::InvalidQuery);
    }
    // Reads every page of the table: a damaged file fails here, not mid-crawl.
    conn.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0))
        .and_then(|s| {
            if s == "ok" {
                Ok(())
            } else {
                Err(rusqlite::Error::InvalidQuery)
            }
        })?;
    conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
    Ok(conn)
}

/// Whether `e` says the file is damaged or not ours (a wrong version, a
/// failed check, not a database), as opposed to the disk or the OS failing.
fn is_damage(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match e {
        rusqlite::Error::InvalidQuery => true,
        rusqlite::Error::SqliteFailure(f, _) => matches!(f.code, DatabaseCorrupt | NotADatabase),
        _ => false,
    }
}

fn set_aside(path: &Path) {
    let mut aside = PathBuf::from(path);
    aside.set_extension("db.corrupt");
    let _ = std::fs::rename(path, &aside);
    for ext in ["db-wal", "db-shm"] {
        let _ = std::fs::remove_file(path.with_extension(ext));
    }
}

/// The oldest `fetched_at` still fresh at `now_s`, exclusive.
fn fresh_since(now_s: u64) -> i64 {
    i64::try_from(now_s.saturating_sub(CACHE_TTL.as_secs())).unwrap_or(i64::MAX)
}

impl RobotsStore {
    /// Opens `path`, replacing it with an empty store if it is unreadable.
    pub fn open(path: &Path) -> RobotsStore {
        let conn = match open_checked(path) {
            Ok(c) => Some(c),
            // A full disk, a file that cannot be opened or written: the
            // file may be sound, so it stays for the next run; this one
            // remembers nothing. (Setting it aside as "corrupt" on a full
            // disk threw a good cache away.)
            Err(e) if !is_damage(&e) => {
                tracing::warn!(
                    "{}: {e}; robots.txt answers are not persisted in this run",
                    path.display()
                );
                None
            }
            Err(e) => {
                tracing::warn!("{}: {e}; robots.txt will be fetched again", path.display());
                set_aside(path);
                open_checked(path)
                    .map_err(|e| tracing::warn!("{}: {e}; not persisted", path.display()))
                    .ok()
            }
        };
        RobotsStore {
            conn: conn.map(Mutex::new),
        }
    }

    /// Entries fetched less than [`CACHE_TTL`] before `now_s`, the most
    /// recent first, at most `limit` of them (the rest stay on disk and are
    /// read one at a time by [`RobotsStore::load`]).
    pub fn load_fresh(&self, now_s: u64, limit: usize) -> Vec<SavedRobots> {
        let mut out = Vec::new();
        self.for_each_fresh(now_s, limit, |e| {
            out.push(e);
            true
        });
        out
    }

    /// [`RobotsStore::load_fresh`]'s entries handed to `each` one at a time,
    /// until it returns false: a resume reads only as many bodies as its
    /// cache takes, not `limit` of them at once.
    pub fn for_each_fresh(&self, now_s: u64, limit: usize, each: impl FnMut(SavedRobots) -> bool) {
        self.query(
            "SELECT origin, status, body, fetched_at FROM robots WHERE fetched_at > ?1 \
             ORDER BY fetched_at DESC LIMIT ?2",
            params![fresh_since(now_s), i64::try_from(limit).unwrap_or(i64::MAX)],
            each,
        );
    }

    /// `origin`'s entry if it was fetched less than [`CACHE_TTL`] before `now_s`.
    pub fn load(&self, origin: &str, now_s: u64) -> Option<SavedRobots> {
        let mut found = None;
        self.query(
            "SELECT origin, status, body, fetched_at FROM robots \
             WHERE origin = ?1 AND fetched_at > ?2",
            params![origin, fresh_since(now_s)],
            |e| {
                found = Some(e);
                false
            },
        );
        found
    }

    /// Runs `sql` and hands its rows to `each` until it returns false. A
    /// read error ends the rows there (logged: the origins not read are
    /// fetched again).
    fn query(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
        mut each: impl FnMut(SavedRobots) -> bool,
    ) {
        let Some(conn) = &self.conn else {
            return;
        };
        let conn = conn.lock().unwrap_or_else(|p| p.into_inner());
        let read = conn.prepare_cached(sql).and_then(|mut st| {
            let mut rows = st.query(args)?;
            while let Some(r) = rows.next()? {
                let e = SavedRobots {
                    origin: r.get(0)?,
                    status: r.get(1)?,
                    body: r.get(2)?,
                    fetched_at: r.get::<_, i64>(3)?.max(0) as u64,
                };
                if !each(e) {
                    break;
                }
            }
            Ok(())
        });
        if let Err(e) = read {
            tracing::warn!("robots.db: {e}; robots.txt will be fetched again");
        }
    }

    /// Remembers one response (body cut at 500 KiB). Errors are logged: losing
    /// an entry costs one robots.txt fetch on resume, nothing more.
    pub fn save(&self, entry: &SavedRobots) {
        let Some(conn) = &self.conn else {
            return;
        };
        let conn = conn.lock().unwrap_or_else(|p| p.into_inner());
        let body = &entry.body[..entry.body.len().min(MAX_ROBOTS_BYTES)];
        let r = conn.execute(
            "INSERT OR REPLACE INTO robots VALUES (?1, ?2, ?3, ?4)",
            params![entry.origin, entry.status, body, entry.fetched_at as i64],
        );
        if let Err(e) = r {
            tracing::warn!("robots.db: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(origin: &str, at: u64) -> SavedRobots {
        SavedRobots {
            origin: origin.into(),
            status: 200,
            body: b"User-agent: *\nDisallow: /x\n".to_vec(),
            fetched_at: at,
        }
    }

    #[test]
    fn rows_are_written_in_wal_with_normal_sync_new_or_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("robots.db");
        for _ in 0..2 {
            crate::store::tests::assert_wal_with_normal_sync(&open_checked(&path).unwrap());
        }
    }

    #[test]
    fn round_trip_and_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("robots.db");
        let now = 1_800_000_000;
        {
            let s = RobotsStore::open(&path);
            s.save(&entry("http://a", now - 10));
            s.save(&entry("http://old", now - CACHE_TTL.as_secs() - 1));
            s.save(&entry("http://a", now - 5)); // replaces
        }
        let s = RobotsStore::open(&path);
        assert_eq!(
            s.load_fresh(now, usize::MAX),
            vec![entry("http://a", now - 5)]
        );
        // One origin at a time, fresh ones only.
        assert_eq!(s.load("http://a", now), Some(entry("http://a", now - 5)));
        assert_eq!(s.load("http://old", now), None);
        assert_eq!(s.load("http://none", now), None);
    }

    #[test]
    fn a_limited_load_takes_the_most_recent() {
        let dir = tempfile::tempdir().unwrap();
        let s = RobotsStore::open(&dir.path().join("robots.db"));
        let now = 1_800_000_000;
        for i in 0..10 {
            s.save(&entry(&format!("http://h{i}.test"), now - 100 + i));
        }
        let got: Vec<String> = s.load_fresh(now, 3).into_iter().map(|e| e.origin).collect();
        assert_eq!(got, ["http://h9.test", "http://h8.test", "http://h7.test"]);
        assert_eq!(s.load_fresh(now, 0).len(), 0);
        // Every entry is still there for `load`.
        assert!(s.load("http://h0.test", now).is_some());
    }

    /// A file that cannot be opened (here: the path is a directory, as a
    /// full disk or a permission makes a sound file unusable) is not taken
    /// for damage: it stays where it is, and the crawl goes on without
    /// persisting robots.txt answers.
    #[test]
    fn a_file_that_cannot_be_opened_is_kept_not_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("robots.db");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), b"x").unwrap();
        let s = RobotsStore::open(&path);
        s.save(&entry("http://a", 100));
        assert!(
            s.load_fresh(100, usize::MAX).is_empty(),
            "nothing persisted"
        );
        assert!(path.join("keep").exists(), "left where it was");
        assert!(!path.with_extension("db.corrupt").exists(), "not set aside");
    }

    #[test]
    fn corrupt_or_foreign_file_starts_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("robots.db");
        std::fs::write(
            &path,
            b"this is not a database at all, just junk bytes".repeat(200),
        )
        .unwrap();
        let s = RobotsStore::open(&path);
        assert!(s.load_fresh(1, usize::MAX).is_empty());
        s.save(&entry("http://a", 100));
        assert_eq!(s.load_fresh(100, usize::MAX).len(), 1);
        assert!(path.with_extension("db.corrupt").exists());
        drop(s);
        // Another format version is set aside too.
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA user_version = 99").unwrap();
        drop(c);
        assert!(
            RobotsStore::open(&path)
                .load_fresh(100, usize::MAX)
                .is_empty()
        );
    }

    #[test]
    fn damaged_pages_are_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("robots.db");
        {
            let s = RobotsStore::open(&path);
            for i in 0..200 {
                s.save(&entry(&format!("http://h{i}.test"), 100));
            }
            let c = s.conn.as_ref().unwrap().lock().unwrap();
            c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let len = bytes.len();
        for b in &mut bytes[len / 2..len / 2 + 4096.min(len / 2)] {
            *b ^= 0x5a;
        }
        std::fs::write(&path, bytes).unwrap();
        let s = RobotsStore::open(&path);
        let n = s.load_fresh(100, usize::MAX).len();
        assert_eq!(n, 0, "a damaged file must be set aside");
    }
}
