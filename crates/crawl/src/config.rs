//! Crawl settings, with defaults that respect sites (`--per-host 1`,
//! `--delay 1000`, robots obeyed).

use std::path::PathBuf;
use std::time::Duration;

use crate::fetch::FetchConfig;
use crate::traps::{Scope, TrapLimits};

/// Which sitemaps a crawl reads. Their URLs get the depth of the page whose
/// visit first fetched the host's robots.txt, plus one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sitemaps {
    /// None.
    Off,
    /// Those named by robots.txt `Sitemap:` lines (the default).
    Robots,
    /// Those, and `/sitemap.xml` of every host (`--sitemaps`).
    RobotsAndGuess,
}

/// Everything a crawl run needs to know.
#[derive(Debug, Clone)]
pub struct CrawlConfig {
    /// Seed URLs (depth 0).
    pub seeds: Vec<String>,
    /// A file of more seed URLs, one per line (`#` comments and blank
    /// lines skipped), read in batches ([`crate::seeds`]).
    pub seeds_file: Option<PathBuf>,
    /// Frontier state directory (durable; reuse it to resume).
    pub state_dir: PathBuf,
    /// SQLite database of pages.
    pub db: PathBuf,
    /// Optional WARC output.
    pub warc: Option<PathBuf>,
    /// Deepest link depth fetched (seeds are 0).
    pub max_depth: u32,
    /// Stop after this many page responses (0 = no limit), counting those of
    /// earlier runs with the same state directory ([`crate::budget`]).
    pub max_pages: u64,
    /// Scope relative to the seeds.
    pub scope: Scope,
    /// Only URLs matching this pattern.
    pub include: Option<regex::Regex>,
    /// No URL matching this pattern.
    pub exclude: Option<regex::Regex>,
    /// Fetches in flight overall.
    pub concurrency: usize,
    /// Fetches in flight per host (per politeness unit, see `politeness`).
    pub per_host: u32,
    /// Gap between two requests to one host (raised to Crawl-delay).
    pub delay: Duration,
    /// Adaptive spacing: after each response, the host's next request
    /// waits at least this times the server's response time (at most
    /// 30 s; 0 turns it off; no effect on a host whose delay is 0). See
    /// [`crate::gate`].
    pub delay_factor: f64,
    /// What `per_host`, `delay` and a 429/503 block apply to: each host
    /// (default), or each registrable domain (`--politeness domain`: the
    /// hosts `a.example.com` and `b.example.com` share one queue, one delay
    /// and one in-flight cap, for sites that serve many subdomains from one
    /// server). A domain's delay is raised to the largest `Crawl-delay` of
    /// its hosts' robots.txt files; robots.txt itself, the per-host page
    /// budget and giving a dead host up stay per host.
    pub politeness: mgz_url::QueueKeyKind,
    /// Parsed robots.txt files kept in memory (see `robots_cache`); the rest are
    /// read back from the state's `robots.db` when needed.
    pub robots_cache: usize,
    /// Estimated bytes of parsed robots.txt files kept in memory (see
    /// `robots_cache`; a rule with `$` costs tens of KiB).
    pub robots_cache_bytes: usize,
    /// Seen-set backend name passed to the frontier.
    pub seen_backend: String,
    /// Canonicalisation policy.
    pub policy: mgz_url::Policy,
    /// HTTP client settings (user agent, timeouts, caps, `--resolve`, SSRF).
    pub fetch: FetchConfig,
    /// Ignore robots.txt entirely.
    pub ignore_robots: bool,
    /// Keep each page's visible text and its top terms (the `text` column
    /// and the text part of `keywords`). Off (`--no-text`): links, title
    /// and meta tags only, at about half the CPU per page (lol_html reads
    /// the page with its tag scanner; see [`crate::extract::extract_with`]),
    /// for archiving (`--warc`) and link-graph crawls (`store_links`).
    pub keep_text: bool,
    /// Store each HTML page's outgoing links (canonical, one row per
    /// distinct target) in the `links` table, in the page's transaction
    /// (see [`crate::store`]). Pages marked `nofollow` record none.
    pub store_links: bool,
    /// Which sitemaps are read.
    pub sitemaps: Sitemaps,
    /// How long to wait before asking an unreachable robots.txt again.
    pub robots_retry: Duration,
    /// How many times an unreachable robots.txt is retried before its URLs are dropped.
    pub robots_retries: u32,
    /// Trap limits.
    pub traps: TrapLimits,
    /// Base of the exponential back-off for retries and 429/503 without `Retry-After`.
    pub backoff: Duration,
    /// Network failures in a row (connect errors, timeouts) after which a
    /// host is given up for the run (see [`crate::health`]); 0 never.
    pub max_host_failures: u32,
    /// The least time those failures must span.
    pub host_give_up_after: Duration,
    /// How long a crawl with only retries left waits with nothing due
    /// before it ends and leaves them in the state for a later run.
    pub max_retry_wait: Duration,
    /// How long a URL handed to a worker stays leased in the frontier (it
    /// is served again after that, as one whose fetch was lost). A worker
    /// whose host's next slot is further off than half of it hands its URL
    /// back until then instead of waiting out the lease (see
    /// `worker::handle`). Whole seconds, at least 2. [`lease_for`] gives
    /// one long enough for the settings' slowest visit; leases are not
    /// durable, so a long one costs nothing after a restart.
    pub lease: Duration,
    /// Breadth-first waves, so every URL gets its least depth and
    /// `max_depth` is exact (see [`crate::queue`]). Off: the frontier's own
    /// order, faster on webs with a few very large hosts, depths approximate.
    pub strict_depth: bool,
    /// Keep the links of pages at `max_depth` in `STATE/edge`, so a rerun
    /// with a larger `max_depth` follows them (see [`crate::edge`]). Off for
    /// a state directory that is thrown away after the run.
    pub keep_edge: bool,
    /// Print progress (bar on a TTY, log lines otherwise).
    pub progress: bool,
    /// Serve the live status page (`/`, `/status.json`, `/metrics`) here.
    pub status: Option<std::net::SocketAddr>,
    /// Bearer token the status page requires, if any.
    pub status_token: Option<String>,
    /// Called once when the crawl is set up (frontier, store and client
    /// open, seeds queued), before the first fetch: the CLI releases the
    /// start-up code pages of its executable there.
    pub after_setup: Option<fn()>,
}

/// A lease long enough for the slowest visit of a URL under a `delay` and a
/// request `timeout`: the visit that first meets a host fetches its
/// robots.txt and reads up to 50 sitemap files (`MAX_SITEMAPS_PER_ORIGIN`),
/// each a slot of the host's gate apart (the delay, or a `Crawl-delay` of
/// up to 30 s), then fetches the page, each request taking
/// up to `timeout`. So: twice (files + 2) × (timeout + the longer of the
/// delay and 30 s), at least 600 s. A visit's waits for hosts' turns
/// (robots.txt, sitemaps, the page) end by half its lease together: a
/// turn further off hands the URL back (`worker::handle`), and the
/// requests fit in the other half. Defaults (1 s, 60 s):
/// 2 × 52 × 90 s = 2 h 36 min.
pub fn lease_for(delay: Duration, timeout: Duration) -> Duration {
    let slot = delay.max(crate::robots::MAX_CRAWL_DELAY);
    let visits =
        u32::try_from(crate::robots_fetch::MAX_SITEMAPS_PER_ORIGIN + 2).unwrap_or(u32::MAX);
    timeout
        .saturating_add(slot)
        .saturating_mul(visits.saturating_mul(2))
        .max(Duration::from_secs(600))
}

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            seeds: Vec::new(),
            seeds_file: None,
            state_dir: PathBuf::from("mgz-state"),
            db: PathBuf::from("mgz-crawl.db"),
            warc: None,
            max_depth: 5,
            max_pages: 0,
            scope: Scope::Host,
            include: None,
            exclude: None,
            concurrency: 32,
            per_host: 1,
            delay: Duration::from_millis(1000),
            delay_factor: crate::gate::DEFAULT_FACTOR,
            politeness: mgz_url::QueueKeyKind::Host,
            robots_cache: crate::robots_cache::CACHE_CAPACITY,
            robots_cache_bytes: crate::robots_cache::CACHE_BUDGET,
            seen_backend: "hash".into(),
            policy: mgz_url::Policy::safe(),
            fetch: FetchConfig::default(),
            ignore_robots: false,
            keep_text: true,
            store_links: false,
            sitemaps: Sitemaps::Robots,
            robots_retry: Duration::from_secs(60),
            robots_retries: 2,
            traps: TrapLimits::default(),
            backoff: Duration::from_secs(1),
            max_host_failures: 10,
            host_give_up_after: Duration::from_secs(300),
            max_retry_wait: Duration::from_secs(600),
            lease: lease_for(
                Duration::from_millis(1000),
                FetchConfig::default().total_timeout,
            ),
            strict_depth: true,
            keep_edge: true,
            progress: true,
            status: None,
            status_token: None,
            after_setup: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_outlasts_the_slowest_visit_of_its_settings() {
        let maps = crate::robots_fetch::MAX_SITEMAPS_PER_ORIGIN as u32;
        for (delay, timeout) in [(1, 60), (0, 1), (120, 60), (1, 3600), (0, 86_400)] {
            let (delay, timeout) = (Duration::from_secs(delay), Duration::from_secs(timeout));
            let lease = lease_for(delay, timeout);
            // robots.txt, every sitemap and the page, each a gate slot apart,
            // must fit in the half of the lease left after a wait for a turn.
            let slot = delay.max(crate::robots::MAX_CRAWL_DELAY);
            let visit = (timeout + slot) * (maps + 2);
            assert!(lease / 2 >= visit, "{delay:?} {timeout:?}: {lease:?}");
            assert!(lease >= Duration::from_secs(600));
        }
        assert_eq!(
            CrawlConfig::default().lease,
            Duration::from_secs(2 * 52 * 90)
        );
        // No overflow at the extremes.
        assert_eq!(lease_for(Duration::MAX, Duration::MAX), Duration::MAX);
    }
}
