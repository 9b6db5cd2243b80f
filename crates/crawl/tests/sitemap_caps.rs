//! Sitemaps have their own 50 MB cap (sent or inflated), above the 10 MB page
//! cap: a 12 MB sitemap is read to its end; a 60 MB one and 1 GiB gzip bombs
//! (file and transfer encoding) are cut at 50 MB, flagged, and cost memory
//! in proportion to the cap, not to what they claim.

mod common;

use std::sync::Arc;

use common::gzip_bomb;

const MB: usize = 1 << 20;

/// A urlset of `size` bytes: `early` at the start, `late` after `late_at` bytes of padding.
fn urlset(early: &str, late: &str, late_at: usize, size: usize) -> Vec<u8> {
    let loc = |p: &str| format!("<url><loc>http://maps.test/{p}</loc></url>\n");
    let mut s = format!("<urlset>{}", loc(early)).into_bytes();
    s.resize(late_at, b' ');
    s.extend(loc(late).bytes());
    s.resize(size - "</urlset>".len(), b' ');
    s.extend(b"</urlset>");
    s
}

fn respond(path: &str, bomb: &[u8]) -> (String, Vec<u8>) {
    match path {
        "/robots.txt" => (
            "text/plain".into(),
            b"User-agent: *\nAllow: /\nSitemap: http://maps.test/big.xml\n\
              Sitemap: http://maps.test/huge.xml\nSitemap: http://maps.test/bomb.xml.gz\n\
              Sitemap: http://maps.test/bomb-te.xml\n"
                .to_vec(),
        ),
        "/big.xml" => (
            "application/xml".into(),
            urlset("b1", "b2", 11 * MB, 12 * MB),
        ),
        "/huge.xml" => (
            "application/xml".into(),
            urlset("h1", "h2", 55 * MB, 60 * MB),
        ),
        "/bomb.xml.gz" => ("application/gzip".into(), bomb.to_vec()),
        "/bomb-te.xml" => (
            "application/xml\r\nContent-Encoding: gzip".into(),
            bomb.to_vec(),
        ),
        _ => ("text/html".into(), b"<title>page</title>".to_vec()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemaps_have_their_own_50_mb_cap() {
    let bomb = Arc::new(gzip_bomb(1 << 30));
    let (dir, mut cfg) = common::raw_host("maps.test", move |path| {
        let (ct, body) = respond(path, &bomb);
        ("200 OK", ct, body)
    })
    .await;
    cfg.max_depth = 1;
    let rss_before = mgz_crawl::stats::rss_bytes();
    let summary = common::run(cfg).await;
    let rows = mgz_crawl::store::stored_urls(&dir.path().join("pages.db")).unwrap();
    let has = |p: &str| rows.iter().any(|r| r.0 == format!("http://maps.test/{p}"));
    assert!(has("b1") && has("b2"), "12 MB sitemap not read to its end");
    assert!(has("h1") && !has("h2"), "60 MB sitemap not cut at 50 MB");
    // huge.xml, the gzip file and the gzip transfer are each cut and flagged.
    let cut = summary
        .errors
        .get("sitemap_truncated")
        .copied()
        .unwrap_or(0);
    assert_eq!(cut, 3, "{summary:?}");
    let peak = mgz_crawl::stats::peak_rss_bytes();
    assert!(
        peak < rss_before + (400 << 20),
        "peak RSS {peak} (before {rss_before})"
    );
}
