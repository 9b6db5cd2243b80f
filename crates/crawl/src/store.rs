//! Page storage in SQLite (rusqlite, bundled, WAL) with an FTS5 index.
//!
//! ```text
//! pages(url PK, final_url, status, depth, content_type, bytes, title,
//!       description, keywords, fetched_at, content_hash, error, text)
//! pages_fts(title, description, keywords, text)  external content = pages,
//!                                                 rowid = pages.rowid
//! fts_state(indexed_upto)                         last pages.rowid indexed
//! links(src, dst) PK (src, dst), WITHOUT ROWID     a page's outgoing links
//! PRAGMA user_version = FORMAT (2)
//! ```
//! `links` is filled only by crawls run with `--links`
//! ([`crate::CrawlConfig::store_links`]): one row per distinct canonical
//! target of a stored HTML page (`src` = the page's `pages.url`), written in
//! the transaction of the page's row, so a page stored has all its links and
//! a refetch adds no duplicate. Ordered by `src`: a page's links are one
//! range; `dst` is not indexed (`CREATE INDEX links_dst ON links(dst)` makes
//! "who links here" fast). The table was added in session 48 without a
//! format change: opening an older database creates it empty.
//! One row per fetched URL: pages (2xx), redirect hops (3xx, `final_url` =
//! the `Location` target, so a chain is followed row to row), errors. Only
//! indexable HTML pages carry `text` and get an FTS entry; the text is kept
//! once, in `pages` (the index reads it from there: external content).
//!
//! A dedicated writer thread owns the connection and commits whatever rows
//! are queued in one transaction (group commit); `store` returns once its row
//! is committed, so "stored" survives SIGKILL (WAL, synchronous=NORMAL: safe
//! against process crashes).
//!
//! Indexing is not the crawl's job: the full-text index is a derived view,
//! brought up to date by [`update_index`] — which [`search`] runs first — so
//! a crawl spends nothing on it (FTS5 tokenising, segment flushes and merges
//! were a quarter of a fast crawl's CPU and several MB of its memory), and
//! a crawl that is never searched never pays for it. Rows past
//! `indexed_upto` are the backlog; they are indexed in chunks of
//! [`INDEX_CHUNK`] rows, one transaction each (FTS rows and `indexed_upto`
//! together), so a search killed while indexing leaves a consistent prefix
//! and the next one continues from it; a search during a crawl interleaves
//! with the crawl's commits (both wait up to [`BUSY`] for the write lock).
//! Cost, measured: the first search over the 1,169-page PostgreSQL
//! documentation crawl (6.8 MB of text) took 0.20 s of CPU, later ones
//! 0.03 s (docs/BENCHMARKS.md, "Crawler").
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;

use crate::CrawlError;

/// Format of the database (`PRAGMA user_version`).
pub const FORMAT: i64 = 2;
/// Rows (pages past `indexed_upto`) indexed per transaction.
pub const INDEX_CHUNK: i64 = 2_000;
/// How long a writer waits for another one (a search indexing while the
/// crawl commits, or the other way round).
pub const BUSY: Duration = Duration::from_secs(30);

/// The writer only appends rows and walks the `url` index: a 1 MiB page
/// cache holds that index's interior pages up to millions of rows, half of
/// SQLite's 2 MiB default.
///
/// Setting a new file up (the switch to WAL, the tables) runs with
/// `synchronous=OFF`, raised to `NORMAL` before the first row: that saves
/// seven fsyncs per new database (~60 ms on a busy disk) and changes no
/// guarantee that counts — a process crash loses nothing either way (the
/// OS holds the writes), and a power cut during creation leaves a database
/// with no rows, which is cheap to make again.
const SCHEMA: &str = "
PRAGMA synchronous=OFF;
PRAGMA journal_mode=WAL;
PRAGMA cache_size=-1024;
CREATE TABLE IF NOT EXISTS pages(
  url TEXT PRIMARY KEY, final_url TEXT, status INTEGER, depth INTEGER,
  content_type TEXT, bytes INTEGER, title TEXT, description TEXT, keywords TEXT,
  fetched_at TEXT, content_hash TEXT, error TEXT, text TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS pages_fts USING fts5(title, description, keywords, text,
  content='pages', content_rowid='rowid');
CREATE TABLE IF NOT EXISTS fts_state(id INTEGER PRIMARY KEY CHECK (id = 1), indexed_upto INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS links(src TEXT NOT NULL, dst TEXT NOT NULL, PRIMARY KEY (src, dst))
  WITHOUT ROWID;
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
    /// Outgoing links (canonical URLs) for the `links` table; empty unless
    /// the crawl stores links.
    pub links: Vec<String>,
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
    conn.busy_timeout(BUSY)?;
    conn.execute_batch(SCHEMA)?;
    conn.execute_batch(&format!(
        "PRAGMA user_version = {FORMAT}; PRAGMA synchronous=NORMAL;"
    ))?;
    Ok(conn)
}

/// Inserts `r` unless its URL has a row already.
fn insert(tx: &rusqlite::Transaction<'_>, r: &PageRow) -> Result<(), rusqlite::Error> {
    let mut st = tx.prepare_cached(
        "INSERT OR IGNORE INTO pages VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
    )?;
    st.execute(params![
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
    if !r.links.is_empty() {
        let mut st = tx.prepare_cached("INSERT OR IGNORE INTO links VALUES (?1, ?2)")?;
        for dst in &r.links {
            st.execute(params![r.url, dst])?;
        }
    }
    Ok(())
}

/// Indexes the next chunk of rows past `indexed_upto` (at most
/// [`INDEX_CHUNK`]) in one transaction; returns the rows it covered (0 when
/// the index is up to date).
fn index_chunk(conn: &mut Connection) -> Result<i64, rusqlite::Error> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let upto: i64 = tx.query_row("SELECT indexed_upto FROM fts_state", [], |r| r.get(0))?;
    let (end, rows): (Option<i64>, i64) = tx.query_row(
        "SELECT max(rowid), count(*) FROM \
         (SELECT rowid FROM pages WHERE rowid > ?1 ORDER BY rowid LIMIT ?2)",
        [upto, INDEX_CHUNK],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let Some(end) = end else {
        return Ok(0);
    };
    tx.execute(
        "INSERT INTO pages_fts(rowid, title, description, keywords, text) \
         SELECT rowid, title, description, keywords, text FROM pages \
         WHERE rowid > ?1 AND rowid <= ?2 AND text IS NOT NULL",
        [upto, end],
    )?;
    tx.execute("UPDATE fts_state SET indexed_upto = ?1", [end])?;
    tx.commit()?;
    Ok(rows)
}

/// Brings the full-text index of `db` up to date, chunk by chunk; returns
/// the rows it indexed. Safe to run while a crawl writes to `db`, and to
/// kill at any point (see the module docs).
pub fn update_index(db: &Path) -> Result<u64, CrawlError> {
    let mut conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    conn.busy_timeout(BUSY)?;
    check_format(&conn, db)?;
    let mut total = 0;
    loop {
        match index_chunk(&mut conn)? {
            0 => return Ok(total),
            n => total += n as u64,
        }
    }
}

fn check_format(conn: &Connection, path: &Path) -> Result<(), CrawlError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version != FORMAT {
        return Err(CrawlError::Config(format!(
            "{}: page database of format {version}, this mgz reads {FORMAT}",
            path.display()
        )));
    }
    Ok(())
}

type Ack = oneshot::Sender<Result<(), String>>;

enum Msg {
    Store(Box<PageRow>, Ack),
    Contains(String, oneshot::Sender<bool>),
    Flush(Ack),
}

/// Joins the writer thread when the last handle is gone, so every queued
/// row is committed when the owner moves on (its senders are dropped first).
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
    /// Opens (creating) the database and starts the writer thread.
    pub fn open(path: &Path) -> Result<Store, CrawlError> {
        let conn = open(path)?;
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
        let closed = || CrawlError::Store("writer thread stopped".into());
        self.tx.send(msg(ack)).map_err(|_| closed())?;
        done.await.map_err(|_| closed())?.map_err(CrawlError::Store)
    }

    /// Stores a row; returns once it is committed (indexed by the next
    /// [`update_index`]).
    pub async fn store(&self, row: PageRow) -> Result<(), CrawlError> {
        self.ask(|ack| Msg::Store(Box::new(row), ack)).await
    }

    /// Returns once every row queued before it is committed.
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
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        batch.extend(rx.try_iter().take(4095));
        let result = write_batch(&mut conn, &batch).map_err(|e| e.to_string());
        for msg in batch {
            match msg {
                Msg::Store(_, ack) | Msg::Flush(ack) => drop(ack.send(result.clone())),
                Msg::Contains(url, ack) => drop(ack.send(has_url(&conn, &url))),
            }
        }
    }
}

/// Commits the batch's rows in one transaction.
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

/// BM25-ranked search over a crawl database, after [`update_index`]. A
/// database this process may not write is searched as indexed so far.
pub fn search(db: &Path, query: &str, limit: usize) -> Result<Vec<Hit>, CrawlError> {
    let q = fts_query(query);
    if q.is_empty() {
        return Ok(Vec::new());
    }
    if let Err(e) = update_index(db) {
        match e {
            CrawlError::Db(rusqlite::Error::SqliteFailure(f, _))
                if matches!(
                    f.code,
                    rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly
                ) =>
            {
                tracing::warn!("{}: read-only, searching the index as it is", db.display());
            }
            e => return Err(e),
        }
    }
    let conn = Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare(
        // The snippet comes from the text; a page crawled with `--no-text`
        // has none, so from its description, else its keywords.
        "SELECT p.url, coalesce(p.title, ''), \
         coalesce(nullif(snippet(pages_fts, 3, '[', ']', '…', 16), ''), \
                  nullif(snippet(pages_fts, 1, '[', ']', '…', 16), ''), \
                  snippet(pages_fts, 2, '[', ']', '…', 16)), \
         bm25(pages_fts) AS s FROM pages_fts JOIN pages p ON p.rowid = pages_fts.rowid \
         WHERE pages_fts MATCH ?1 ORDER BY s LIMIT ?2",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(params![q, limit], |r| {
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
pub(crate) mod tests {
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

    /// Asserts that `c` writes rows in WAL mode with `synchronous=NORMAL`
    /// (the setup runs with syncs off; rows must not).
    pub(crate) fn assert_wal_with_normal_sync(c: &Connection) {
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        let sync: i64 = c.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
        assert_eq!((mode.as_str(), sync), ("wal", 1), "1 = NORMAL");
    }

    #[test]
    fn rows_are_written_in_wal_with_normal_sync_new_or_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        for _ in 0..2 {
            assert_wal_with_normal_sync(&open(&db).unwrap());
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

    fn indexed_upto(db: &Path) -> i64 {
        let c = Connection::open(db).unwrap();
        c.query_row("SELECT indexed_upto FROM fts_state", [], |r| r.get(0))
            .unwrap()
    }

    #[tokio::test]
    async fn the_crawl_does_not_index_search_does_incrementally() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        let s = Store::open(&db).unwrap();
        s.store(row("http://a/1", "First", "a grey heron"))
            .await
            .unwrap();
        s.flush().await.unwrap();
        assert_eq!(indexed_upto(&db), 0, "the crawl itself indexes nothing");
        assert_eq!(search(&db, "heron", 10).unwrap().len(), 1);
        assert_eq!(indexed_upto(&db), 1);
        // While the store is open (a crawl running), more rows, then a search.
        s.store(row("http://a/2", "Later", "a second heron"))
            .await
            .unwrap();
        s.store(PageRow {
            url: "http://a/3".into(),
            status: 404,
            ..PageRow::default()
        })
        .await
        .unwrap();
        assert_eq!(search(&db, "heron", 10).unwrap().len(), 2);
        assert_eq!(indexed_upto(&db), 3, "rows without text are passed over");
        assert_eq!(update_index(&db).unwrap(), 0, "up to date");
        drop(s);
        // A backlog larger than one chunk is indexed chunk by chunk.
        let n = 2 * INDEX_CHUNK + 7;
        let mut conn = open(&db).unwrap();
        let tx = conn.transaction().unwrap();
        for i in 0..n {
            insert(
                &tx,
                &row(&format!("http://b/{i}"), "Bulk", &format!("egret w{i}")),
            )
            .unwrap();
        }
        tx.commit().unwrap();
        assert_eq!(update_index(&db).unwrap(), n as u64);
        assert_eq!(search(&db, "egret", 100_000).unwrap().len(), n as usize);
        assert_eq!(search(&db, &format!("w{}", n - 1), 10).unwrap().len(), 1);
    }

    #[tokio::test]
    async fn an_index_pass_cut_short_is_redone_exactly_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        let s = Store::open(&db).unwrap();
        for i in 0..5 {
            let text = format!("orphaned heron h{i}");
            s.store(row(&format!("http://a/{i}"), "Killed", &text))
                .await
                .unwrap();
        }
        drop(s);
        {
            // An index pass that dies before committing (as under SIGKILL:
            // SQLite discards the uncommitted transaction).
            let mut conn = Connection::open(&db).unwrap();
            let tx = conn.transaction().unwrap();
            tx.execute(
                "INSERT INTO pages_fts(rowid, title, description, keywords, text) \
                 SELECT rowid, title, description, keywords, text FROM pages WHERE rowid <= 3",
                [],
            )
            .unwrap();
            tx.execute("UPDATE fts_state SET indexed_upto = 3", [])
                .unwrap();
            std::mem::forget(tx); // never committed nor rolled back by us
        }
        assert_eq!(indexed_upto(&db), 0);
        let hits = search(&db, "heron", 10).unwrap();
        let mut urls: Vec<_> = hits.iter().map(|h| h.url.clone()).collect();
        urls.sort();
        assert_eq!(
            urls,
            (0..5).map(|i| format!("http://a/{i}")).collect::<Vec<_>>()
        );
        // A page database of another format is refused with a clear error.
        let c = Connection::open(&db).unwrap();
        c.execute_batch("PRAGMA user_version = 1").unwrap();
        drop(c);
        assert!(matches!(Store::open(&db), Err(CrawlError::Config(m)) if m.contains("format 1")));
        assert!(
            matches!(search(&db, "heron", 1), Err(CrawlError::Config(m)) if m.contains("format 1"))
        );
    }

    fn link_rows(db: &Path) -> Vec<(String, String)> {
        let c = Connection::open(db).unwrap();
        let mut st = c.prepare("SELECT src, dst FROM links").unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[tokio::test]
    async fn a_pages_links_are_stored_with_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("c.db");
        // A database made before the links table: opening adds it, empty.
        {
            let c = Connection::open(&db).unwrap();
            c.execute_batch(&SCHEMA.replace(
                "CREATE TABLE IF NOT EXISTS links(src TEXT NOT NULL, dst TEXT NOT NULL, \
                 PRIMARY KEY (src, dst))\n  WITHOUT ROWID;",
                "",
            ))
            .unwrap();
            c.execute_batch(&format!("PRAGMA user_version = {FORMAT}"))
                .unwrap();
            let has: i64 = c
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = 'links'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(has, 0, "the old schema has no links table");
        }
        let s = Store::open(&db).unwrap();
        let mut page = row("http://a/1", "One", "text");
        page.links = vec!["http://a/2".into(), "http://b/".into()];
        s.store(page.clone()).await.unwrap();
        // Stored again (a refetch after a kill): no duplicate link.
        page.links.push("http://c/".into());
        s.store(page).await.unwrap();
        s.store(row("http://a/2", "Two", "no links")).await.unwrap();
        s.flush().await.unwrap();
        let mut got = link_rows(&db);
        got.sort();
        let want: Vec<(String, String)> = ["http://a/2", "http://b/", "http://c/"]
            .iter()
            .map(|d| ("http://a/1".to_string(), d.to_string()))
            .collect();
        assert_eq!(got, want);
    }
}
