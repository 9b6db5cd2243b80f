//! Hostile pages: a gzip bomb that inflates to 1 GiB (generated on the fly),
//! a huge attribute, malformed HTML and bogus charsets. The crawl must not
//! panic, must cut the bomb at the body cap, and must stay small in memory.

mod common;

use std::sync::Arc;

use common::gzip_bomb;

fn page(path: &str, bomb: &Arc<Vec<u8>>) -> (String, Vec<u8>) {
    let html = |body: String| ("text/html".to_string(), body.into_bytes());
    match path {
        "/" => html(
            "<a href=/bomb>b</a><a href=/attr>a</a><a href=/charset>c</a><a href=/junk>j</a>"
                .into(),
        ),
        "/bomb" => ("text/html\r\nContent-Encoding: gzip".into(), bomb.to_vec()),
        "/attr" => html(format!(
            "<a href=\"{}\">x</a><a title='{}' href=/ok>y</a>",
            "a".repeat(4 << 20),
            "t".repeat(4 << 20)
        )),
        "/charset" => (
            "text/html; charset=x-no-such-charset".into(),
            b"<title>\xff\xfe\x80 caf\xe9</title><meta charset=\"utf-16\">\xc3\x28".to_vec(),
        ),
        "/junk" => html("<<a href=/ok <div </p></html><a href='/ok2>unterminated".repeat(2000)),
        _ => html("<title>ok</title>fine".into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_pages_do_not_panic_or_exhaust_memory() {
    let bomb = Arc::new(gzip_bomb(1 << 30));
    assert!(bomb.len() < 8 << 20, "bomb is {} bytes", bomb.len());
    let (dir, cfg) = common::raw_host("hostile.test", move |path| {
        let status = if path == "/robots.txt" {
            "404 Not Found"
        } else {
            "200 OK"
        };
        let (ct, body) = page(path, &bomb);
        (status, ct, body)
    })
    .await;
    let rss_before = mgz_crawl::stats::rss_bytes();
    let summary = common::run(cfg).await;
    let rows = mgz_crawl::store::stored_urls(&dir.path().join("pages.db")).unwrap();
    let urls: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    for p in ["/", "/bomb", "/attr", "/charset", "/junk", "/ok"] {
        assert!(
            urls.contains(&format!("http://hostile.test{p}").as_str()),
            "{p} not stored: {urls:?} {summary:?}"
        );
    }
    let conn = rusqlite::Connection::open(dir.path().join("pages.db")).unwrap();
    let (bytes, error): (i64, Option<String>) = conn
        .query_row(
            "SELECT bytes, error FROM pages WHERE url = 'http://hostile.test/bomb'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(bytes, 10 * 1024 * 1024, "the bomb is cut at the body cap");
    assert!(error.unwrap_or_default().contains("truncated"));
    // Peak memory grows by a few body caps, not by the bomb's 1 GiB.
    let peak = mgz_crawl::stats::peak_rss_bytes();
    assert!(
        peak < rss_before + (300 << 20),
        "peak RSS {peak} (before {rss_before})"
    );
}
