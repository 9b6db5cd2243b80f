//! PowerCache: MillionGazillion's crawl frontier — seen set and to-do list in
//! one durable store, per-host queues served fair across registrable domains
//! and polite per queue, crash-safe.
//!
//! ```no_run
//! use mgz_frontier::{Frontier, FrontierOptions, GetParams, KnownItem, UrlItem};
//! let f = Frontier::open("/tmp/frontier", FrontierOptions::default())?;
//! f.put_discovered(&[UrlItem::new("https://example.com/")])?; // durable on return
//! for leased in f.get(&GetParams { max_queues: 10, max_urls_per_queue: 2, ..Default::default() })? {
//!     // fetch leased.url ..., then mark it completed:
//!     f.put_known(&[KnownItem { item: UrlItem::new(leased.url), next_fetch: 0 }])?;
//! }
//! # Ok::<(), mgz_frontier::FrontierError>(())
//! ```
//!
//! Model, storage layout and guarantees: see the crate README.
#![warn(missing_docs)]

mod clock;
mod codec;
mod commit;
mod control;
mod counters;
mod delete;
mod disc;
mod discscan;
mod dlog;
mod domains;
mod error;
#[cfg(target_os = "linux")]
mod fresh;
mod frontier;
mod get;
mod jsync;
mod keyindex;
mod lookup;
mod lower;
mod order;
mod pending;
mod put;
mod queues;
mod records;
mod recover;
mod repair;
mod ring;
mod seenidx;
mod seenlog;
mod segcompact;
mod segments;
mod slim;
mod snapshot;
mod store;
mod table;
mod torn;
mod types;

pub use clock::{Clock, ManualClock, SystemClock};
pub use commit::{Commit, Durability};
pub use error::{FrontierError, Result, STORE_POISONED};
pub use frontier::{Frontier, FrontierOptions, SeenFactory, seen_factory};
pub use store::{FORMAT_VERSION, StoreOptions};
pub use types::{
    DEFAULT_CRAWL, GetParams, KnownItem, Lowered, MAX_KEY_LEN, Metadata, PutOutcome, QueuePage,
    RejectReason, Stats, UrlItem, UrlQuery, UrlRecord, crawl_name,
};

/// Entry points for the cargo-fuzz targets in `fuzz/` (not a stable API).
#[doc(hidden)]
pub mod fuzzing {
    /// Runs every stored-value decoder on `bytes`; they must not panic.
    pub fn decode_all(bytes: &[u8]) {
        let _ = crate::codec::Body::decode(bytes, "example.com");
        let _ = crate::codec::UrlState::decode(bytes, b"com.example/a");
        let _ = crate::codec::UrlState::head(bytes);
        let _ = crate::codec::parse_sched_key(bytes);
        let _ = crate::disc::parse_disc_key(bytes);
        let _ = crate::dlog::parse_dlog_key(bytes);
        let _ = crate::dlog::parse_value_bytes(bytes, 20);
        let _ = crate::records::QueueRec::decode(bytes);
        let _ = crate::records::CrawlRec::decode(bytes);
        let _ = crate::counters::decode(bytes);
        let _ = crate::snapshot::SnapshotView::parse(bytes);
        seen_log(bytes);
    }

    /// Parses `bytes` as a seen log file, and as one whose frames (the
    /// parts between 0xFF bytes but the last) carry good checksums, the
    /// last part left as a raw tail: the replay must return Ok or a typed
    /// error, never panic.
    fn seen_log(bytes: &[u8]) {
        let path = std::path::Path::new("fuzz.log");
        let _ = crate::seenlog::parse(bytes, 0, path);
        let mut parts: Vec<&[u8]> = bytes.split(|&b| b == 0xff).collect();
        let tail = parts.pop().unwrap_or_default();
        let log = crate::seenlog::log_bytes(parts.into_iter(), tail);
        let _ = crate::seenlog::parse(&log, 0, path);
    }
}

/// Builds in-memory state alone so a benchmark with a counting allocator can
/// weigh it (not a stable API).
#[doc(hidden)]
pub mod probe {
    /// A queue table (one crawl, no seen set) holding the queues `keys`, as
    /// `put_discovered` would build it; drop it to free it.
    pub fn queue_table<'a>(keys: impl IntoIterator<Item = &'a str>) -> impl Sized {
        let mut t = crate::table::Table::default();
        let seen: crate::SeenFactory =
            std::sync::Arc::new(|| Box::new(mgz_seen::hash::HashSeen::new()));
        let rec = crate::records::CrawlRec {
            name: crate::DEFAULT_CRAWL.to_string(),
            default_delay_ms: crate::records::DEFAULT_DELAY_MS,
        };
        t.add_crawl(0, rec, &seen);
        for key in keys {
            t.queue_id(0, key);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn decoders_survive_random_bytes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for len in 0..200 {
            for _ in 0..20 {
                let mut b: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                if let Some(first) = b.first_mut() {
                    // Past the version check, into the fields (1 and 2 read bodies).
                    *first = 1 + (len % 2) as u8;
                }
                crate::fuzzing::decode_all(&b);
            }
        }
    }

    #[test]
    fn frontier_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<crate::Frontier>();
    }
}
