//! GetURLs: the answer streamed in bounded chunks.
//!
//! The store leases URLs under its lock and hands them back as one vector per
//! call. A GetURLs with 0 (unlimited) limits over a backlog of millions made
//! that one vector of millions of records (3.6 GB of RSS at 10M URLs in
//! session 2). So one GetURLs answer is a series of store calls, each with
//! `max_queues` cut so that it leases about `chunk_urls` URLs:
//!
//! ```text
//!  blocking task: get(max_queues = q₁) → chunk ─┐ channel of 1 chunk   tonic: one
//!                 get(max_queues = q₂) → chunk ─┼──────────────────▶  UrlInfo message
//!                 … until a call serves fewer   │ (send blocks while   per URL
//!                 queues than asked             │  the client is slow)
//! ```
//!
//! - Queues per call: `chunk_urls / max_urls_per_queue` when the per-queue
//!   limit is set; when it is unlimited, 256 at first, then sized from the
//!   URLs per queue the previous call gave.
//! - The client's limits still hold over the whole answer: at most
//!   `max_queues` queues (summed over the calls); the per-queue limit is also
//!   the in-flight cap, which the store enforces across calls, so a queue
//!   served up to its cap gives nothing more; every URL is leased by the store
//!   once per lease, so no URL appears twice while its lease runs.
//! - The answer ends when a call serves fewer queues than it asked for (the
//!   store made a full pass and found nothing more eligible), when the
//!   client's `max_queues` is used up, or after as many queue servings as
//!   there were queues after the first call (so writers refilling queues, or
//!   leases expiring during a long answer, cannot make it endless).
//! - Memory: at most three chunks (one being leased, one in the channel, one
//!   being encoded), whatever the backlog; one queue's due URLs are one
//!   store call when `max_urls_per_queue` is 0, so a single queue holding
//!   millions of due URLs is still leased in one piece (the store's `get`
//!   has no URL budget apart from the in-flight cap).
//!
//! A request for one queue (`key` set) is one store call, as before.

use std::sync::Arc;

use futures_util::StreamExt as _;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use crate::backend::FrontierBackend;
use crate::metrics::Metrics;
use crate::proto::{GetParams, UrlInfo};

use super::Answers;

/// URLs leased per store call by default (≈ 2–3 MB of records).
pub const DEFAULT_CHUNK_URLS: usize = 16_384;

/// Queues asked of the first call when the per-queue limit is unlimited.
const FIRST_UNLIMITED_QUEUES: u64 = 256;

/// How the next store call of one answer is sized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Queues the client still allows (`u64::MAX` = unlimited).
    left: u64,
    /// Queue servings still allowed before the answer ends.
    budget: u64,
    /// Queue servings so far.
    served: u64,
    /// Queues to ask of the next call.
    next: u64,
    per_queue: u64,
    chunk_urls: u64,
}

impl Plan {
    /// The plan for `p` (limits as received, 0 = unlimited).
    pub fn new(p: &GetParams, chunk_urls: usize) -> Plan {
        let left = match p.max_queues {
            0 => u64::MAX,
            n => u64::from(n),
        };
        let chunk_urls = chunk_urls.max(1) as u64;
        let per_queue = u64::from(p.max_urls_per_queue);
        let first = match per_queue {
            0 => FIRST_UNLIMITED_QUEUES,
            n => (chunk_urls / n).max(1),
        };
        Plan {
            left,
            budget: u64::MAX,
            served: 0,
            next: first.min(left),
            per_queue,
            chunk_urls,
        }
    }

    /// `max_queues` of the next store call, `None` once the answer is complete.
    pub fn next_call(&self) -> Option<u32> {
        let n = self.next.min(self.left).min(self.budget);
        (n > 0).then(|| u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Caps the queue servings of the whole answer at `queues`: the store's
    /// queue count, read only once an answer needs a second call (most
    /// answers of a crawler loop are one call, and counting costs a pass
    /// over every queue).
    pub fn cap_servings(&mut self, queues: u64) {
        self.budget = queues.max(1).saturating_sub(self.served);
    }

    /// Records a call that asked `asked` queues and served `urls` URLs from
    /// `served` queues.
    pub fn record(&mut self, asked: u32, served: u64, urls: u64) {
        self.left = self.left.saturating_sub(served);
        self.budget = self.budget.saturating_sub(served);
        self.served += served;
        if served < u64::from(asked) {
            self.left = 0; // a full pass found nothing more: done
            return;
        }
        if self.per_queue == 0 && served > 0 {
            let per = urls.div_ceil(served).max(1);
            self.next = (self.chunk_urls / per).clamp(1, self.chunk_urls);
        }
    }
}

/// Queues in a store answer: a queue's URLs come out contiguous and a
/// queue is served at most once per call, so this counts key changes.
pub fn queues_in(urls: &[UrlInfo]) -> u64 {
    let mut n = 0;
    let mut last: Option<(&str, &str)> = None;
    for u in urls {
        let this = (u.crawl_id.as_str(), u.key.as_str());
        if last != Some(this) {
            n += 1;
            last = Some(this);
        }
    }
    n
}

/// Streams the answer to `p` (already normalised) in chunks of about `chunk_urls`.
pub fn spawn<B: FrontierBackend>(
    backend: Arc<B>,
    p: GetParams,
    chunk_urls: usize,
    metrics: Arc<Metrics>,
) -> Answers<UrlInfo> {
    let (tx, rx) = mpsc::channel::<Result<Vec<UrlInfo>, Status>>(1);
    tokio::task::spawn_blocking(move || {
        if let Err(err) = lease_chunks(&*backend, p, chunk_urls, &metrics, &tx) {
            let _ = tx.blocking_send(Err(Status::from(err)));
        }
    });
    let flat = ReceiverStream::new(rx).flat_map(|chunk| {
        let items: Vec<Result<UrlInfo, Status>> = match chunk {
            Ok(urls) => urls.into_iter().map(Ok).collect(),
            Err(status) => vec![Err(status)],
        };
        futures_util::stream::iter(items)
    });
    Box::pin(flat)
}

type ChunkSender = mpsc::Sender<Result<Vec<UrlInfo>, Status>>;

/// The store calls of one answer; stops early when the client is gone.
fn lease_chunks<B: FrontierBackend>(
    backend: &B,
    p: GetParams,
    chunk_urls: usize,
    metrics: &Metrics,
    tx: &ChunkSender,
) -> Result<(), crate::ServiceError> {
    if !p.key.is_empty() {
        let _ = send(backend.get_urls(&p)?, metrics, tx);
        return Ok(());
    }
    let mut plan = Plan::new(&p, chunk_urls);
    let (mut ask, mut capped) = (p, false);
    while let Some(queues) = plan.next_call() {
        ask.max_queues = queues;
        let urls = backend.get_urls(&ask)?;
        let (served, n) = (queues_in(&urls), urls.len() as u64);
        plan.record(queues, served, n);
        if n == 0 || send(urls, metrics, tx).is_none() {
            break;
        }
        if !capped && plan.next_call().is_some() {
            plan.cap_servings(backend.gauges().queues);
            capped = true;
        }
    }
    Ok(())
}

/// Hands one chunk to the encoder; `None` when the client has gone.
fn send(urls: Vec<UrlInfo>, metrics: &Metrics, tx: &ChunkSender) -> Option<()> {
    metrics.add_served(urls.len());
    tx.blocking_send(Ok(urls)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(max_queues: u32, per_queue: u32) -> GetParams {
        GetParams {
            max_queues,
            max_urls_per_queue: per_queue,
            ..GetParams::default()
        }
    }

    #[test]
    fn per_queue_limit_sizes_every_call() {
        let mut plan = Plan::new(&params(0, 100), 1000);
        assert_eq!(plan.next_call(), Some(10));
        plan.record(10, 10, 1000);
        assert_eq!(plan.next_call(), Some(10));
        plan.record(10, 7, 300); // a short call: nothing more eligible
        assert_eq!(plan.next_call(), None);
    }

    #[test]
    fn max_queues_holds_over_the_whole_answer() {
        let mut plan = Plan::new(&params(25, 100), 1000);
        for expect in [10, 10, 5] {
            assert_eq!(plan.next_call(), Some(expect));
            plan.record(expect, u64::from(expect), u64::from(expect) * 100);
        }
        assert_eq!(plan.next_call(), None);
        // A request that fits one chunk is one call.
        assert_eq!(Plan::new(&params(3, 2), 1000).next_call(), Some(3));
    }

    #[test]
    fn unlimited_per_queue_adapts_to_queue_sizes() {
        let mut plan = Plan::new(&params(0, 0), 16_384);
        assert_eq!(plan.next_call(), Some(256));
        plan.record(256, 256, 256 * 64); // 64 URLs per queue
        assert_eq!(plan.next_call(), Some(256));
        plan.record(256, 256, 256 * 16_384); // huge queues: one per call
        assert_eq!(plan.next_call(), Some(1));
        plan.record(1, 1, 2); // small again
        assert_eq!(plan.next_call(), Some(8192));
    }

    #[test]
    fn the_answer_ends_after_as_many_servings_as_queues() {
        let mut plan = Plan::new(&params(0, 10), 100);
        assert_eq!(plan.next_call(), Some(10));
        plan.record(10, 10, 100);
        plan.cap_servings(25); // 25 queues in the store, 10 served
        assert_eq!(plan.next_call(), Some(10));
        plan.record(10, 10, 100);
        assert_eq!(plan.next_call(), Some(5));
        plan.record(5, 5, 50);
        assert_eq!(plan.next_call(), None);
    }

    #[test]
    fn queues_are_counted_by_runs_of_crawl_and_key() {
        let u = |crawl: &str, key: &str| UrlInfo {
            crawl_id: crawl.into(),
            key: key.into(),
            ..UrlInfo::default()
        };
        let urls = [
            u("A", "x"),
            u("A", "x"),
            u("B", "x"),
            u("B", "y"),
            u("B", "y"),
        ];
        assert_eq!(queues_in(&urls), 3);
        assert_eq!(queues_in(&[]), 0);
    }
}
