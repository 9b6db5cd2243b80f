//! Politeness across restarts: when the crawl's last request may have been.
//!
//! The gates ([`crate::gate`]) space each host's requests within a run. A
//! rerun started right after a stop or a kill would begin with fresh gates
//! and could ask a host again within milliseconds of the last request the
//! stopped run sent it. So the crawl keeps `STATE/last-request`: a Unix time
//! in milliseconds and a newline (`1733380000123\n`), a bound such that no
//! request of an earlier run was in flight after it (a promise written
//! ahead, see below). A run reads it at open; the first request to any host
//! then waits until one delay of that host after `min(bound, now)`
//! ([`Pace::floor`], [`crate::gate::Gates::resuming`]). Both terms are at
//! or after the stopped run's last request activity (a rerun starts after
//! the run before it ended), so the gap a server sees across the restart is
//! at least its delay; the `now` term also bounds the wait when the clock
//! was set back. A crawl resumed long after its last request waits for
//! nothing.
//!
//! Writes, so the bound holds at a SIGKILL: a request starts only while the
//! file promises at least [`RENEW_AT`] more (if not, it is extended to
//! now + [`AHEAD`] before the request leaves), and while requests are in
//! flight a ticker ([`Pace::keep_up`], every [`TICK`]) extends it the same
//! way, so a long download is covered until it ends. When a run ends with
//! nothing in flight the exact time is written and synced. About two small
//! writes a second while the crawl is busy, none while it is idle; a write
//! is a replacement by rename (never torn). A failed write (a full disk) is
//! logged once and the crawl goes on: the frontier and the page store
//! report the cause, and a rerun reads the last bound written.
//!
//! A file that is not such a time is refused with [`CrawlError::State`]
//! and left as it is.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{CrawlError, state_file};

/// Name of the file in the state directory.
pub const FILE: &str = "last-request";
/// How far ahead a write promises.
pub const AHEAD: Duration = Duration::from_millis(1_000);
/// A request starts only while the promise has at least this much left.
pub const RENEW_AT: Duration = Duration::from_millis(500);
/// How often the ticker looks at the promise while requests are in flight.
pub const TICK: Duration = Duration::from_millis(250);
/// Longest file read.
const MAX_FILE: u64 = 64;

/// The crawl's promise about its last request (see the module docs).
pub struct Pace {
    path: PathBuf,
    /// Bound written by an earlier run, Unix ms.
    earlier: Option<u64>,
    /// Bound this run wrote last, Unix ms (0: none yet).
    promised: AtomicU64,
    /// Requests between [`Pace::start`] and the drop of its guard.
    in_flight: AtomicUsize,
    /// Serialises writes.
    writing: Mutex<()>,
    /// A write failed (logged once).
    failed: AtomicBool,
}

/// Milliseconds since the Unix epoch of `t` (0 before it).
fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

/// A request in flight; dropping it ends the request.
pub struct InFlight<'a>(&'a Pace);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Pace {
    /// Reads `dir/last-request` (absent: no earlier request).
    pub fn open(dir: &Path) -> Result<Pace, CrawlError> {
        let path = dir.join(FILE);
        let earlier = match state_file::read(&path, MAX_FILE)? {
            Some(bytes) => Some(parse_bound(&bytes).map_err(|r| state_file::bad(&path, r))?),
            None => None,
        };
        Ok(Pace {
            path,
            earlier,
            promised: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            writing: Mutex::new(()),
            failed: AtomicBool::new(false),
        })
    }

    /// The bound an earlier run left, if any.
    pub fn earlier(&self) -> Option<SystemTime> {
        self.earlier
            .map(|ms| UNIX_EPOCH + Duration::from_millis(ms))
    }

    /// The moment from which this run counts each host's first delay:
    /// `min(earlier bound, now)`, `None` for a crawl with no earlier request.
    pub fn floor(&self, now: SystemTime) -> Option<SystemTime> {
        self.earlier().map(|t| t.min(now))
    }

    /// A request is about to leave: the file is made to promise past it
    /// first. Hold the guard until the request has ended.
    pub fn start(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.renew(SystemTime::now());
        InFlight(self)
    }

    /// The ticker's step: extends the promise while requests are in flight.
    pub fn keep_up(&self) {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            self.renew(SystemTime::now());
        }
    }

    /// Runs [`Pace::keep_up`] every [`TICK`] until the task is dropped.
    pub async fn tick_forever(&self) {
        let mut every = tokio::time::interval(TICK);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            self.keep_up();
        }
    }

    /// The run ends: with nothing in flight, the exact time is written and
    /// synced (a quick rerun then waits one delay from now, not from the
    /// promise ahead).
    pub fn finish(&self) {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return;
        }
        let _w = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        if self.promised.load(Ordering::Acquire) == 0 {
            return; // this run sent nothing: the earlier bound stands
        }
        let now = unix_ms(SystemTime::now());
        self.write(now, true);
    }

    /// Writes now + [`AHEAD`] if the promise has less than [`RENEW_AT`] left.
    fn renew(&self, now: SystemTime) {
        let now = unix_ms(now);
        let due = |p: u64| p < now.saturating_add(ms(RENEW_AT));
        if !due(self.promised.load(Ordering::Acquire)) {
            return;
        }
        let _w = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        if due(self.promised.load(Ordering::Acquire)) {
            self.write(now.saturating_add(ms(AHEAD)), false);
        }
    }

    /// Writes `bound` (the caller holds `writing`).
    fn write(&self, bound: u64, sync: bool) {
        match state_file::replace(&self.path, format!("{bound}\n").as_bytes(), sync) {
            Ok(()) => self.promised.store(bound, Ordering::Release),
            Err(e) => {
                if !self.failed.swap(true, Ordering::AcqRel) {
                    tracing::warn!(
                        "{}: {e} (a rerun may ask hosts sooner than their delay)",
                        self.path.display()
                    );
                }
            }
        }
    }
}

/// The bound a `last-request` file holds: Unix milliseconds in decimal
/// digits and an optional newline, at most 63 bytes (what [`Pace`] writes
/// is `"{ms}\n"`).
pub fn parse_bound(bytes: &[u8]) -> Result<u64, String> {
    state_file::parse_number(bytes, MAX_FILE, "a time in Unix milliseconds")
}

#[cfg(test)]
mod tests;
