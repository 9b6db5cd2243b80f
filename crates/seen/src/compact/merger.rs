//! The background thread that runs [`super::CompactSet`] merges for sets
//! built with [`super::CompactSet::with_background_merges`].
//!
//! One thread per process, started at the first job and never stopped (it
//! holds no state between jobs; the process exit ends it). Jobs run in
//! submission order. A set keeps at most one job in flight and keeps
//! answering from the runs the job reads until it installs the result, so
//! the answers never depend on when a job finishes. If the thread cannot be
//! started, or a job is lost (its result channel closes unanswered), the
//! set merges on its own thread instead.

use std::sync::LazyLock;
use std::sync::mpsc::{self, Sender};

/// A merge to run: builds a run and sends it back on its own channel.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

static WORKER: LazyLock<Option<Sender<Job>>> = LazyLock::new(|| {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("mgz-compact-merge".into())
        .spawn(move || {
            for job in rx {
                job();
            }
        })
        .ok()
        .map(|_| tx)
});

/// Hands `job` to the background thread; gives it back if there is none.
pub(crate) fn submit(job: Job) -> Result<(), Job> {
    match WORKER.as_ref() {
        Some(tx) => tx.send(job).map_err(|e| e.0),
        None => Err(job),
    }
}
