//! `mgz crawl --status`: the live status page of a real crawl of the
//! synthetic web, checked through `/status.json` and in headless Chromium.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mgz_status::browser::{chromium, shown_fields};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn free_port() -> std::net::SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

async fn get(addr: std::net::SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.ok()?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    let code = text.get(9..12)?.parse().ok()?;
    Some((code, text.split_once("\r\n\r\n")?.1.to_string()))
}

async fn status(addr: std::net::SocketAddr, token: &str) -> Value {
    let (code, body) = get(addr, &format!("/status.json?token={token}"))
        .await
        .unwrap();
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn num(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or(f64::NAN)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_json_and_page_follow_a_live_crawl() {
    let dir = tempfile::tempdir().unwrap();
    let (sim, server) = common::small_sim(7, 12, 400).await;
    let mut cfg = common::crawl_config(&sim, &server, dir.path(), 3);
    let addr = free_port();
    cfg.status = Some(addr);
    cfg.status_token = Some("t0ken".into());
    cfg.per_host = 1;
    cfg.concurrency = 4;
    cfg.delay = Duration::from_millis(40);
    let crawl = tokio::spawn(common::run(cfg));

    // Wait until the crawl has fetched something.
    let deadline = Instant::now() + Duration::from_secs(60);
    let before = loop {
        assert!(
            Instant::now() < deadline,
            "status page never showed progress"
        );
        if let Some((200, body)) = get(addr, "/status.json?token=t0ken").await {
            let v: Value = serde_json::from_str(&body).unwrap();
            if num(&v, "totals.fetched") >= 10.0 {
                break v;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        get(addr, "/status.json").await.unwrap().0,
        401,
        "token required"
    );
    assert_eq!(before["role"], "crawl");
    assert_eq!(before["seen"]["backend"], "hash");
    assert!(num(&before, "seen.urls") >= num(&before, "totals.fetched"));
    assert!(num(&before, "seen.hashset_bytes_per_url") > 0.0);
    assert!(num(&before, "rss_bytes") > 0.0);
    assert!(!before["busiest_hosts"].as_array().unwrap().is_empty());
    let (_, metrics) = get(addr, "/metrics?token=t0ken").await.unwrap();
    assert!(metrics.contains("mgz_pages_fetched_total "), "{metrics}");
    assert!(!metrics.contains(".sim"), "no per-host labels");

    match chromium() {
        None => eprintln!("SKIPPED browser half: no Chromium binary (install Debian's `chromium`)"),
        Some(bin) => {
            let url = format!("http://{addr}/?token=t0ken");
            let (dom, shot) =
                tokio::task::spawn_blocking(move || (dump_dom(&bin, &url), screenshot(&bin, &url)))
                    .await
                    .unwrap();
            let after = status(addr, "t0ken").await;
            check_page(&dom, &before, &after);
            assert!(
                std::fs::metadata(&shot)
                    .map(|m| m.len() > 1000)
                    .unwrap_or(false)
            );
            eprintln!("screenshot: {}", shot.display());
        }
    }

    let summary = crawl.await.unwrap();
    assert!(summary.pages_fetched as f64 >= num(&before, "totals.fetched"));
    assert!(
        get(addr, "/").await.is_none(),
        "status server stops with the crawl"
    );
    drop(server);
}

/// Every counter the page shows lies between the JSON read before and after.
fn check_page(dom: &str, before: &Value, after: &Value) {
    let shown = shown_fields(dom);
    for field in [
        "totals.fetched",
        "totals.completed",
        "totals.robots_excluded",
        "totals.duplicates_avoided",
        "seen.urls",
    ] {
        let got: f64 = shown
            .iter()
            .find(|(k, _)| k == field)
            .map_or(f64::NAN, |(_, v)| v.parse().unwrap_or(f64::NAN));
        let (lo, hi) = (num(before, field), num(after, field));
        assert!(
            lo <= got && got <= hi,
            "{field}: page shows {got}, json went {lo}..{hi}"
        );
    }
    let backend = shown
        .iter()
        .find(|(k, _)| k == "seen.backend")
        .map(|(_, v)| v.as_str());
    assert_eq!(backend, Some("hash"));
}

/// Saves a screenshot of the page under `target/tmp/`.
fn screenshot(bin: &Path, url: &str) -> PathBuf {
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("status-page-crawl.png");
    let out = chromium_cmd(bin)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1000,1100")
        .arg(url)
        .output()
        .unwrap();
    assert!(out.status.success(), "screenshot failed: {out:?}");
    shot
}

fn chromium_cmd(bin: &Path) -> std::process::Command {
    let profile = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("chromium-crawl-{}", std::process::id()));
    mgz_status::browser::chromium_command(bin, &profile)
}

fn dump_dom(bin: &Path, url: &str) -> String {
    let out = chromium_cmd(bin)
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}
