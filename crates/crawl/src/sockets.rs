//! The crawl's open files: a share of the process's open-file limit for
//! each use ([`plan`]), and a bound on the sockets the fetcher keeps open
//! ([`SocketCap`]).
//!
//! Every socket is a descriptor, and so is every table file of the
//! frontier's store. Under the common soft limit of 1,024 a broad crawl
//! used to fail within a second ("Too many open files", first on the
//! frontier's own files: 60,000 pages on 20,000 hosts at `--delay 1000`
//! keep ~5,500 idle connections open). Three things keep it under:
//!
//! - `mgz` raises its soft limit to the hard one at start
//!   ([`raise_open_file_limit`]), as Go programs and most servers do;
//! - [`plan`] splits what the limit allows: the store's descriptor cache
//!   (a quarter, 16 to 900: fjall's default is 900), a reserve of
//!   [`OTHER_FILES`] for the page and robots databases, the WARC file and
//!   the runtime, one socket per request in flight (`--concurrency`,
//!   lowered to half of what is left when the limit is that tight), and
//!   the rest for idle connections;
//! - [`SocketCap`] stops keeping connections for reuse (requests go out
//!   with `Connection: close`) once the descriptors open reach that rest,
//!   or `--max-connections` sockets.
//!
//! # How the cap counts
//! reqwest's pool has no total cap and tells nobody when it drops a
//! connection, so the cap counts from both sides: every connect the client
//! starts goes through a connector layer ([`CountConnects`]) that counts
//! it, and the descriptors actually open are read from `/proc/self/fd`
//! ([`open_fds`]). The estimate is the count at the last reading plus the
//! connects started since, less the requests sent with `Connection: close`
//! that have ended since (each one's connection is closed at its end,
//! whether it was new or taken from the pool). It is never below the truth
//! but for a close a moment behind its request's end: a connect adds at
//! most one descriptor, and the other closes (idle connections expiring,
//! servers closing theirs) only lower it. A request is kept alive while the
//! estimate is below the cap; past it, the descriptors are read again (at
//! most every [`RESAMPLE`]; ~0.4 µs a descriptor, 0.85 ms for 2,000, so at
//! most ~2 % of a core while at the cap) and the answer taken from the
//! fresh count. Closed requests do not return their connection to the
//! pool, and the idle ones expire (`--delay` + 0.5 s), so the open sockets
//! come back under the cap. The bound that holds: idle connections ≤ the
//! cap, and all sockets ≤ the cap + the requests in flight (each opened at
//! most one). The cap's "sockets" are the descriptors opened since the
//! crawl's first request, so the files the stores open later count too: a
//! conservative share of a few dozen.
//!
//! Where `/proc/self/fd` cannot be read (not Linux) the closes cannot be
//! seen, and the cap keeps every connection (only the raised limit and
//! the idle timeout bound them).
//!
//! # Memory
//! A [`SocketCap`] is four counters and one reading (~100 bytes), whatever
//! the crawl's size: nothing per URL, host or connection. What it bounds
//! is the pool's ~47 KB per idle connection.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Descriptors reserved besides the store's table files and the sockets:
/// the page and robots databases (each with its WAL and shared-memory
/// file), the frontier's journals and logs, the WARC file, standard
/// streams, the runtime's epoll and event descriptors.
pub const OTHER_FILES: u64 = 128;

/// Most table files the store keeps open (fjall's own default).
pub const MAX_STORE_FILES: u64 = 900;

/// Fewest table files the store is given, however low the limit.
pub const MIN_STORE_FILES: u64 = 16;

/// Shortest time between two readings of the open descriptors.
pub const RESAMPLE: Duration = Duration::from_millis(50);

/// The process's soft limit on open files, if it has one.
pub fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile).current
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Raises the soft open-file limit to the hard one (or to 2^20 when the
/// hard one is unlimited: Linux refuses more than `fs.nr_open`, 2^20 by
/// default). A refusal leaves the limit as it was: the crawl then shares
/// out what it has ([`plan`]). Process-wide: for a binary's `main`, not a
/// library.
pub fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let now = getrlimit(Resource::Nofile);
        let target = now.maximum.unwrap_or(1 << 20);
        if now.current.is_some_and(|soft| soft < target) {
            let raised = Rlimit {
                current: Some(target),
                maximum: now.maximum,
            };
            let _ = setrlimit(Resource::Nofile, raised);
        }
    }
}

/// Descriptors this process has open, read from `/proc/self/fd` (the
/// reading's own descriptor not counted); `None` where that cannot be read.
pub fn open_fds() -> Option<u64> {
    let dir = std::fs::read_dir("/proc/self/fd").ok()?;
    Some((dir.count() as u64).saturating_sub(1))
}

/// How a crawl shares the open-file limit ([`plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdPlan {
    /// Requests in flight at once (`--concurrency`, lowered if the limit
    /// leaves too few descriptors for it).
    pub concurrency: usize,
    /// Table files the frontier's store keeps open (0: fjall's default).
    pub store_files: usize,
    /// Descriptors open past which no connection is kept for reuse
    /// (`u64::MAX`: no limit known).
    pub fd_ceiling: u64,
}

/// Shares the open-file limit `limit` (`None`: unknown or unlimited)
/// between the store's table files, [`OTHER_FILES`], `concurrency`
/// requests in flight and idle connections (see the module doc).
pub fn plan(limit: Option<u64>, concurrency: usize) -> FdPlan {
    let concurrency = concurrency.max(1);
    let Some(limit) = limit.filter(|&l| l < u64::MAX / 2) else {
        return FdPlan {
            concurrency,
            store_files: 0,
            fd_ceiling: u64::MAX,
        };
    };
    let store = (limit / 4).clamp(MIN_STORE_FILES, MAX_STORE_FILES);
    let sockets = limit.saturating_sub(store + OTHER_FILES);
    let concurrency = concurrency.min(usize::try_from(sockets / 2).unwrap_or(usize::MAX).max(1));
    FdPlan {
        concurrency,
        store_files: usize::try_from(store).unwrap_or(usize::MAX),
        fd_ceiling: sockets.saturating_sub(concurrency as u64),
    }
}

/// Counts the open descriptors (see [`open_fds`]); a test gives its own.
pub type FdCounter = Box<dyn Fn() -> Option<u64> + Send + Sync>;

/// Decides, request by request, whether the connection may be kept for
/// reuse (see the module doc for how it counts).
pub struct SocketCap {
    /// Sockets kept at most: descriptors opened since the first request
    /// (`u64::MAX`: no cap).
    max_sockets: u64,
    /// Descriptors open at most, all uses together ([`FdPlan::fd_ceiling`]).
    fd_ceiling: u64,
    count: FdCounter,
    /// Shortest time between two readings ([`RESAMPLE`]).
    resample: Duration,
    /// Connects started, ever (counted by [`CountConnects`]).
    connects: AtomicU64,
    /// Requests sent with `Connection: close` because of the cap.
    closed: AtomicU64,
    /// Of those, the ones that have ended ([`Closing`] dropped).
    ended: AtomicU64,
    reading: Mutex<Reading>,
}

/// The last reading of the open descriptors (meaningless until `at` is
/// set by the first one).
#[derive(Debug, Clone, Copy)]
struct Reading {
    /// Descriptors open at the first reading (the first request).
    base: u64,
    /// Descriptors open at the last reading.
    open: u64,
    /// [`SocketCap::connects`] just before that reading.
    connects: u64,
    /// [`SocketCap::ended`] just before that reading.
    ended: u64,
    at: Option<Instant>,
}

impl std::fmt::Debug for SocketCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocketCap")
            .field("max_sockets", &self.max_sockets)
            .field("fd_ceiling", &self.fd_ceiling)
            .field("connects", &self.connects)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

impl SocketCap {
    /// A cap of `max_sockets` sockets (0: none) and `fd_ceiling`
    /// descriptors in all, counted by [`open_fds`].
    pub fn new(max_sockets: usize, fd_ceiling: u64) -> SocketCap {
        SocketCap::counting(max_sockets, fd_ceiling, Box::new(open_fds), RESAMPLE)
    }

    /// The same, counted by `count`, read again at most every `resample`.
    pub fn counting(
        max_sockets: usize,
        fd_ceiling: u64,
        count: FdCounter,
        resample: Duration,
    ) -> SocketCap {
        SocketCap {
            max_sockets: match max_sockets {
                0 => u64::MAX,
                n => n as u64,
            },
            fd_ceiling,
            count,
            resample,
            connects: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            reading: Mutex::new(Reading {
                base: 0,
                open: 0,
                connects: 0,
                ended: 0,
                at: None,
            }),
        }
    }

    /// Whether the cap is anything but unlimited.
    fn capped(&self) -> bool {
        self.max_sockets != u64::MAX || self.fd_ceiling != u64::MAX
    }

    /// Counts a connect about to start.
    pub fn connecting(&self) {
        self.connects.fetch_add(1, Ordering::Relaxed);
    }

    /// Connects started so far.
    pub fn connects(&self) -> u64 {
        self.connects.load(Ordering::Relaxed)
    }

    /// Requests sent with `Connection: close` because of the cap so far.
    pub fn closed(&self) -> u64 {
        self.closed.load(Ordering::Relaxed)
    }

    /// `None` when the next request may leave its connection open for
    /// reuse; otherwise the caller sends it with `Connection: close` and
    /// drops the [`Closing`] when the request has ended (its response read
    /// or failed), which counts its connection closed.
    pub fn admit(&self) -> Option<Closing<'_>> {
        // Not `then_some`: a `Closing` made and thrown away would count.
        (!self.keep_alive()).then(|| Closing(self))
    }

    /// Whether the next request may leave its connection open for reuse;
    /// `false` counts a request the caller sends with `Connection: close`
    /// (see [`SocketCap::admit`]).
    pub fn keep_alive(&self) -> bool {
        if !self.capped() {
            return true;
        }
        // One lock for the reading: a request that finds the count stale
        // reads the descriptors holding it (~0.4 µs a descriptor, at most
        // every `resample`), and the others wait that long rather than
        // read them too.
        let mut r = self.reading.lock().unwrap_or_else(|e| e.into_inner());
        if r.at.is_none() {
            // The first request: its reading is the base. Unreadable: no cap.
            if !self.read(&mut r) {
                return true;
            }
            r.base = r.open;
        }
        if self.under(&r) {
            return true;
        }
        let stale = r.at.is_none_or(|at| at.elapsed() >= self.resample);
        if stale && self.read(&mut r) && self.under(&r) {
            return true;
        }
        self.closed.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Reads the open descriptors into `r`; `false` when they cannot be
    /// read (nothing is capped then: closes would go unseen).
    fn read(&self, r: &mut Reading) -> bool {
        let connects = self.connects.load(Ordering::Relaxed);
        let ended = self.ended.load(Ordering::Relaxed);
        let Some(open) = (self.count)() else {
            return false;
        };
        *r = Reading {
            base: r.base,
            open,
            connects,
            ended,
            at: Some(Instant::now()),
        };
        true
    }

    /// Whether the estimate from `r` is under both bounds.
    fn under(&self, r: &Reading) -> bool {
        let opened = (self.connects.load(Ordering::Relaxed)).wrapping_sub(r.connects);
        let ended = (self.ended.load(Ordering::Relaxed)).wrapping_sub(r.ended);
        let open = r.open.saturating_add(opened).saturating_sub(ended);
        open < self.fd_ceiling && open.saturating_sub(r.base) < self.max_sockets
    }
}

/// A request sent with `Connection: close` ([`SocketCap::admit`]); its
/// drop counts the request's connection closed.
#[derive(Debug)]
pub struct Closing<'a>(&'a SocketCap);

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        self.0.ended.fetch_add(1, Ordering::Relaxed);
    }
}

/// A reqwest connector layer that counts every connect the client starts
/// into a [`SocketCap`] (`ClientBuilder::connector_layer`).
#[derive(Debug, Clone)]
pub struct CountConnects(pub std::sync::Arc<SocketCap>);

impl<S> tower_layer::Layer<S> for CountConnects {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        Counted {
            inner,
            cap: self.0.clone(),
        }
    }
}

/// The connector service of [`CountConnects`].
#[derive(Debug, Clone)]
pub struct Counted<S> {
    inner: S,
    cap: std::sync::Arc<SocketCap>,
}

impl<S, R> tower_service::Service<R> for Counted<S>
where
    S: tower_service::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> S::Future {
        self.cap.connecting();
        self.inner.call(req)
    }
}

#[cfg(test)]
mod tests;
