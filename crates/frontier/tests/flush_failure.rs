//! A memtable flush that fails (a full disk: the new table cannot be
//! written) stops fjall's flush worker and poisons the database; the sealed
//! memtable then never goes. Waiting for it (at close, and when the
//! discovery log is moved) used fjall's `rotate_memtable_and_wait`, which
//! polls forever: a crawl whose disk filled hung holding the table lock
//! (found by crates/crawl/bench/full_soak.sh). The wait now returns the
//! database's error.
//!
//! The flush is made to fail without filling a disk (which needs root to
//! mount a small file system): the keyspaces' `tables` directories are
//! removed under the open store, so creating the table file fails.

use std::sync::mpsc;
use std::time::Duration;

use mgz_frontier::{Durability, Frontier, FrontierOptions, UrlItem};

#[test]
fn close_returns_an_error_when_a_flush_fails_instead_of_waiting_forever() {
    let dir = tempfile::tempdir().unwrap();
    let opts = FrontierOptions {
        durability: Durability::OsBuffer,
        ..FrontierOptions::default()
    };
    let f = Frontier::open(dir.path(), opts).unwrap();
    let items: Vec<UrlItem> = (0..500)
        .map(|i| UrlItem::new(format!("http://h{}.example/p/{i}", i % 13)))
        .collect();
    f.put_discovered(&items).unwrap();
    let mut removed = 0;
    for ks in std::fs::read_dir(dir.path().join("store/keyspaces")).unwrap() {
        let tables = ks.unwrap().path().join("tables");
        if tables.is_dir() {
            std::fs::remove_dir_all(&tables).unwrap();
            removed += 1;
        }
    }
    assert!(
        removed > 0,
        "the store has keyspaces with table directories"
    );
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f.close().map_err(|e| e.to_string()));
    });
    let closed = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("close returns (it waited forever for a flush that had failed)");
    let err = closed.expect_err("a close whose flush failed is an error");
    assert!(
        err.contains("the store refused writes"),
        "says the store failed: {err}"
    );
}
