//! The data behind the page: `/status.json`.
//!
//! Schema (all counts are totals since the process or crawl started; byte
//! figures are bytes; times are Unix milliseconds unless the name says `_s`):
//!
//! ```text
//! {
//!   "role": "crawl" | "serve",
//!   "uptime_s": f64,
//!   "totals": { "fetched", "queued", "in_flight", "completed",
//!               "robots_excluded", "duplicates_avoided": u64,
//!               "errors": { "<kind>": u64, ... } },
//!   "rates":  { "pages_per_s_1m", "pages_per_s_1h": f64,
//!               "history": [[unix_ms, pages_per_s], ...] },      // <= 120 points
//!   "seen":   { "backend": str, "urls": u64, "bytes": u64,
//!               "bytes_per_url": f64, "hashset_bytes_per_url": f64 },
//!   "rss_bytes": u64, "peak_rss_bytes": u64,
//!   "busiest_hosts": [HostStatus], "blocked_hosts": [HostStatus]
//! }
//! HostStatus = { "host": str, "queued": u64, "in_flight": u64,
//!                "delay_ms": u64, "next_eligible_ms": u64 }
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Everything the status page shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    /// `crawl` or `serve`.
    pub role: String,
    /// Seconds since the process started serving status.
    pub uptime_s: f64,
    /// Totals.
    pub totals: Totals,
    /// Rates over the last minute and hour, and the chart's points.
    pub rates: Rates,
    /// The seen-set and what it costs.
    pub seen: SeenStatus,
    /// Resident set size now.
    pub rss_bytes: u64,
    /// Peak resident set size.
    pub peak_rss_bytes: u64,
    /// Hosts with the most queued URLs.
    pub busiest_hosts: Vec<HostStatus>,
    /// Hosts blocked (back-off, Retry-After) right now.
    pub blocked_hosts: Vec<HostStatus>,
}

/// Running totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Pages fetched (any status).
    pub fetched: u64,
    /// URLs waiting in the frontier.
    pub queued: u64,
    /// URLs leased and not yet completed.
    pub in_flight: u64,
    /// URLs completed.
    pub completed: u64,
    /// Errors by kind (`timeout`, `http_5xx`, ...).
    pub errors: BTreeMap<String, u64>,
    /// URLs not fetched because robots.txt disallowed them.
    pub robots_excluded: u64,
    /// Links dropped because the seen-set knew them.
    pub duplicates_avoided: u64,
}

/// Throughput.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// Mean pages/s over the last 60 s (or since start, if shorter).
    pub pages_per_s_1m: f64,
    /// Mean pages/s over the last hour (or since start, if shorter).
    pub pages_per_s_1h: f64,
    /// `(unix_ms, pages_per_s)` points for the chart, oldest first.
    pub history: Vec<(u64, f64)>,
}

/// The seen-set's footprint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeenStatus {
    /// Backend name (`compact`, `fingerprint`, ...).
    pub backend: String,
    /// Distinct URLs held.
    pub urls: u64,
    /// Heap bytes of the structure.
    pub bytes: u64,
    /// `bytes / urls`.
    pub bytes_per_url: f64,
    /// What a `HashSet<String>` of the same URLs would cost per URL.
    pub hashset_bytes_per_url: f64,
}

/// One host's queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostStatus {
    /// Queue key (normally the host).
    pub host: String,
    /// URLs queued.
    pub queued: u64,
    /// URLs in flight.
    pub in_flight: u64,
    /// Politeness delay between two fetches.
    pub delay_ms: u64,
    /// When the host may next be fetched (Unix ms; 0 = now).
    pub next_eligible_ms: u64,
}

impl SeenStatus {
    /// Fills in the per-URL figures from `urls`, `bytes` and the mean URL length.
    ///
    /// A `HashSet<String>` costs per URL: 24 B for the `String`, one control
    /// byte, the key bytes rounded up to the allocator's 16-byte classes plus
    /// its 8-byte header, all at hashbrown's 7/8 load factor.
    pub fn new(backend: &str, urls: u64, bytes: u64, mean_url_len: f64) -> Self {
        let per_url = if urls == 0 {
            0.0
        } else {
            bytes as f64 / urls as f64
        };
        let heap = ((mean_url_len + 8.0) / 16.0).ceil() * 16.0;
        SeenStatus {
            backend: backend.to_string(),
            urls,
            bytes,
            bytes_per_url: per_url,
            hashset_bytes_per_url: (24.0 + 1.0) * 8.0 / 7.0 + heap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashset_cost_for_a_70_byte_url_is_over_100_bytes() {
        let s = SeenStatus::new("compact", 1000, 11_000, 70.0);
        assert_eq!(s.bytes_per_url, 11.0);
        assert!(
            s.hashset_bytes_per_url > 100.0,
            "{}",
            s.hashset_bytes_per_url
        );
    }

    #[test]
    fn json_round_trips() {
        let mut r = StatusReport {
            role: "crawl".into(),
            ..Default::default()
        };
        r.totals.errors.insert("timeout".into(), 3);
        r.rates.history.push((1000, 2.5));
        let text = serde_json::to_string(&r).unwrap();
        let back: StatusReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
    }
}
