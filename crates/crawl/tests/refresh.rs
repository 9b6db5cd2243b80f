//! Pages that move their readers on with a refresh: `<meta
//! http-equiv=refresh content="0; url=...">` (common on documentation sites
//! whose pages moved) and the `Refresh` header browsers honour the same way.
//! The target is a link of the page; the crawl used to stop there.

mod common;

fn respond(path: &str) -> (&'static str, String, Vec<u8>) {
    let html = |body: &str| ("200 OK", "text/html".to_string(), body.as_bytes().to_vec());
    match path {
        "/robots.txt" => ("404 Not Found", "text/plain".into(), Vec::new()),
        "/" => html(
            r#"<head><meta http-equiv="refresh" content="0; URL='moved/meta-target.html'"></head>
               <a href="/header-page">header</a>"#,
        ),
        "/header-page" => (
            "200 OK",
            "text/html\r\nRefresh: 3;url=/header-target".into(),
            b"<title>moving</title>".to_vec(),
        ),
        _ => html("<title>leaf</title>"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_targets_are_followed() {
    let (dir, mut cfg) = common::raw_host("refresh.test", respond).await;
    cfg.max_depth = 3;
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    for page in ["moved/meta-target.html", "header-page", "header-target"] {
        let url = format!("http://refresh.test/{page}");
        assert!(stored.contains(&url), "{url} not in {stored:?} {summary:?}");
    }
}
