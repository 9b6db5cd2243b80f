//! Prometheus counters of the service and the `/metrics` endpoint.
//!
//! A handful of process-wide atomics, rendered in the Prometheus text format on
//! each scrape together with the backend's [`Gauges`]. Labels are only ever the
//! RPC kind or the ack status, never a host, key or URL, so the number of series
//! is fixed (a label per host would grow the scrape with the crawl).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::ServiceError;
use crate::backend::{FrontierBackend, Gauges};
use crate::proto::ack_message::Status;

/// Counters updated by the RPC handlers.
#[derive(Debug, Default)]
pub struct Metrics {
    put_discovered: AtomicU64,
    put_urls: AtomicU64,
    pub(crate) served: AtomicU64,
    pub(crate) acks: [AtomicU64; 3],
    streams_open: AtomicU64,
}

impl Metrics {
    /// Counts URLs received by PutDiscovered.
    pub fn add_discovered(&self, n: usize) {
        self.put_discovered.fetch_add(n as u64, Relaxed);
    }

    /// Counts URLs received by PutURLs.
    pub fn add_put(&self, n: usize) {
        self.put_urls.fetch_add(n as u64, Relaxed);
    }

    /// Counts URLs handed out by GetURLs.
    pub fn add_served(&self, n: usize) {
        self.served.fetch_add(n as u64, Relaxed);
    }

    /// Counts one ack per status.
    pub fn add_acks(&self, statuses: &[Status]) {
        for s in statuses {
            self.acks[*s as usize].fetch_add(1, Relaxed);
        }
    }

    /// Marks a put stream opened; the guard marks it closed when dropped.
    pub fn stream_opened(self: &Arc<Self>) -> StreamGuard {
        self.streams_open.fetch_add(1, Relaxed);
        StreamGuard(self.clone())
    }

    /// Renders the Prometheus text exposition format.
    pub fn render(&self, g: Gauges) -> String {
        let mut out = String::with_capacity(2048);
        counter(
            &mut out,
            "mgz_urls_put_total",
            "URLs received",
            &[
                ("rpc=\"PutDiscovered\"", self.put_discovered.load(Relaxed)),
                ("rpc=\"PutURLs\"", self.put_urls.load(Relaxed)),
            ],
        );
        counter(
            &mut out,
            "mgz_urls_served_total",
            "URLs handed out by GetURLs",
            &[("", self.served.load(Relaxed))],
        );
        counter(
            &mut out,
            "mgz_urls_acked_total",
            "URL acks sent, by status",
            &[
                ("status=\"OK\"", self.acks[0].load(Relaxed)),
                ("status=\"SKIPPED\"", self.acks[1].load(Relaxed)),
                ("status=\"FAIL\"", self.acks[2].load(Relaxed)),
            ],
        );
        gauge(
            &mut out,
            "mgz_put_streams_open",
            "put streams being served",
            self.streams_open.load(Relaxed),
        );
        gauge(&mut out, "mgz_queues", "queues over all crawls", g.queues);
        gauge(
            &mut out,
            "mgz_urls_in_flight",
            "URLs leased and not yet updated",
            g.in_flight,
        );
        gauge(
            &mut out,
            "mgz_urls_pending",
            "URLs not completed",
            g.pending,
        );
        gauge(
            &mut out,
            "mgz_seen_bytes",
            "bytes held by the seen index",
            g.seen_bytes,
        );
        out
    }
}

/// Decrements the open-stream gauge when a put stream ends.
#[derive(Debug)]
pub struct StreamGuard(Arc<Metrics>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.streams_open.fetch_sub(1, Relaxed);
    }
}

fn counter(out: &mut String, name: &str, help: &str, series: &[(&str, u64)]) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
    for (labels, value) in series {
        if labels.is_empty() {
            let _ = writeln!(out, "{name} {value}");
        } else {
            let _ = writeln!(out, "{name}{{{labels}}} {value}");
        }
    }
}

fn gauge(out: &mut String, name: &str, help: &str, value: u64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
    );
}

/// The service seen from its status page (`mgz serve --metrics ADDR`):
/// `/` and `/status.json` from [`mgz_status`], `/metrics` in the service's own
/// metric set. "fetched" on the page counts URLs served by GetURLs.
pub struct ServiceStatus<B> {
    metrics: Arc<Metrics>,
    backend: Arc<B>,
    seen_backend: String,
}

impl<B: FrontierBackend> ServiceStatus<B> {
    /// Wraps the service's counters and its backend.
    pub fn new(metrics: Arc<Metrics>, backend: Arc<B>, seen_backend: String) -> Self {
        ServiceStatus {
            metrics,
            backend,
            seen_backend,
        }
    }
}

impl<B: FrontierBackend> mgz_status::StatusSource for ServiceStatus<B> {
    fn report(&self) -> mgz_status::StatusReport {
        let g = self.backend.gauges();
        let urls = g.pending + g.completed;
        mgz_status::StatusReport {
            totals: mgz_status::Totals {
                fetched: self.metrics.served.load(Relaxed),
                queued: g.pending.saturating_sub(g.in_flight),
                in_flight: g.in_flight,
                completed: g.completed,
                duplicates_avoided: self.metrics.acks[Status::Skipped as usize].load(Relaxed),
                ..Default::default()
            },
            // URLFrontier clients send URLs of ~70 bytes on average (mgz sim urls calibration).
            seen: mgz_status::SeenStatus::new(&self.seen_backend, urls, g.seen_bytes, 70.0),
            ..Default::default()
        }
    }

    fn fetched_total(&self) -> u64 {
        self.metrics.served.load(Relaxed)
    }

    /// The service's own metric set: one `gauges()` walk per scrape, and the
    /// page's report (a second walk) is never built for it.
    fn metrics(&self, _report: &dyn Fn() -> mgz_status::StatusReport) -> String {
        self.metrics.render(self.backend.gauges())
    }
}

/// Binds the metrics listener (kept apart so the caller learns the port first).
pub async fn bind_metrics(addr: SocketAddr) -> Result<tokio::net::TcpListener, ServiceError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServiceError::Bind { addr, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_gauges_without_per_host_labels() {
        let m = Metrics::default();
        m.add_discovered(3);
        m.add_acks(&[Status::Ok, Status::Skipped, Status::Ok]);
        let text = m.render(Gauges {
            queues: 2,
            in_flight: 1,
            pending: 5,
            seen_bytes: 64,
            ..Gauges::default()
        });
        assert!(text.contains("mgz_urls_put_total{rpc=\"PutDiscovered\"} 3\n"));
        assert!(text.contains("mgz_urls_acked_total{status=\"OK\"} 2\n"));
        assert!(text.contains("mgz_urls_acked_total{status=\"SKIPPED\"} 1\n"));
        assert!(text.contains("mgz_queues 2\n"));
        assert!(text.contains("mgz_seen_bytes 64\n"));
        assert!(!text.contains("host="));
    }

    #[test]
    fn a_scrape_reads_the_gauges_once_and_builds_no_report() {
        use mgz_status::StatusSource as _;
        let dir = tempfile::tempdir().unwrap();
        let f = mgz_frontier::Frontier::open(dir.path(), Default::default()).unwrap();
        f.put_discovered(&[mgz_frontier::UrlItem::new("http://a.test/")])
            .unwrap();
        let status = ServiceStatus::new(Arc::default(), Arc::new(f), "hash".into());
        let text = status.metrics(&|| panic!("the report is not needed for /metrics"));
        assert!(text.contains("mgz_urls_pending 1\n"), "{text}");
        assert!(text.contains("mgz_queues 1\n"), "{text}");
    }
}
