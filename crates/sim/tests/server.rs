//! The HTTP server: virtual hosts by `Host`, the request log under
//! concurrency, the control endpoint, and bad requests.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use mgz_sim::{Sim, SimConfig, SimServer};

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn server(cfg: SimConfig) -> SimServer {
    SimServer::start_blocking(cfg, loopback(), Some(loopback())).expect("server starts")
}

/// Sends `raw` and returns (status, head, body); the connection is closed by us after one answer.
fn exchange(addr: SocketAddr, raw: &[u8]) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(raw).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(buf.len(), |i| i + 4);
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head, buf[split..].to_vec())
}

fn get(addr: SocketAddr, host: &str, target: &str) -> (u16, String, Vec<u8>) {
    let req = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    exchange(addr, req.as_bytes())
}

#[test]
fn serves_virtual_hosts_with_the_same_bytes_as_the_model() {
    let cfg = SimConfig::small(5, 20, 400);
    let srv = server(cfg.clone());
    let sim = Sim::new(&cfg).unwrap();
    for (host, target) in [
        ("www.site-0.sim", "/"),
        ("WWW.SITE-0.SIM:80", "/"),
        ("blog.site-2.sim", "/robots.txt"),
        ("shop-3.sim", "/files/report-0.pdf"),
    ] {
        let (status, _, body) = get(srv.addr(), host, target);
        let want = sim.respond(host, target);
        assert_eq!(status, want.rendered.status, "{host}{target}");
        assert_eq!(body, want.rendered.body, "{host}{target}");
    }
    let (status, head, body) = exchange(
        srv.addr(),
        b"HEAD / HTTP/1.1\r\nHost: www.site-0.sim\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(body.is_empty());
}

#[test]
fn request_log_is_exact_under_concurrency() {
    let srv = server(SimConfig::small(5, 20, 400));
    let addr = srv.addr();
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            std::thread::spawn(move || {
                (0..40u32)
                    .map(|k| {
                        let host = format!("www.site-{}.sim", (t * 5) % 20);
                        let target = format!("/status-probe/{t}/{k}");
                        let (status, _, _) = get(addr, &host, &target);
                        (host, target, status)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut sent: Vec<(String, String, u16)> = threads
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let mut logged: Vec<(String, String, u16)> = srv
        .log()
        .into_iter()
        .map(|r| (r.host, r.path, r.status))
        .collect();
    sent.sort();
    logged.sort();
    assert_eq!(sent.len(), 320);
    assert_eq!(logged, sent);
    assert_eq!(srv.requests(), 320);
    let per_conn: Vec<u64> = srv
        .log()
        .iter()
        .filter(|r| r.path.starts_with("/status-probe/3/"))
        .map(|r| r.time_us)
        .collect();
    assert!(
        per_conn.windows(2).all(|w| w[0] <= w[1]),
        "one client's requests logged out of order"
    );
    let (status, _, body) = get(
        srv.control_addr().unwrap(),
        "control",
        "/_sim/log?since=300",
    );
    assert_eq!(status, 200);
    let lines: Vec<mgz_sim::RequestRecord> = String::from_utf8(body)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 20);
    assert_eq!(lines, srv.log()[300..]);
}

#[test]
fn slow_and_stalling_answers_are_bounded_and_logged() {
    let mut cfg = SimConfig::small(5, 20, 400);
    cfg.robots_timeout_ms = 300;
    let srv = server(cfg);
    let start = std::time::Instant::now();
    let (status, head, _) = get(srv.addr(), "www.site-6.sim", "/robots.txt");
    assert_eq!(status, 0, "a stalled robots.txt gets no answer: {head}");
    assert!(start.elapsed() >= Duration::from_millis(300));
    let (status, head, _) = get(srv.addr(), "www.site-1.sim", "/status/503");
    assert_eq!(status, 503);
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 1"),
        "{head}"
    );
    let log = srv.log();
    assert_eq!((log[0].status, log[1].status), (0, 503));
}

#[test]
fn bad_requests_get_400_or_404_and_the_server_survives() {
    let srv = server(SimConfig::small(5, 20, 400));
    let addr = srv.addr();
    let big = "x".repeat(10 * 1024);
    let long_path = format!("/{}", "a/".repeat(5_000));
    let cases: Vec<(Vec<u8>, u16)> = vec![
        (b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n".to_vec(), 400),
        (b"GET / HTTP/1.0\r\n\r\n".to_vec(), 400),
        (b"GET / HTTP/1.1\r\nHost: nowhere.example\r\nConnection: close\r\n\r\n".to_vec(), 404),
        (b"GET / HTTP/1.1\r\nHost: www.site-999.sim\r\nConnection: close\r\n\r\n".to_vec(), 404),
        (b"GET / HTTP/1.1\r\nHost: bad host\r\nConnection: close\r\n\r\n".to_vec(), 400),
        (b"GET /../../etc/passwd HTTP/1.1\r\nHost: www.site-0.sim\r\nConnection: close\r\n\r\n".to_vec(), 404),
        (b"GET /%00%ff/%3Cscript%3E HTTP/1.1\r\nHost: www.site-0.sim\r\nConnection: close\r\n\r\n".to_vec(), 404),
        (b"GET /<script> HTTP/1.1\r\nHost: www.site-0.sim\r\nConnection: close\r\n\r\n".to_vec(), 400),
        (b"GET * HTTP/1.1\r\nHost: www.site-0.sim\r\nConnection: close\r\n\r\n".to_vec(), 404),
        (format!("GET {long_path} HTTP/1.1\r\nHost: www.site-0.sim\r\nConnection: close\r\n\r\n").into_bytes(), 404),
        (format!("GET / HTTP/1.1\r\nHost: www.site-0.sim\r\nX-Big: {big}\r\nConnection: close\r\n\r\n").into_bytes(), 400),
        (b"POST / HTTP/1.1\r\nHost: www.site-0.sim\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(), 405),
        (b"GARBAGE\r\n\r\n".to_vec(), 400),
    ];
    for (raw, want) in cases {
        let (status, head, _) = exchange(addr, &raw);
        assert_eq!(
            status,
            want,
            "{:?} -> {head}",
            String::from_utf8_lossy(&raw[..raw.len().min(60)])
        );
    }
    assert_eq!(
        get(addr, "www.site-0.sim", "/").0,
        200,
        "server still answers"
    );
}
