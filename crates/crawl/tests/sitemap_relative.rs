//! `Sitemap:` lines and sitemap-index entries written as relative URLs
//! (the protocol asks for absolute ones; sites write `/sitemap.xml` anyway)
//! are resolved against the file that names them, as a browser resolves a
//! link, instead of being dropped.

mod common;

fn respond(path: &str) -> (&'static str, String, Vec<u8>) {
    let xml = "application/xml".to_string();
    match path {
        "/robots.txt" => (
            "200 OK",
            "text/plain".into(),
            b"User-agent: *\nAllow: /\nSitemap: /maps/index.xml\n".to_vec(),
        ),
        "/maps/index.xml" => (
            "200 OK",
            xml,
            b"<sitemapindex><sitemap><loc>pages.xml</loc></sitemap></sitemapindex>".to_vec(),
        ),
        "/maps/pages.xml" => (
            "200 OK",
            xml,
            b"<urlset><url><loc>http://rel.test/only-in-the-sitemap</loc></url>\
              <url><loc>relative-page</loc></url></urlset>"
                .to_vec(),
        ),
        _ => (
            "200 OK",
            "text/html".into(),
            b"<title>page</title>".to_vec(),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relative_sitemap_urls_are_resolved_against_their_file() {
    let (stored, summary) = common::crawl_raw("rel.test", respond, 2).await;
    let pages = ["only-in-the-sitemap", "maps/relative-page"];
    common::assert_stored(&stored, "rel.test", &pages, &summary);
}
