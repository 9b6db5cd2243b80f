//! The bench's clock: nanoseconds this thread spent on a CPU (user and
//! kernel, page faults included), from `/proc/thread-self/schedstat`.
//!
//! Why not wall time: the bench machine has 2 cores shared by several
//! builds; wall time there mostly measures waiting for a core (a 1M-URL run
//! showed 18 s of CPU in 84 s of wall time). On-CPU time is what the
//! structure costs. Where the file is missing (not Linux), wall time is used
//! and [`Clock::kind`] says so.

use std::time::Instant;

/// A started measurement.
pub struct Clock {
    cpu: Option<u64>,
    wall: Instant,
}

fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

impl Clock {
    /// Starts measuring.
    pub fn start() -> Self {
        Self {
            cpu: thread_cpu_ns(),
            wall: Instant::now(),
        }
    }

    /// Nanoseconds since [`Clock::start`]: on-CPU when available, else wall.
    pub fn elapsed_ns(&self) -> f64 {
        match (self.cpu, thread_cpu_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64,
            _ => self.wall.elapsed().as_nanos() as f64,
        }
    }

    /// Which clock [`Clock::elapsed_ns`] reads.
    pub fn kind() -> &'static str {
        if thread_cpu_ns().is_some() {
            "on-CPU time of the bench thread"
        } else {
            "wall time"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_busy_work() {
        let c = Clock::start();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(c.elapsed_ns() > 0.0, "{x}");
    }
}
