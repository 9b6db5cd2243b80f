//! robots.txt is read up to its own cap (500 KiB, RFC 9309's minimum), not
//! the page body cap: a crawl with `--max-body 1K` still obeys a rule that
//! comes after 1 KiB of comments. (It was fetched under the page cap and
//! then cut to 500 KiB, so a small page cap cut the rules short, and a
//! large one read and kept megabytes of a robots.txt that only its first
//! 500 KiB of counts.)

mod common;

#[tokio::test]
async fn a_small_body_cap_does_not_cut_robots_txt() {
    let pad = "# a comment line of a long robots.txt, before its rules\n".repeat(60);
    let robots = format!("User-agent: *\n{pad}Disallow: /private\n");
    assert!(robots.len() > 3 * 1024);
    let (dir, mut cfg) = common::raw_host("cap.test", move |path| match path {
        "/robots.txt" => ("200 OK", "text/plain".into(), robots.clone().into_bytes()),
        "/" => (
            "200 OK",
            "text/html".into(),
            b"<a href=/private/x>p</a><a href=/ok>o</a>".to_vec(),
        ),
        _ => ("200 OK", "text/html".into(), b"<p>a page</p>".to_vec()),
    })
    .await;
    cfg.fetch.max_body = 1024;
    cfg.max_depth = 1;
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    assert!(stored.contains("http://cap.test/ok"), "{stored:?}");
    assert!(
        !stored.contains("http://cap.test/private/x"),
        "the rule past the page cap was not read: {stored:?}"
    );
    assert_eq!(summary.robots_excluded, 1, "{summary:?}");
}
