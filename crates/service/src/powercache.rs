//! [`FrontierBackend`] for PowerCache (`mgz_frontier::Frontier`).
//!
//! Mostly one frontier call per RPC. Two places do more:
//! - PutURLs chunks mix discovered and known items: each kind goes to the
//!   frontier as one `*_nowait` batch (relative order kept within a kind), the
//!   statuses are put back in item order, and the [`Written::durable`] wait
//!   covers both commits;
//! - ListURLs streams `Frontier::visit_urls` into the reply, one pass
//!   whatever its length, so a dump of millions of URLs never sits in memory
//!   at once. (It paged through `Frontier::list_urls` 50,000 at a time, and
//!   each page scanned the ones before it again.)

use mgz_frontier::{Frontier, GetParams as FGet, PutOutcome, UrlQuery};

use crate::backend::{BackendResult, FrontierBackend, Gauges, Written};
use crate::convert::{self, discovered_status, known_status};
use crate::proto::ack_message::Status;
use crate::proto::{
    BlockQueueParams, CountUrlParams, CrawlLimitParams, GetParams, ListUrlParams, Pagination,
    PurgeUrlParams, QueueDelayParams, QueueList, QueueWithinCrawlParams, Stats, UrlInfo, UrlItem,
    UrlStatusRequest, url_item,
};

fn key_opt(key: &str) -> Option<&str> {
    Some(key).filter(|k| !k.is_empty())
}

impl FrontierBackend for Frontier {
    fn put_discovered(&self, batch: Vec<UrlInfo>) -> BackendResult<Written> {
        let items: Vec<_> = batch.into_iter().map(convert::item_in).collect();
        let (outcomes, commit) = self.put_discovered_nowait(&items)?;
        Ok(Written {
            statuses: outcomes.iter().map(discovered_status).collect(),
            durable: Box::new(move || Ok(commit.wait()?)),
        })
    }

    fn put_urls(&self, items: Vec<UrlItem>) -> BackendResult<Written> {
        let mut statuses = vec![Status::Skipped; items.len()];
        let (mut disc, mut disc_at, mut known, mut known_at) = (vec![], vec![], vec![], vec![]);
        for (i, item) in items.into_iter().enumerate() {
            match item.item {
                Some(url_item::Item::Discovered(d)) => {
                    disc.push(convert::item_in(d.info.unwrap_or_default()));
                    disc_at.push(i);
                }
                Some(url_item::Item::Known(k)) => {
                    known.push(convert::known_in(k));
                    known_at.push(i);
                }
                None => {} // neither kind: nothing to store, SKIPPED
            }
        }
        let (disc_out, c1) = self.put_discovered_nowait(&disc)?;
        let (known_out, c2) = self.put_known_nowait(&known)?;
        place(&mut statuses, &disc_at, &disc_out, discovered_status);
        place(&mut statuses, &known_at, &known_out, known_status);
        let durable = Box::new(move || {
            c1.wait()?;
            Ok(c2.wait()?)
        });
        Ok(Written { statuses, durable })
    }

    fn get_urls(&self, p: &GetParams) -> BackendResult<Vec<UrlInfo>> {
        let params = FGet {
            crawl: convert::get_crawl(p.item.clone()),
            key: key_opt(&p.key).map(str::to_owned),
            max_queues: p.max_queues,
            max_urls_per_queue: p.max_urls_per_queue,
            // URLFrontier has no such field: a queue's turn is its room.
            max_urls_per_turn: 0,
            delay_requestable: p.delay_requestable,
        };
        Ok(self
            .get(&params)?
            .into_iter()
            .map(convert::info_out)
            .collect())
    }

    fn stats(&self, p: &QueueWithinCrawlParams) -> BackendResult<Stats> {
        let s = Frontier::stats(self, &p.crawl_id, key_opt(&p.key));
        let counts = [
            ("completed", s.completed),
            ("active_queues", s.active_queues),
        ];
        Ok(Stats {
            size: s.size,
            in_process: u32::try_from(s.in_flight).unwrap_or(u32::MAX),
            counts: counts.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            number_of_queues: s.queues,
            crawl_id: p.crawl_id.clone(),
        })
    }

    fn list_crawls(&self) -> BackendResult<Vec<String>> {
        Ok(Frontier::list_crawls(self))
    }

    fn delete_crawl(&self, crawl: &str) -> BackendResult<u64> {
        Ok(Frontier::delete_crawl(self, crawl)?)
    }

    fn list_queues(&self, p: &Pagination) -> BackendResult<QueueList> {
        let page = Frontier::list_queues(self, &p.crawl_id, p.start, p.size, p.include_inactive);
        Ok(QueueList {
            size: page.keys.len() as u32,
            values: page.keys,
            total: page.total,
            start: page.start,
            crawl_id: p.crawl_id.clone(),
        })
    }

    fn delete_queue(&self, p: &QueueWithinCrawlParams) -> BackendResult<u64> {
        Ok(Frontier::delete_queue(self, &p.crawl_id, &p.key)?)
    }

    fn block_queue_until(&self, p: &BlockQueueParams) -> BackendResult<()> {
        Ok(Frontier::block_queue_until(
            self,
            &p.crawl_id,
            &p.key,
            p.time,
        )?)
    }

    fn set_delay(&self, p: &QueueDelayParams) -> BackendResult<()> {
        Ok(Frontier::set_delay(
            self,
            &p.crawl_id,
            key_opt(&p.key),
            p.delay_requestable,
        )?)
    }

    fn set_crawl_limit(&self, p: &CrawlLimitParams) -> BackendResult<()> {
        Ok(Frontier::set_crawl_limit(
            self,
            &p.crawl_id,
            &p.key,
            p.limit,
        )?)
    }

    fn url_status(&self, p: &UrlStatusRequest) -> BackendResult<Option<UrlItem>> {
        match Frontier::url_status(self, &p.crawl_id, &p.url, key_opt(&p.key)) {
            Ok(rec) => Ok(Some(convert::item_out(rec))),
            Err(mgz_frontier::FrontierError::NotFound(_)) => Ok(None),
            Err(other) => Err(other.into()),
        }
    }

    fn list_urls(
        &self,
        p: &ListUrlParams,
        sink: &mut dyn FnMut(UrlItem) -> bool,
    ) -> BackendResult<()> {
        let query = query(&p.crawl_id, &p.key, p.filter.clone(), p.ignore_case);
        let (mut skip, mut left) = (u64::from(p.start), u64::from(p.size));
        if left == 0 {
            return Ok(());
        }
        Frontier::visit_urls(self, &query, |rec| {
            if skip > 0 {
                skip -= 1;
                return true;
            }
            left -= 1;
            sink(convert::item_out(rec)) && left > 0
        })?;
        Ok(())
    }

    fn count_urls(&self, p: &CountUrlParams) -> BackendResult<u64> {
        Ok(Frontier::count_urls(
            self,
            &query(&p.crawl_id, &p.key, p.filter.clone(), p.ignore_case),
        )?)
    }

    fn purge_urls(&self, p: &PurgeUrlParams) -> BackendResult<u64> {
        Ok(Frontier::purge_urls(
            self,
            &p.crawl_id,
            key_opt(&p.key),
            p.days,
        )?)
    }

    fn set_active(&self, state: bool) -> BackendResult<()> {
        Ok(Frontier::set_active(self, state)?)
    }

    fn is_active(&self) -> bool {
        Frontier::is_active(self)
    }

    fn gauges(&self) -> Gauges {
        // One pass over the queue heads (GetURLs reads the queue count once
        // per multi-call answer; per-crawl stats would list each crawl's
        // queues first).
        let s = Frontier::stats_all(self);
        Gauges {
            seen_bytes: self.seen_bytes() as u64,
            queues: s.queues,
            in_flight: s.in_flight,
            pending: s.size,
            completed: s.completed,
        }
    }

    fn flush(&self) -> BackendResult<()> {
        // At shutdown: the next start restores the seen snapshot instead
        // of replaying the journal and a seen log of every URL put.
        Ok(Frontier::checkpoint(self)?)
    }
}

fn query(crawl: &str, key: &str, filter: Option<String>, ignore_case: Option<bool>) -> UrlQuery {
    UrlQuery {
        crawl: crawl.to_owned(),
        key: key_opt(key).map(str::to_owned),
        filter: filter.filter(|f| !f.is_empty()),
        ignore_case: ignore_case.unwrap_or(false),
        start: 0,
        size: 0,
    }
}

/// Writes the status of `outcomes[j]` at `statuses[at[j]]`.
fn place(
    statuses: &mut [Status],
    at: &[usize],
    outcomes: &[PutOutcome],
    f: fn(&PutOutcome) -> Status,
) {
    for (&i, outcome) in at.iter().zip(outcomes) {
        statuses[i] = f(outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(crawl: &str, url: &str) -> UrlInfo {
        UrlInfo {
            url: url.into(),
            crawl_id: crawl.into(),
            ..UrlInfo::default()
        }
    }

    #[test]
    fn gauges_sum_every_crawl() {
        let dir = tempfile::tempdir().unwrap();
        let f = Frontier::open(dir.path(), mgz_frontier::FrontierOptions::default()).unwrap();
        let urls = [
            info("a", "http://x.example/1"),
            info("a", "http://x.example/2"),
            info("a", "http://y.example/1"),
            info("b", "http://x.example/1"),
        ];
        let w = FrontierBackend::put_discovered(&f, urls.to_vec()).unwrap();
        (w.durable)().unwrap();
        let ask = GetParams {
            key: "x.example".into(),
            max_urls_per_queue: 1,
            ..GetParams::default()
        };
        assert_eq!(FrontierBackend::get_urls(&f, &ask).unwrap().len(), 2);
        let g = FrontierBackend::gauges(&f);
        assert_eq!(
            (g.queues, g.pending, g.in_flight, g.completed),
            (3, 4, 2, 0)
        );
        assert!(g.seen_bytes > 0);
    }
}
