//! Public value types: what goes in (items, parameters) and what comes out
//! (outcomes, records, statistics). They mirror the URLFrontier 2.6 messages.

use std::collections::BTreeMap;

/// The crawl id that `""` stands for.
pub const DEFAULT_CRAWL: &str = "DEFAULT";

/// Longest accepted queue key or crawl id, in bytes.
pub const MAX_KEY_LEN: usize = 255;

/// Arbitrary per-URL metadata: name → list of values (URLFrontier's `map<string, StringList>`).
pub type Metadata = BTreeMap<String, Vec<String>>;

/// A URL handed to the frontier, discovered or known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlItem {
    /// Crawl (namespace); `""` means [`DEFAULT_CRAWL`].
    pub crawl: String,
    /// The URL text; it is canonicalised with `mgz_url::Policy::safe()`.
    pub url: String,
    /// Queue key; `None` or `""` means the URL's host.
    pub key: Option<String>,
    /// Metadata stored with the URL and returned when it is served.
    pub metadata: Metadata,
    /// Link depth: seeds are 0.
    pub depth: u32,
    /// Creation time in seconds since the epoch; 0 means "now".
    pub created: u64,
}

impl UrlItem {
    /// A depth-0 item in the default crawl with no metadata.
    pub fn new(url: impl Into<String>) -> Self {
        UrlItem {
            url: url.into(),
            ..UrlItem::default()
        }
    }
}

/// A URL already known to the caller, with its new schedule.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownItem {
    /// The URL and its (replacing) metadata.
    pub item: UrlItem,
    /// Seconds since the epoch from which it may be fetched again; 0 = completed.
    pub next_fetch: u64,
}

impl KnownItem {
    /// `url` (default crawl, no metadata) marked completed: never served again.
    pub fn completed(url: impl Into<String>) -> Self {
        KnownItem {
            item: UrlItem::new(url),
            next_fetch: 0,
        }
    }
}

/// What [`Frontier::lower_depth`](crate::Frontier::lower_depth) did, so a
/// caller needs no read of its own to know whether a fetch in flight should
/// take the new depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lowered {
    /// It was pending, unleased and deeper: it now sits at the asked depth,
    /// and sat at `from`.
    Moved {
        /// The depth it had.
        from: u32,
    },
    /// It is pending and deeper but leased: left at `depth`, its fetch goes
    /// on; whoever completes or hands it back can write the new depth then.
    InFlight {
        /// The depth it was leased at.
        depth: u32,
    },
    /// Unknown, malformed, completed, or not deeper than asked: nothing done.
    Unchanged,
}

/// What happened to one item of a put batch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PutOutcome {
    /// Inserted: it was not known in its crawl.
    New,
    /// Already known in its crawl (or earlier in the same batch); nothing changed.
    Seen,
    /// A known URL's schedule and metadata were overwritten (`put_known`).
    Updated,
    /// Not stored; resending will not help.
    Rejected(RejectReason),
}

/// Why an item was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RejectReason {
    /// The URL could not be parsed or canonicalised.
    InvalidUrl(mgz_url::UrlError),
    /// The queue key is longer than [`MAX_KEY_LEN`] bytes.
    KeyTooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The crawl id is longer than [`MAX_KEY_LEN`] bytes.
    CrawlTooLong {
        /// Its length in bytes.
        len: usize,
    },
}

impl std::fmt::Display for RejectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RejectReason::InvalidUrl(e) => write!(f, "{e}"),
            RejectReason::KeyTooLong { len } => {
                write!(f, "queue key is {len} bytes, over {MAX_KEY_LEN}")
            }
            RejectReason::CrawlTooLong { len } => {
                write!(f, "crawl id is {len} bytes, over {MAX_KEY_LEN}")
            }
        }
    }
}

/// Parameters of [`crate::Frontier::get`] (URLFrontier `GetParams`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetParams {
    /// Restrict to one crawl (`Some("")` = DEFAULT); `None` = any crawl.
    pub crawl: Option<String>,
    /// Restrict to one queue key.
    pub key: Option<String>,
    /// Maximum number of queues to serve from; 0 = unlimited.
    pub max_queues: u32,
    /// Maximum URLs per queue, also the cap on a queue's URLs in flight; 0 = unlimited.
    pub max_urls_per_queue: u32,
    /// Most URLs one queue gives in this call, below `max_urls_per_queue`
    /// (which still caps its URLs in flight); 0 = `max_urls_per_queue`.
    /// Not part of URLFrontier (its service asks 0). A crawler that spaces a
    /// host's requests by a politeness delay asks 1: two URLs leased at once
    /// cannot both be fetched before the delay has passed, so the second
    /// would wait out the delay inside the crawler holding a fetch slot
    /// (docs/BENCHMARKS.md, "Session 57").
    pub max_urls_per_turn: u32,
    /// Seconds a served URL stays leased before it may be served again; 0 = 30.
    pub delay_requestable: u32,
}

/// A stored URL with its state, as served by `get` or returned by lookups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlRecord {
    /// Crawl id (never empty: `""` is reported as [`DEFAULT_CRAWL`]).
    pub crawl: String,
    /// Queue key.
    pub key: String,
    /// Canonical URL text.
    pub url: String,
    /// Metadata as last stored.
    pub metadata: Metadata,
    /// Link depth.
    pub depth: u32,
    /// Creation time, seconds since the epoch.
    pub created: u64,
    /// Next fetch time, seconds since the epoch; 0 = completed.
    pub next_fetch: u64,
}

impl UrlRecord {
    /// The item that writes this URL back (`put_known`) at link depth
    /// `depth`, with its key, metadata and creation time.
    pub fn into_item(self, depth: u32) -> UrlItem {
        UrlItem {
            crawl: self.crawl,
            url: self.url,
            key: Some(self.key),
            metadata: self.metadata,
            depth,
            created: self.created,
        }
    }
}

/// Counters for a crawl or a queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// URLs not completed (including those in flight).
    pub size: u64,
    /// URLs leased and not yet updated or expired.
    pub in_flight: u64,
    /// Number of queues.
    pub queues: u64,
    /// Queues with at least one URL not completed.
    pub active_queues: u64,
    /// URLs completed (next fetch 0).
    pub completed: u64,
}

/// One page of queue keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueuePage {
    /// Queue keys in this page, sorted.
    pub keys: Vec<String>,
    /// Total number of queues matching (before paging).
    pub total: u64,
    /// Offset of the first key.
    pub start: u32,
}

/// Which URLs `list_urls` / `count_urls` look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlQuery {
    /// Crawl id; `""` = DEFAULT.
    pub crawl: String,
    /// Restrict to one queue.
    pub key: Option<String>,
    /// Keep URLs containing this substring.
    pub filter: Option<String>,
    /// Compare the filter case-insensitively.
    pub ignore_case: bool,
    /// Offset of the first result (ignored by `count_urls`).
    pub start: u64,
    /// Page size; 0 = 100 (ignored by `count_urls`).
    pub size: u64,
}

/// Normalises a crawl id: `""` is [`DEFAULT_CRAWL`].
pub fn crawl_name(crawl: &str) -> &str {
    if crawl.is_empty() {
        DEFAULT_CRAWL
    } else {
        crawl
    }
}
