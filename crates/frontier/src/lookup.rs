//! Read-only views: statistics, crawl and queue listings, URL status,
//! URL listing and counting. Listing URLs scans the store (cost linear in
//! the URLs of the crawl or queue: per queue its completed URLs in `urls`,
//! then its pending ones in `sched` and `disc`); URL status reads `urls`, else scans
//! the URL's queue (see `pending`); the rest reads only RAM.

use mgz_url::CanonicalUrl;

use crate::codec::{Body, UrlState, url_key_part};
use crate::error::{FrontierError, Result};
use crate::frontier::Frontier;
use crate::table::Table;
use crate::types::{QueuePage, Stats, UrlQuery, UrlRecord, crawl_name};

/// Default page size of listings.
const DEFAULT_PAGE: u64 = 100;

impl Frontier {
    /// Counters of queue `key` of `crawl`, or of the whole crawl when `key` is `None`/empty.
    /// An unknown crawl or queue gives zeros.
    pub fn stats(&self, crawl: &str, key: Option<&str>) -> Stats {
        let now = self.now_ms();
        let mut t = self.lock();
        let qids = queue_ids(&t, crawl, key);
        let mut s = Stats::default();
        for qid in qids {
            let Some(q) = t.queues.get_mut(&qid) else {
                continue;
            };
            s.queues += 1;
            s.size += q.rec.pending;
            s.completed += q.rec.completed;
            s.in_flight += q.live_leases(now) as u64;
            s.active_queues += u64::from(q.rec.pending > 0);
        }
        s
    }

    /// Counters summed over every queue of every crawl, in one pass over
    /// the in-RAM queue heads (no store reads; cost linear in queues).
    pub fn stats_all(&self) -> Stats {
        let now = self.now_ms();
        let mut t = self.lock();
        let mut s = Stats::default();
        for q in t.queues.values_mut() {
            s.queues += 1;
            s.size += q.rec.pending;
            s.completed += q.rec.completed;
            s.in_flight += q.live_leases(now) as u64;
            s.active_queues += u64::from(q.rec.pending > 0);
        }
        s
    }

    /// Names of every crawl.
    pub fn list_crawls(&self) -> Vec<String> {
        let mut v: Vec<String> = self.lock().crawl_ids.keys().cloned().collect();
        v.sort();
        v
    }

    /// Queue keys of `crawl`, sorted, paged (`size` 0 = 100). Inactive queues
    /// (nothing pending) are included only when asked.
    pub fn list_queues(
        &self,
        crawl: &str,
        start: u32,
        size: u32,
        include_inactive: bool,
    ) -> QueuePage {
        let t = self.lock();
        let mut keys: Vec<String> = queue_ids(&t, crawl, None)
            .into_iter()
            .filter_map(|qid| t.queues.get(&qid))
            .filter(|q| include_inactive || q.rec.pending > 0)
            .map(|q| q.rec.key.to_string())
            .collect();
        keys.sort();
        let total = keys.len() as u64;
        let size = if size == 0 {
            DEFAULT_PAGE as usize
        } else {
            size as usize
        };
        let keys = keys.into_iter().skip(start as usize).take(size).collect();
        QueuePage { keys, total, start }
    }

    /// Queues of `crawl` blocked now ([`Frontier::block_queue_until`] a
    /// time still to come), with the second each block ends, sorted by key.
    /// A pass over the crawl's queue heads in RAM, no store reads.
    pub fn blocked_queues(&self, crawl: &str) -> Vec<(String, u64)> {
        let now_s = self.now_ms() / 1000;
        let t = self.lock();
        let mut out: Vec<(String, u64)> = queue_ids(&t, crawl, None)
            .into_iter()
            .filter_map(|qid| t.queues.get(&qid))
            .filter(|q| u64::from(q.rec.block_until_s) > now_s)
            .map(|q| (q.rec.key.to_string(), u64::from(q.rec.block_until_s)))
            .collect();
        out.sort();
        out
    }

    /// The stored state of `url` in `crawl` (queue `key`, default the host).
    pub fn url_status(&self, crawl: &str, url: &str, key: Option<&str>) -> Result<UrlRecord> {
        let canon = CanonicalUrl::parse(url, None, &self.opts.policy)
            .map_err(|_| FrontierError::NotFound(url.to_string()))?;
        let key = key.filter(|k| !k.is_empty()).unwrap_or(canon.host());
        let qid = {
            let t = self.lock_store()?;
            t.crawl_ids
                .get(crawl_name(crawl))
                .and_then(|&cid| t.qid(cid, key))
        };
        let qid = qid.ok_or_else(|| FrontierError::NotFound(url.to_string()))?;
        let state = self
            .url_state((qid, key), &canon.key_bytes(), canon.as_str())?
            .ok_or_else(|| FrontierError::NotFound(url.to_string()))?;
        self.to_record(crawl, key, qid, state)
    }

    /// URLs of a crawl or queue matching the filter, paged in store order.
    pub fn list_urls(&self, query: &UrlQuery) -> Result<Vec<UrlRecord>> {
        let size = if query.size == 0 {
            DEFAULT_PAGE
        } else {
            query.size
        };
        let mut out = Vec::new();
        let mut skipped = 0;
        self.scan_urls(query, |rec| {
            if skipped < query.start {
                skipped += 1;
            } else {
                out.push(rec);
            }
            (out.len() as u64) < size
        })?;
        Ok(out)
    }

    /// Number of URLs of a crawl or queue matching the filter.
    pub fn count_urls(&self, query: &UrlQuery) -> Result<u64> {
        let mut n = 0;
        self.scan_urls(query, |_| {
            n += 1;
            true
        })?;
        Ok(n)
    }

    /// Calls `f` on each URL of a crawl or queue matching the filter, in
    /// the order [`Frontier::list_urls`] pages through (`start` and `size`
    /// ignored), until it returns false: a listing of any length in one
    /// pass, where paging with `start` scans the skipped records again for
    /// every page.
    pub fn visit_urls(&self, query: &UrlQuery, f: impl FnMut(UrlRecord) -> bool) -> Result<()> {
        self.scan_urls(query, f)
    }

    /// Calls `f` on each matching record until it returns false.
    fn scan_urls(&self, query: &UrlQuery, mut f: impl FnMut(UrlRecord) -> bool) -> Result<()> {
        let queues: Vec<(u32, String)> = {
            let t = self.lock_store()?;
            queue_ids(&t, &query.crawl, query.key.as_deref())
                .into_iter()
                .filter_map(|qid| t.queues.get(&qid).map(|q| (qid, q.rec.key.to_string())))
                .collect()
        };
        let needle = query.filter.as_deref().filter(|s| !s.is_empty()).map(|s| {
            if query.ignore_case {
                s.to_lowercase()
            } else {
                s.to_string()
            }
        });
        let wanted = |rec: &UrlRecord| match &needle {
            None => true,
            Some(n) if query.ignore_case => rec.url.to_lowercase().contains(n.as_str()),
            Some(n) => rec.url.contains(n.as_str()),
        };
        for (qid, key) in queues {
            let crawl = crawl_name(&query.crawl);
            // Completed URLs from `urls` (pending pointers there are skipped:
            // every pending URL is in `sched`), then the pending ones.
            for kv in self.store.urls.prefix(qid.to_be_bytes()) {
                let (k, v) = kv.into_inner()?;
                if let UrlState::Completed(body) = UrlState::decode(&v, url_key_part(&k)?)? {
                    let rec = crate::get::record(crawl, &key, body, 0);
                    if wanted(&rec) && !f(rec) {
                        return Ok(());
                    }
                }
            }
            let mut more = true;
            self.store.for_each_pending(qid, |(next_fetch, _), v| {
                let rec = crate::get::record(crawl, &key, Body::decode(&v, &key)?, next_fetch);
                more = !wanted(&rec) || f(rec);
                Ok(more)
            })?;
            if !more {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Calls `f` on every URL of `crawl`, completed and pending, until it
    /// returns false: the records [`Frontier::list_urls`] gives for each of
    /// the crawl's queues, in store order (by queue id, completed URLs
    /// first, not by queue key). One pass over each keyspace, where listing
    /// the queues one by one costs a seek per queue and keyspace: for a
    /// census of a crawl with many queues (measured: a million URLs on
    /// 87,532 queues, 10 s queue by queue, 0.9 s in one pass).
    pub fn for_each_url(&self, crawl: &str, mut f: impl FnMut(UrlRecord) -> bool) -> Result<()> {
        let keys: std::collections::HashMap<u32, String> = {
            let t = self.lock_store()?;
            queue_ids(&t, crawl, None)
                .into_iter()
                .filter_map(|qid| t.queues.get(&qid).map(|q| (qid, q.rec.key.to_string())))
                .collect()
        };
        let crawl = crawl_name(crawl);
        for kv in self.store.urls.iter() {
            let (k, v) = kv.into_inner()?;
            let Some(qid) = k
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_be_bytes)
            else {
                return Err(FrontierError::corrupt(
                    "urls",
                    "key shorter than a queue id",
                ));
            };
            let Some(key) = keys.get(&qid) else {
                continue;
            };
            if let UrlState::Completed(body) = UrlState::decode(&v, url_key_part(&k)?)?
                && !f(crate::get::record(crawl, key, body, 0))
            {
                return Ok(());
            }
        }
        self.store.for_each_pending_all(|qid, (next_fetch, _), v| {
            let Some(key) = keys.get(&qid) else {
                return Ok(true);
            };
            Ok(f(crate::get::record(
                crawl,
                key,
                Body::decode(&v, key)?,
                next_fetch,
            )))
        })
    }

    /// Builds the record of a URL from its state (reading the body of a pending one).
    pub(crate) fn to_record(
        &self,
        crawl: &str,
        key: &str,
        qid: u32,
        state: UrlState,
    ) -> Result<UrlRecord> {
        let (body, next_fetch) = match state {
            UrlState::Completed(body) => (body, 0),
            UrlState::Pending { next_fetch, seq } => {
                let v = self
                    .store
                    .pending_get(qid, (next_fetch, seq))?
                    .ok_or_else(|| {
                        FrontierError::corrupt("sched", "pending URL without its entry")
                    })?;
                (Body::decode(&v, key)?, next_fetch)
            }
        };
        Ok(crate::get::record(crawl_name(crawl), key, body, next_fetch))
    }
}

/// Queue ids of `crawl`, or only queue `key` when given (non-empty).
pub(crate) fn queue_ids(t: &Table, crawl: &str, key: Option<&str>) -> Vec<u32> {
    let Some(&id) = t.crawl_ids.get(crawl_name(crawl)) else {
        return Vec::new();
    };
    match key.filter(|k| !k.is_empty()) {
        Some(k) => t.qid(id, k).into_iter().collect(),
        None => t.crawl_qids(id),
    }
}
