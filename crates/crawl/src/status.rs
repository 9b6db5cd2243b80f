//! The live status page of a running crawl (`mgz crawl --status ADDR`).
//!
//! [`CrawlStatus`] adapts the crawl's counters and its frontier to
//! [`mgz_status::StatusSource`]. A snapshot reads the atomics, one frontier
//! `stats` call and, for the busiest hosts, the stats of at most
//! [`HOSTS_SCANNED`] queues: bounded work per request, and none at all
//! while nobody looks at the page.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mgz_status::{HostStatus, SeenStatus, StatusReport, StatusSource, Totals};

use crate::run::Shared;

/// Queues whose sizes are compared to find the busiest hosts.
pub const HOSTS_SCANNED: u32 = 5_000;
/// Hosts listed as busiest.
const BUSIEST: usize = 10;
/// How long a busiest-host ranking is reused: ranking takes the frontier
/// lock once per queue, which the crawl's workers need too.
const BUSIEST_TTL: Duration = Duration::from_secs(5);

/// A crawl seen from its status page.
pub struct CrawlStatus {
    sh: Arc<Shared>,
    busiest: Mutex<Option<(Instant, Vec<HostStatus>)>>,
}

impl CrawlStatus {
    /// Wraps the crawl's shared state.
    pub fn new(sh: Arc<Shared>) -> Self {
        CrawlStatus {
            sh,
            busiest: Mutex::new(None),
        }
    }

    fn host(&self, key: &str, until_s: u64) -> HostStatus {
        let s = self.sh.queue.frontier().stats("", Some(key));
        HostStatus {
            host: key.to_string(),
            queued: s.size.saturating_sub(s.in_flight),
            in_flight: s.in_flight,
            delay_ms: self.sh.cfg.delay.as_millis() as u64,
            next_eligible_ms: until_s * 1000,
        }
    }

    fn busiest(&self) -> Vec<HostStatus> {
        let mut cache = self.busiest.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, hosts)) = cache.as_ref().filter(|(at, _)| at.elapsed() < BUSIEST_TTL) {
            return hosts.clone();
        }
        let hosts = self.rank_busiest();
        *cache = Some((Instant::now(), hosts.clone()));
        hosts
    }

    fn rank_busiest(&self) -> Vec<HostStatus> {
        let page = self
            .sh
            .queue
            .frontier()
            .list_queues("", 0, HOSTS_SCANNED, false);
        let mut hosts: Vec<HostStatus> = page.keys.iter().map(|k| self.host(k, 0)).collect();
        hosts.sort_by(|a, b| b.queued.cmp(&a.queued).then_with(|| a.host.cmp(&b.host)));
        hosts.truncate(BUSIEST);
        hosts
    }
}

impl StatusSource for CrawlStatus {
    fn report(&self) -> StatusReport {
        let c = &self.sh.counters;
        let stats = self.sh.queue.frontier().stats("", None);
        let queued_n = c.queued.load(Relaxed);
        let mean_len = if queued_n == 0 {
            0.0
        } else {
            c.queued_url_bytes.load(Relaxed) as f64 / queued_n as f64
        };
        let urls = stats.size + stats.completed;
        StatusReport {
            totals: Totals {
                fetched: c.pages_fetched.load(Relaxed),
                queued: stats.size.saturating_sub(stats.in_flight),
                in_flight: stats.in_flight,
                completed: stats.completed,
                errors: c.errors(),
                robots_excluded: c.robots_excluded.load(Relaxed),
                duplicates_avoided: c.duplicates_skipped.load(Relaxed),
            },
            seen: SeenStatus::new(
                &self.sh.cfg.seen_backend,
                urls,
                self.sh.queue.seen_bytes(),
                mean_len,
            ),
            busiest_hosts: self.busiest(),
            blocked_hosts: self
                .sh
                .queue
                .blocked_now()
                .into_iter()
                .map(|(k, until)| self.host(&k, until))
                .collect(),
            ..StatusReport::default()
        }
    }

    fn fetched_total(&self) -> u64 {
        self.sh.counters.pages_fetched.load(Relaxed)
    }

    fn extra_metrics(&self) -> String {
        let c = &self.sh.counters;
        format!(
            "# HELP mgz_pages_stored_total Pages stored.\n# TYPE mgz_pages_stored_total counter\n\
             mgz_pages_stored_total {}\n\
             # HELP mgz_traps_cut_total URLs cut as traps.\n# TYPE mgz_traps_cut_total counter\n\
             mgz_traps_cut_total {}\n",
            c.pages_stored.load(Relaxed),
            c.traps_cut.load(Relaxed)
        )
    }
}
