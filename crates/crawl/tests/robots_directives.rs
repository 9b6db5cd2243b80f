//! Page-level robots directives end to end: meta robots and `X-Robots-Tag`
//! (one header or several, whose directives add up) stop the links of a
//! `nofollow` page from being followed and keep a `noindex` page's text out
//! of the index, while `noindex` alone still lets its links be followed.
//! A header addressed to another crawler (`googlebot: nofollow`) does not
//! apply; one addressed to ours (`mgz:`, the default agent's token) does.

mod common;

fn page(meta: &str, link: &str) -> Vec<u8> {
    format!("<title>t</title>{meta}<p>words here</p><a href=\"/{link}\">x</a>").into_bytes()
}

/// A page sent with `headers` (lines joined by `\r\n`) linking to `link`.
fn headed(headers: &str, link: &str) -> (&'static str, String, Vec<u8>) {
    ("200 OK", format!("text/html\r\n{headers}"), page("", link))
}

fn respond(path: &str) -> (&'static str, String, Vec<u8>) {
    let html = "text/html".to_string();
    match path {
        "/robots.txt" => (
            "200 OK",
            "text/plain".into(),
            b"User-agent: *\nAllow: /\n".to_vec(),
        ),
        "/" => (
            "200 OK",
            html,
            b"<a href=/meta-nofollow>1</a><a href=/meta-noindex>2</a><a href=/header-one>3</a>\
              <a href=/header-two>4</a><a href=/header-noindex>5</a>\
              <a href=/header-other-bot>6</a><a href=/header-our-bot>7</a>"
                .to_vec(),
        ),
        "/meta-nofollow" => (
            "200 OK",
            html,
            page("<meta name=robots content=nofollow>", "after-meta-nofollow"),
        ),
        "/meta-noindex" => (
            "200 OK",
            html,
            page("<meta name=ROBOTS content=NoIndex>", "after-meta-noindex"),
        ),
        "/header-one" => headed("X-Robots-Tag: noindex, nofollow", "after-header-one"),
        // Two headers: the second one's nofollow counts too.
        "/header-two" => headed(
            "X-Robots-Tag: noarchive\r\nX-Robots-Tag: nofollow",
            "after-header-two",
        ),
        "/header-noindex" => headed("X-Robots-Tag: noindex", "after-header-noindex"),
        "/header-other-bot" => headed(
            "X-Robots-Tag: googlebot: noindex, nofollow",
            "after-header-other-bot",
        ),
        "/header-our-bot" => headed(
            "X-Robots-Tag: otherbot: noindex\r\nX-Robots-Tag: mgz: nofollow",
            "after-header-our-bot",
        ),
        _ => (
            "200 OK",
            "text/html".into(),
            b"<title>leaf</title>".to_vec(),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meta_robots_and_x_robots_tag_are_honoured() {
    let (dir, mut cfg) = common::raw_host("bots.test", respond).await;
    cfg.max_depth = 3;
    let db = dir.path().join("pages.db");
    common::run(cfg).await;
    let stored = common::stored_pages(&db);
    let has = |p: &str| stored.contains(&format!("http://bots.test/{p}"));
    for p in [
        "meta-nofollow",
        "meta-noindex",
        "header-one",
        "header-two",
        "header-noindex",
        "header-other-bot",
        "header-our-bot",
    ] {
        assert!(has(p), "{p} not stored: {stored:?}");
    }
    // nofollow: the page's links are not followed.
    for p in [
        "after-meta-nofollow",
        "after-header-one",
        "after-header-two",
        "after-header-our-bot",
    ] {
        assert!(!has(p), "{p} was fetched through a nofollow page");
    }
    // noindex alone, or directives for another crawler: the links are followed.
    for p in [
        "after-meta-noindex",
        "after-header-noindex",
        "after-header-other-bot",
    ] {
        assert!(has(p), "{p} not followed: {stored:?}");
    }
    // noindex: no text for the index, and the row says why.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let noindexed = |p: &str| -> (Option<String>, Option<String>) {
        conn.query_row(
            "SELECT text, error FROM pages WHERE url = ?1",
            [format!("http://bots.test/{p}")],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    for p in ["meta-noindex", "header-one", "header-noindex"] {
        assert_eq!(noindexed(p), (None, Some("noindex".into())), "{p}");
    }
    for p in [
        "meta-nofollow",
        "header-two",
        "header-other-bot",
        "header-our-bot",
    ] {
        assert_eq!(noindexed(p).0.as_deref(), Some("words here x"), "{p}");
    }
}

/// With another user agent, `<meta name=TOKEN>` for its robots token
/// applies and the default token's (`mgz`) no longer does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meta_robots_follow_the_configured_agent() {
    let (dir, mut cfg) = common::raw_host("agent.test", |path| {
        let body = match path {
            "/" => "<a href=/mine>1</a><a href=/default>2</a>",
            "/mine" => "<meta name=MyBot content=nofollow><a href=/after-mine>x</a>",
            "/default" => "<meta name=mgz content=nofollow><a href=/after-default>x</a>",
            _ => "<title>leaf</title>",
        };
        ("200 OK", "text/html".into(), body.as_bytes().to_vec())
    })
    .await;
    cfg.fetch.user_agent = "MyBot/1.0 (+https://example.invalid/bot)".into();
    cfg.max_depth = 3;
    let summary = common::run(cfg).await;
    let stored = common::stored_pages(&dir.path().join("pages.db"));
    common::assert_stored(&stored, "agent.test", &["mine", "after-default"], &summary);
    assert!(
        !stored.contains("http://agent.test/after-mine"),
        "{stored:?}"
    );
}
