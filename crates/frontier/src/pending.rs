//! Pending URLs without a `urls` entry ("unindexed", since format 3).
//!
//! A URL that `put_discovered` inserts while its crawl's seen set is trusted
//! (exact, or false-positive rate ≤ `trust_seen_fpr`) and clean (no deletion
//! since it was built) gets ONE store entry, its `sched` entry: the seen set
//! already answers "is it known?", so a `urls` pointer would only serve the
//! rare lookups by URL text, and it cost two thirds of the put (a second
//! entry with a long, random key; see docs/BENCHMARKS.md "Frontier").
//!
//! ```text
//! where a URL stands          urls entry                 sched entry
//! (the schedule entry is in `sched` or `disc`, see `disc`)
//! pending, unindexed          -                          qid|next|seq -> Body
//! pending, indexed            qid|key -> Pending{next,seq}  qid|next|seq -> Body
//! completed                   qid|key -> Completed(Body)    -
//! ```
//! Indexed pending URLs are those written by `put_known`, or by
//! `put_discovered` while the crawl's answers need checking (untrusted or
//! dirty backend). Lookups by URL text (`put_known` of an unleased URL the
//! seen set knows, `url_status`, the "seen" check of an untrusted or dirty
//! crawl when `urls` has nothing) fall back to a scan of the URL's queue in
//! `sched` and `disc` — linear in that queue's pending URLs, which is fine for per-host
//! queues and rare calls. Leased URLs are found in RAM (`Queue::by_url`).

use crate::codec::{Body, UrlState, url_key};
use crate::error::Result;
use crate::frontier::Frontier;
use crate::table::LeaseKey;

impl Frontier {
    /// Position of pending URL `url` (canonical text) in the schedule of
    /// queue `qid` (key `key`), found by scanning it.
    pub(crate) fn find_pending(
        &self,
        (qid, key): (u32, &str),
        url: &str,
    ) -> Result<Option<LeaseKey>> {
        let mut found = None;
        self.store.for_each_pending(qid, |pos, v| {
            if Body::decode(&v, key)?.url == url {
                found = Some(pos);
            }
            Ok(found.is_none())
        })?;
        Ok(found)
    }

    /// The stored state of a URL of queue `qid` (key `key`; URL key bytes
    /// `ukey`, canonical text `url`): its `urls` entry, else its unindexed
    /// schedule entry.
    pub(crate) fn url_state(
        &self,
        (qid, key): (u32, &str),
        ukey: &[u8],
        url: &str,
    ) -> Result<Option<UrlState>> {
        if let Some(v) = self.store.urls.get(url_key(qid, ukey))? {
            return Ok(Some(UrlState::decode(&v, ukey)?));
        }
        Ok(self
            .find_pending((qid, key), url)?
            .map(|(next_fetch, seq)| UrlState::Pending { next_fetch, seq }))
    }
}
