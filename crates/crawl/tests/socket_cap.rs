//! The fetcher's bound on open sockets (`--max-connections`,
//! `mgz_crawl::sockets`): without it, every host fetched leaves an idle
//! connection open until its timeout; with it, connections past the cap
//! are closed after their response. Counted where the sockets are seen
//! for certain, on the server. One test in this file: the cap counts the
//! process's descriptors, which other tests running beside it would move.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mgz_crawl::fetch::{FetchConfig, Fetcher};
use mgz_crawl::net::ResolveRule;
use tokio::io::AsyncWriteExt;

/// Connections the server has open now, the most it had at once, and all
/// it accepted.
#[derive(Default)]
struct Conns {
    open: AtomicUsize,
    most: AtomicUsize,
    accepted: AtomicUsize,
}

/// Answers every request with a small page and keeps the connection until
/// the client closes it, or, as HTTP/1.1 servers do, closes it after the
/// answer to a request that asked for `Connection: close`. Such a
/// connection stops counting as open before its answer goes out: counted
/// after, the client could have read the answer and the server accepted
/// the next request's connection first.
async fn serve(listener: tokio::net::TcpListener, conns: Arc<Conns>) {
    while let Ok((mut sock, _)) = listener.accept().await {
        conns.accepted.fetch_add(1, Ordering::SeqCst);
        let now = conns.open.fetch_add(1, Ordering::SeqCst) + 1;
        conns.most.fetch_max(now, Ordering::SeqCst);
        let conns = conns.clone();
        tokio::spawn(async move {
            let mut counted = true;
            while let Some(head) = common::read_head(&mut sock).await {
                let close = (head.to_ascii_lowercase()).contains("\r\nconnection: close\r\n");
                if close {
                    conns.open.fetch_sub(1, Ordering::SeqCst);
                    counted = false;
                }
                let reply =
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nok";
                if sock.write_all(reply.as_bytes()).await.is_err() || close {
                    break;
                }
            }
            drop(sock);
            if counted {
                conns.open.fetch_sub(1, Ordering::SeqCst);
            }
        });
    }
}

fn fetcher(addr: std::net::SocketAddr, max_connections: usize) -> Fetcher {
    let cfg = FetchConfig {
        allow_private: true,
        resolve: vec![ResolveRule::parse(&format!("*.cap.test={addr}")).unwrap()],
        idle_timeout: Duration::from_secs(60),
        idle_per_host: 4,
        max_connections,
        ..FetchConfig::default()
    };
    Fetcher::new(&cfg).unwrap()
}

/// Waits (at most 10 s) until the server has `n` connections open.
async fn settle(conns: &Conns, ok: impl Fn(usize) -> bool) -> usize {
    let start = Instant::now();
    loop {
        let open = conns.open.load(Ordering::SeqCst);
        if ok(open) || start.elapsed() > Duration::from_secs(10) {
            return open;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_stay_under_the_cap() {
    if mgz_crawl::sockets::open_fds().is_none() {
        eprintln!("skipped: /proc/self/fd cannot be read, so the cap cannot see closes");
        return;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let conns = Arc::new(Conns::default());
    tokio::spawn(serve(listener, conns.clone()));
    const HOSTS: usize = 24;

    // No cap: one idle connection left per host.
    let f = fetcher(addr, 0);
    for i in 0..HOSTS {
        let page = f.get(&format!("http://h{i}.cap.test/")).await.unwrap();
        assert_eq!(page.status, 200);
    }
    let open = settle(&conns, |n| n == HOSTS).await;
    assert_eq!(open, HOSTS, "uncapped, every host's connection stays idle");
    assert_eq!(f.sockets().closed(), 0);
    drop(f);
    assert_eq!(
        settle(&conns, |n| n == 0).await,
        0,
        "a dropped client closes its pool"
    );

    // A cap of 6: connections are kept until six were opened, and never
    // more are open than the cap and the one request in flight. (The
    // server's side of each is a descriptor of this process too: the
    // cap counts it when it next reads them, so it errs towards fewer.)
    const CAP: usize = 6;
    conns.most.store(0, Ordering::SeqCst);
    let f = fetcher(addr, CAP);
    for i in 0..HOSTS {
        let page = f.get(&format!("http://h{i}.cap.test/")).await.unwrap();
        assert_eq!(page.status, 200);
    }
    let open = settle(&conns, |n| n <= CAP).await;
    let most = conns.most.load(Ordering::SeqCst);
    eprintln!(
        "capped: {open} open after, {most} at most, {} requests closed, {} connects",
        f.sockets().closed(),
        f.sockets().connects()
    );
    assert!(
        most <= CAP + 1,
        "{most} connections open at once over a cap of {CAP}"
    );
    assert!((1..=CAP).contains(&open), "{open} idle connections kept");
    assert!(f.sockets().closed() >= (HOSTS - CAP) as u64);
    drop(f);
    settle(&conns, |n| n == 0).await;

    // Under the cap a host's connection is still reused.
    let before = conns.accepted.load(Ordering::SeqCst);
    let f = fetcher(addr, CAP);
    for _ in 0..10 {
        f.get("http://same.cap.test/").await.unwrap();
        // hyper puts a connection back in its pool from its own task once
        // the response has ended: a request sent at once may find the
        // pool empty and connect again. A crawl's next request to a host
        // comes a delay later.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        conns.accepted.load(Ordering::SeqCst) - before,
        1,
        "one connection reused"
    );
    assert_eq!(f.sockets().closed(), 0);
}
