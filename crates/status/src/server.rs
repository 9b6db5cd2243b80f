//! The HTTP server: `/`, `/status.json`, `/metrics`.
//!
//! Runs on the caller's tokio runtime. A background task samples the
//! source's `fetched` counter once a second into a [`RateTracker`]; every
//! request takes one snapshot from the source. Access control: loopback
//! only unless [`ServeOptions::allow_public`]; with a token set, every path
//! needs `Authorization: Bearer <token>` or `?token=<token>`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::sync::oneshot;

use crate::{RateTracker, StatusError, StatusReport, peak_rss_bytes, render_prometheus, rss_bytes};

/// What a crawl or a frontier server exposes to its status page.
pub trait StatusSource: Send + Sync + 'static {
    /// A snapshot of totals, seen-set and hosts. `rates`, `uptime_s`, `role`
    /// and the RSS fields are filled in by the server.
    fn report(&self) -> StatusReport;
    /// The pages-fetched total, sampled once a second for the rates. Cheap.
    fn fetched_total(&self) -> u64;
    /// Extra Prometheus lines appended to `/metrics` (no per-host labels).
    fn extra_metrics(&self) -> String {
        String::new()
    }
    /// The whole `/metrics` body. `report` builds the full report (one
    /// [`StatusSource::report`] call plus the server's fields). The default
    /// renders it ([`render_prometheus`]) followed by
    /// [`StatusSource::extra_metrics`]; a source with its own metric set (the
    /// gRPC service) replaces this and need not call `report` at all, so a
    /// scrape costs one snapshot, not two.
    fn metrics(&self, report: &dyn Fn() -> StatusReport) -> String {
        let mut text = render_prometheus(&report());
        text.push_str(&self.extra_metrics());
        text
    }
}

/// How the status server runs.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// `crawl` or `serve`, shown on the page.
    pub role: String,
    /// Required bearer token, if any.
    pub token: Option<String>,
    /// Allow a non-loopback listen address.
    pub allow_public: bool,
}

struct Shared {
    source: Arc<dyn StatusSource>,
    rates: Mutex<RateTracker>,
    options: ServeOptions,
    started: Instant,
}

/// A running status server; dropping it does not stop it, [`StatusHandle::shutdown`] does.
pub struct StatusHandle {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// How long [`StatusHandle::shutdown`] waits for open connections to close.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

impl StatusHandle {
    /// The address actually bound (useful with port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting connections and returns once the listener is closed
    /// (open connections get [`SHUTDOWN_GRACE`] to finish, then are dropped).
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(SHUTDOWN_GRACE, task).await.is_err() {
                abort.abort();
            }
        }
    }
}

/// Binds `addr` and serves the status page for `source` until shut down.
pub async fn serve(
    addr: SocketAddr,
    source: Arc<dyn StatusSource>,
    options: ServeOptions,
) -> Result<StatusHandle, StatusError> {
    if !addr.ip().is_loopback() && !options.allow_public {
        return Err(StatusError::NotLoopback { addr });
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| StatusError::Bind { addr, source })?;
    serve_listener(listener, source, options)
}

/// Serves the status page on an already bound `listener` (for callers that
/// must learn the port before they start serving). Must run inside a tokio
/// runtime.
pub fn serve_listener(
    listener: tokio::net::TcpListener,
    source: Arc<dyn StatusSource>,
    options: ServeOptions,
) -> Result<StatusHandle, StatusError> {
    let bound = listener.local_addr().map_err(|source| StatusError::Bind {
        addr: SocketAddr::from(([0, 0, 0, 0], 0)),
        source,
    })?;
    if !bound.ip().is_loopback() && !options.allow_public {
        return Err(StatusError::NotLoopback { addr: bound });
    }
    let shared = Arc::new(Shared {
        source,
        rates: Mutex::new(RateTracker::new()),
        options,
        started: Instant::now(),
    });
    tokio::spawn(sample_forever(Arc::downgrade(&shared)));
    let app = Router::new()
        .route("/", get(page))
        .route("/status.json", get(status_json))
        .route("/metrics", get(metrics))
        // One check in front of every path (unknown ones too), not one per handler.
        .layer(middleware::from_fn_with_state(
            shared.clone(),
            require_token,
        ))
        .with_state(shared);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let server = axum::serve(listener, app).with_graceful_shutdown(async {
            let _ = stopped.await;
        });
        if let Err(err) = server.await {
            tracing::warn!("status server stopped: {err}");
        }
    });
    tracing::info!("status page on http://{bound}/");
    Ok(StatusHandle {
        addr: bound,
        stop: Some(stop),
        task: Some(task),
    })
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

async fn sample_forever(shared: std::sync::Weak<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let total = shared.source.fetched_total();
        if let Ok(mut rates) = shared.rates.lock() {
            rates.record(unix_ms(), total);
        }
    }
}

type Params = Query<std::collections::HashMap<String, String>>;

/// The access check of every path: passes the request on when no token is
/// set or the right one is given, answers 401 otherwise.
async fn require_token(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    params: Params,
    request: Request,
    next: Next,
) -> Response {
    if authorised(&shared, &headers, &params) {
        next.run(request).await
    } else {
        (StatusCode::UNAUTHORIZED, "missing or wrong token\n").into_response()
    }
}

fn authorised(shared: &Shared, headers: &HeaderMap, params: &Params) -> bool {
    let Some(want) = shared.options.token.as_deref() else {
        return true;
    };
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let given = bearer
        .or(params.get("token").map(String::as_str))
        .unwrap_or("");
    // Compare every byte so the time taken does not reveal the matching prefix.
    given.len() == want.len()
        && given
            .bytes()
            .zip(want.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

fn build_report(shared: &Shared) -> StatusReport {
    let mut report = shared.source.report();
    report.role = shared.options.role.clone();
    report.uptime_s = shared.started.elapsed().as_secs_f64();
    report.rss_bytes = rss_bytes();
    report.peak_rss_bytes = peak_rss_bytes();
    if let Ok(rates) = shared.rates.lock() {
        report.rates = rates.rates();
    }
    report
}

async fn page() -> Response {
    Html(crate::STATUS_PAGE_HTML).into_response()
}

async fn status_json(State(shared): State<Arc<Shared>>) -> Response {
    let body = serde_json::to_string(&build_report(&shared)).unwrap_or_else(|_| "{}".into());
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    // The report is built only if the source's metric set needs it.
    let text = shared.source.metrics(&|| build_report(&shared));
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}
