//! A real `mgz-service` server on 127.0.0.1:0 over a temporary PowerCache, with
//! a manual clock, and helpers to talk to it.
#![allow(dead_code)]

use std::sync::Arc;

use mgz_frontier::{Frontier, FrontierOptions, ManualClock};
use mgz_service::proto::url_frontier_client::UrlFrontierClient;
use mgz_service::proto::{
    AckMessage, DiscoveredBatch, GetParams, KnownUrlItem, UrlInfo, UrlItem, get_params,
};
use mgz_service::{LogControl, Server, ServerConfig};
use tonic::transport::Channel;

/// Start of the manual clock: 2026-01-01T00:00:00Z, in ms.
pub const T0_MS: u64 = 1_767_225_600_000;
pub const T0: u64 = T0_MS / 1000;

pub type Client = UrlFrontierClient<Channel>;

pub struct TestServer {
    pub addr: std::net::SocketAddr,
    pub metrics_addr: Option<std::net::SocketAddr>,
    pub client: UrlFrontierClient<Channel>,
    pub clock: Arc<ManualClock>,
    pub frontier: Arc<Frontier>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), mgz_service::ServiceError>>>,
    _dir: tempfile::TempDir,
}

pub async fn start() -> TestServer {
    start_with(ServerConfig::default()).await
}

pub async fn start_with(config: ServerConfig) -> TestServer {
    let bare = spawn_server(config).await;
    let client = connect(bare.addr).await;
    TestServer {
        addr: bare.addr,
        metrics_addr: bare.metrics_addr,
        client,
        clock: bare.clock,
        frontier: bare.frontier,
        stop: Some(bare.stop),
        task: Some(bare.task),
        _dir: bare.dir,
    }
}

/// A server with no client attached (TLS tests bring their own).
pub struct Bare {
    pub addr: std::net::SocketAddr,
    pub metrics_addr: Option<std::net::SocketAddr>,
    pub clock: Arc<ManualClock>,
    pub frontier: Arc<Frontier>,
    pub stop: tokio::sync::oneshot::Sender<()>,
    pub task: tokio::task::JoinHandle<Result<(), mgz_service::ServiceError>>,
    pub dir: tempfile::TempDir,
}

pub async fn spawn_server(mut config: ServerConfig) -> Bare {
    config.listen = "127.0.0.1:0".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(T0_MS));
    let opts = FrontierOptions {
        clock: clock.clone(),
        ..FrontierOptions::default()
    };
    let frontier = Arc::new(Frontier::open(dir.path(), opts).unwrap());
    let log = Arc::new(LogControl::detached("info"));
    let server = Server::bind(config, frontier.clone(), log).await.unwrap();
    let addr = server.local_addr().unwrap();
    let metrics_addr = server.metrics_addr();
    let (stop, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(async move {
        let _ = rx.await;
    }));
    Bare {
        addr,
        metrics_addr,
        clock,
        frontier,
        stop,
        task,
        dir,
    }
}

pub async fn connect(addr: std::net::SocketAddr) -> UrlFrontierClient<Channel> {
    UrlFrontierClient::connect(format!("http://{addr}"))
        .await
        .unwrap()
}

impl TestServer {
    /// Asks the server to stop and waits for it (drain + flush).
    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap().unwrap();
    }

    /// Asks the server to stop without waiting.
    pub fn ask_stop(&mut self) {
        let _ = self.stop.take().unwrap().send(());
    }

    /// Waits for the server task to end (after [`TestServer::ask_stop`]).
    pub async fn stopped(mut self) -> Result<(), mgz_service::ServiceError> {
        self.task.take().unwrap().await.unwrap()
    }

    /// [`TestServer::stopped`], keeping the frontier's directory.
    pub async fn stopped_keeping_dir(
        mut self,
    ) -> (Result<(), mgz_service::ServiceError>, tempfile::TempDir) {
        let r = self.task.take().unwrap().await.unwrap();
        (r, self._dir)
    }

    pub fn advance_s(&self, s: u64) {
        self.clock.advance_ms(s * 1000);
    }
}

pub fn info(url: &str) -> UrlInfo {
    UrlInfo {
        url: url.into(),
        ..Default::default()
    }
}

pub fn info_in(url: &str, key: &str, crawl: &str) -> UrlInfo {
    UrlInfo {
        url: url.into(),
        key: key.into(),
        crawl_id: crawl.into(),
        ..Default::default()
    }
}

pub fn discovered(info: UrlInfo) -> UrlItem {
    mgz_service::convert::discovered(info)
}

pub fn known(info: UrlInfo, refetch: u64) -> UrlItem {
    UrlItem {
        item: Some(mgz_service::proto::url_item::Item::Known(KnownUrlItem {
            info: Some(info),
            refetchable_from_date: refetch,
        })),
        ..Default::default()
    }
}

/// Sends items on one PutURLs stream, half-closes, returns every ack.
pub async fn put(client: &mut UrlFrontierClient<Channel>, items: Vec<UrlItem>) -> Vec<AckMessage> {
    let stream = client
        .put_ur_ls(tokio_stream::iter(items))
        .await
        .unwrap()
        .into_inner();
    collect(stream).await
}

/// Sends batches on one PutDiscovered stream, returns every BatchAck.
pub async fn put_batches(
    client: &mut UrlFrontierClient<Channel>,
    batches: Vec<DiscoveredBatch>,
) -> Vec<mgz_service::proto::BatchAck> {
    let stream = client
        .put_discovered(tokio_stream::iter(batches))
        .await
        .unwrap()
        .into_inner();
    collect(stream).await
}

pub async fn collect<T>(mut stream: tonic::Streaming<T>) -> Vec<T> {
    let mut out = Vec::new();
    while let Some(m) = stream.message().await.unwrap() {
        out.push(m);
    }
    out
}

pub fn get_params(key: &str, max_queues: u32, per_queue: u32) -> GetParams {
    GetParams {
        key: key.into(),
        max_queues,
        max_urls_per_queue: per_queue,
        delay_requestable: 0,
        item: None,
    }
}

pub fn in_crawl(mut p: GetParams, crawl: &str) -> GetParams {
    p.item = Some(get_params::Item::CrawlId(crawl.into()));
    p
}

/// URLs served by one GetURLs call.
pub async fn get(client: &mut UrlFrontierClient<Channel>, p: GetParams) -> Vec<UrlInfo> {
    collect(client.get_ur_ls(p).await.unwrap().into_inner()).await
}

pub async fn get_urls(client: &mut UrlFrontierClient<Channel>, p: GetParams) -> Vec<String> {
    get(client, p).await.into_iter().map(|i| i.url).collect()
}
