//! The knobs of a synthetic web. Everything a page looks like follows from
//! these fields and the (host, path) asked for; two servers with equal configs
//! serve byte-identical webs.

/// Configuration of one synthetic web.
///
/// The defaults describe the demo web: 300 hosts, about 30,000 regular pages,
/// and every slow feature bounded so that a polite crawl of it on loopback
/// finishes in well under a minute.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct SimConfig {
    /// Seed of every random choice (host features, pages, links, text).
    pub seed: u64,
    /// Number of virtual hosts.
    pub hosts: u32,
    /// Total number of regular pages, split over hosts by a Zipf law (every host has at least one).
    pub pages: u32,
    /// Latency added to every response, in milliseconds.
    pub latency_ms: u64,
    /// Extra latency of every response from a "slow" host, in milliseconds.
    pub slow_ms: u64,
    /// How long a "timeout" robots.txt stalls before the connection is closed without an answer.
    pub robots_timeout_ms: u64,
    /// The `Crawl-delay` (seconds) announced by hosts whose robots.txt carries one.
    pub crawl_delay_secs: f32,
    /// The `Retry-After` (seconds) sent with 503 and 429 answers.
    pub retry_after_secs: u32,
    /// Body size of an oversized page, in bytes.
    pub oversized_bytes: usize,
    /// Zipf exponent of host popularity (pages per host and cross-host link targets).
    pub zipf_exponent: f64,
    /// How many home pages `seeds()` returns (the most popular hosts first).
    pub seed_count: u32,
    /// How many request records the server keeps (the oldest are dropped beyond it).
    pub log_capacity: usize,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            hosts: 300,
            pages: 30_000,
            latency_ms: 0,
            slow_ms: 150,
            robots_timeout_ms: 2_000,
            crawl_delay_secs: 0.5,
            retry_after_secs: 1,
            oversized_bytes: 3 * 1024 * 1024,
            zipf_exponent: 1.0,
            seed_count: 5,
            log_capacity: 1_000_000,
        }
    }
}

impl SimConfig {
    /// A small web for tests: `hosts` hosts, `pages` pages, no slow features.
    pub fn small(seed: u64, hosts: u32, pages: u32) -> Self {
        SimConfig {
            seed,
            hosts,
            pages,
            slow_ms: 20,
            robots_timeout_ms: 200,
            oversized_bytes: 256 * 1024,
            ..SimConfig::default()
        }
    }
}
