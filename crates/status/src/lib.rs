//! Live status for a running crawl or frontier server.
//!
//! A process that wants a status page implements [`StatusSource`] (a cheap
//! snapshot of its counters) and calls [`serve`]. The server answers:
//!
//! | path           | what                                                        |
//! |----------------|-------------------------------------------------------------|
//! | `/`            | a self-contained HTML page (inline CSS, JS and SVG chart)   |
//! | `/status.json` | the [`StatusReport`] the page renders, refreshed by the page |
//! | `/metrics`     | Prometheus text format, totals only (no per-host labels)    |
//!
//! Why a pull model: the crawl loop only bumps atomics it already keeps; all
//! formatting happens on the status server's own task when somebody asks, so
//! an idle page costs the crawl nothing and a polled one costs one snapshot
//! per request (see docs/BENCHMARKS.md for the measured overhead).
//!
//! Rates over the last minute and hour come from a [`RateTracker`] that
//! samples the `fetched` total once a second into a ring of 3,600 samples
//! (28 KiB), so memory is bounded however long the crawl runs.
#![warn(missing_docs)]

pub mod browser;
mod error;
mod metrics;
mod page;
mod rates;
mod report;
mod rss;
mod server;

pub use error::StatusError;
pub use metrics::render_prometheus;
pub use page::STATUS_PAGE_HTML;
pub use rates::RateTracker;
pub use report::{HostStatus, Rates, SeenStatus, StatusReport, Totals};
pub use rss::{peak_rss_bytes, rss_bytes};
pub use server::{ServeOptions, StatusHandle, StatusSource, serve, serve_listener};
