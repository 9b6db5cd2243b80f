//! `mgz serve --metrics ADDR` also serves the status page (`/`,
//! `/status.json`), with the service's own metric set at `/metrics`; with a
//! token, all three require it.

mod common;

use common::*;
use mgz_service::ServerConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn http(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.0\r\nHost: x\r\n\r\n");
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    let code = out[9..12].parse().unwrap();
    (
        code,
        out.split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default(),
    )
}

#[tokio::test]
async fn status_page_and_json_reflect_the_frontier_and_need_the_token() {
    let bare = spawn_server(ServerConfig {
        metrics: Some("127.0.0.1:0".parse().unwrap()),
        token: Some("sesame".into()),
        ..ServerConfig::default()
    })
    .await;
    let m = bare.metrics_addr.unwrap();
    let urls = ["http://a.com/1", "http://a.com/2", "http://b.org/x"];
    let items: Vec<mgz_frontier::UrlItem> = urls
        .iter()
        .map(|u| mgz_frontier::UrlItem {
            url: u.to_string(),
            ..Default::default()
        })
        .collect();
    bare.frontier.put_discovered(&items).unwrap();
    for path in ["/", "/status.json", "/metrics"] {
        assert_eq!(http(m, path).await.0, 401, "{path} without token");
    }
    let (code, page) = http(m, "/?token=sesame").await;
    assert_eq!(code, 200);
    assert!(page.contains("data-field=\"totals.queued\""));
    let (code, json) = http(m, "/status.json?token=sesame").await;
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["role"], "serve");
    assert_eq!(v["totals"]["queued"], 3);
    assert_eq!(v["totals"]["completed"], 0);
    assert_eq!(v["seen"]["urls"], 3);
    assert_eq!(v["seen"]["backend"], "hash");
    let (code, metrics) = http(m, "/metrics?token=sesame").await;
    assert_eq!(code, 200);
    assert!(metrics.contains("mgz_urls_pending 3\n"), "{metrics}");
    let _ = bare.stop.send(());
}
