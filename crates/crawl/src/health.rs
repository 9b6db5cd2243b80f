//! Hosts given up for the rest of a run after failing at the network level
//! again and again (a server that went down mid-crawl, or answers nothing).
//!
//! Without this, every queued URL of a dead host is tried and retried
//! ([`crate::worker::MAX_RETRIES`] times, each waiting up to the connect or
//! read timeout), one at a time per host: thousands of URLs take hours and
//! keep knocking on a server that is not there. A host is given up once it
//! has failed [`HostHealth::new`]'s `max_failures` times in a row (connect
//! errors, timeouts, TLS failures such as a certificate not trusted; any
//! HTTP answer, even an error status, resets the
//! count) over at least `min_span`, so a short outage does not cost a host
//! its pages. Its remaining URLs are then recorded as failed
//! (`host_unreachable`) without a request. A host that fails before robots.txt
//! answers never gets this far: an unreachable robots.txt already holds its
//! URLs back (`crate::robots`), each asked again `--robots-retries` times;
//! once one URL has been held back through all of them, or the host's
//! robots.txt failed `--robots-retries` + 1 fetches in a row over the retry
//! span ([`HostHealth::robots_hopeless`]), the host is given up on
//! robots.txt ([`HostHealth::give_up_robots`]) and its other URLs are
//! settled (`robots_unreachable`) when next served, without waiting out
//! the same retries each (`crate::worker`).
//!
//! Memory: for network failures and for robots.txt failures alike, one map
//! entry (host name, count, first failure's instant) per host currently
//! failing, removed on its next answer or when it is given up, and one set
//! entry (host name) per host given up. Nothing per URL; all of it lasts
//! one run.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Consecutive network failures per host, and the hosts given up.
pub struct HostHealth {
    max_failures: u32,
    min_span: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Host → (failures in a row, when the first of them happened).
    failing: HashMap<String, (u32, Instant)>,
    dead: HashSet<String>,
    /// Host → (robots.txt fetches unreachable in a row, when the first of
    /// them happened): fetches, not URLs held back (an unreachable
    /// robots.txt is cached for `--robots-retry`, so these are that far
    /// apart).
    robots_failing: HashMap<String, (u32, Instant)>,
    /// Hosts whose robots.txt stayed unreachable through every retry.
    robots_gone: HashSet<String>,
}

impl HostHealth {
    /// Gives a host up after `max_failures` network failures in a row that
    /// span at least `min_span`; `max_failures` 0 never gives up.
    pub fn new(max_failures: u32, min_span: Duration) -> HostHealth {
        HostHealth {
            max_failures,
            min_span,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `host` was given up.
    pub fn is_dead(&self, host: &str) -> bool {
        self.max_failures > 0 && self.state().dead.contains(host)
    }

    /// `host` answered: its failure count starts again.
    pub fn answered(&self, host: &str) {
        if self.max_failures > 0 {
            let mut s = self.state();
            if !s.failing.is_empty() {
                s.failing.remove(host);
            }
        }
    }

    /// `host` failed at the network level; true when this gives it up.
    pub fn failed(&self, host: &str) -> bool {
        if self.max_failures == 0 {
            return false;
        }
        let mut s = self.state();
        if s.dead.contains(host) {
            return false;
        }
        let now = Instant::now();
        let entry = s.failing.entry(host.to_string()).or_insert((0, now));
        entry.0 += 1;
        let (count, since) = *entry;
        if count >= self.max_failures && now.duration_since(since) >= self.min_span {
            s.failing.remove(host);
            s.dead.insert(host.to_string());
            return true;
        }
        false
    }

    /// Hosts given up so far.
    pub fn dead_hosts(&self) -> usize {
        self.state().dead.len()
    }

    /// A fetch of `host`'s robots.txt came to nothing (unreachable).
    pub fn robots_failed(&self, host: &str) {
        let mut s = self.state();
        let now = Instant::now();
        s.robots_failing
            .entry(host.to_string())
            .or_insert((0, now))
            .0 += 1;
    }

    /// A fetch of `host`'s robots.txt was answered: its count starts again.
    pub fn robots_answered(&self, host: &str) {
        let mut s = self.state();
        if !s.robots_failing.is_empty() {
            s.robots_failing.remove(host);
        }
    }

    /// Whether `host`'s robots.txt was fetched more than `retries` times
    /// in a row without an answer, the first at least `span` ago: a URL
    /// held back by it need not wait out retries of its own.
    pub fn robots_hopeless(&self, host: &str, retries: u32, span: Duration) -> bool {
        self.state()
            .robots_failing
            .get(host)
            .is_some_and(|&(n, since)| n > retries && since.elapsed() >= span)
    }

    /// `host`'s robots.txt stayed unreachable through every retry: its
    /// other URLs are not asked for it again this run. True the first
    /// time (whatever `max_failures` is: the retries were the test).
    pub fn give_up_robots(&self, host: &str) -> bool {
        let mut s = self.state();
        if s.robots_gone.contains(host) {
            return false;
        }
        s.robots_failing.remove(host);
        s.robots_gone.insert(host.to_string())
    }

    /// Whether `host` was given up on robots.txt ([`HostHealth::give_up_robots`]).
    pub fn robots_given_up(&self, host: &str) -> bool {
        let s = self.state();
        !s.robots_gone.is_empty() && s.robots_gone.contains(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_given_up_after_failures_in_a_row() {
        let h = HostHealth::new(3, Duration::ZERO);
        assert!(!h.failed("a") && !h.failed("a"));
        h.answered("a"); // an answer starts the count again
        assert!(!h.failed("a") && !h.failed("a") && !h.is_dead("a"));
        assert!(!h.failed("b"));
        assert!(h.failed("a"), "third failure in a row");
        assert!(h.is_dead("a") && !h.is_dead("b"));
        assert!(!h.failed("a"), "given up once");
        assert_eq!(h.dead_hosts(), 1);
    }

    #[test]
    fn a_short_outage_does_not_give_a_host_up() {
        let h = HostHealth::new(2, Duration::from_secs(3600));
        for _ in 0..100 {
            assert!(!h.failed("a"));
        }
        assert!(!h.is_dead("a"));
    }

    #[test]
    fn a_host_is_given_up_on_robots_once_and_alone() {
        let h = HostHealth::new(0, Duration::ZERO);
        assert!(!h.robots_given_up("a"));
        assert!(h.give_up_robots("a"), "the first time");
        assert!(!h.give_up_robots("a"), "once");
        assert!(h.robots_given_up("a") && !h.robots_given_up("b"));
        // Not the same as dead: its pages were never asked for.
        assert!(!h.is_dead("a") && h.dead_hosts() == 0);
    }

    #[test]
    fn robots_txt_is_hopeless_after_failed_fetches_in_a_row_over_the_span() {
        let h = HostHealth::new(3, Duration::ZERO);
        assert!(!h.robots_hopeless("a", 0, Duration::ZERO), "never asked");
        h.robots_failed("a");
        assert!(h.robots_hopeless("a", 0, Duration::ZERO));
        assert!(!h.robots_hopeless("a", 1, Duration::ZERO), "one retry left");
        h.robots_failed("a");
        assert!(h.robots_hopeless("a", 1, Duration::ZERO));
        assert!(
            !h.robots_hopeless("a", 1, Duration::from_secs(3600)),
            "too soon"
        );
        assert!(!h.robots_hopeless("b", 0, Duration::ZERO));
        h.robots_answered("a"); // an answer starts the count again
        assert!(!h.robots_hopeless("a", 0, Duration::ZERO));
        h.robots_failed("a");
        assert!(h.give_up_robots("a"));
        assert!(
            !h.robots_hopeless("a", 0, Duration::ZERO),
            "given up: forgotten"
        );
        // Network failures are another count.
        assert!(!h.is_dead("a") && !h.failed("a"));
    }

    #[test]
    fn zero_never_gives_up() {
        let h = HostHealth::new(0, Duration::ZERO);
        for _ in 0..100 {
            assert!(!h.failed("a"));
        }
        assert!(!h.is_dead("a"));
    }
}
