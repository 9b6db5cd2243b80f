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
    let (stored, summary) = common::crawl_raw("refresh.test", respond, 3).await;
    let pages = ["moved/meta-target.html", "header-page", "header-target"];
    common::assert_stored(&stored, "refresh.test", &pages, &summary);
}
