//! The status server over a real socket on 127.0.0.1:0.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mgz_status::{HostStatus, SeenStatus, ServeOptions, StatusReport, StatusSource, Totals, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Fake {
    fetched: AtomicU64,
    reports: AtomicU64,
}

impl StatusSource for Fake {
    fn report(&self) -> StatusReport {
        self.reports.fetch_add(1, Ordering::Relaxed);
        StatusReport {
            totals: Totals {
                fetched: self.fetched.load(Ordering::Relaxed),
                queued: 1234,
                in_flight: 7,
                completed: 900,
                errors: BTreeMap::from([("timeout".to_string(), 3), ("http_5xx".to_string(), 2)]),
                robots_excluded: 11,
                duplicates_avoided: 56_789,
            },
            seen: SeenStatus::new("compact", 10_000, 110_000, 70.0),
            busiest_hosts: vec![HostStatus {
                host: "www.site-1.sim".into(),
                queued: 500,
                in_flight: 1,
                delay_ms: 1000,
                next_eligible_ms: 0,
            }],
            ..Default::default()
        }
    }
    fn fetched_total(&self) -> u64 {
        self.fetched.load(Ordering::Relaxed)
    }
    fn extra_metrics(&self) -> String {
        "mgz_extra 1\n".into()
    }
}

async fn http_get(addr: std::net::SocketAddr, path: &str, auth: Option<&str>) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let auth = auth
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.unwrap();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn fake() -> Arc<Fake> {
    Arc::new(Fake {
        fetched: AtomicU64::new(42),
        reports: AtomicU64::new(0),
    })
}

#[tokio::test]
async fn serves_page_json_and_metrics() {
    let opts = ServeOptions {
        role: "crawl".into(),
        ..Default::default()
    };
    let src = fake();
    let h = serve("127.0.0.1:0".parse().unwrap(), src.clone(), opts)
        .await
        .unwrap();
    let (code, page) = http_get(h.addr(), "/", None).await;
    assert_eq!(code, 200);
    assert!(page.contains("data-field=\"totals.fetched\""));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "no external assets"
    );
    let (code, json) = http_get(h.addr(), "/status.json", None).await;
    assert_eq!(code, 200);
    let r: StatusReport = serde_json::from_str(&json).unwrap();
    assert_eq!(r.role, "crawl");
    assert_eq!(r.totals.fetched, 42);
    assert_eq!(r.totals.errors["timeout"], 3);
    assert_eq!(r.seen.bytes_per_url, 11.0);
    assert!(r.rss_bytes > 0 || !cfg!(target_os = "linux"));
    let before = src.reports.load(Ordering::Relaxed);
    let (code, metrics) = http_get(h.addr(), "/metrics", None).await;
    assert_eq!(code, 200);
    let snapshots = src.reports.load(Ordering::Relaxed) - before;
    assert_eq!(snapshots, 1, "one snapshot per scrape");
    assert!(metrics.contains("mgz_pages_fetched_total 42\n"));
    assert!(metrics.contains("mgz_extra 1\n"));
    assert!(!metrics.contains("site-1"), "no per-host labels");
    h.shutdown().await;
}

#[tokio::test]
async fn token_is_required_everywhere_when_set() {
    let opts = ServeOptions {
        role: "serve".into(),
        token: Some("s3cret".into()),
        ..Default::default()
    };
    let h = serve("127.0.0.1:0".parse().unwrap(), fake(), opts)
        .await
        .unwrap();
    for path in ["/", "/status.json", "/metrics"] {
        assert_eq!(http_get(h.addr(), path, None).await.0, 401, "{path}");
        assert_eq!(
            http_get(h.addr(), path, Some("wrong!")).await.0,
            401,
            "{path}"
        );
        assert_eq!(
            http_get(h.addr(), path, Some("s3cret")).await.0,
            200,
            "{path}"
        );
    }
    assert_eq!(
        http_get(h.addr(), "/status.json?token=s3cret", None)
            .await
            .0,
        200
    );
    assert_eq!(
        http_get(h.addr(), "/status.json?token=s3cre", None).await.0,
        401
    );
    assert_eq!(
        http_get(h.addr(), "/status.json", Some("s3cret!")).await.0,
        401,
        "a longer token with the right prefix"
    );
    h.shutdown().await;
}

#[tokio::test]
async fn refuses_non_loopback_unless_allowed() {
    let err = serve(
        "0.0.0.0:0".parse().unwrap(),
        fake(),
        ServeOptions::default(),
    )
    .await;
    assert!(matches!(
        err,
        Err(mgz_status::StatusError::NotLoopback { .. })
    ));
}

#[tokio::test]
async fn rates_follow_the_counter() {
    let src = fake();
    let h = serve(
        "127.0.0.1:0".parse().unwrap(),
        src.clone(),
        ServeOptions::default(),
    )
    .await
    .unwrap();
    for _ in 0..3 {
        tokio::time::sleep(std::time::Duration::from_millis(1050)).await;
        src.fetched.fetch_add(100, Ordering::Relaxed);
    }
    tokio::time::sleep(std::time::Duration::from_millis(1050)).await;
    let (_, json) = http_get(h.addr(), "/status.json", None).await;
    let r: StatusReport = serde_json::from_str(&json).unwrap();
    assert!(r.rates.pages_per_s_1m > 20.0, "{:?}", r.rates);
    assert!(!r.rates.history.is_empty());
    h.shutdown().await;
}
