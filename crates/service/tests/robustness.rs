//! Hostile and broken clients leave the server healthy; auth, TLS and metrics.

mod common;

use std::time::Duration;

use bytes::{Buf as _, BufMut as _};
use common::*;
use mgz_service::ServerConfig;
use mgz_service::proto::url_frontier_client::UrlFrontierClient;
use mgz_service::proto::{CountUrlParams, DiscoveredBatch, QueueWithinCrawlParams, UrlInfo};
use prost::Message as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;

/// Sends and receives raw message bytes, so tests can send what prost never would.
#[derive(Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }
    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        let out = src.chunk().to_vec();
        src.advance(out.len());
        Ok(Some(out))
    }
}

async fn raw(addr: std::net::SocketAddr) -> tonic::client::Grpc<Channel> {
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    tonic::client::Grpc::new(channel)
}

const GARBAGE: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0x0f];

async fn healthy(client: &mut UrlFrontierClient<Channel>) -> u64 {
    client
        .count_ur_ls(CountUrlParams::default())
        .await
        .expect("server answers")
        .into_inner()
        .value
}

fn batch(id: &str, urls: &[&str]) -> DiscoveredBatch {
    DiscoveredBatch {
        id: id.into(),
        items: urls.iter().map(|u| info(u)).collect(),
    }
}

#[tokio::test]
async fn malformed_protobuf_is_rejected_and_the_server_stays_up() {
    let mut s = start().await;
    let mut grpc = raw(s.addr).await;
    grpc.ready().await.unwrap();
    let path = PathAndQuery::from_static("/urlfrontier.URLFrontier/GetStats");
    let err = grpc
        .unary(tonic::Request::new(GARBAGE.to_vec()), path, RawCodec)
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Internal, "{err}");

    // A stream: one good batch, then garbage. The good one is stored and acked first.
    let good = batch("good", &["http://a.com/1"]).encode_to_vec();
    let msgs = tokio_stream::iter(vec![good, GARBAGE.to_vec()]);
    grpc.ready().await.unwrap();
    let path = PathAndQuery::from_static("/urlfrontier.URLFrontier/PutDiscovered");
    let mut answers = grpc
        .streaming(tonic::Request::new(msgs), path, RawCodec)
        .await
        .unwrap()
        .into_inner();
    let first = answers.message().await.unwrap().unwrap();
    let ack = mgz_service::proto::BatchAck::decode(first.as_slice()).unwrap();
    assert_eq!(
        (ack.id.as_str(), ack.statuses.as_slice()),
        ("good", &[0][..])
    );
    let err = answers.message().await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Internal, "{err}");
    assert_eq!(healthy(&mut s.client).await, 1);
}

#[tokio::test]
async fn oversized_messages_are_refused_and_the_server_stays_up() {
    let config = ServerConfig {
        max_message_bytes: 64 << 10,
        ..ServerConfig::default()
    };
    let mut s = start_with(config).await;
    let huge = QueueWithinCrawlParams {
        key: "k".repeat(100 << 10),
        ..Default::default()
    };
    let err = s.client.get_stats(huge).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::OutOfRange, "{err}");
    let urls: Vec<String> = (0..4000).map(|i| format!("http://a.com/{i:040}")).collect();
    let big = DiscoveredBatch {
        id: "big".into(),
        items: urls.iter().map(|u| info(u)).collect(),
    };
    let small = batch("small", &["http://b.com/"]);
    let stream = s
        .client
        .put_discovered(tokio_stream::iter(vec![small, big]))
        .await
        .unwrap();
    let mut answers = stream.into_inner();
    assert_eq!(answers.message().await.unwrap().unwrap().id, "small");
    assert_eq!(
        answers.message().await.unwrap_err().code(),
        tonic::Code::OutOfRange
    );
    assert_eq!(healthy(&mut s.client).await, 1);
}

async fn metrics_text(addr: std::net::SocketAddr) -> String {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    tcp.read_to_string(&mut out).await.unwrap();
    out
}

async fn open_streams(addr: std::net::SocketAddr) -> String {
    let text = metrics_text(addr).await;
    text.lines()
        .find(|l| l.starts_with("mgz_put_streams_open "))
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn clients_vanishing_mid_stream_leave_the_server_healthy() {
    let config = ServerConfig {
        metrics: Some("127.0.0.1:0".parse().unwrap()),
        ..ServerConfig::default()
    };
    let mut s = start_with(config).await;
    let metrics = s.metrics_addr.unwrap();
    // A put stream that is never half-closed; the client dies after one ack.
    let addr = s.addr;
    let writer = tokio::spawn(async move {
        let mut c = connect(addr).await;
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        tx.send(batch("b0", &["http://a.com/0", "http://a.com/1"]))
            .await
            .unwrap();
        let mut acks = c
            .put_discovered(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(acks.message().await.unwrap().unwrap().id, "b0");
        tx.send(batch("b1", &["http://a.com/2"])).await.unwrap();
        std::future::pending::<()>().await;
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(open_streams(metrics).await, "mgz_put_streams_open 1");
    writer.abort();
    let _ = writer.await;
    // Dropping the task drops the channel: the connection closes under the stream.
    let mut closed = false;
    for _ in 0..50 {
        if open_streams(metrics).await == "mgz_put_streams_open 0" {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(closed, "the abandoned put stream was never reaped");
    assert!(healthy(&mut s.client).await >= 2, "acked URLs are kept");

    // A GetURLs reader that leaves after the first URL.
    put(
        &mut s.client,
        (0..200)
            .map(|i| discovered(info(&format!("http://b.com/{i}"))))
            .collect(),
    )
    .await;
    let mut c = connect(s.addr).await;
    let mut served = c
        .get_ur_ls(get_params("b.com", 0, 0))
        .await
        .unwrap()
        .into_inner();
    assert!(served.message().await.unwrap().is_some());
    drop(served);
    drop(c);
    // Raw TCP: half an HTTP/2 preface, then gone.
    let mut tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    tcp.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    drop(tcp);
    assert!(healthy(&mut s.client).await >= 202);
    let text = metrics_text(metrics).await;
    assert!(text.contains("mgz_urls_served_total 200"), "{text}");
    assert!(
        !text.contains("a.com") && !text.contains("b.com"),
        "no per-host labels"
    );
}

#[tokio::test]
async fn bearer_token_is_required_when_configured() {
    let config = ServerConfig {
        token: Some("s3cret".into()),
        ..ServerConfig::default()
    };
    let mut s = start_with(config).await;
    let err = s
        .client
        .count_ur_ls(CountUrlParams::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);
    let channel = Channel::from_shared(format!("http://{}", s.addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let with = |token: &'static str| {
        UrlFrontierClient::with_interceptor(channel.clone(), move |mut r: tonic::Request<()>| {
            r.metadata_mut()
                .insert("authorization", format!("Bearer {token}").parse().unwrap());
            Ok(r)
        })
    };
    let err = with("guess")
        .count_ur_ls(CountUrlParams::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);
    let mut good = with("s3cret");
    assert_eq!(
        good.count_ur_ls(CountUrlParams::default())
            .await
            .unwrap()
            .into_inner()
            .value,
        0
    );
    let acks = good
        .put_ur_ls(tokio_stream::iter(vec![discovered(info("http://a.com/"))]))
        .await;
    assert_eq!(collect(acks.unwrap().into_inner()).await.len(), 1);
}

#[tokio::test]
async fn serves_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, &cert_pem).unwrap();
    std::fs::write(&key_path, &key_pem).unwrap();
    let config = ServerConfig {
        tls: Some((cert_path, key_path)),
        ..ServerConfig::default()
    };
    let s = spawn_server(config).await;
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(cert_pem))
        .domain_name("localhost");
    let endpoint = Channel::from_shared(format!("https://{}", s.addr))
        .unwrap()
        .tls_config(tls)
        .unwrap();
    let mut client = UrlFrontierClient::new(endpoint.connect().await.unwrap());
    let item = discovered(UrlInfo {
        url: "http://a.com/".into(),
        ..Default::default()
    });
    let acks = collect(
        client
            .put_ur_ls(tokio_stream::iter(vec![item]))
            .await
            .unwrap()
            .into_inner(),
    )
    .await;
    assert_eq!(acks[0].status, 0);
    // Plain text against the TLS port fails instead of being served.
    let plain = Channel::from_shared(format!("http://{}", s.addr))
        .unwrap()
        .connect()
        .await;
    if let Ok(ch) = plain {
        assert!(
            UrlFrontierClient::new(ch)
                .count_ur_ls(CountUrlParams::default())
                .await
                .is_err()
        );
    }
}
