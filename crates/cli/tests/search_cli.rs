//! `mgz search` prints BM25-ranked hits with URL, title and snippet.

use std::process::Command;

use mgz_crawl::store::{PageRow, Store};

fn row(url: &str, title: &str, text: &str) -> PageRow {
    PageRow {
        url: url.into(),
        final_url: url.into(),
        status: 200,
        title: Some(title.into()),
        text: Some(text.into()),
        ..PageRow::default()
    }
}

#[test]
fn search_ranks_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = Store::open(&db).unwrap();
        s.store(row(
            "http://a.sim/1",
            "Gardens",
            "a river garden by the river, river views",
        ))
        .await
        .unwrap();
        s.store(row(
            "http://a.sim/2",
            "Music",
            "music library with one river song",
        ))
        .await
        .unwrap();
        s.store(row("http://a.sim/3", "Other", "nothing relevant"))
            .await
            .unwrap();
    });
    let out = Command::new(env!("CARGO_BIN_EXE_mgz"))
        .args(["search", "river", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.find("http://a.sim/1").expect("hit 1");
    let second = text.find("http://a.sim/2").expect("hit 2");
    assert!(first < second, "BM25 order: {text}");
    assert!(!text.contains("http://a.sim/3"));
    assert!(text.contains("[river]"));
    let none = Command::new(env!("CARGO_BIN_EXE_mgz"))
        .args(["search", "zzz", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(1));
}
