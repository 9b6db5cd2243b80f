//! A small HTTP/1.1 load generator for measuring the sim (and a baseline
//! server) on loopback: `C` keep-alive connections, each cycling through a
//! URL list from its own offset, for `S` seconds.
//!
//! usage: loadgen ADDR URL_FILE CONNECTIONS SECONDS
//! (each URL's host goes in the Host header; every request goes to ADDR)

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

/// (Host header, path and query) per URL.
type Targets = Arc<Vec<(String, String)>>;

fn targets(path: &str) -> Targets {
    let text = std::fs::read_to_string(path).expect("readable URL file");
    let list = text
        .lines()
        .filter_map(|l| {
            let rest = l.trim().split_once("://")?.1;
            let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            Some((
                host.to_string(),
                if path.is_empty() {
                    "/".to_string()
                } else {
                    path.to_string()
                },
            ))
        })
        .collect::<Vec<_>>();
    assert!(!list.is_empty(), "no URLs in {path}");
    Arc::new(list)
}

/// One connection's loop: returns (answers, body bytes, non-2xx answers).
async fn worker(addr: SocketAddr, list: Targets, start: usize, until: Instant) -> (u64, u64, u64) {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let (mut n, mut bytes, mut bad) = (0u64, 0u64, 0u64);
    let mut i = start;
    while Instant::now() < until {
        let (host, path) = &list[i % list.len()];
        i += 1;
        let req = hyper::Request::get(path.as_str())
            .header("host", host.as_str())
            .body(Empty::<Bytes>::new())
            .expect("request");
        let Ok(resp) = send.send_request(req).await else {
            break;
        };
        bad += u64::from(!resp.status().is_success());
        let body = resp
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes().len())
            .unwrap_or(0);
        n += 1;
        bytes += body as u64;
    }
    (n, bytes, bad)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, file, conns, secs] = &args[..] else {
        eprintln!("usage: loadgen ADDR URL_FILE CONNECTIONS SECONDS");
        std::process::exit(2);
    };
    let addr: SocketAddr = addr.parse().expect("ADDR is ip:port");
    let list = targets(file);
    let conns: usize = conns.parse().expect("CONNECTIONS");
    let secs: f64 = secs.parse().expect("SECONDS");
    let began = Instant::now();
    let until = began + Duration::from_secs_f64(secs);
    let step = list.len() / conns.max(1);
    let tasks: Vec<_> = (0..conns)
        .map(|c| tokio::spawn(worker(addr, list.clone(), c * step, until)))
        .collect();
    let (mut n, mut bytes, mut bad) = (0, 0, 0);
    for t in tasks {
        let (a, b, c) = t.await.expect("worker");
        (n, bytes, bad) = (n + a, bytes + b, bad + c);
    }
    let el = began.elapsed().as_secs_f64();
    println!(
        "{n} requests in {el:.1} s: {:.0} req/s, {:.1} MB/s, mean body {:.0} B, non-2xx {bad}",
        n as f64 / el,
        bytes as f64 / el / 1e6,
        bytes as f64 / n.max(1) as f64
    );
}
