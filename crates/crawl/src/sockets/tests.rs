use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::*;

#[test]
fn an_unknown_limit_changes_nothing() {
    let p = plan(None, 128);
    assert_eq!(
        p,
        FdPlan {
            concurrency: 128,
            store_files: 0,
            fd_ceiling: u64::MAX
        }
    );
    assert_eq!(plan(Some(u64::MAX), 0).concurrency, 1);
}

#[test]
fn the_limit_is_shared_between_store_requests_and_idle_connections() {
    // A roomy limit: fjall's own 900 files, the rest mostly for sockets.
    let p = plan(Some(20_000), 128);
    assert_eq!((p.concurrency, p.store_files), (128, 900));
    assert_eq!(p.fd_ceiling, 20_000 - 900 - OTHER_FILES - 128);
    // The common soft limit: a quarter for the store.
    let p = plan(Some(1024), 128);
    assert_eq!((p.concurrency, p.store_files), (128, 256));
    assert_eq!(p.fd_ceiling, 1024 - 256 - OTHER_FILES - 128);
    // A tight one lowers the concurrency to half of what is left.
    let p = plan(Some(256), 128);
    assert_eq!((p.concurrency, p.store_files), (32, 64));
    assert_eq!(p.fd_ceiling, 32);
    // Absurdly tight: one request at a time, nothing kept.
    let p = plan(Some(10), 128);
    assert_eq!((p.concurrency, p.store_files, p.fd_ceiling), (1, 16, 0));
}

/// A cap over a descriptor count the test sets (and a count of its
/// readings), read again at every request past the cap.
fn fake(max_sockets: usize, ceiling: u64) -> (SocketCap, Arc<AtomicU64>, Arc<AtomicU64>) {
    fake_every(max_sockets, ceiling, Duration::ZERO)
}

/// [`fake`], read again at most every `resample`.
fn fake_every(
    max_sockets: usize,
    ceiling: u64,
    resample: Duration,
) -> (SocketCap, Arc<AtomicU64>, Arc<AtomicU64>) {
    let (open, reads) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (o, r) = (open.clone(), reads.clone());
    let count: FdCounter = Box::new(move || {
        r.fetch_add(1, Ordering::SeqCst);
        Some(o.load(Ordering::SeqCst))
    });
    let cap = SocketCap::counting(max_sockets, ceiling, count, resample);
    (cap, open, reads)
}

#[test]
fn connections_are_kept_until_the_sockets_opened_reach_the_cap() {
    let (cap, open, _) = fake(3, u64::MAX);
    open.store(40, Ordering::SeqCst); // stores and the runtime: the base
    for _ in 0..3 {
        assert!(cap.keep_alive());
        cap.connecting();
        open.fetch_add(1, Ordering::SeqCst);
    }
    // Three sockets opened since the first request: the cap.
    assert!(!cap.keep_alive());
    assert_eq!(cap.closed(), 1);
    // Two of them closed (the pool's idle timeout): room again, seen on
    // reading the descriptors again.
    open.fetch_sub(2, Ordering::SeqCst);
    assert!(cap.keep_alive());
    assert_eq!((cap.connects(), cap.closed()), (3, 1));
}

#[test]
fn connects_not_yet_seen_in_a_reading_count() {
    // Read once an hour at most: only the connects move the estimate.
    let (cap, open, reads) = fake_every(2, u64::MAX, Duration::from_secs(3600));
    open.store(10, Ordering::SeqCst);
    assert!(cap.keep_alive());
    assert_eq!(reads.load(Ordering::SeqCst), 1);
    cap.connecting();
    assert!(cap.keep_alive());
    cap.connecting();
    // The descriptors would say there is room (nothing opened yet), but
    // the reading is fresh: the connects counted since decide.
    assert!(!cap.keep_alive());
    assert!(!cap.keep_alive());
    assert_eq!(reads.load(Ordering::SeqCst), 1, "read at most once an hour");
    assert_eq!(cap.closed(), 2);
}

#[test]
fn the_descriptor_ceiling_bounds_all_uses_together() {
    // No socket cap: only the ceiling on every descriptor open.
    let (cap, open, _) = fake(0, 50);
    open.store(45, Ordering::SeqCst);
    assert!(cap.keep_alive());
    for _ in 0..5 {
        cap.connecting();
        open.fetch_add(1, Ordering::SeqCst);
    }
    assert!(!cap.keep_alive(), "50 open: the ceiling");
    // One closed, or one of the store's files: under again.
    open.fetch_sub(1, Ordering::SeqCst);
    assert!(cap.keep_alive());
}

#[test]
fn without_a_descriptor_count_every_connection_is_kept() {
    let cap = SocketCap::counting(1, 1, Box::new(|| None), Duration::ZERO);
    for _ in 0..5 {
        cap.connecting();
        assert!(cap.keep_alive());
    }
    assert_eq!(cap.closed(), 0);
    // No cap at all: the counter is never read.
    let (cap, _, reads) = fake(0, u64::MAX);
    assert!(cap.keep_alive());
    assert_eq!(reads.load(Ordering::SeqCst), 0);
}

#[test]
fn a_closed_request_gives_its_connection_back_at_its_end() {
    // Read once an hour at most: only connects and ended closes move the
    // estimate.
    let (cap, open, _) = fake_every(2, u64::MAX, Duration::from_secs(3600));
    open.store(10, Ordering::SeqCst);
    assert!(cap.admit().is_none(), "the first request: the base, 10");
    cap.connecting();
    cap.connecting();
    // Two sockets opened: the cap. A request on a new connection of its
    // own is closed at its end: no change.
    let closing = cap.admit().expect("at the cap");
    cap.connecting();
    drop(closing);
    // One that takes a pooled connection and closes it: one fewer.
    let closing = cap.admit().expect("still at the cap");
    assert!(cap.admit().is_some(), "not before it has ended");
    drop(closing);
    assert!(cap.admit().is_none(), "one socket under the cap");
    assert_eq!((cap.connects(), cap.closed()), (3, 3));
}
