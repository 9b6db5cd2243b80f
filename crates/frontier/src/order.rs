//! Commit order: `put_discovered` decides a batch under the table lock and
//! commits it to the store after releasing it, so that one writer's commit
//! (journal append and memtable inserts, ~an eighth of the put's CPU) runs
//! while the next writer decides. Commits still happen one at a time, in the
//! order their batches were decided:
//!
//! ```text
//! writer A:  [lock: decide, ticket 7] [encode] [frame + commit 7]
//! writer B:              [lock: decide, ticket 8] [encode] (wait) [frame + commit 8]
//! get:                                             [lock, drain: wait for 7 and 8] [read]
//! ```
//!
//! A writer encodes its batch's store entries after the lock (their
//! positions were decided under it), and writes its seen-log frame in its
//! turn, just before the commit: frames too keep decision order, and a
//! frame still reaches the log before the store can hold its batch.
//!
//! Invariants: tickets are taken under the table lock, so ticket order is
//! the order in which the in-memory table changed; batch `n` reaches the
//! store only after batches `0..n`, so the journal (and what a crash keeps)
//! is a prefix of that order, and counter records never count a URL whose
//! batch is missing. Every operation that reads the store, or commits under
//! the lock, first drains: with the table lock held no ticket can be taken,
//! so once the drain returns the store holds every change the table has.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

/// Orders commits made outside the table lock (see the module docs).
#[derive(Debug, Default)]
pub struct CommitOrder {
    /// Tickets taken (the next one to hand out).
    issued: AtomicU64,
    /// Tickets whose commit is over.
    done: Mutex<u64>,
    turn: Condvar,
}

impl CommitOrder {
    /// Takes the next ticket; call under the table lock.
    pub fn ticket(&self) -> u64 {
        self.issued.fetch_add(1, Ordering::SeqCst)
    }

    /// Runs `commit` once every earlier ticket's commit is over, then marks
    /// `ticket` over (also if `commit` fails or panics, so no later writer
    /// waits forever).
    pub fn in_turn<T>(&self, ticket: u64, commit: impl FnOnce() -> T) -> T {
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        while *done < ticket {
            done = self.turn.wait(done).unwrap_or_else(|p| p.into_inner());
        }
        drop(done);
        let _over = Over {
            order: self,
            ticket,
        };
        commit()
    }

    /// Waits until every ticket taken so far is over; call under the table
    /// lock (then none is taken meanwhile).
    pub fn drain(&self) {
        let target = self.issued.load(Ordering::SeqCst);
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        while *done < target {
            done = self.turn.wait(done).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Marks a ticket over when dropped.
struct Over<'a> {
    order: &'a CommitOrder,
    ticket: u64,
}

impl Drop for Over<'_> {
    fn drop(&mut self) {
        let mut done = self.order.done.lock().unwrap_or_else(|p| p.into_inner());
        *done = (*done).max(self.ticket + 1);
        self.order.turn.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// Commits run in ticket order whatever order their threads arrive in,
    /// and a drain returns only after every ticket taken before it.
    #[test]
    fn commits_run_in_ticket_order() {
        let order = Arc::new(CommitOrder::default());
        let log = Arc::new(Mutex::new(Vec::new()));
        let tickets: Vec<u64> = (0..8).map(|_| order.ticket()).collect();
        let handles: Vec<_> = tickets
            .into_iter()
            .rev()
            .map(|t| {
                let (order, log) = (order.clone(), log.clone());
                std::thread::spawn(move || order.in_turn(t, || log.lock().unwrap().push(t)))
            })
            .collect();
        order.drain();
        assert_eq!(*log.lock().unwrap(), (0..8).collect::<Vec<_>>());
        for h in handles {
            h.join().unwrap();
        }
    }

    /// A commit that panics still hands the turn on.
    #[test]
    fn a_panicking_commit_passes_the_turn() {
        let order = Arc::new(CommitOrder::default());
        let (a, b) = (order.ticket(), order.ticket());
        let o = order.clone();
        let failed = std::thread::spawn(move || o.in_turn(a, || panic!("commit failed")));
        assert!(failed.join().is_err());
        assert_eq!(order.in_turn(b, || 5), 5);
        order.drain();
    }
}
