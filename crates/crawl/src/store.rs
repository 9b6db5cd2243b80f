//! Page storage in SQLite (rusqlite, bundled, WAL) with an FTS5 index.
//!
//! ```text
//! pages(url PK, final_url, status, depth, content_type, bytes, title,
//!       description, keywords, fetched_at, content_hash, error)
//! pages_fts(title, description, keywords, text)   rowid = pages.rowid
//! ```
//! One row per fetched URL: pages (2xx), redirect hops (3xx, `final_url` =
//! the `Location` target, so a chain is followed row to row), errors. Only
//! indexable HTML pages get an FTS row. A dedicated writer thread owns the
//! connection and commits whatever is queued in one transaction (group
//! commit); a caller's `store` returns once its row is committed, so "stored"
//! survives SIGKILL (WAL, synchronous=NORMAL: safe against process crashes).

use std::path::Path;
use std::sync::mpsc;

use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;

use crate::CrawlError;

const SCHEMA: &str = "
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
CREATE TABLE IF NOT EXISTS pages(
  url TEXT PRIMARY KEY, final_url TEXT, status INTEGER, depth INTEGER,
  content_type TEXT, bytes INTEGER, title TEXT, description TEXT, keywords TEXT,
  fetched_at TEXT, content_hash TEXT, error TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS pages_fts USING fts5(title, description, keywords, text);
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
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

fn insert(tx: &rusqlite::Transaction<'_>, r: &PageRow) -> Result<(), rusqlite::Error> {
    let n = tx.execute(
        "INSERT OR IGNORE INTO pages VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
        params![
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
            r.error
        ],
    )?;
    if let (1, Some(text)) = (n, &r.text) {
        tx.execute(
            "INSERT INTO pages_fts(rowid, title, description, keywords, text) \
             VALUES (last_insert_rowid(), ?1, ?2, ?3, ?4)",
            params![r.title, r.description, r.keywords, text],
        )?;
    }
    Ok(())
}

enum Msg {
    Store(Box<PageRow>, oneshot::Sender<Result<(), String>>),
    Contains(String, oneshot::Sender<bool>),
}

/// Handle to the writer thread; cheap to clone.
#[derive(Clone)]
pub struct Store {
    tx: mpsc::Sender<Msg>,
    rows_at_open: u64,
}

impl Store {
    /// Opens (creating) the database and starts the writer thread.
    pub fn open(path: &Path) -> Result<Store, CrawlError> {
        let conn = open(path)?;
        let rows_at_open: i64 = conn.query_row("SELECT count(*) FROM pages", [], |r| r.get(0))?;
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("mgz-store".into())
            .spawn(move || writer_loop(conn, rx))?;
        Ok(Store {
            tx,
            rows_at_open: rows_at_open as u64,
        })
    }

    /// Rows the database held when opened (0: a fresh crawl, nothing to skip).
    pub fn rows_at_open(&self) -> u64 {
        self.rows_at_open
    }

    /// Stores a row; returns once it is committed.
    pub async fn store(&self, row: PageRow) -> Result<(), CrawlError> {
        let (ack, done) = oneshot::channel();
        let closed = || CrawlError::Config("store closed".into());
        self.tx
            .send(Msg::Store(Box::new(row), ack))
            .map_err(|_| closed())?;
        done.await
            .map_err(|_| closed())?
            .map_err(|e| CrawlError::Config(format!("store: {e}")))
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
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        batch.extend(rx.try_iter().take(4095));
        let result = write_batch(&mut conn, &batch).map_err(|e| e.to_string());
        for msg in batch {
            match msg {
                Msg::Store(_, ack) => drop(ack.send(result.clone())),
                Msg::Contains(url, ack) => drop(ack.send(has_url(&conn, &url))),
            }
        }
    }
}

fn write_batch(conn: &mut Connection, batch: &[Msg]) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction()?;
    for msg in batch {
        if let Msg::Store(row, _) = msg {
            insert(&tx, row)?;
        }
    }
    tx.commit()
}

fn has_url(conn: &Connection, url: &str) -> bool {
    conn.query_row("SELECT 1 FROM pages WHERE url = ?1", [url], |_| Ok(()))
        .optional()
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
        let hits = search(&db, "polite", 10).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].url, "http://a/1");
        assert!(hits[0].snippet.contains("[polite]"));
        assert!(search(&db, "\"unbalanced AND (", 10).is_ok());
        assert!(search(&db, "", 10).unwrap().is_empty());
        assert_eq!(stored_urls(&db).unwrap().len(), 2);
    }
}
