//! Failure warnings that a broken store would otherwise repeat for every
//! request: once the frontier refuses writes (a full disk poisons it), each
//! put batch of every client fails the same way, and `mgz serve` logged two
//! lines per batch — hundreds a second. A [`Limited`] logs the first failure
//! at once, then at most one line per [`EVERY_MS`], saying how many it held
//! back.
//!
//! State: the time of the last line (ms since the Unix epoch, 0 = never) and
//! the count held back since; both atomics, no lock on the request path.

use std::sync::atomic::{AtomicU64, Ordering};

/// Least time between two lines of one [`Limited`].
pub const EVERY_MS: u64 = 10_000;

/// One rate-limited warning site.
pub struct Limited {
    last_ms: AtomicU64,
    held: AtomicU64,
}

impl Limited {
    /// A site that has logged nothing yet.
    pub const fn new() -> Self {
        Limited {
            last_ms: AtomicU64::new(0),
            held: AtomicU64::new(0),
        }
    }

    /// Logs `what` with `err` unless a line went out less than
    /// [`EVERY_MS`] ago; returns whether it logged.
    pub fn warn(&self, what: &str, err: &dyn std::fmt::Display) -> bool {
        self.warn_at(now_ms(), what, err)
    }

    fn warn_at(&self, now: u64, what: &str, err: &dyn std::fmt::Display) -> bool {
        let last = self.last_ms.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= EVERY_MS;
        let won = due
            && (self.last_ms)
                .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        if !won {
            self.held.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let held_back = self.held.swap(0, Ordering::Relaxed);
        tracing::warn!(%err, held_back, "{what}");
        true
    }
}

impl Default for Limited {
    fn default() -> Self {
        Limited::new()
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_logs_then_one_line_per_interval() {
        let l = Limited::new();
        let t = 1_000_000;
        assert!(l.warn_at(t, "put failed", &"full"), "the first logs");
        let later: Vec<bool> = (1..100)
            .map(|i| l.warn_at(t + i, "put failed", &"full"))
            .collect();
        assert!(
            later.iter().all(|&logged| !logged),
            "held back within the interval"
        );
        assert_eq!(l.held.load(Ordering::Relaxed), 99);
        assert!(
            l.warn_at(t + EVERY_MS, "put failed", &"full"),
            "logs again after it"
        );
        assert_eq!(
            l.held.load(Ordering::Relaxed),
            0,
            "the count went out with it"
        );
        assert!(!l.warn_at(t + EVERY_MS + 1, "put failed", &"full"));
    }
}
