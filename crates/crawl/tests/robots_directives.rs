//! Page-level robots directives end to end: meta robots and `X-Robots-Tag`
//! (one header or several, whose directives add up) stop the links of a
//! `nofollow` page from being followed and keep a `noindex` page's text out
//! of the index, while `noindex` alone still lets its links be followed.

mod common;

fn page(meta: &str, link: &str) -> Vec<u8> {
    format!("<title>t</title>{meta}<p>words here</p><a href=\"/{link}\">x</a>").into_bytes()
}

fn respond(path: &str) -> (&'static str, String, Vec<u8>) {
    let html = "text/html".to_string();
    let with = |headers: &str| format!("text/html{headers}");
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
              <a href=/header-two>4</a><a href=/header-noindex>5</a>"
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
        "/header-one" => (
            "200 OK",
            with("\r\nX-Robots-Tag: noindex, nofollow"),
            page("", "after-header-one"),
        ),
        // Two headers: the second one's nofollow counts too.
        "/header-two" => (
            "200 OK",
            with("\r\nX-Robots-Tag: noarchive\r\nX-Robots-Tag: nofollow"),
            page("", "after-header-two"),
        ),
        "/header-noindex" => (
            "200 OK",
            with("\r\nX-Robots-Tag: noindex"),
            page("", "after-header-noindex"),
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
    ] {
        assert!(has(p), "{p} not stored: {stored:?}");
    }
    // nofollow: the page's links are not followed.
    for p in [
        "after-meta-nofollow",
        "after-header-one",
        "after-header-two",
    ] {
        assert!(!has(p), "{p} was fetched through a nofollow page");
    }
    // noindex alone: the links are followed.
    assert!(
        has("after-meta-noindex") && has("after-header-noindex"),
        "{stored:?}"
    );
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
    for p in ["meta-nofollow", "header-two"] {
        assert_eq!(noindexed(p).0.as_deref(), Some("words here x"), "{p}");
    }
}
