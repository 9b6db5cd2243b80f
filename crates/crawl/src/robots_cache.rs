//! The robots.txt outcomes a crawl keeps in memory, per origin.
//!
//! Layout: one map entry per origin (`scheme://host:port` → the outcome,
//! when it expires, and its estimated heap: [`crate::robots::estimated_bytes`]
//! for parsed rules, plus [`ENTRY_BYTES`] and the origin's length for the
//! entry itself).
//!
//! Bounds: at most `capacity` origins ([`CACHE_CAPACITY`] by default) and
//! `budget` estimated bytes ([`CACHE_BUDGET`]). Parsed rules are mostly a
//! few hundred bytes, but `texting_robots` compiles each rule with a `$`
//! into a regex of 12–38 KiB once matched from two threads: a count alone
//! would let 50,000 files of ten such rules (160 KiB each) hold ~8 GiB.
//! When an insert passes either bound, entries are dropped until both are
//! back under seven eighths of it, in this order: expired, then definite
//! outcomes that expire soonest, unreachable ones last (they are not
//! stored: dropped, they would be asked again before their retry time).
//! The entry just inserted is kept, so one file larger than the whole
//! budget is still honoured (the bound is then the budget plus that file). A dropped definite outcome is read back from the
//! state's `robots.db` (`robots_store`) when its origin comes up again, not
//! fetched again: past the bounds memory stays flat and the cost is a
//! parse per read-back (~40 µs for the sim's five-rule file).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::robots::{CACHE_TTL, Robots};

/// Origins whose outcomes [`RobotsCache::default`] keeps in memory.
pub const CACHE_CAPACITY: usize = 50_000;
/// Estimated bytes [`RobotsCache::default`] keeps in memory.
pub const CACHE_BUDGET: usize = 64 << 20;
/// Estimated heap of an entry besides its rules and origin text: the map
/// slot, the `Arc` and the key's allocation.
pub const ENTRY_BYTES: usize = 128;

struct Entry {
    robots: Arc<Robots>,
    expires: Instant,
    bytes: usize,
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Entry>,
    /// Sum of the entries' `bytes`.
    bytes: usize,
}

/// Robots outcomes per origin, shared by all workers (see the module docs).
pub struct RobotsCache {
    inner: Mutex<Inner>,
    capacity: usize,
    budget: usize,
}

impl Default for RobotsCache {
    fn default() -> Self {
        Self::with_limits(CACHE_CAPACITY, CACHE_BUDGET)
    }
}

impl RobotsCache {
    /// A cache of at most `capacity` origins (at least 1) and
    /// [`CACHE_BUDGET`] estimated bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_limits(capacity, CACHE_BUDGET)
    }

    /// A cache of at most `capacity` origins (at least 1) and `budget`
    /// estimated bytes.
    pub fn with_limits(capacity: usize, budget: usize) -> Self {
        RobotsCache {
            inner: Mutex::default(),
            capacity: capacity.max(1),
            budget,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn insert(&self, origin: &str, robots: Arc<Robots>, ttl: Duration) {
        let bytes = ENTRY_BYTES + origin.len() + robots.heap_bytes();
        let entry = Entry {
            robots,
            expires: Instant::now() + ttl,
            bytes,
        };
        let mut inner = self.lock();
        inner.bytes += bytes;
        if let Some(old) = inner.map.insert(origin.to_string(), entry) {
            inner.bytes -= old.bytes;
        }
        if inner.map.len() > self.capacity || inner.bytes > self.budget {
            self.shrink(&mut inner, origin);
        }
    }

    /// Drops entries other than `keep` in the module docs' order until
    /// both bounds are back under seven eighths.
    fn shrink(&self, inner: &mut Inner, keep: &str) {
        let max_len = self.capacity - self.capacity / 8;
        let max_bytes = self.budget - self.budget / 8;
        let now = Instant::now();
        let mut order: Vec<(u8, Instant, &str, usize)> = (inner.map.iter())
            .filter(|(k, _)| k.as_str() != keep)
            .map(|(k, e)| {
                let rank = match *e.robots {
                    _ if e.expires <= now => 0,
                    Robots::Unreachable => 2,
                    _ => 1,
                };
                (rank, e.expires, k.as_str(), e.bytes)
            })
            .collect();
        order.sort_unstable();
        // Only the keys dropped are copied (the lock is held meanwhile).
        let (mut len, mut bytes) = (inner.map.len(), inner.bytes);
        let mut dropped = Vec::new();
        for (_, _, k, b) in order {
            if len <= max_len && bytes <= max_bytes {
                break;
            }
            dropped.push(k.to_string());
            (len, bytes) = (len - 1, bytes - b);
        }
        for k in dropped {
            if let Some(e) = inner.map.remove(&k) {
                inner.bytes -= e.bytes;
            }
        }
    }

    /// The cached outcome for `origin`, if still fresh.
    pub fn get(&self, origin: &str) -> Option<Arc<Robots>> {
        let inner = self.lock();
        let e = inner.map.get(origin)?;
        (e.expires > Instant::now()).then(|| e.robots.clone())
    }

    /// Stores an outcome; unreachable ones expire after `retry` so they are retried.
    pub fn put(&self, origin: &str, robots: Robots, retry: Duration) -> Arc<Robots> {
        let ttl = match robots {
            Robots::Unreachable => retry,
            _ => CACHE_TTL,
        };
        self.put_for(origin, robots, ttl)
    }

    /// Stores an outcome remembered from an earlier run, trusted for `ttl` more.
    pub fn put_for(&self, origin: &str, robots: Robots, ttl: Duration) -> Arc<Robots> {
        let robots = Arc::new(robots);
        self.insert(origin, robots.clone(), ttl);
        robots
    }

    /// Whether another entry fits without dropping one (a resume preloads
    /// remembered outcomes while this holds).
    pub fn has_room(&self) -> bool {
        let inner = self.lock();
        inner.map.len() < self.capacity && inner.bytes < self.budget
    }

    /// Number of origins cached.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether no origin is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Estimated bytes held (see the module docs).
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robots::RETRY_UNREACHABLE;

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
    fn cache_expiry_for_unreachable_is_short() {
        let c = RobotsCache::default();
        c.put("http://a", Robots::Unreachable, RETRY_UNREACHABLE);
        assert!(c.get("http://a").is_some());
        assert!(c.get("http://b").is_none());
    }

    #[test]
    fn the_cache_keeps_its_byte_budget() {
        let one = b"User-agent: *\nDisallow: /*.pdf$\n";
        let each = ENTRY_BYTES + "http://h00".len() + crate::robots::estimated_bytes(one);
        let cache = RobotsCache::with_limits(1000, 5 * each);
        assert!(cache.has_room());
        for i in 0..40u64 {
            let r = Robots::from_response(200, one, "mgz");
            cache.put_for(&format!("http://h{i:02}"), r, Duration::from_secs(100 + i));
            assert!(cache.bytes() <= 5 * each, "{} after {i}", cache.bytes());
            assert!(cache.get(&format!("http://h{i:02}")).is_some());
        }
        // A sixth entry passes the budget and the drop goes down to seven
        // eighths of it: 4 entries after every even insert.
        assert_eq!(cache.len(), 4);
        assert!(cache.get("http://h35").is_none() && cache.get("http://h36").is_some());
        assert!(cache.has_room());
        let r = Robots::from_response(200, one, "mgz");
        cache.put_for("http://h40", r, Duration::from_secs(200));
        assert!(!cache.has_room());
        // Outcomes without rules cost their entry only.
        cache.put_for("http://plain", Robots::AllowAll, Duration::from_secs(1));
        assert!(cache.get("http://plain").is_some());
        // A file larger than the whole budget is kept (alone): it is honoured.
        let mut big = b"User-agent: *\n".to_vec();
        for i in 0..10 {
            big.extend(format!("Disallow: /*.x{i}$\n").bytes());
        }
        let r = Robots::from_response(200, &big, "mgz");
        assert!(r.heap_bytes() > 5 * each);
        cache.put("http://big", r, RETRY_UNREACHABLE);
        assert!(!cache.get("http://big").unwrap().allowed("http://big/a.x3"));
        assert_eq!(cache.len(), 1);
        // The next insert drops it again.
        cache.put("http://next", Robots::AllowAll, RETRY_UNREACHABLE);
        assert!(cache.get("http://big").is_none() && cache.bytes() <= 5 * each);
    }
}
