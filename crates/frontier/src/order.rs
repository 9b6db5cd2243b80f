//! Commit order: `put_discovered` decides a batch under the table lock and
//! commits it to the store after releasing it, so that one writer's commit
//! (journal append and memtable inserts, ~an eighth of the put's CPU) runs
//! while the next writer decides. Commits still happen one at a time, in the
//! order their batches were decided, and no writer waits for another's:
//!
//! ```text
//! writer A:  [lock: decide, ticket 7] [encode] [frame + commit 7] [frame + commit 8]
//! writer B:              [lock: decide, ticket 8] [encode] (park 8) [prepare the next batch...]
//! get:                                             [lock, drain: wait for 7 and 8] [read]
//! ```
//!
//! A writer whose turn has not come parks its job (the batch and its
//! seen-log records) and returns; the writer that commits the ticket before
//! it then runs it too ("combining"), so commits stay in ticket order while
//! the parked writer goes on preparing its next batch instead of sleeping.
//! Its caller learns the outcome through the job's hand-off (a
//! [`Commit`](crate::commit::Commit) that waits for it). Measured at 10M
//! URLs: with writers waiting for their turn, the two cores were ~20 % idle
//! in the put phase (docs/BENCHMARKS.md, "Session 14").
//!
//! A writer encodes its batch's store entries after the lock (their
//! positions were decided under it), and its job writes the seen-log frame
//! just before the commit: frames too keep decision order, and a frame still
//! reaches the log before the store can hold its batch.
//!
//! Invariants: tickets are taken under the table lock, so ticket order is
//! the order in which the in-memory table changed; every ticket taken is
//! submitted exactly once; job `n` runs only after jobs `0..n`, one at a time
//! (`committing`), so the journal (and what a crash keeps) is a prefix of
//! that order, and counter records never count a URL whose batch is missing.
//! A job that panics still ends its turn; the parked jobs right behind it
//! are dropped unrun (their hand-offs report the failure) rather than left
//! waiting for a committer. Every operation that reads the store, or
//! commits under the lock, first drains: with the table lock held no ticket
//! can be taken, so once the drain returns the store holds every change the
//! table has.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Most jobs parked at once; a writer finding this many waits for its turn
/// instead (each job holds a decided batch: without a bound, a writer that
/// is never in turn could park hundreds while the other commits, ~30 MB
/// more peak RSS at 10M URLs).
pub const MAX_PARKED: usize = 8;

/// Orders commits made outside the table lock (see the module docs); `J`
/// is a parked job.
#[derive(Debug)]
pub struct CommitOrder<J> {
    /// Tickets taken (the next one to hand out).
    issued: AtomicU64,
    state: Mutex<State<J>>,
    /// Signalled whenever `done` moves.
    turn: Condvar,
}

#[derive(Debug)]
struct State<J> {
    /// Tickets whose job is over.
    done: u64,
    /// A writer is running jobs (ticket `done` is in its hands).
    committing: bool,
    /// Jobs submitted before their turn, by ticket.
    parked: BTreeMap<u64, J>,
}

impl<J> Default for CommitOrder<J> {
    fn default() -> Self {
        CommitOrder {
            issued: AtomicU64::new(0),
            state: Mutex::new(State {
                done: 0,
                committing: false,
                parked: BTreeMap::new(),
            }),
            turn: Condvar::new(),
        }
    }
}

impl<J> CommitOrder<J> {
    /// Takes the next ticket; call under the table lock.
    pub fn ticket(&self) -> u64 {
        self.issued.fetch_add(1, Ordering::SeqCst)
    }

    fn lock(&self) -> MutexGuard<'_, State<J>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Submits the job of `ticket`: if every earlier job is over, runs it
    /// with `run` on this thread, then every parked job whose turn follows;
    /// otherwise parks it for the writer that runs the job before it (or,
    /// with [`MAX_PARKED`] jobs parked already, waits for its turn).
    /// Returns whether this call ran `job` itself.
    pub fn submit(&self, ticket: u64, job: J, run: impl Fn(J)) -> bool {
        let mut st = self.lock();
        while st.committing || st.done != ticket {
            if st.parked.len() < MAX_PARKED {
                st.parked.insert(ticket, job);
                return false;
            }
            st = self.turn.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        st.committing = true;
        drop(st);
        let mut next = (ticket, job);
        loop {
            let turn = Turn {
                order: self,
                ticket: next.0,
            };
            run(next.1);
            std::mem::forget(turn);
            let mut st = self.lock();
            st.done = next.0 + 1;
            self.turn.notify_all();
            let done = st.done;
            match st.parked.remove(&done) {
                Some(job) => next = (done, job),
                None => {
                    st.committing = false;
                    return true;
                }
            }
        }
    }

    /// Waits until every ticket taken so far is over; call under the table
    /// lock (then none is taken meanwhile).
    pub fn drain(&self) {
        let target = self.issued.load(Ordering::SeqCst);
        let mut st = self.lock();
        while st.done < target {
            st = self.turn.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Ends a turn whose job panicked (it is forgotten when the job returns):
/// the ticket is over, the parked jobs right behind it are dropped unrun,
/// and the next submitter commits for itself.
struct Turn<'a, J> {
    order: &'a CommitOrder<J>,
    ticket: u64,
}

impl<J> Drop for Turn<'_, J> {
    fn drop(&mut self) {
        let mut st = self.order.lock();
        st.done = self.ticket + 1;
        let mut unrun = Vec::new();
        loop {
            let done = st.done;
            let Some(job) = st.parked.remove(&done) else {
                break;
            };
            unrun.push(job);
            st.done += 1;
        }
        st.committing = false;
        self.order.turn.notify_all();
        drop(st);
        drop(unrun);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// Jobs run in ticket order whatever order their writers submit them
    /// in, a writer that is not in turn returns at once, and a drain
    /// returns only after every ticket taken before it.
    #[test]
    fn jobs_run_in_ticket_order() {
        let order = Arc::new(CommitOrder::default());
        let log = Arc::new(Mutex::new(Vec::new()));
        let tickets: Vec<u64> = (0..8).map(|_| order.ticket()).collect();
        let run = |log: &Arc<Mutex<Vec<u64>>>, t: u64| log.lock().unwrap().push(t);
        // Tickets 7 down to 1 are parked: none of them is in turn.
        for &t in tickets[1..].iter().rev() {
            assert!(!order.submit(t, t, |j| run(&log, j)));
        }
        assert!(log.lock().unwrap().is_empty());
        // Ticket 0 runs itself and everything parked behind it.
        assert!(order.submit(0, 0, |j| run(&log, j)));
        order.drain();
        assert_eq!(*log.lock().unwrap(), (0..8).collect::<Vec<_>>());
    }

    /// With `MAX_PARKED` jobs parked, a writer out of turn waits, then runs
    /// its own job and the parked ones behind it.
    #[test]
    fn a_full_park_makes_writers_wait_for_their_turn() {
        let order = Arc::new(CommitOrder::default());
        let log = Arc::new(Mutex::new(Vec::new()));
        let last = MAX_PARKED as u64 + 1;
        let tickets: Vec<u64> = (0..=last).map(|_| order.ticket()).collect();
        for &t in &tickets[2..] {
            assert!(!order.submit(t, t, |j| log.lock().unwrap().push(j)));
        }
        let (o, l) = (order.clone(), log.clone());
        let waiting = std::thread::spawn(move || o.submit(1, 1, |j| l.lock().unwrap().push(j)));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(log.lock().unwrap().is_empty(), "ticket 1 ran out of turn");
        assert!(order.submit(0, 0, |j| log.lock().unwrap().push(j)));
        assert!(
            waiting.join().unwrap(),
            "ticket 1 was parked, not run by its writer"
        );
        order.drain();
        assert_eq!(*log.lock().unwrap(), (0..=last).collect::<Vec<_>>());
    }

    /// Concurrent writers: every job runs once, in order.
    #[test]
    fn concurrent_writers_keep_the_order() {
        let order = Arc::new(CommitOrder::default());
        let log = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (order, log) = (order.clone(), log.clone());
                std::thread::spawn(move || {
                    for _ in 0..500 {
                        // Tickets are taken under a lock in the frontier;
                        // here the atomic counter is enough.
                        let t = order.ticket();
                        order.submit(t, t, |j| log.lock().unwrap().push(j));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        order.drain();
        assert_eq!(*log.lock().unwrap(), (0..2000).collect::<Vec<_>>());
    }

    /// A job that panics ends its turn: the jobs parked right behind it are
    /// dropped unrun, later writers commit again, and drains return.
    #[test]
    fn a_panicking_job_passes_the_turn() {
        struct Job(u64, Arc<Mutex<Vec<String>>>);
        impl Drop for Job {
            fn drop(&mut self) {
                self.1.lock().unwrap().push(format!("dropped {}", self.0));
            }
        }
        let order = Arc::new(CommitOrder::default());
        let log = Arc::new(Mutex::new(Vec::new()));
        let (a, b, c) = (order.ticket(), order.ticket(), order.ticket());
        assert!(!order.submit(b, Job(b, log.clone()), |_| unreachable!()));
        let o = order.clone();
        let l = log.clone();
        let failed = std::thread::spawn(move || {
            o.submit(a, Job(a, l), |j| {
                if j.0 == a {
                    panic!("commit failed");
                }
            })
        });
        assert!(failed.join().is_err());
        let ran = order.submit(c, Job(c, log.clone()), |j| {
            j.1.lock().unwrap().push(format!("ran {}", j.0));
        });
        assert!(ran);
        order.drain();
        let log = log.lock().unwrap();
        assert!(log.contains(&format!("dropped {b}")), "{log:?}");
        assert!(log.contains(&format!("ran {c}")), "{log:?}");
    }
}
