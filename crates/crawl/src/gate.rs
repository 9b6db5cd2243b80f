//! Per-host request spacing: every request to a host (robots.txt, sitemaps,
//! pages, redirects) takes a slot from its gate, and consecutive slots of one
//! host are at least that host's delay apart (`--delay`, raised to its
//! robots.txt `Crawl-delay`). The frontier already spaces the leases it
//! serves; the gate also covers the extra robots/sitemap requests a lease may
//! cause, so the spacing seen by a server always holds.
//!
//! A gate's key is a politeness unit: the host, or with `--politeness
//! domain` its registrable domain ([`crate::run::Shared::politeness_unit`]),
//! so that all hosts of one domain share one gate.
//!
//! Memory: one map entry per host (~64 bytes).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
struct HostSlot {
    next: Instant,
    delay: Duration,
}

/// Gates for all hosts.
pub struct Gates {
    default_delay: Duration,
    hosts: Mutex<HashMap<String, HostSlot>>,
}

impl Gates {
    /// Gates with `default_delay` between requests to one host.
    pub fn new(default_delay: Duration) -> Gates {
        Gates {
            default_delay,
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// Raises `host`'s delay to at least `delay`.
    pub fn raise_delay(&self, host: &str, delay: Duration) {
        let mut m = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let slot = m.entry(host.to_string()).or_insert(HostSlot {
            next: now,
            delay: self.default_delay,
        });
        if delay > slot.delay {
            // The slot already taken was spaced by the old delay; push the next one out.
            slot.next += delay - slot.delay;
            slot.delay = delay;
        }
    }

    /// The current delay of `host`.
    pub fn delay(&self, host: &str) -> Duration {
        let m = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        m.get(host).map_or(self.default_delay, |s| s.delay)
    }

    /// Reserves the next slot of `host` and returns when it starts.
    pub fn reserve(&self, host: &str) -> Instant {
        let mut m = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let slot = m.entry(host.to_string()).or_insert(HostSlot {
            next: now,
            delay: self.default_delay,
        });
        let start = slot.next.max(now);
        slot.next = start + slot.delay;
        start
    }

    /// Notes that a request to `host` just finished: the next one starts no
    /// sooner than one delay from now. Spacing from the end as well as from
    /// the reserved start keeps the gap a server sees at least the delay even
    /// when a request left late (a busy machine, a slow connect).
    pub fn done(&self, host: &str) {
        let mut m = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let slot = m.entry(host.to_string()).or_insert(HostSlot {
            next: now,
            delay: self.default_delay,
        });
        slot.next = slot.next.max(now + slot.delay);
    }

    /// Waits for the next slot of `host`.
    pub async fn wait(&self, host: &str) {
        let start = self.reserve(host);
        tokio::time::sleep_until(start.into()).await;
    }

    /// Number of hosts seen.
    pub fn hosts(&self) -> usize {
        self.hosts.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_spaced_per_host() {
        let g = Gates::new(Duration::from_millis(100));
        let a1 = g.reserve("a");
        let a2 = g.reserve("a");
        let b1 = g.reserve("b");
        assert!(a2 - a1 >= Duration::from_millis(100));
        assert!(b1 < a2);
        g.raise_delay("a", Duration::from_millis(500));
        let a3 = g.reserve("a");
        assert!(a3 - a2 >= Duration::from_millis(500));
        assert_eq!(g.delay("a"), Duration::from_millis(500));
        g.raise_delay("a", Duration::from_millis(10));
        assert_eq!(g.delay("a"), Duration::from_millis(500));
    }
}
