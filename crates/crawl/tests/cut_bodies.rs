//! Connections that close part way through a response: a body shorter than
//! its `Content-Length`, a chunked body without its last chunk. The partial
//! body is never stored as the page: the fetch is retried, the page stored
//! whole when a retry gets it whole, recorded as a `body` error when every
//! try is cut. (A soak through a proxy cutting 90 % of the connections of a
//! sim crawl stored 723 pages, each byte-identical to the sim's:
//! docs/BENCHMARKS.md.)

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};

use common::*;

const BODY: usize = 5000;

fn full_body() -> Vec<u8> {
    let mut b = b"<html><title>whole</title><p>".to_vec();
    b.resize(BODY, b'x');
    b
}

/// The raw bytes sent for `path` on its `n`th request (from 1).
fn response(path: &str, n: u32) -> Vec<u8> {
    let head = |extra: &str| {
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n{extra}\r\n")
            .into_bytes()
    };
    let body = full_body();
    match (path, n) {
        ("/robots.txt", _) => {
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
        }
        ("/", _) => {
            let page = br#"<a href="/short">s</a><a href="/chunked">c</a><a href="/once">o</a>"#;
            [
                head(&format!("Content-Length: {}\r\n", page.len())),
                page.to_vec(),
            ]
            .concat()
        }
        // Declares the whole body, sends a fifth of it.
        ("/short", _) | ("/once", 1) => [
            head(&format!("Content-Length: {BODY}\r\n")),
            body[..BODY / 5].to_vec(),
        ]
        .concat(),
        // One chunk of a fifth, then no terminating chunk.
        ("/chunked", _) => [
            head("Transfer-Encoding: chunked\r\n"),
            format!("{:x}\r\n", BODY / 5).into_bytes(),
            body[..BODY / 5].to_vec(),
            b"\r\n".to_vec(),
        ]
        .concat(),
        ("/once", _) => [head(&format!("Content-Length: {BODY}\r\n")), body].concat(),
        _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_responses_are_retried_and_never_stored_partial() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let counted = hits.clone();
    tokio::spawn(serve_bytes(listener, move |path| {
        let mut h = counted.lock().unwrap();
        let n = h.entry(path.to_string()).or_default();
        *n += 1;
        response(path, *n)
    }));
    let (dir, mut cfg) = one_host_config("cut.test", addr);
    cfg.max_depth = 1;
    cfg.backoff = Duration::from_millis(10);
    let summary = run(cfg).await;

    let conn = rusqlite::Connection::open(dir.path().join("pages.db")).unwrap();
    let row = |path: &str| -> (u16, Option<String>, u64, Option<String>) {
        conn.query_row(
            "SELECT status, content_hash, bytes, error FROM pages WHERE url = ?1",
            [format!("http://cut.test{path}")],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap()
    };
    for path in ["/short", "/chunked"] {
        let (status, hash, bytes, error) = row(path);
        assert_eq!((status, hash, bytes), (0, None, 0), "{path}: {error:?}");
        assert!(error.is_some(), "{path} has no error");
    }
    let whole = format!("{:x}", Sha256::digest(full_body()));
    assert_eq!(row("/once"), (200, Some(whole), BODY as u64, None));
    let hits = hits.lock().unwrap().clone();
    let tries = 1 + mgz_crawl::MAX_RETRIES;
    assert_eq!(hits.get("/short"), Some(&tries), "{hits:?}");
    assert_eq!(hits.get("/chunked"), Some(&tries), "{hits:?}");
    assert_eq!(hits.get("/once"), Some(&2), "{hits:?}");
    assert_eq!(summary.errors.get("body"), Some(&2), "{summary:?}");
}
