//! Page storage in SQLite (rusqlite, bundled, WAL) with an FTS5 index.
//!
//! ```text
//! pages(url PK, final_url, status, depth, content_type, bytes, title,
//!       description, keywords, fetched_at, content_hash, error, text)
//! pages_fts(title, description, keywords, text)  external content = pages,
//!                                                 rowid = pages.rowid
//! fts_state(indexed_upto)                         last pages.rowid indexed
//! PRAGMA user_version = FORMAT (2)
//! ```
//! One row per fetched URL: pages (2xx), redirect hops (3xx, `final_url` =
//! the `Location` target, so a chain is followed row to row), errors. Only
//! indexable HTML pages carry `text` and get an FTS entry; the text is kept
//! once, in `pages` (the index reads it from there: external content).
//!
//! A dedicated writer thread owns the connection and commits whatever rows
//! are queued in one transaction (group commit); `store` returns once its row
//! is committed, so "stored" survives SIGKILL (WAL, synchronous=NORMAL: safe
//! against process crashes). Indexing is deferred: rows are added to FTS5 in
//! runs of [`INDEX_EVERY`] (or when the writer is idle, on [`Store::flush`]
//! and when the last handle drops). One FTS5 segment per run instead of one
//! per small commit is what keeps segment flushes and merges cheap. Rows past
//! `indexed_upto` are what a kill leaves unindexed; the next open indexes them.

use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;

use crate::CrawlError;

/// Format of the database (`PRAGMA user_version`).
pub const FORMAT: i64 = 2;
/// Indexable rows added to FTS5 at a time.
pub const INDEX_EVERY: u64 = 512;
/// The writer indexes its backlog after this long without work.
const IDLE: Duration = Duration::from_millis(200);

const SCHEMA: &str = "
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
CREATE TABLE IF NOT EXISTS pages(
  url TEXT PRIMARY KEY, final_url TEXT, status INTEGER, depth INTEGER,
  content_type TEXT, bytes INTEGER, title TEXT, description TEXT, keywords TEXT,
  fetched_at TEXT, content_hash TEXT, error TEXT, text TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS pages_fts USING fts5(title, description, keywords, text,
  content='pages', content_rowid='rowid');
CREATE TABLE IF NOT EXISTS fts_state(id INTEGER PRIMARY KEY CHECK (id = 1), indexed_upto INTEGER NOT NULL);
INSERT OR IGNORE INTO fts_state VALUES (1, 0);
";

/// One row of `pages` plus the text for the full-text index.
#[derive(Debug, Clone, Default)]
pub struct PageRow {
    /// URL fetched (canonical).
    pub url: String,
    /// Final URL: the same for pages, the `Location` target for redirects.
    pub final_url: String,
    /// HTTP status (0 when no response).
    pub status: u16,
    /// Link depth from the seeds.
    pub depth: u32,
    /// `Content-Type` header.
    pub content_type: Option<String>,
    /// Body bytes received (after decompression).
    pub bytes: u64,
    /// Page title.
    pub title: Option<String>,
    /// Meta description.
    pub description: Option<String>,
    /// Keywords: meta keywords and top terms.
    pub keywords: Option<String>,
    /// RFC 3339 fetch time.
    pub fetched_at: String,
    /// SHA-256 of the body, hex.
    pub content_hash: Option<String>,
    /// Error or note (`truncated`, `noindex`, failure reason).
    pub error: Option<String>,
    /// Visible text for FTS; `None` = not indexed.
    pub text: Option<String>,
}

fn open(path: &Path) -> Result<Connection, CrawlError> {
    let conn = Connection::open(path)?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
    if tables > 0 && version != FORMAT {
        return Err(CrawlError::Config(format!(
            "{}: page database of format {version}, this mgz writes {FORMAT}: use another --db",
            path.display()
        )));
    }
    conn.execute_batch(SCHEMA)?;
    conn.execute_batch(&format!("PRAGMA user_version = {FORMAT}"))?;
    Ok(conn)
}

/// Inserts `r`; returns whether it is a new indexable row.
fn insert(tx: &rusqlite::Transaction<'_>, r: &PageRow) -> Result<bool, rusqlite::Error> {
    let mut st = tx.prepare_cached(
        "INSERT OR IGNORE INTO pages VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
    )?;
    let n = st.execute(params![
        r.url,
        r.final_url,
        r.status,
        r.depth,
        r.content_type,
        r.bytes as i64,
        r.title,
        r.description,
        r.keywords,
        r.fetched_at,
        r.content_hash,
        r.error,
        r.text
    ])?;
    Ok(n == 1 && r.text.is_some())
}

/// Adds every row past `indexed_upto` to FTS5, in one transaction.
fn index_backlog(conn: &mut Connection) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction()?;
    let upto: i64 = tx.query_row("SELECT indexed_upto FROM fts_state", [], |r| r.get(0))?;
    tx.execute(
        "INSERT INTO pages_fts(rowid, title, description, keywords, text) \
         SELECT rowid, title, description, keywords, text FROM pages \
         WHERE rowid > ?1 AND text IS NOT NULL",
        [upto],
    )?;
    tx.execute(
        "UPDATE fts_state SET indexed_upto = (SELECT coalesce(max(rowid), ?1) FROM pages)",
        [upto],
    )?;
    tx.commit()
}

type Ack = oneshot::Sender<Result<(), String>>;

enum Msg {
    Store(Box<PageRow>, Ack),
    Contains(String, oneshot::Sender<bool>),
    Flush(Ack),
}

/// Joins the writer thread when the last handle is gone, so the index is
/// complete when the owner moves on (its senders are dropped first).
struct Writer(Mutex<Option<std::thread::JoinHandle<()>>>);

impl Drop for Writer {
    fn drop(&mut self) {
        let handle = self.0.lock().map(|mut h| h.take()).unwrap_or(None);
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

/// Handle to the writer thread; cheap to clone.
#[derive(Clone)]
pub struct Store {
    // Declared before `_writer`: dropped first, so the thread sees the end.
    tx: mpsc::Sender<Msg>,
    rows_at_open: u64,
    _writer: Arc<Writer>,
}

impl Store {
    /// Opens (creating) the database, indexes what a kill left unindexed and
    /// starts the writer thread.
    pub fn open(path: &Path) -> Result<Store, CrawlError> {
        let mut conn = open(path)?;
        index_backlog(&mut conn)?;
        let rows_at_open: i64 = conn.query_row("SELECT count(*) FROM pages", [], |r| r.get(0))?;
        let (tx, rx) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("mgz-store".into())
            .spawn(move || writer_loop(conn, rx))?;
        Ok(Store {
            tx,
            rows_at_open: rows_at_open as u64,
            _writer: Arc::new(Writer(Mutex::new(Some(handle)))),
        })
    }

    /// Rows the database held when opened (0: a fresh crawl, nothing to skip).
    pub fn rows_at_open(&self) -> u64 {
        self.rows_at_open
    }

    async fn ask(&self, msg: impl FnOnce(Ack) -> Msg) -> Result<(), CrawlError> {
        let (ack, done) = oneshot::channel();
        let closed = || CrawlError::Config("store closed".into());
        self.tx.send(msg(ack)).map_err(|_| closed())?;
        done.await
            .map_err(|_| closed())?
            .map_err(|e| CrawlError::Config(format!("store: {e}")))
    }

    /// Stores a row; returns once it is committed (indexed later).
    pub async fn store(&self, row: PageRow) -> Result<(), CrawlError> {
        self.ask(|ack| Msg::Store(Box::new(row), ack)).await
    }

    /// Indexes every stored row now.
    pub async fn flush(&self) -> Result<(), CrawlError> {
        self.ask(Msg::Flush).await
    }

    /// Whether `url` already has a row.
    pub async fn contains(&self, url: &str) -> bool {
        let (ack, done) = oneshot::channel();
        if self.tx.send(Msg::Contains(url.to_string(), ack)).is_err() {
            return false;
        }
        done.await.unwrap_or(false)
    }
}

fn writer_loop(mut conn: Connection, rx: mpsc::Receiver<Msg>) {
    let mut backlog = 0u64;
    loop {
        let first = match rx.recv_timeout(IDLE) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                if backlog > 0 {
                    log_err(index_backlog(&mut conn));
                    backlog = 0;
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let mut batch = vec![first];
        batch.extend(rx.try_iter().take(4095));
        let result = write_batch(&mut conn, &batch).map_err(|e| e.to_string());
        backlog += *result.as_ref().unwrap_or(&0);
        let mut flush = Vec::new();
        for msg in batch {
            match msg {
                Msg::Store(_, ack) => drop(ack.send(result.clone().map(drop))),
                Msg::Contains(url, ack) => drop(ack.send(has_url(&conn, &url))),
                Msg::Flush(ack) => flush.push(ack),
            }
        }
        if backlog >= INDEX_EVERY || !flush.is_empty() {
            let r = index_backlog(&mut conn).map_err(|e| e.to_string());
            backlog = 0;
            for ack in flush {
                drop(ack.send(r.clone()));
            }
        }
    }
    if backlog > 0 {
        log_err(index_backlog(&mut conn));
    }
}

fn log_err(r: Result<(), rusqlite::Error>) {
    if let Err(e) = r {
        tracing::error!("page index: {e}");
    }
}

/// Commits the batch's rows; returns how many new indexable rows it added.
fn write_batch(conn: &mut Connection, batch: &[Msg]) -> Result<u64, rusqlite::Error> {
    let tx = conn.transaction()?;
    let mut added = 0;
    for msg in batch {
        if let Msg::Store(row, _) = msg {
            added += u64::from(insert(&tx, row)?);
        }
    }
    tx.commit()?;
    Ok(added)
}

fn has_url(conn: &Connection, url: &str) -> bool {
    conn.prepare_cached("SELECT 1 FROM pages WHERE url = ?1")
        .and_then(|mut st| st.query_row([url], |_| Ok(())).optional())
        .ok()
        .flatten()
        .is_some()
}

/// One search hit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hit {
    /// Page URL.
    pub url: String,
    /// Page title.
    pub title: String,
    /// Text around the match, matches in `[brackets]`.
    pub snippet: String,
    /// BM25 score (lower is better, as SQLite reports it).
    pub score: f64,
}

/// Turns free text into an FTS5 query: every word quoted, all required.
pub fn fts_query(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(" ")
}

/// BM25-ranked search over a crawl database.
pub fn search(db: &Path, query: &str, limit: usize) -> Result<Vec<Hit>, CrawlError> {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let q = fts_query(query);
    if q.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare(
        "SELECT p.url, coalesce(p.title, ''), snippet(pages_fts, 3, '[', ']', '…', 16), \
         bm25(pages_fts) AS s FROM pages_fts JOIN pages p ON p.rowid = pages_fts.rowid \
         WHERE pages_fts MATCH ?1 ORDER BY s LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![q, limit as i64], |r| {
        Ok(Hit {
            url: r.get(0)?,
            title: r.get(1)?,
            snippet: r.get(2)?,
            score: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every stored URL with its status (for tests and tools).
pub fn stored_urls(db: &Path) -> Result<Vec<(String, u16, Option<String>)>, CrawlError> {
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare("SELECT url, status, content_type FROM pages")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(url: &str, title: &str, text: &str) -> PageRow {
        PageRow {
            url: url.into(),
            final_url: url.into(),
            status: 200,
            title: Some(title.into()),
            text: Some(text.into()),
            ..PageRow::default()
        }
    }

    #[tokio::test]
    async fn store_search_and_dedupe() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        let s = Store::open(&db).unwrap();
        s.store(row(
            "http://a/1",
            "Rust crawler",
            "polite fetching of pages",
        ))
        .await
        .unwrap();
        s.store(row("http://a/2", "Other", "nothing about crawling here"))
            .await
            .unwrap();
        s.store(row("http://a/1", "dup", "dup")).await.unwrap();
        assert!(s.contains("http://a/1").await && !s.contains("http://a/3").await);
        s.flush().await.unwrap();
        let hits = search(&db, "polite", 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].url, "http://a/1");
        assert!(hits[0].snippet.contains("[polite]"));
        assert!(search(&db, "\"unbalanced AND (", 10).is_ok());
        assert!(search(&db, "", 10).unwrap().is_empty());
        assert_eq!(stored_urls(&db).unwrap().len(), 2);
    }

    #[tokio::test]
    async fn rows_left_unindexed_are_indexed_at_open_and_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        {
            // Rows committed by a crawl that died before indexing them.
            let mut conn = open(&db).unwrap();
            let tx = conn.transaction().unwrap();
            insert(&tx, &row("http://a/1", "Killed", "orphaned heron")).unwrap();
            tx.commit().unwrap();
        }
        assert!(search(&db, "heron", 10).unwrap().is_empty());
        let s = Store::open(&db).unwrap();
        assert_eq!(search(&db, "heron", 10).unwrap().len(), 1);
        s.store(row("http://a/2", "Later", "a second heron"))
            .await
            .unwrap();
        drop(s); // the last handle: joins the writer, which indexes its backlog
        assert_eq!(search(&db, "heron", 10).unwrap().len(), 2);
        // A page database of another format is refused with a clear error.
        let c = Connection::open(&db).unwrap();
        c.execute_batch("PRAGMA user_version = 1").unwrap();
        drop(c);
        assert!(matches!(Store::open(&db), Err(CrawlError::Config(m)) if m.contains("format 1")));
    }
}
