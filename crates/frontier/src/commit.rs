//! Group commit: a write is acknowledged only once the journal holding it is
//! fsynced, and one fsync covers every write made before it started.
//!
//! Writers commit their fjall batch (which lands in the journal buffer), take
//! an epoch number and wait. A background thread wakes at most every
//! `interval`, notes the newest epoch, flushes and fsyncs the journal, then
//! publishes that epoch as durable. So a burst of concurrent writers shares one
//! fsync, and a lone writer waits at most `interval` plus one fsync.
//! Neither fsync holds a lock the write path takes: the seen log is synced
//! through a second descriptor and the journal through `jsync`, so puts go
//! on committing while the disk works.
//! If an fsync fails the committer is poisoned: that and every later wait
//! returns an error (`DiskFull` when the device, a quota or the file-size
//! limit ran out of room, `Poisoned` otherwise) and nothing more is
//! acknowledged.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use fjall::{Database, PersistMode};

use crate::error::{FrontierError, Result};
use crate::jsync::JournalSync;
use crate::seenidx::SharedLog;

/// When an acknowledged write is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Durability {
    /// Group commit: fsync at most every `interval` (default 50 ms), callers wait for it.
    GroupCommit {
        /// Longest time between two fsyncs while writes are waiting.
        interval: Duration,
    },
    /// Flush to the OS on every write, never fsync: survives a process kill,
    /// not a power cut. For benchmarks and tests.
    OsBuffer,
}

impl Default for Durability {
    fn default() -> Self {
        Durability::GroupCommit {
            interval: Duration::from_millis(50),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    written: u64,
    durable: u64,
    /// Seen-log (generation, end offset) of the newest written frame.
    log_mark: Option<(u64, u64)>,
    poisoned: Option<Poison>,
    stop: bool,
}

/// Why the committer stopped acknowledging writes.
#[derive(Debug, Clone)]
enum Poison {
    /// The fsync failed for lack of space (device full, quota, file-size limit).
    DiskFull(String),
    /// Any other fsync failure.
    Failed(String),
}

impl Poison {
    fn of(e: impl Into<FrontierError>) -> Poison {
        match e.into() {
            FrontierError::DiskFull(reason) => Poison::DiskFull(reason),
            other => Poison::Failed(format!("fsync of the journal failed: {other}")),
        }
    }

    /// The error every waiting and later write gets.
    fn error(&self) -> FrontierError {
        match self {
            Poison::DiskFull(reason) => FrontierError::DiskFull(reason.clone()),
            Poison::Failed(reason) => FrontierError::Poisoned(reason.clone()),
        }
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    done: Condvar,
}

/// The group committer of one open frontier.
pub struct Committer {
    shared: Arc<Shared>,
    db: Database,
    log: Option<SharedLog>,
    mode: Durability,
    thread: Option<JoinHandle<()>>,
}

/// A write waiting to become durable; [`Commit::wait`] blocks until it is.
#[derive(Debug, Clone)]
#[must_use = "a write is acknowledged only after Commit::wait returns Ok"]
pub struct Commit {
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    /// Nothing to wait for.
    Done,
    /// Written; durable once the committer publishes `epoch`.
    Written { epoch: u64, shared: Arc<Shared> },
    /// Handed to another writer to commit in turn (see `order`).
    HandedOff(Arc<Handoff>),
}

/// Where a writer that committed another writer's batch in its turn (see
/// `order`) leaves the outcome: the batch's [`Commit`], or why it failed.
#[derive(Debug, Default)]
pub struct Handoff {
    slot: Mutex<Option<Result<Commit>>>,
    ready: Condvar,
}

impl Handoff {
    /// Records the outcome (the first one counts) and wakes the waiters.
    pub fn fill(&self, outcome: Result<Commit>) {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(outcome);
        }
        self.ready.notify_all();
    }

    /// The outcome if it is recorded, without waiting (see [`Handoff::outcome`]).
    pub fn try_outcome(&self) -> Option<Result<Commit>> {
        take_outcome(&mut self.slot.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Waits for the outcome. The first taker of a failure gets the error
    /// itself, later ones (clones of the commit) a copy of its message.
    fn outcome(&self) -> Result<Commit> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(outcome) = take_outcome(&mut slot) {
                return outcome;
            }
            slot = self.ready.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The outcome in `slot`, if any: a clone of the commit, or the error (a
/// copy stays for the next taker).
fn take_outcome(slot: &mut Option<Result<Commit>>) -> Option<Result<Commit>> {
    match slot.as_mut()? {
        Ok(c) => Some(Ok(c.clone())),
        Err(e) => {
            let copy = match &*e {
                FrontierError::DiskFull(r) => FrontierError::DiskFull(r.clone()),
                other => FrontierError::Poisoned(format!("the batch's commit failed: {other}")),
            };
            Some(Err(std::mem::replace(e, copy)))
        }
    }
}

impl Commit {
    /// A commit that is already durable (nothing was written).
    pub fn done() -> Self {
        Commit { inner: Inner::Done }
    }

    /// The commit of a batch handed to another writer: waits for its
    /// outcome in `handoff`, then for durability.
    pub fn handed_off(handoff: Arc<Handoff>) -> Self {
        Commit {
            inner: Inner::HandedOff(handoff),
        }
    }

    /// Blocks until the write is durable under the configured policy.
    pub fn wait(self) -> Result<()> {
        let (epoch, shared) = match self.inner {
            Inner::Done => return Ok(()),
            Inner::Written { epoch, shared } => (epoch, shared),
            Inner::HandedOff(h) => return h.outcome()?.wait(),
        };
        let mut st = lock(&shared.state);
        loop {
            if let Some(poison) = &st.poisoned {
                return Err(poison.error());
            }
            if st.durable >= epoch {
                return Ok(());
            }
            st = shared.done.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Committer {
    /// Starts the committer for `db`, whose folder is `db_dir`.
    pub fn start(
        db: Database,
        db_dir: PathBuf,
        mode: Durability,
        log: Option<SharedLog>,
    ) -> Result<Committer> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            done: Condvar::new(),
        });
        let thread = match mode {
            Durability::GroupCommit { interval } => {
                let (s, d, l) = (shared.clone(), db.clone(), log.clone());
                let handle = std::thread::Builder::new()
                    .name("mgz-frontier-commit".into())
                    .spawn(move || {
                        let mut journal = JournalSync::new(db_dir);
                        run(&s, (&d, &mut journal), l.as_ref(), interval);
                    })
                    .map_err(|e| FrontierError::io("commit thread", e))?;
                Some(handle)
            }
            Durability::OsBuffer => None,
        };
        Ok(Committer {
            shared,
            db,
            log,
            mode,
            thread,
        })
    }

    /// Registers a write just committed to the journal buffer, whose keys
    /// end at `mark` in the seen log; call while still holding the lock (or
    /// the turn of `order::CommitOrder`) that ordered the write.
    pub fn written(&self, mark: Option<(u64, u64)>) -> Result<Commit> {
        if let Durability::OsBuffer = self.mode {
            if let Some(poison) = &lock(&self.shared.state).poisoned {
                return Err(poison.error());
            }
            self.db.persist(PersistMode::Buffer)?;
            mark_durable(self.log.as_ref(), mark);
            return Ok(Commit::done());
        }
        let mut st = lock(&self.shared.state);
        if let Some(poison) = &st.poisoned {
            return Err(poison.error());
        }
        st.written += 1;
        st.log_mark = mark.or(st.log_mark);
        self.shared.wake.notify_one();
        Ok(Commit {
            inner: Inner::Written {
                epoch: st.written,
                shared: self.shared.clone(),
            },
        })
    }

    /// Stops acknowledging writes after one that failed part-way (its
    /// seen-log frame or its batch: the in-memory table has changed, the
    /// store has not): every later write and wait gets this error, as after
    /// a failed fsync. The next open starts from what is stored.
    pub fn poison(&self, e: &FrontierError) {
        let mut st = lock(&self.shared.state);
        if st.poisoned.is_none() {
            st.poisoned = Some(match e {
                FrontierError::DiskFull(reason) => Poison::DiskFull(reason.clone()),
                other => Poison::Failed(format!("a write failed part-way: {other}")),
            });
        }
        self.shared.done.notify_all();
    }

    /// Makes everything written so far durable now.
    pub fn sync_now(&self) -> Result<()> {
        sync_log(self.log.as_ref())?;
        self.db.persist(PersistMode::SyncAll)?;
        Ok(())
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        lock(&self.shared.state).stop = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Appends a durable mark to the seen log if it is still the generation the
/// mark belongs to. A failure only costs checks at the next open: warn.
fn mark_durable(log: Option<&SharedLog>, mark: Option<(u64, u64)>) {
    let (Some(log), Some((generation, offset))) = (log, mark) else {
        return;
    };
    let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
    if l.generation() == generation
        && let Err(e) = l.mark_durable(offset)
    {
        tracing::warn!(error = %e, "seen log: could not write a durable mark");
    }
}

/// fsyncs the seen log (before the journal: an fsynced batch must never
/// lack its keys in the log), through a descriptor of its own so that
/// writers append frames meanwhile (frames are written straight to the
/// file, so every frame appended before the call is covered).
fn sync_log(log: Option<&SharedLog>) -> Result<()> {
    match log {
        Some(l) => {
            let handle = l.lock().unwrap_or_else(|p| p.into_inner()).sync_handle()?;
            handle.sync()
        }
        None => Ok(()),
    }
}

/// The committer thread: wait for work, respect the interval, fsync, publish.
fn run(
    shared: &Shared,
    (db, journal): (&Database, &mut JournalSync),
    log: Option<&SharedLog>,
    interval: Duration,
) {
    let mut last = Instant::now() - interval;
    loop {
        let (target, mark) = {
            let mut st = lock(&shared.state);
            while st.written == st.durable && !st.stop {
                st = shared.wake.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            if st.written == st.durable {
                return;
            }
            let wait = interval.saturating_sub(last.elapsed());
            if !wait.is_zero() && !st.stop {
                drop(st);
                std::thread::sleep(wait);
                st = lock(&shared.state);
            }
            (st.written, st.log_mark)
        };
        last = Instant::now();
        let result = sync_log(log).and_then(|()| journal.sync(db));
        if result.is_ok() {
            mark_durable(log, mark);
        }
        let mut st = lock(&shared.state);
        match result {
            Ok(()) => st.durable = st.durable.max(target),
            Err(e) => st.poisoned = Some(Poison::of(e)),
        }
        shared.done.notify_all();
        if st.poisoned.is_some() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handed-off commit waits for its outcome; every clone of it sees
    /// a failure (disk full keeps its kind), a success is waited through.
    #[test]
    fn handed_off_commits_report_their_outcome() {
        let h = Arc::new(Handoff::default());
        assert!(h.try_outcome().is_none());
        let (a, b) = (Commit::handed_off(h.clone()), Commit::handed_off(h.clone()));
        let waiter = std::thread::spawn(move || a.wait());
        std::thread::sleep(Duration::from_millis(20));
        h.fill(Err(FrontierError::DiskFull("no space".into())));
        h.fill(Ok(Commit::done()));
        assert!(matches!(
            waiter.join().unwrap(),
            Err(FrontierError::DiskFull(_))
        ));
        assert!(matches!(b.wait(), Err(FrontierError::DiskFull(_))));

        let h = Arc::new(Handoff::default());
        h.fill(Ok(Commit::done()));
        assert!(Commit::handed_off(h.clone()).wait().is_ok());
        assert!(matches!(h.try_outcome(), Some(Ok(_))));
    }
}
