//! robots.txt and sitemap files reached through redirects. RFC 9309 asks a
//! crawler to follow at least five redirects for robots.txt, across hosts
//! too (a site moved to `https://` or `www.` redirects it); the crawler used
//! to take any 3xx as "no robots.txt" and crawl everything, and to drop a
//! sitemap that had moved.

use mgz_crawl::net::ResolveRule;

mod common;

fn text(body: &str) -> (&'static str, String, Vec<u8>) {
    ("200 OK", "text/plain".into(), body.as_bytes().to_vec())
}

fn moved(status: &'static str, to: &str) -> (&'static str, String, Vec<u8>) {
    (status, format!("text/plain\r\nLocation: {to}"), Vec::new())
}

fn html(body: &str) -> (&'static str, String, Vec<u8>) {
    ("200 OK", "text/html".into(), body.as_bytes().to_vec())
}

fn respond(path: &str) -> (&'static str, String, Vec<u8>) {
    match path {
        // Two hops, the first to another host, the second relative.
        "/robots.txt" => moved("301 Moved Permanently", "http://files.moved.test/r/robots"),
        "/r/robots" => moved("302 Found", "robots-final.txt"),
        "/r/robots-final.txt" => {
            text("User-agent: *\nDisallow: /private\nSitemap: http://moved.test/old-map.xml\n")
        }
        "/old-map.xml" => moved("301 Moved Permanently", "/maps/new-map.xml"),
        "/maps/new-map.xml" => (
            "200 OK",
            "application/xml".into(),
            b"<urlset><url><loc>only-in-the-sitemap</loc></url></urlset>".to_vec(),
        ),
        "/" => html(r#"<a href="/private/page">p</a> <a href="/public">q</a>"#),
        _ => html("<title>page</title>"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_and_sitemaps_are_read_through_redirects() {
    let (dir, mut cfg) = common::raw_host("moved.test", respond).await;
    let addr = cfg.fetch.resolve[0].addr();
    let other = ResolveRule::parse(&format!("files.moved.test={addr}")).unwrap();
    cfg.fetch.resolve.push(other);
    cfg.max_depth = 2;
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    let pages = ["public", "maps/only-in-the-sitemap"];
    common::assert_stored(&stored, "moved.test", &pages, &summary);
    assert!(
        !stored.contains("http://moved.test/private/page"),
        "robots.txt reached by redirect was not obeyed: {stored:?}"
    );
    assert_eq!(summary.robots_excluded, 1, "{summary:?}");
}

/// Five redirects are followed; a robots.txt redirect loop, and a chain of
/// six, end as "robots.txt unavailable" (RFC 9309 §2.3.1.2: everything
/// allowed), and the crawl finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_robots_redirects_are_followed_a_loop_or_a_sixth_is_not() {
    for (hops, obeyed) in [(0, false), (5, true), (6, false)] {
        let respond = move |path: &str| match path {
            // hops == 0: /robots.txt → /robots.txt
            "/robots.txt" if hops == 0 => moved("301 Moved Permanently", "/robots.txt"),
            "/robots.txt" => moved("302 Found", "/hop/1"),
            p if p.starts_with("/hop/") => {
                let n: u32 = p[5..].parse().unwrap_or(0);
                if n < hops {
                    moved("302 Found", &format!("/hop/{}", n + 1))
                } else {
                    text("User-agent: *\nDisallow: /private\n")
                }
            }
            "/" => html(r#"<a href="/private/page">p</a>"#),
            _ => html("<title>page</title>"),
        };
        let (stored, summary) = common::crawl_raw("loop.test", respond, 2).await;
        assert!(
            stored.contains("http://loop.test/"),
            "hops {hops}: {stored:?}"
        );
        assert_eq!(
            stored.contains("http://loop.test/private/page"),
            !obeyed,
            "hops {hops}: {stored:?} {summary:?}"
        );
    }
}
