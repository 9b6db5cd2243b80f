//! [`Frontier::lower_depth`]: a pending URL moved to a shallower link
//! depth, in one hold of the table lock, unless a lease is out on it.
//!
//! Why a call of its own: a crawler that finds a shorter path to a queued
//! URL (a redirect costs no hop, so its target may sit shallower than the
//! link that queued it) used to read the URL's state and `put_known` it
//! back at the new depth. A `put_known` of a leased URL ends the lease
//! (that is how a URLFrontier client reschedules what it fetched), so when
//! the URL was being fetched at that moment it was handed out, and fetched,
//! a second time. Here the lease and the state are checked under the same
//! lock hold that rewrites the URL.

use crate::codec::{UrlState, url_key};
use crate::error::{FrontierError, Result};
use crate::frontier::Frontier;
use crate::types::{Lowered, PutOutcome, crawl_name};

impl Frontier {
    /// Moves URL `url` of crawl `crawl` to link depth `depth` when it is
    /// pending, queued deeper, and not leased; its due time, metadata and
    /// creation time stay (it is queued again behind the URLs due then).
    /// Says what it did: [`Lowered::Moved`] with the depth it had,
    /// [`Lowered::InFlight`] when a lease is out on it (its fetch goes on,
    /// and whoever completes it can write the depth then), or
    /// [`Lowered::Unchanged`] (unknown, malformed, completed, not deeper).
    pub fn lower_depth(&self, crawl: &str, url: &str, depth: u32) -> Result<Lowered> {
        let rec = match self.url_status(crawl, url, None) {
            Ok(r) => r,
            Err(FrontierError::NotFound(_)) => return Ok(Lowered::Unchanged),
            Err(e) => return Err(e),
        };
        if rec.next_fetch == 0 || rec.depth <= depth {
            return Ok(Lowered::Unchanged);
        }
        let old = rec.depth;
        let item = rec.into_item(depth);
        let now_s = (self.now_ms() / 1000).max(1);
        let Ok(p) = self.prepare(&item, now_s) else {
            return Ok(Lowered::Unchanged);
        };
        let mut t = self.lock_store()?;
        let Some(&cid) = t.crawl_ids.get(crawl_name(&item.crawl)) else {
            return Ok(Lowered::Unchanged);
        };
        let Some(qid) = t.qid(cid, &p.key) else {
            return Ok(Lowered::Unchanged);
        };
        let h = crate::get::url_hash(&p.url);
        let leased = t
            .queues
            .get(&qid)
            .is_some_and(|q| q.by_url.get(&h).is_some_and(|lk| q.leases.contains_key(lk)));
        if leased {
            return Ok(Lowered::InFlight { depth: old });
        }
        // Still pending (it may have been completed since `url_status`):
        // rewritten at the schedule it has now.
        let next_fetch = match self.url_state((qid, &p.key), &p.ukey, &p.url)? {
            Some(UrlState::Pending { next_fetch, .. }) => next_fetch,
            _ => return Ok(Lowered::Unchanged),
        };
        let mut batch = self.store.db.batch();
        let k = url_key(qid, &p.ukey);
        let outcome = self.overwrite(&mut t, &mut batch, (qid, false), &k, p, next_fetch)?;
        t.write_counters([qid], &self.store, &mut batch);
        let commit = self.commit(&mut t, batch)?;
        drop(t);
        commit.wait()?;
        self.maybe_snapshot()?;
        Ok(if outcome == PutOutcome::Updated {
            Lowered::Moved { from: old }
        } else {
            Lowered::Unchanged
        })
    }
}
