//! robots.txt per RFC 9309, parsed by `texting_robots`, cached per origin.
//!
//! Outcome of fetching `/robots.txt` (RFC 9309 §2.3.1):
//! - 2xx: the rules, `Crawl-delay` (capped at 30 s) and `Sitemap:` lines;
//! - 4xx: no rules, everything allowed;
//! - 5xx, timeout or network error: the whole origin is disallowed *for now*
//!   and robots.txt is fetched again after [`RETRY_UNREACHABLE`].
//!
//! Bodies beyond [`MAX_ROBOTS_BYTES`] (500 KiB) are cut before parsing, as the
//! RFC allows. An entry lives [`CACHE_TTL`] (24 h). A 429 counts as
//! unreachable, not as 4xx (see [`Robots::from_response`]).
//!
//! Memory: [`RobotsCache`] holds at most its capacity of parsed rule sets
//! ([`CACHE_CAPACITY`] by default; a rule set is typically a few hundred
//! bytes, tens of KiB for the longest files). Past it, an eighth of the
//! capacity is dropped at a time: expired entries first, then the definite
//! outcomes that expire soonest, unreachable ones last (they are not
//! stored). A dropped definite outcome is read back from the state's
//! `robots.db` (`robots_store`) when its origin comes up again, not fetched
//! again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest robots.txt body parsed.
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;
/// How long a fetched robots.txt is trusted.
pub const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);
/// When an unreachable robots.txt is tried again.
pub const RETRY_UNREACHABLE: Duration = Duration::from_secs(60);
/// Upper bound on an honoured `Crawl-delay`.
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(30);

/// What robots.txt says about one origin.
#[derive(Debug)]
pub enum Robots {
    /// Parsed rules.
    Rules(Box<texting_robots::Robot>),
    /// robots.txt absent (4xx) or ignored: everything allowed.
    AllowAll,
    /// robots.txt unreachable (5xx, 429, timeout): nothing allowed until retried.
    Unreachable,
}

impl Robots {
    /// Interprets a robots.txt response (`status` 0 = network failure).
    pub fn from_response(status: u16, body: &[u8], agent: &str) -> Robots {
        match status {
            200..=299 => {
                let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
                match texting_robots::Robot::new(agent, body) {
                    Ok(r) => Robots::Rules(Box::new(r)),
                    // An unparseable file carries no rules we can honour.
                    Err(_) => Robots::AllowAll,
                }
            }
            // 429 Too Many Requests is the server asking us to slow down,
            // not saying there is no robots.txt: taken as unreachable (asked
            // again later, nothing fetched meanwhile), as Google does. RFC
            // 9309 lets a crawler read any 4xx as "allow all", which would
            // crawl a throttling site without its rules.
            429 => Robots::Unreachable,
            // A redirect chain given up on (a loop, more than five hops; see
            // `robots_fetch`) counts as "unavailable", like 4xx.
            300..=499 => Robots::AllowAll,
            _ => Robots::Unreachable,
        }
    }

    /// Whether `url` may be fetched.
    pub fn allowed(&self, url: &str) -> bool {
        match self {
            Robots::Rules(r) => r.allowed(url),
            Robots::AllowAll => true,
            Robots::Unreachable => false,
        }
    }

    /// The `Crawl-delay`, capped at [`MAX_CRAWL_DELAY`].
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            Robots::Rules(r) => r
                .delay
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|d| Duration::from_secs_f32(d.min(MAX_CRAWL_DELAY.as_secs_f32()))),
            _ => None,
        }
    }

    /// `Sitemap:` URLs.
    pub fn sitemaps(&self) -> &[String] {
        match self {
            Robots::Rules(r) => &r.sitemaps,
            _ => &[],
        }
    }
}

struct Entry {
    robots: Arc<Robots>,
    expires: Instant,
}

/// Origins whose parsed robots.txt [`RobotsCache::default`] keeps in memory.
pub const CACHE_CAPACITY: usize = 50_000;

/// Robots outcomes per origin (`scheme://host:port`), shared by all workers,
/// at most `capacity` of them (see the module docs).
pub struct RobotsCache {
    map: Mutex<HashMap<String, Entry>>,
    capacity: usize,
}

impl Default for RobotsCache {
    fn default() -> Self {
        Self::with_capacity(CACHE_CAPACITY)
    }
}

impl RobotsCache {
    /// A cache of at most `capacity` origins (at least 1).
    pub fn with_capacity(capacity: usize) -> Self {
        RobotsCache {
            map: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// Inserts under the lock, first dropping an eighth of the entries when
    /// the map is full: expired ones first, then the definite outcomes that
    /// expire soonest (`robots.db` has them), unreachable ones last (they
    /// are not stored: dropped, they would be asked again before their
    /// retry time).
    fn insert(&self, origin: &str, entry: Entry) {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= self.capacity && !map.contains_key(origin) {
            let drop = (self.capacity / 8).max(1).min(map.len());
            let now = Instant::now();
            let mut order: Vec<(u8, Instant, String)> = map
                .iter()
                .map(|(k, e)| {
                    let rank = match *e.robots {
                        _ if e.expires <= now => 0,
                        Robots::Unreachable => 2,
                        _ => 1,
                    };
                    (rank, e.expires, k.clone())
                })
                .collect();
            order.select_nth_unstable(drop - 1);
            for (_, _, k) in order.into_iter().take(drop) {
                map.remove(&k);
            }
        }
        map.insert(origin.to_string(), entry);
    }

    /// The cached outcome for `origin`, if still fresh.
    pub fn get(&self, origin: &str) -> Option<Arc<Robots>> {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let e = map.get(origin)?;
        (e.expires > Instant::now()).then(|| e.robots.clone())
    }

    /// Stores an outcome; unreachable ones expire after `retry` so they are retried.
    pub fn put(&self, origin: &str, robots: Robots, retry: Duration) -> Arc<Robots> {
        let ttl = match robots {
            Robots::Unreachable => retry,
            _ => CACHE_TTL,
        };
        let robots = Arc::new(robots);
        let entry = Entry {
            robots: robots.clone(),
            expires: Instant::now() + ttl,
        };
        self.insert(origin, entry);
        robots
    }

    /// Stores an outcome remembered from an earlier run, trusted for `ttl` more.
    pub fn put_for(&self, origin: &str, robots: Robots, ttl: Duration) -> Arc<Robots> {
        let robots = Arc::new(robots);
        let entry = Entry {
            robots: robots.clone(),
            expires: Instant::now() + ttl,
        };
        self.insert(origin, entry);
        robots
    }

    /// Number of origins cached.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether no origin is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UA: &str = "mgz";

    #[test]
    fn the_cache_keeps_its_capacity_and_the_longest_lived() {
        let cache = RobotsCache::with_capacity(8);
        for i in 0..40u64 {
            // Later origins live longer.
            cache.put_for(
                &format!("http://h{i}"),
                Robots::AllowAll,
                Duration::from_secs(100 + i),
            );
            assert!(cache.len() <= 8, "{} after {i}", cache.len());
        }
        assert!(cache.get("http://h39").is_some() && cache.get("http://h38").is_some());
        assert!(cache.get("http://h0").is_none());
        // Replacing an origin already cached drops nothing.
        let before = cache.len();
        cache.put_for("http://h39", Robots::Unreachable, Duration::from_secs(1));
        assert_eq!(cache.len(), before);
        // Expired entries go first.
        let cache = RobotsCache::with_capacity(2);
        cache.put_for("http://old", Robots::AllowAll, Duration::ZERO);
        cache.put_for("http://keep", Robots::AllowAll, Duration::from_secs(60));
        cache.put_for("http://new", Robots::AllowAll, Duration::from_secs(60));
        assert!(cache.get("http://keep").is_some() && cache.get("http://new").is_some());
        assert_eq!(cache.len(), 2);
        // Unreachable outcomes (never stored) outlive definite ones.
        let cache = RobotsCache::with_capacity(2);
        cache.put_for("http://down", Robots::Unreachable, Duration::from_secs(1));
        cache.put_for("http://rules", Robots::AllowAll, Duration::from_secs(60));
        cache.put_for("http://next", Robots::AllowAll, Duration::from_secs(60));
        assert!(cache.get("http://down").is_some() && cache.get("http://next").is_some());
        assert!(cache.get("http://rules").is_none());
        assert_eq!(RobotsCache::with_capacity(0).capacity, 1);
    }

    #[test]
    fn status_classes() {
        assert!(Robots::from_response(404, b"", UA).allowed("http://a/x"));
        assert!(!Robots::from_response(500, b"", UA).allowed("http://a/x"));
        for s in [401, 403, 410, 451] {
            assert!(
                Robots::from_response(s, b"", UA).allowed("http://a/x"),
                "{s}"
            );
        }
        let throttled = Robots::from_response(429, b"User-agent: *\nAllow: /\n", UA);
        assert!(matches!(throttled, Robots::Unreachable));
        assert!(!throttled.allowed("http://a/x"));
        assert!(!Robots::from_response(0, b"", UA).allowed("http://a/x"));
        let r = Robots::from_response(200, b"User-agent: *\nDisallow: /private\n", UA);
        assert!(r.allowed("http://a/x") && !r.allowed("http://a/private/1"));
    }

    #[test]
    fn delay_is_capped_and_sitemaps_listed() {
        let body = b"User-agent: *\nCrawl-delay: 3600\nSitemap: http://a/s.xml\n";
        let r = Robots::from_response(200, body, UA);
        assert_eq!(r.crawl_delay(), Some(MAX_CRAWL_DELAY));
        assert_eq!(r.sitemaps(), ["http://a/s.xml".to_string()]);
    }

    #[test]
    fn malformed_bodies_do_not_panic() {
        let mut huge = b"User-agent: *\n".to_vec();
        huge.extend(std::iter::repeat_n(b'a', 2 * MAX_ROBOTS_BYTES));
        for body in [
            &b"\xff\xfe\x00garbage\n\n::::"[..],
            b"Disallow",
            b"\0\0\0",
            &huge,
        ] {
            let r = Robots::from_response(200, body, UA);
            let _ = r.allowed("http://a/b");
        }
    }

    #[test]
    fn cache_expiry_for_unreachable_is_short() {
        let c = RobotsCache::default();
        c.put("http://a", Robots::Unreachable, RETRY_UNREACHABLE);
        assert!(c.get("http://a").is_some());
        assert!(c.get("http://b").is_none());
    }
}
