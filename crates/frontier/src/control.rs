//! Queue and crawl control: delays, blocks, limits, activity. All durable:
//! each call writes the changed record and waits for group commit.

use crate::error::Result;
use crate::frontier::{Frontier, check_len};
use crate::records::{OwnDelay, crawl_meta_key};
use crate::table::secs32;
use crate::types::crawl_name;

impl Frontier {
    /// Sets the politeness delay (seconds between two serves) of queue `key`
    /// of `crawl`, or the crawl's default when `key` is `None` or empty.
    pub fn set_delay(&self, crawl: &str, key: Option<&str>, delay_s: u32) -> Result<()> {
        self.set_delay_ms(crawl, key, u64::from(delay_s) * 1000)
    }

    /// [`Frontier::set_delay`] in milliseconds (URLFrontier's `SetDelay` is
    /// in whole seconds; a crawler whose own delay is 300 ms paces its
    /// leases with this).
    pub fn set_delay_ms(&self, crawl: &str, key: Option<&str>, ms: u64) -> Result<()> {
        match key.filter(|k| !k.is_empty()) {
            // Held in ms in 4 bytes: a delay past ~49.7 days is clamped to it.
            Some(k) => self.update_queue(crawl, k, |q| q.delay_ms = OwnDelay::ms(ms)),
            None => self.update_crawl(crawl, |c| c.default_delay_ms = ms),
        }
    }

    /// Serves nothing from queue `key` before `until_s` (seconds since the epoch); 0 unblocks.
    pub fn block_queue_until(&self, crawl: &str, key: &str, until_s: u64) -> Result<()> {
        // Held in 4 bytes: a time past 2106 is clamped to it (still blocked).
        self.update_queue(crawl, key, |q| q.block_until_s = secs32(until_s))
    }

    /// Removes every queue's own politeness delay in `crawl` (each then
    /// takes the crawl's default again) and returns how many had one. One
    /// write for all of them; a crawl without such queues writes nothing.
    pub fn clear_queue_delays(&self, crawl: &str) -> Result<u64> {
        let (commit, cleared) = {
            let mut t = self.lock();
            let qids: Vec<u32> = crate::lookup::queue_ids(&t, crawl, None)
                .into_iter()
                .filter(|qid| {
                    t.queues
                        .get(qid)
                        .is_some_and(|q| q.rec.delay_ms.get().is_some())
                })
                .collect();
            if qids.is_empty() {
                return Ok(0);
            }
            for qid in &qids {
                if let Some(q) = t.queues.get_mut(qid) {
                    q.rec.delay_ms = OwnDelay::NONE;
                }
            }
            let mut batch = self.store.db.batch();
            t.write_queues(qids.iter().copied(), &self.store, &mut batch);
            (self.commit(&mut t, batch)?, qids.len() as u64)
        };
        commit.wait()?;
        Ok(cleared)
    }

    /// Caps queue `key` at `limit` URLs completed (plus in flight); 0 removes the cap.
    pub fn set_crawl_limit(&self, crawl: &str, key: &str, limit: u32) -> Result<()> {
        self.update_queue(crawl, key, |q| q.limit = limit)
    }

    /// Switches serving on or off for every crawl; puts are still accepted.
    pub fn set_active(&self, active: bool) -> Result<()> {
        let commit = {
            let mut t = self.lock();
            t.active = active;
            let mut batch = self.store.db.batch();
            batch.insert(&self.store.meta, b"active", [u8::from(active)]);
            self.commit(&mut t, batch)?
        };
        commit.wait()
    }

    /// Applies `f` to queue `key` of `crawl` (creating both if needed) and persists it.
    fn update_queue(
        &self,
        crawl: &str,
        key: &str,
        f: impl FnOnce(&mut crate::records::QueueRec),
    ) -> Result<()> {
        check_len("crawl id", crawl)?;
        check_len("queue key", key)?;
        let commit = {
            let mut t = self.lock();
            let mut batch = self.store.db.batch();
            let cid = t.crawl_id(crawl_name(crawl), &self.store, &mut batch, &self.opts.seen);
            let qid = t.queue_id(cid, key);
            if let Some(q) = t.queues.get_mut(&qid) {
                f(&mut q.rec);
            }
            t.write_queues([qid], &self.store, &mut batch);
            self.commit(&mut t, batch)?
        };
        commit.wait()
    }

    /// Applies `f` to the record of `crawl` (creating it if needed) and persists it.
    fn update_crawl(
        &self,
        crawl: &str,
        f: impl FnOnce(&mut crate::records::CrawlRec),
    ) -> Result<()> {
        check_len("crawl id", crawl)?;
        let commit = {
            let mut t = self.lock();
            let mut batch = self.store.db.batch();
            let cid = t.crawl_id(crawl_name(crawl), &self.store, &mut batch, &self.opts.seen);
            if let Some(c) = t.crawls.get_mut(&cid) {
                f(&mut c.rec);
                batch.insert(&self.store.meta, crawl_meta_key(cid), c.rec.encode());
            }
            self.commit(&mut t, batch)?
        };
        commit.wait()
    }
}
