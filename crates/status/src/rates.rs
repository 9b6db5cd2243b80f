//! Rates over sliding windows from periodic samples of a running total.
//!
//! Layout: a ring (`VecDeque`) of `(unix_ms, total)` samples, one a second,
//! at most [`RateTracker::CAPACITY`] (one hour plus one) = 57 KiB. A rate
//! over a window is `(total_now - total_then) / (t_now - t_then)` using the
//! oldest sample inside the window. Invariant: samples are in time order;
//! a sample older than the newest is dropped (clock went back).

use std::collections::VecDeque;

use crate::Rates;

/// Sliding-window rate of a monotonically growing counter.
#[derive(Debug, Default)]
pub struct RateTracker {
    samples: VecDeque<(u64, u64)>,
}

/// Most points returned for the chart.
const CHART_POINTS: usize = 120;

impl RateTracker {
    /// Samples kept: one hour at one a second, plus the window's start.
    pub const CAPACITY: usize = 3601;

    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the counter's value at `now_ms`.
    pub fn record(&mut self, now_ms: u64, total: u64) {
        if self.samples.back().is_some_and(|&(last, _)| now_ms <= last) {
            return;
        }
        if self.samples.len() == Self::CAPACITY {
            self.samples.pop_front();
        }
        self.samples.push_back((now_ms, total));
    }

    /// Mean rate per second over the last `window_ms` (or all samples if fewer).
    pub fn rate_over(&self, window_ms: u64) -> f64 {
        let Some(&(t1, v1)) = self.samples.back() else {
            return 0.0;
        };
        let start = t1.saturating_sub(window_ms);
        let first = self.samples.iter().find(|(t, _)| *t >= start);
        match first {
            Some(&(t0, v0)) if t1 > t0 => v1.saturating_sub(v0) as f64 * 1000.0 / (t1 - t0) as f64,
            _ => 0.0,
        }
    }

    /// The rates and chart points for the page.
    pub fn rates(&self) -> Rates {
        Rates {
            pages_per_s_1m: self.rate_over(60_000),
            pages_per_s_1h: self.rate_over(3_600_000),
            history: self.history(),
        }
    }

    /// Per-interval rates, at most [`CHART_POINTS`] of them, oldest first.
    fn history(&self) -> Vec<(u64, f64)> {
        let n = self.samples.len();
        if n < 2 {
            return Vec::new();
        }
        let step = (n - 1).div_ceil(CHART_POINTS).max(1);
        let picked: Vec<(u64, u64)> = self.samples.iter().copied().step_by(step).collect();
        picked
            .windows(2)
            .map(|w| {
                let ((t0, v0), (t1, v1)) = (w[0], w[1]);
                (t1, v1.saturating_sub(v0) as f64 * 1000.0 / (t1 - t0) as f64)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_rate_is_reported_over_both_windows() {
        let mut r = RateTracker::new();
        for s in 0..=120u64 {
            r.record(1_000_000 + s * 1000, s * 10);
        }
        assert!((r.rate_over(60_000) - 10.0).abs() < 1e-9);
        assert!((r.rates().pages_per_s_1h - 10.0).abs() < 1e-9);
        let h = r.rates().history;
        assert!(!h.is_empty() && h.len() <= CHART_POINTS);
        assert!(h.iter().all(|&(_, v)| (v - 10.0).abs() < 1e-9));
    }

    #[test]
    fn minute_window_sees_a_recent_burst_hour_window_averages_it() {
        let mut r = RateTracker::new();
        let mut total = 0;
        for s in 0..=600u64 {
            total += if s > 540 { 100 } else { 0 };
            r.record(s * 1000, total);
        }
        assert!((r.rate_over(60_000) - 100.0).abs() < 1e-9);
        assert!((r.rate_over(3_600_000) - 6000.0 / 600.0).abs() < 1e-9);
    }

    #[test]
    fn capacity_is_bounded_and_clock_going_back_is_ignored() {
        let mut r = RateTracker::new();
        for s in 0..5000u64 {
            r.record(s * 1000, s);
        }
        r.record(10, 1_000_000);
        assert_eq!(r.samples.len(), RateTracker::CAPACITY);
        assert!((r.rate_over(60_000) - 1.0).abs() < 1e-9);
        assert_eq!(RateTracker::new().rates(), Rates::default());
    }
}
