//! A bound on the bytes of response bodies held at once, across all fetches.
//!
//! A body is read whole before it is parsed and stored (the WARC record,
//! SHA-256 and the parser need it), and `--max-body` caps one at 10 MB. So
//! without a shared bound a crawl held up to `--concurrency` × 10 MB of
//! bodies (and sitemaps, capped at 50 MB each): 456–931 MB of peak RSS for
//! 120 pages of 9 MiB at `--concurrency 128`, 154 MB with the default budget
//! (docs/BENCHMARKS.md, "Large bodies").
//!
//! ```text
//! BodyBudget: semaphore of `total` KiB   +   overdraft: one mutex
//! a fetch's BodyLease:
//!   a Content-Length past FREE          -> permits for the whole body, before
//!                                          its first byte is read
//!   first FREE bytes of its body        -> no permit (small pages never wait)
//!   each growth of the buffer past FREE -> permits for the new capacity, or,
//!                                          when none are free, the overdraft
//!                                          (then it grows unchecked)
//!   dropped with the body               -> permits and overdraft returned
//! ```
//!
//! Bound: bodies hold at most `total + FREE × fetches in flight + one body
//! cap` (the overdraft holder's) of buffer capacity.
//!
//! Cost: the budget itself is a few hundred bytes per crawl; a lease is
//! `size_of::<BodyLease>()` (48 bytes with tokio 1.54) per fetch in flight,
//! nothing per URL.
//!
//! Why an overdraft: fetches that each hold part of the budget and wait for
//! more would wait for one another for ever. A fetch that cannot get
//! permits waits for permits *or* the overdraft, whichever comes first; the
//! overdraft holder never waits for the budget again, so it finishes its
//! body, and its lease (dropped once the body is freed: after parsing, or
//! after storing a page that is not parsed) frees both. Waiting fetches hold no parse slot or store queue entry that
//! a holder needs, so the holders always finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use tokio::sync::{Mutex, OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

/// Bytes of each body held without a permit.
pub const FREE: usize = 256 * 1024;
/// Permits are KiB (a semaphore acquires at most `u32::MAX` at once).
const UNIT: usize = 1024;

/// The shared bound (see the module docs).
#[derive(Debug)]
pub struct BodyBudget {
    permits: Arc<Semaphore>,
    overdraft: Arc<Mutex<()>>,
    total_units: usize,
    /// Bytes of body buffers held now, and the most at once.
    held: AtomicUsize,
    peak: AtomicUsize,
    /// Leases that took the overdraft.
    overdrafts: AtomicUsize,
}

impl BodyBudget {
    /// A budget of `bytes` (past each body's first [`FREE`] bytes).
    pub fn new(bytes: usize) -> Arc<BodyBudget> {
        let most = Semaphore::MAX_PERMITS.min(u32::MAX as usize);
        let total_units = (bytes / UNIT).clamp(1, most);
        Arc::new(BodyBudget {
            permits: Arc::new(Semaphore::new(total_units)),
            overdraft: Arc::new(Mutex::new(())),
            total_units,
            held: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            overdrafts: AtomicUsize::new(0),
        })
    }

    /// The budget in bytes.
    pub fn total(&self) -> usize {
        self.total_units * UNIT
    }

    /// Most bytes of body buffers held at once so far.
    pub fn peak_held(&self) -> usize {
        self.peak.load(Relaxed)
    }

    /// Bytes of body buffers held now.
    pub fn held(&self) -> usize {
        self.held.load(Relaxed)
    }

    /// How many bodies were read on the overdraft.
    pub fn overdrafts(&self) -> usize {
        self.overdrafts.load(Relaxed)
    }

    /// A lease for one body.
    pub fn lease(self: &Arc<Self>) -> BodyLease {
        BodyLease {
            budget: self.clone(),
            permits: None,
            overdraft: None,
            units: 0,
            capacity: 0,
        }
    }
}

/// One body's share of the budget; returned when dropped.
#[derive(Debug)]
pub struct BodyLease {
    budget: Arc<BodyBudget>,
    permits: Option<OwnedSemaphorePermit>,
    overdraft: Option<OwnedMutexGuard<()>>,
    units: usize,
    /// Buffer capacity counted in `held`.
    capacity: usize,
}

impl BodyLease {
    /// Makes room for a buffer of `capacity` bytes, waiting for the budget
    /// (or the overdraft) if the part past [`FREE`] is not covered yet.
    pub async fn cover(&mut self, capacity: usize) {
        self.reserve(capacity).await;
        self.count(capacity);
    }

    /// Takes the budget for a body of `bytes` without counting a buffer
    /// yet: a body of known length takes its whole share before its first
    /// byte is read, so fetches do not each hold a part of the budget while
    /// all waiting for more (which would leave only the overdraft moving).
    pub async fn reserve(&mut self, bytes: usize) {
        if self.overdraft.is_none() {
            let need = bytes.saturating_sub(FREE).div_ceil(UNIT);
            if need > self.units {
                self.acquire(need - self.units).await;
            }
        }
    }

    /// Bytes of buffers this lease counts.
    pub fn counted(&self) -> usize {
        self.capacity
    }

    async fn acquire(&mut self, units: usize) {
        let b = &self.budget;
        // More than the whole budget: only the overdraft can cover it.
        let Some(n) = (units <= b.total_units)
            .then(|| u32::try_from(units).ok())
            .flatten()
        else {
            return self.take_overdraft().await;
        };
        let got = match b.permits.clone().try_acquire_many_owned(n) {
            Ok(p) => Some(p),
            Err(_) => {
                tokio::select! {
                    p = b.permits.clone().acquire_many_owned(n) => p.ok(),
                    g = b.overdraft.clone().lock_owned() => {
                        self.overdraft = Some(g);
                        b.overdrafts.fetch_add(1, Relaxed);
                        None
                    }
                }
            }
        };
        if let Some(p) = got {
            self.units += units;
            match &mut self.permits {
                Some(held) => held.merge(p),
                None => self.permits = Some(p),
            }
        }
    }

    async fn take_overdraft(&mut self) {
        let g = self.budget.overdraft.clone().lock_owned().await;
        self.budget.overdrafts.fetch_add(1, Relaxed);
        self.overdraft = Some(g);
    }

    fn count(&mut self, capacity: usize) {
        if capacity > self.capacity {
            let now = self
                .budget
                .held
                .fetch_add(capacity - self.capacity, Relaxed)
                + (capacity - self.capacity);
            self.budget.peak.fetch_max(now, Relaxed);
            self.capacity = capacity;
        }
    }
}

impl Drop for BodyLease {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.capacity, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::{Pin, pin};
    use std::task::{Context, Poll, Waker};

    use super::*;

    const MIB: usize = 1 << 20;

    fn poll_once<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(Waker::noop()))
    }

    fn free_permits(b: &BodyBudget) -> usize {
        b.permits.available_permits()
    }

    #[test]
    fn a_lease_is_a_few_words() {
        assert!(std::mem::size_of::<BodyLease>() <= 64);
    }

    #[tokio::test]
    async fn small_bodies_take_no_permits() {
        let b = BodyBudget::new(MIB);
        let mut leases: Vec<_> = (0..100).map(|_| b.lease()).collect();
        for l in &mut leases {
            assert!(poll_once(pin!(l.cover(FREE))).is_ready());
        }
        assert_eq!(b.held(), 100 * FREE);
        assert_eq!(free_permits(&b), b.total() / UNIT);
        drop(leases);
        assert_eq!((b.held(), b.peak_held()), (0, 100 * FREE));
    }

    #[tokio::test]
    async fn past_the_budget_one_lease_overdraws_and_the_next_waits() {
        let b = BodyBudget::new(MIB);
        let mut all = b.lease();
        assert!(poll_once(pin!(all.cover(FREE + MIB))).is_ready());
        assert_eq!(free_permits(&b), 0);
        // No permit left: the overdraft is free, so this one takes it.
        let mut over = b.lease();
        assert!(poll_once(pin!(over.cover(FREE + 3 * MIB))).is_ready());
        assert_eq!(b.overdrafts(), 1);
        // Grows on without asking again.
        assert!(poll_once(pin!(over.cover(FREE + 6 * MIB))).is_ready());
        let mut next = b.lease();
        {
            let mut f = pin!(next.cover(FREE + MIB / 2));
            assert!(poll_once(f.as_mut()).is_pending());
            drop(all);
            assert!(poll_once(f.as_mut()).is_ready());
        }
        assert_eq!(b.overdrafts(), 1, "the permits came first");
        assert_eq!(b.held(), FREE + 6 * MIB + FREE + MIB / 2);
        assert_eq!(b.peak_held(), FREE + MIB + FREE + 6 * MIB);
        drop(over);
        drop(next);
        assert_eq!(b.held(), 0);
        assert_eq!(free_permits(&b), b.total() / UNIT);
    }

    #[tokio::test]
    async fn a_body_larger_than_the_budget_waits_for_the_overdraft() {
        let b = BodyBudget::new(MIB);
        let mut first = b.lease();
        assert!(poll_once(pin!(first.cover(FREE + 4 * MIB))).is_ready());
        assert_eq!(free_permits(&b), b.total() / UNIT, "no permit taken");
        let mut second = b.lease();
        {
            let mut f = pin!(second.cover(FREE + 2 * MIB));
            assert!(poll_once(f.as_mut()).is_pending());
            drop(first);
            assert!(poll_once(f.as_mut()).is_ready());
        }
        assert_eq!(b.overdrafts(), 2);
        drop(second);
        assert_eq!(b.held(), 0);
    }
}
