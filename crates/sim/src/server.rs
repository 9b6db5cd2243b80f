//! The HTTP/1.1 server: one listener answering every virtual host by its
//! `Host` header, plus an optional control listener serving the request log.
//!
//! One tokio task per connection (hyper's HTTP/1 connection driver, with
//! keep-alive); no per-page state, so memory stays flat however many pages
//! are served. A shutdown signal (a `watch` channel) stops the accept loops
//! and drops every open connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::log::{RequestLog, RequestRecord};
use crate::sim::{Sim, normalize_host, plain};
use crate::{SimConfig, SimError};

/// Requests whose headers exceed this many bytes get 400.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

struct Shared {
    sim: Sim,
    log: RequestLog,
}

/// A running synthetic web. Dropping it shuts it down.
pub struct SimServer {
    addr: SocketAddr,
    control: Option<SocketAddr>,
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for SimServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimServer")
            .field("addr", &self.addr)
            .field("control", &self.control)
            .finish()
    }
}

/// Starts a sim on the current tokio runtime, listening on `listen` (port 0 picks one).
pub async fn start(
    config: SimConfig,
    listen: SocketAddr,
    control: Option<SocketAddr>,
) -> Result<SimServer, SimError> {
    let shared = Arc::new(Shared {
        sim: Sim::new(&config)?,
        log: RequestLog::new(config.log_capacity),
    });
    let (tx, rx) = watch::channel(false);
    let (listener, addr) = bind(listen).await?;
    tokio::spawn(accept_loop(listener, shared.clone(), rx.clone(), false));
    let control = match control {
        Some(c) => {
            let (listener, caddr) = bind(c).await?;
            tokio::spawn(accept_loop(listener, shared.clone(), rx, true));
            Some(caddr)
        }
        None => None,
    };
    Ok(SimServer {
        addr,
        control,
        shared,
        shutdown: tx,
        runtime: None,
    })
}

async fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), SimError> {
    let io_err = |source| SimError::Io {
        what: format!("bind {addr}"),
        source,
    };
    let listener = TcpListener::bind(addr).await.map_err(io_err)?;
    let local = listener.local_addr().map_err(io_err)?;
    Ok((listener, local))
}

impl SimServer {
    /// Starts a sim on its own 2-thread runtime; for non-async callers (tests, CLIs).
    /// Must not be called from inside an async context.
    pub fn start_blocking(
        config: SimConfig,
        listen: SocketAddr,
        control: Option<SocketAddr>,
    ) -> Result<SimServer, SimError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("mgz-sim")
            .enable_all()
            .build()
            .map_err(|source| SimError::Io {
                what: "start runtime".to_string(),
                source,
            })?;
        let mut server = runtime.block_on(start(config, listen, control))?;
        server.runtime = Some(runtime);
        Ok(server)
    }

    /// The address pages are served on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The control address (`GET /_sim/log`), when one was asked for.
    pub fn control_addr(&self) -> Option<SocketAddr> {
        self.control
    }

    /// The argument for a crawler's resolver: `*.sim=IP:PORT`.
    pub fn resolve_spec(&self) -> String {
        format!("*.sim={}", self.addr)
    }

    /// The kept request records, in the order they were logged.
    pub fn log(&self) -> Vec<RequestRecord> {
        self.shared.log.snapshot(0)
    }

    /// Requests served in total (including records dropped from the log).
    pub fn requests(&self) -> u64 {
        self.shared.log.total()
    }

    /// The web being served.
    pub fn sim(&self) -> &Sim {
        &self.shared.sim
    }

    /// Stops listening and drops every connection.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
    control: bool,
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(TokioIo::new(stream), shared.clone(), stop.clone(), control));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            _ = stop.changed() => return,
        }
    }
}

async fn connection(
    io: TokioIo<tokio::net::TcpStream>,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
    control: bool,
) {
    let svc = service_fn(move |req| {
        let shared = shared.clone();
        async move {
            if control {
                Ok::<_, Stalled>(control_answer(&shared, &req))
            } else {
                answer(&shared, req).await
            }
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .max_buf_size(64 * 1024)
        .serve_connection(io, svc);
    tokio::select! {
        _ = conn => {}
        _ = stop.changed() => {}
    }
}

/// The error that makes hyper close a connection without answering.
#[derive(Debug)]
struct Stalled;

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stalled answer")
    }
}

impl std::error::Error for Stalled {}

async fn answer(shared: &Shared, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Stalled> {
    let time_us = shared.log.now_us();
    let host_value = req
        .headers()
        .get(hyper::header::HOST)
        .map(|v| v.to_str().unwrap_or("\u{0}"));
    let target = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let header_bytes: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    let method = req.method().clone();
    let resp = match host_value {
        _ if header_bytes > MAX_HEADER_BYTES => plain(400, "request headers too large"),
        None => plain(400, "missing Host header"),
        _ if method != hyper::Method::GET && method != hyper::Method::HEAD => {
            plain(405, "only GET and HEAD")
        }
        Some(host) => shared.sim.respond(host, &target),
    };
    let host = host_value.and_then(normalize_host).unwrap_or_default();
    let status = if resp.stall { 0 } else { resp.rendered.status };
    shared.log.push(RequestRecord {
        time_us,
        host,
        method: method.to_string(),
        path: target,
        status,
    });
    if resp.delay_ms > 0 {
        tokio::time::sleep(Duration::from_millis(resp.delay_ms)).await;
    }
    if resp.stall {
        return Err(Stalled);
    }
    Ok(to_response(resp.rendered, method == hyper::Method::HEAD))
}

fn to_response(r: crate::Rendered, head: bool) -> Response<Full<Bytes>> {
    let body = if head {
        Bytes::new()
    } else {
        Bytes::from(r.body)
    };
    let mut builder = Response::builder().status(r.status);
    for (name, value) in r.headers {
        builder = builder.header(name, value);
    }
    builder.body(Full::new(body)).unwrap_or_else(|_| {
        let mut resp = Response::new(Full::new(Bytes::from_static(b"bad response\n")));
        *resp.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        resp
    })
}

/// `GET /_sim/log[?since=N]`: JSON lines; `GET /_sim/stats`: totals.
fn control_answer(shared: &Shared, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let since = req
        .uri()
        .query()
        .and_then(|q| q.strip_prefix("since="))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let (status, body) = match req.uri().path() {
        "/_sim/log" => {
            let mut out = String::new();
            for rec in shared.log.snapshot(since) {
                out.push_str(&serde_json::to_string(&rec).unwrap_or_default());
                out.push('\n');
            }
            (200, out)
        }
        "/_sim/stats" => (200, format!("{{\"requests\":{}}}\n", shared.log.total())),
        _ => (404, "not found\n".to_string()),
    };
    let ctype = if status == 200 {
        "application/x-ndjson"
    } else {
        "text/plain"
    };
    to_response(
        crate::Rendered {
            status,
            headers: vec![("content-type", ctype.to_string())],
            body: body.into_bytes(),
        },
        false,
    )
}
