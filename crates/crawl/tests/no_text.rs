//! `mgz crawl --no-text` (`CrawlConfig::keep_text = false`): the same
//! pages, links, titles and meta tags as a full crawl, no visible text and
//! no top terms; `mgz search` still finds pages by title.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{crawl_config, run, small_sim};

/// url → (title, description, keywords, text) of every stored 200 page.
type Rows = BTreeMap<String, (String, String, String, Option<String>)>;

fn rows(db: &Path) -> Rows {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "select url, coalesce(title, ''), coalesce(description, ''), \
             coalesce(keywords, ''), text from pages where status = 200",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_without_text_stores_the_same_pages_and_titles() {
    let (sim, server) = small_sim(5, 8, 120).await;
    let (full_dir, bare_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let full_cfg = crawl_config(&sim, &server, full_dir.path(), 3);
    let mut bare_cfg = crawl_config(&sim, &server, bare_dir.path(), 3);
    bare_cfg.keep_text = false;
    let full_summary = run(full_cfg).await;
    let bare_summary = run(bare_cfg).await;
    let (full, bare) = (
        rows(&full_dir.path().join("pages.db")),
        rows(&bare_dir.path().join("pages.db")),
    );
    assert!(full.len() > 50, "{full_summary:?}");
    // The same pages: the links found are the same.
    assert_eq!(
        full.keys().collect::<Vec<_>>(),
        bare.keys().collect::<Vec<_>>(),
        "{full_summary:?} {bare_summary:?}"
    );
    let mut with_text = 0;
    for (url, (title, description, keywords, text)) in &full {
        let (b_title, b_description, b_keywords, b_text) = &bare[url];
        assert_eq!((title, description), (b_title, b_description), "{url}");
        // Empty, not NULL (NULL marks a noindex page, left out of search).
        let expected = text.as_ref().map(|_| String::new());
        assert_eq!(*b_text, expected, "{url}");
        // Without text the keywords are the meta keywords alone: a prefix
        // of the full crawl's, which adds the text's top terms.
        assert!(keywords.starts_with(b_keywords.as_str()), "{url}");
        with_text += usize::from(text.as_deref().is_some_and(|t| !t.is_empty()));
    }
    assert!(
        with_text > 50,
        "the full crawl kept text for {with_text} pages"
    );
    // Search still answers from titles.
    let (url, (title, ..)) = bare.iter().find(|(_, r)| !r.0.is_empty()).unwrap();
    let word = title.split_whitespace().next().unwrap();
    let hits = mgz_crawl::store::search(&bare_dir.path().join("pages.db"), word, 1000).unwrap();
    assert!(hits.iter().any(|h| &h.url == url), "{word:?} → {hits:?}");
}

fn described(path: &str) -> (&'static str, String, Vec<u8>) {
    let html = |b: &str| ("200 OK", "text/html".to_string(), b.as_bytes().to_vec());
    match path {
        "/robots.txt" => ("404 Not Found", "text/plain".into(), Vec::new()),
        "/" => html(
            r#"<title>Index</title><meta name=description content="A quiet harbour of pages">
               <p>Visible words about lighthouses.</p><a href=/k>k</a>"#,
        ),
        _ => html(r#"<title>K</title><meta name=keywords content="lighthouse, keeper">"#),
    }
}

/// Without text, a hit's snippet comes from the description, else the
/// keywords (it came from the empty text column).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_text_snippets_come_from_the_description_or_keywords() {
    let (dir, mut cfg) = common::raw_host("desc.test", described).await;
    cfg.keep_text = false;
    run(cfg).await;
    let db = dir.path().join("pages.db");
    let hits = mgz_crawl::store::search(&db, "harbour", 10).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].snippet.contains("[harbour]"), "{hits:?}");
    let hits = mgz_crawl::store::search(&db, "keeper", 10).unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].snippet.contains("[keeper]"), "{hits:?}");
    // The visible text was not kept.
    assert!(
        mgz_crawl::store::search(&db, "lighthouses", 10)
            .unwrap()
            .is_empty()
    );
}
