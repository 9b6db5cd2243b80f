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
    let search = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_mgz"))
            .args(["search", "--db"])
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        (out.status.code(), text, stderr)
    };
    // `--limit 0` shows every hit (it showed none and said "no results").
    let (code, text, _) = search(&["river", "--limit", "0"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("http://a.sim/1") && text.contains("http://a.sim/2"));
    let (code, text, _) = search(&["river", "--limit", "1"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("http://a.sim/1") && !text.contains("http://a.sim/2"));
    // No word to look for is a mistake to name, not "no results".
    for empty in [&[][..], &["  "], &["--", "-*-"]] {
        let (code, text, stderr) = search(empty);
        assert_eq!(code, Some(2), "{empty:?}: {stderr}");
        assert!(text.is_empty(), "{empty:?}: {text}");
        assert!(
            stderr.contains("give words to look for"),
            "{empty:?}: {stderr}"
        );
    }
}

/// A crawl leaves its pages unindexed; `mgz search` indexes them, chunk by
/// chunk. SIGKILLed at several moments while indexing, it loses no chunk
/// and indexes none twice: the next search finds every page exactly once.
#[test]
fn search_killed_while_indexing_resumes_exactly() {
    const N: usize = 12_000;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    drop(Store::open(&db).unwrap()); // the schema, as a crawl creates it
    {
        let mut c = rusqlite::Connection::open(&db).unwrap();
        let tx = c.transaction().unwrap();
        let mut st = tx
            .prepare("INSERT INTO pages(url, final_url, status, title, text) VALUES (?1, ?1, 200, 'T', ?2)")
            .unwrap();
        for i in 0..N {
            let text = format!("heron page{i} {}", "lorem ipsum dolor sit amet ".repeat(8));
            st.execute(rusqlite::params![format!("http://a.sim/{i}"), text])
                .unwrap();
        }
        drop(st);
        tx.commit().unwrap();
    }
    let upto = || -> i64 {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row("SELECT indexed_upto FROM fts_state", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(upto(), 0);
    let mut seen_partial = Vec::new();
    for wait_ms in [40, 80, 120, 200, 300] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mgz"))
            .args(["search", "heron", "--limit", "1", "--db"])
            .arg(&db)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(wait_ms));
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        seen_partial.push(upto());
    }
    eprintln!("indexed_upto after each kill: {seen_partial:?} of {N}");
    let out = Command::new(env!("CARGO_BIN_EXE_mgz"))
        .args(["search", "heron", "--json", "--limit", "100000", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut urls: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["url"].to_string())
        .collect();
    assert_eq!(urls.len(), N, "every page found once");
    urls.sort();
    urls.dedup();
    assert_eq!(urls.len(), N, "no page found twice");
    assert_eq!(upto(), N as i64);
}
