//! Deleting queues, crawls and old URLs. Each call is one atomic batch (so a
//! crash leaves the queue either whole or gone) and marks the crawl's seen set
//! dirty (durably: a seen-log record, then the snapshot's flag): its "seen"
//! answers are checked against the store until a reopen rebuilds the set.

use std::collections::HashSet;

use crate::codec::{Body, StateHead, UrlState};
use crate::error::Result;
use crate::frontier::Frontier;
use crate::lookup::queue_ids;
use crate::records::crawl_meta_key;
use crate::table::Table;
use crate::types::crawl_name;

impl Frontier {
    /// Deletes queue `key` of `crawl` with all its URLs; returns how many URLs were removed.
    pub fn delete_queue(&self, crawl: &str, key: &str) -> Result<u64> {
        let (n, commit) = {
            let mut t = self.lock_store()?;
            let qids = queue_ids(&t, crawl, Some(key));
            if qids.is_empty() {
                return Ok(0);
            }
            let mut batch = self.store.db.batch();
            t.fold_counters(&self.store, &mut batch);
            let n = self.drop_queues(&mut t, &qids, &mut batch)?;
            (n, self.commit(&mut t, batch)?)
        };
        commit.wait()?;
        Ok(n)
    }

    /// Deletes crawl `crawl` entirely; returns how many URLs were removed.
    pub fn delete_crawl(&self, crawl: &str) -> Result<u64> {
        let (n, commit) = {
            let mut t = self.lock_store()?;
            let Some(&cid) = t.crawl_ids.get(crawl_name(crawl)) else {
                return Ok(0);
            };
            let qids = queue_ids(&t, crawl, None);
            let mut batch = self.store.db.batch();
            t.fold_counters(&self.store, &mut batch);
            let n = self.drop_queues(&mut t, &qids, &mut batch)?;
            batch.remove(&self.store.meta, crawl_meta_key(cid));
            t.crawls.remove(&cid);
            t.crawl_ids.remove(crawl_name(crawl));
            (n, self.commit(&mut t, batch)?)
        };
        commit.wait()?;
        Ok(n)
    }

    /// Deletes URLs of `crawl` (only queue `key` when given) created more than
    /// `days` days ago; returns how many were removed.
    pub fn purge_urls(&self, crawl: &str, key: Option<&str>, days: u32) -> Result<u64> {
        let cutoff = (self.now_ms() / 1000).saturating_sub(u64::from(days) * 86_400);
        let (n, commit) = {
            let mut t = self.lock_store()?;
            let mut batch = self.store.db.batch();
            let mut n = 0;
            for qid in queue_ids(&t, crawl, key) {
                n += self.purge_queue(&mut t, qid, cutoff, &mut batch)?;
            }
            if n == 0 {
                return Ok(0);
            }
            mark_dirty(&mut t, crawl);
            let qids = queue_ids(&t, crawl, key);
            t.write_queues(qids, &self.store, &mut batch);
            (n, self.commit(&mut t, batch)?)
        };
        commit.wait()?;
        Ok(n)
    }

    fn purge_queue(
        &self,
        t: &mut Table,
        qid: u32,
        cutoff: u64,
        batch: &mut fjall::OwnedWriteBatch,
    ) -> Result<u64> {
        let Some(q) = t.queues.get_mut(&qid) else {
            return Ok(0);
        };
        let mut n = 0;
        // Pending URLs (in `sched` and `disc`); their positions, to drop pointers below.
        let mut purged = HashSet::new();
        self.store.for_each_pending(qid, |pos, v| {
            if Body::decode(&v, &q.rec.key)?.created < cutoff {
                self.store.pending_remove(batch, qid, pos);
                q.leases.remove(&pos);
                q.rec.pending = q.rec.pending.saturating_sub(1);
                purged.insert(pos);
                n += 1;
            }
            Ok(true)
        })?;
        for kv in self.store.urls.prefix(qid.to_be_bytes()) {
            let (k, v) = kv.into_inner()?;
            match UrlState::head(&v)? {
                StateHead::Pending { next_fetch, seq } if purged.contains(&(next_fetch, seq)) => {
                    batch.remove(&self.store.urls, k);
                }
                StateHead::Completed { created } if created < cutoff => {
                    batch.remove(&self.store.urls, k);
                    q.rec.completed = q.rec.completed.saturating_sub(1);
                    n += 1;
                }
                _ => {}
            }
        }
        Ok(n)
    }

    /// Adds the removal of `qids` and their URLs to `batch`; drops them from RAM.
    fn drop_queues(
        &self,
        t: &mut Table,
        qids: &[u32],
        batch: &mut fjall::OwnedWriteBatch,
    ) -> Result<u64> {
        let mut n = 0;
        for &qid in qids {
            // Every pending URL has a `sched` entry, every completed one a
            // `urls` entry; pending pointers in `urls` are not counted.
            for kv in self.store.urls.prefix(qid.to_be_bytes()) {
                let (k, v) = kv.into_inner()?;
                n += u64::from(matches!(UrlState::head(&v)?, StateHead::Completed { .. }));
                batch.remove(&self.store.urls, k);
            }
            self.store.for_each_pending(qid, |pos, _| {
                self.store.pending_remove(batch, qid, pos);
                n += 1;
                Ok(true)
            })?;
            batch.remove(&self.store.queues, qid.to_be_bytes());
            if let Some(q) = t.remove_queue(qid) {
                t.set_dirty(q.rec.crawl);
            }
        }
        Ok(n)
    }
}

fn mark_dirty(t: &mut Table, crawl: &str) {
    if let Some(&id) = t.crawl_ids.get(crawl_name(crawl)) {
        t.set_dirty(id);
    }
}
