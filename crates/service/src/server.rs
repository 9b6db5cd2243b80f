//! Binding and running `mgz serve`: transport, TLS, auth, limits, metrics,
//! graceful shutdown.
//!
//! Life of a server: [`Server::bind`] opens the sockets (so the caller learns
//! the ports, port 0 included), [`Server::serve`] logs `Started
//! URLFrontierServer` and answers until the shutdown future resolves; then it
//! stops accepting, lets open streams finish (at most
//! [`ServerConfig::drain_timeout`]), and flushes the store before returning.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, ServerTlsConfig};

use crate::ServiceError;
use crate::auth::TokenCheck;
use crate::backend::FrontierBackend;
use crate::logging::LogControl;
use crate::metrics::{Metrics, ServiceStatus, bind_metrics};
use crate::proto::url_frontier_server::UrlFrontierServer;
use crate::rpc::FrontierService;

/// Everything `mgz serve` can be told.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// gRPC address (default `127.0.0.1:7071`: loopback unless told otherwise).
    pub listen: SocketAddr,
    /// Prometheus `/metrics` address; `None` disables it.
    pub metrics: Option<SocketAddr>,
    /// PEM certificate chain and private key; `None` serves plain text.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Bearer token required from clients; `None` requires none.
    pub token: Option<String>,
    /// Largest message accepted or sent, in bytes.
    pub max_message_bytes: usize,
    /// Concurrent streams per client connection.
    pub max_concurrent_streams: u32,
    /// How long open streams may take to finish after shutdown is asked.
    pub drain_timeout: Duration,
    /// Name of the seen-set backend, shown on the status page.
    pub seen_backend: String,
    /// URLs leased per store call while streaming a GetURLs answer.
    pub get_chunk_urls: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 7071)),
            metrics: None,
            tls: None,
            token: None,
            max_message_bytes: 16 << 20,
            max_concurrent_streams: 256,
            drain_timeout: Duration::from_secs(10),
            seen_backend: "hash".into(),
            get_chunk_urls: crate::rpc::get::DEFAULT_CHUNK_URLS,
        }
    }
}

/// A bound, not yet serving, URLFrontier server.
pub struct Server<B> {
    config: ServerConfig,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    backend: Arc<B>,
    log: Arc<LogControl>,
}

impl<B: FrontierBackend> Server<B> {
    /// Binds the gRPC (and metrics) sockets.
    pub async fn bind(
        config: ServerConfig,
        backend: Arc<B>,
        log: Arc<LogControl>,
    ) -> Result<Self, ServiceError> {
        let addr = config.listen;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServiceError::Bind { addr, source })?;
        let metrics_listener = match config.metrics {
            Some(m) => Some(bind_metrics(m).await?),
            None => None,
        };
        Ok(Self {
            config,
            listener,
            metrics_listener,
            backend,
            log,
        })
    }

    /// The gRPC address actually bound.
    pub fn local_addr(&self) -> Result<SocketAddr, ServiceError> {
        Ok(self.listener.local_addr()?)
    }

    /// The metrics address actually bound.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    /// Serves until `shutdown` resolves, drains, flushes the store.
    pub async fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServiceError> {
        let addr = self.local_addr()?;
        let metrics = Arc::new(Metrics::default());
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let status_page = match self.metrics_listener {
            Some(l) => {
                let source = Arc::new(ServiceStatus::new(
                    metrics.clone(),
                    self.backend.clone(),
                    self.config.seen_backend.clone(),
                ));
                let options = mgz_status::ServeOptions {
                    role: "serve".into(),
                    token: self.config.token.clone(),
                    // Where to listen is the operator's choice (--metrics).
                    allow_public: true,
                };
                Some(
                    mgz_status::serve_listener(l, source, options)
                        .map_err(|e| ServiceError::Store(e.to_string()))?,
                )
            }
            None => None,
        };
        let service =
            FrontierService::new(self.backend.clone(), metrics, self.log, addr.to_string())
                .with_get_chunk(self.config.get_chunk_urls);
        let grpc = UrlFrontierServer::new(service)
            .max_decoding_message_size(self.config.max_message_bytes)
            .max_encoding_message_size(self.config.max_message_bytes);
        let grpc = InterceptedService::new(grpc, TokenCheck::new(self.config.token.as_deref()));
        let mut builder = tonic::transport::Server::builder()
            .max_concurrent_streams(Some(self.config.max_concurrent_streams))
            .http2_keepalive_interval(Some(Duration::from_secs(30)))
            .http2_keepalive_timeout(Some(Duration::from_secs(20)));
        if let Some((cert, key)) = &self.config.tls {
            builder = builder.tls_config(tls_config(cert, key)?)?;
        }
        let incoming = incoming(self.listener);
        let asked = async move {
            shutdown.await;
            tracing::info!("shutting down: draining streams");
            let _ = stop_tx.send(true);
        };
        let serving = builder
            .add_service(grpc)
            .serve_with_incoming_shutdown(incoming, asked);
        tracing::info!(%addr, tls = self.config.tls.is_some(), "Started URLFrontierServer");
        let drained = drain(serving, wait_stop(stop_rx), self.config.drain_timeout).await;
        if let Some(page) = status_page {
            page.shutdown().await;
        }
        let backend = self.backend.clone();
        tokio::task::spawn_blocking(move || backend.flush())
            .await
            .map_err(|e| ServiceError::Store(e.to_string()))??;
        tracing::info!("frontier flushed; server stopped");
        drained
    }
}

/// The accepted connections, with `TCP_NODELAY` set on each.
///
/// tonic's `Server::tcp_nodelay` only applies when tonic binds the socket
/// itself, not to connections handed in by `serve_with_incoming`. Without it
/// every small write that ends a burst (the last frame of a GetURLs answer,
/// an ack) waited for the client's delayed ACK: ≈ 40 ms per round trip of
/// a crawler's get → complete → get loop (measured: 44 ms per round in the
/// loop's tail, one queue left, 100 URLs per round).
pub fn incoming(listener: TcpListener) -> TcpIncoming {
    TcpIncoming::from(listener).with_nodelay(Some(true))
}

/// Runs the server future; once shutdown was asked, gives it `timeout` to finish.
async fn drain(
    serving: impl std::future::Future<Output = Result<(), tonic::transport::Error>>,
    stopped: impl std::future::Future<Output = ()>,
    timeout: Duration,
) -> Result<(), ServiceError> {
    tokio::pin!(serving);
    tokio::select! {
        result = &mut serving => Ok(result?),
        () = async { stopped.await; tokio::time::sleep(timeout).await } => {
            tracing::warn!(?timeout, "streams still open after the drain timeout; closing them");
            Ok(())
        }
    }
}

async fn wait_stop(mut rx: tokio::sync::watch::Receiver<bool>) {
    let _ = rx.wait_for(|stopped| *stopped).await;
}

fn tls_config(cert: &PathBuf, key: &PathBuf) -> Result<ServerTlsConfig, ServiceError> {
    let read = |p: &PathBuf| {
        std::fs::read(p).map_err(|e| ServiceError::Tls(format!("reading {}: {e}", p.display())))
    };
    Ok(ServerTlsConfig::new().identity(Identity::from_pem(read(cert)?, read(key)?)))
}

/// Resolves on SIGTERM or Ctrl-C (SIGINT).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt as _;

    #[tokio::test]
    async fn accepted_connections_have_nodelay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut accepted = incoming(listener);
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let conn = accepted.next().await.unwrap().unwrap();
        assert!(
            conn.nodelay().unwrap(),
            "TCP_NODELAY not set on an accepted socket"
        );
    }

    #[tokio::test]
    async fn a_plain_listener_stream_would_not_set_it() {
        // Guards the test above: the option is off by default, so that test
        // sees what `incoming` changes, not the platform's default.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (conn, _) = listener.accept().await.unwrap();
        assert!(!conn.nodelay().unwrap());
    }
}
