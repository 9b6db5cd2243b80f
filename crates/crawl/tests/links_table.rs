//! `mgz crawl --links` (`CrawlConfig::store_links`): every stored HTML page
//! has exactly its links in the `links` table, as the sim's page models say
//! (anchors resolved against `<base href>`, canonical, distinct; none for a
//! page marked nofollow); a crawl without the flag leaves the table empty.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{crawl_config, run, small_sim, stored_pages};
use mgz_sim::Sim;
use mgz_url::{CanonicalUrl, Policy};

/// src → sorted dst of the `links` table.
fn links(db: &Path) -> BTreeMap<String, Vec<String>> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT src, dst FROM links ORDER BY src, dst")
        .unwrap();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))
        .unwrap();
    for row in rows {
        let (src, dst) = row.unwrap();
        out.entry(src).or_default().push(dst);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stored_page_has_exactly_its_links() {
    let (sim, server) = small_sim(8, 12, 400).await;
    let model = Sim::new(&sim).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = crawl_config(&sim, &server, dir.path(), 3);
    cfg.store_links = true;
    let summary = run(cfg).await;
    let db = dir.path().join("pages.db");
    let pages = stored_pages(&db);
    assert!(pages.len() > 100, "{summary:?}");
    let got = links(&db);
    let (mut rows, mut nofollow, mut based) = (0, 0, 0);
    for page in &pages {
        let want = model
            .page_links(page)
            .expect("a stored page is an HTML page");
        let have = got.get(page).cloned().unwrap_or_default();
        assert_eq!(have, want, "{page}");
        rows += have.len();
        nofollow += usize::from(want.is_empty());
        let url = CanonicalUrl::parse(page, None, &Policy::safe()).unwrap();
        let body = model.respond(url.host(), url.as_url().path()).rendered.body;
        based += usize::from(String::from_utf8_lossy(&body).contains("<base "));
    }
    // No row for anything but a stored HTML page (redirects, PDFs, errors).
    let extra: Vec<_> = got.keys().filter(|s| !pages.contains(*s)).collect();
    assert!(extra.is_empty(), "links of pages not stored: {extra:?}");
    // The web exercised the cases that matter.
    assert!(rows > 1_000, "{rows} links");
    assert!(nofollow > 0, "no nofollow page was crawled");
    assert!(based > 0, "no page with <base href> was crawled");
    eprintln!(
        "{} pages, {rows} links, {nofollow} nofollow, {based} with <base>",
        pages.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_flag_no_link_is_stored() {
    let (sim, server) = small_sim(8, 6, 100).await;
    let dir = tempfile::tempdir().unwrap();
    let summary = run(crawl_config(&sim, &server, dir.path(), 2)).await;
    assert!(summary.pages_stored > 10, "{summary:?}");
    assert_eq!(links(&dir.path().join("pages.db")), BTreeMap::new());
}
