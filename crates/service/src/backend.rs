//! The port between the gRPC layer and the store: [`FrontierBackend`].
//!
//! The gRPC layer ([`crate::rpc`]) owns everything about streams (pipelining,
//! acks, cancellation), the node-wide state (active flag, log level, node list),
//! auth and metrics. The backend owns the meaning of each call: it is a
//! synchronous, blocking mirror of the unary parts of the API, taking and
//! returning the generated protobuf types, and is only ever called from
//! `tokio::task::spawn_blocking`, so it may wait for a disk sync.
//!
//! Contract shared by every implementation:
//! - request parameters arrive normalised by [`crate::rpc::params`]: crawl IDs
//!   non-empty, page sizes and the GetURLs lease non-zero; the crawl IDs inside
//!   put items may still be empty and mean `"DEFAULT"` ([`crawl_id`]);
//! - a put returns as soon as the write is made, with its statuses and a
//!   [`Durable`] wait; what it reports `Ok` may be acknowledged only once that
//!   wait returned `Ok`. So the gRPC layer decodes and writes the next chunk
//!   while this one waits for its group commit. A store failure (on the write
//!   or on the wait) is an `Err`, turned into `FAIL` for every item;
//! - per-item problems are statuses, never errors: `Skipped` for a malformed URL,
//!   a key over [`MAX_KEY_BYTES`] or an already known discovered URL.

use crate::ServiceError;
use crate::proto::ack_message::Status;
use crate::proto::{
    BlockQueueParams, CountUrlParams, CrawlLimitParams, GetParams, ListUrlParams, Pagination,
    PurgeUrlParams, QueueDelayParams, QueueList, QueueWithinCrawlParams, Stats, UrlInfo, UrlItem,
    UrlStatusRequest,
};

/// The crawl an empty crawl ID stands for.
pub const DEFAULT_CRAWL: &str = "DEFAULT";

/// Longest queue key accepted, in bytes; longer ones are `SKIPPED`.
pub const MAX_KEY_BYTES: usize = 255;

/// Maps the empty crawl ID to [`DEFAULT_CRAWL`].
pub fn crawl_id(raw: &str) -> &str {
    if raw.is_empty() { DEFAULT_CRAWL } else { raw }
}

/// Result type of backend calls.
pub type BackendResult<T> = Result<T, ServiceError>;

/// Blocks until a write is durable; see [`FrontierBackend::put_discovered`].
pub type Durable = Box<dyn FnOnce() -> BackendResult<()> + Send>;

/// A [`Durable`] for a write that already is (or wrote nothing).
pub fn already_durable() -> Durable {
    Box::new(|| Ok(()))
}

/// What a put wrote: one status per item, valid once `durable` returned `Ok`.
pub struct Written {
    /// One status per item, in order.
    pub statuses: Vec<Status>,
    /// Waits for the write's durable point.
    pub durable: Durable,
}

/// Figures exported on `/metrics`, read at scrape time.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Gauges {
    /// Queues over all crawls.
    pub queues: u64,
    /// URLs leased and not yet updated nor expired.
    pub in_flight: u64,
    /// URLs not completed.
    pub pending: u64,
    /// Bytes held by the seen index.
    pub seen_bytes: u64,
    /// URLs completed.
    pub completed: u64,
}

/// The store behind `mgz serve`. See the module docs for the contract.
pub trait FrontierBackend: Send + Sync + 'static {
    /// Adds each URL unless its crawl already knows it; one status per item,
    /// in order, acknowledgeable once [`Written::durable`] returned `Ok`.
    fn put_discovered(&self, batch: Vec<UrlInfo>) -> BackendResult<Written>;
    /// Applies discovered (insert if new) and known (overwrite) items in order;
    /// statuses as for [`FrontierBackend::put_discovered`].
    fn put_urls(&self, items: Vec<UrlItem>) -> BackendResult<Written>;
    /// Leases the URLs due now; `params` are as received (0 = unlimited, etc.).
    fn get_urls(&self, params: &GetParams) -> BackendResult<Vec<UrlInfo>>;
    /// Counters of one queue, or of the crawl when the key is empty.
    fn stats(&self, params: &QueueWithinCrawlParams) -> BackendResult<Stats>;
    /// Crawl IDs holding at least one queue.
    fn list_crawls(&self) -> BackendResult<Vec<String>>;
    /// Removes a crawl; returns the URLs removed.
    fn delete_crawl(&self, crawl: &str) -> BackendResult<u64>;
    /// One page of queue keys.
    fn list_queues(&self, params: &Pagination) -> BackendResult<QueueList>;
    /// Removes a queue; returns the URLs removed.
    fn delete_queue(&self, params: &QueueWithinCrawlParams) -> BackendResult<u64>;
    /// Blocks (or, with time 0, unblocks) a queue.
    fn block_queue_until(&self, params: &BlockQueueParams) -> BackendResult<()>;
    /// Sets a queue's politeness delay, or the crawl default when the key is empty.
    fn set_delay(&self, params: &QueueDelayParams) -> BackendResult<()>;
    /// Sets a queue's completed-URL cap.
    fn set_crawl_limit(&self, params: &CrawlLimitParams) -> BackendResult<()>;
    /// The stored state of one URL, `None` when unknown.
    fn url_status(&self, params: &UrlStatusRequest) -> BackendResult<Option<UrlItem>>;
    /// Feeds one page of URLs to `sink` until it returns `false`.
    fn list_urls(
        &self,
        params: &ListUrlParams,
        sink: &mut dyn FnMut(UrlItem) -> bool,
    ) -> BackendResult<()>;
    /// Counts URLs matching the filter.
    fn count_urls(&self, params: &CountUrlParams) -> BackendResult<u64>;
    /// Removes URLs created more than `days` ago; returns how many.
    fn purge_urls(&self, params: &PurgeUrlParams) -> BackendResult<u64>;
    /// Switches serving on or off for the node; puts are accepted either way.
    fn set_active(&self, state: bool) -> BackendResult<()>;
    /// Whether GetURLs serves anything.
    fn is_active(&self) -> bool;
    /// Figures for `/metrics`.
    fn gauges(&self) -> Gauges;
    /// Makes everything written so far durable (called on shutdown; a
    /// backend may also leave its state quick to reopen, as PowerCache's
    /// checkpoint does).
    fn flush(&self) -> BackendResult<()>;
}
