//! Ceiling of the gRPC layer for the `mgz serve` benchmark: the real server
//! (transport, auth, put pipeline, acks) over a store that converts each URL
//! to the frontier's item type, as `mgz serve` does, then drops it and answers
//! `OK`, durable at once. What it measures is everything `mgz serve` does per
//! URL except the frontier's own work, so `mgz frontier put` against it gives
//! the rate the service layer can carry on this machine.
//!
//! GetURLs serves made-up URLs from [`NULL_QUEUES`] queues (each call
//! `max_urls_per_queue` per queue, 0 meaning 100), so `mgz frontier get
//! --complete` against it measures the serve-and-complete loop of the gRPC
//! layer alone: streaming the answer, and the completions' PutURLs.
//!
//! `cargo run --release -p mgz-service --example null_serve -- 127.0.0.1:PORT`
//! (logs `Started URLFrontierServer` like `mgz serve`; stops on SIGTERM).
//! Only the two puts and GetURLs work; every other RPC answers `UNAVAILABLE`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mgz_service::backend::{BackendResult, FrontierBackend, Gauges, Written, already_durable};
use mgz_service::proto::ack_message::Status;
use mgz_service::proto::{
    BlockQueueParams, CountUrlParams, CrawlLimitParams, GetParams, ListUrlParams, Pagination,
    PurgeUrlParams, QueueDelayParams, QueueList, QueueWithinCrawlParams, Stats, UrlInfo, UrlItem,
    UrlStatusRequest, url_item,
};
use mgz_service::{LogControl, Server, ServerConfig, ServiceError, convert, shutdown_signal};

/// Queues the null store pretends to hold.
const NULL_QUEUES: u32 = 20_000;

/// Converts and drops; counts what it was given.
#[derive(Default)]
struct NullStore {
    urls: AtomicU64,
    served: AtomicU64,
}

fn unsupported<T>() -> BackendResult<T> {
    Err(ServiceError::Store(
        "null store: only puts are taken".into(),
    ))
}

impl NullStore {
    fn take(&self, items: Vec<mgz_frontier::UrlItem>) -> Written {
        self.urls.fetch_add(items.len() as u64, Ordering::Relaxed);
        let statuses = vec![Status::Ok; items.len()];
        drop(std::hint::black_box(items));
        Written {
            statuses,
            durable: already_durable(),
        }
    }
}

impl FrontierBackend for NullStore {
    fn put_discovered(&self, batch: Vec<UrlInfo>) -> BackendResult<Written> {
        Ok(self.take(batch.into_iter().map(convert::item_in).collect()))
    }

    fn put_urls(&self, items: Vec<UrlItem>) -> BackendResult<Written> {
        let infos = items.into_iter().map(|i| match i.item {
            Some(url_item::Item::Discovered(d)) => d.info.unwrap_or_default(),
            Some(url_item::Item::Known(k)) => k.info.unwrap_or_default(),
            None => UrlInfo::default(),
        });
        Ok(self.take(infos.map(convert::item_in).collect()))
    }

    fn get_urls(&self, p: &GetParams) -> BackendResult<Vec<UrlInfo>> {
        let queues = match p.max_queues {
            0 => NULL_QUEUES,
            n => n.min(NULL_QUEUES),
        };
        let per_queue = match p.max_urls_per_queue {
            0 => 100,
            n => n.min(100),
        };
        let n = u64::from(queues * per_queue);
        let first = self.served.fetch_add(n, Ordering::Relaxed);
        let url = |i: u64| UrlInfo {
            url: format!("http://h{}.example/p{i}", i / u64::from(per_queue)),
            key: format!("h{}.example", i / u64::from(per_queue)),
            crawl_id: "DEFAULT".into(),
            ..UrlInfo::default()
        };
        Ok((first..first + n).map(url).collect())
    }
    fn stats(&self, _: &QueueWithinCrawlParams) -> BackendResult<Stats> {
        unsupported()
    }
    fn list_crawls(&self) -> BackendResult<Vec<String>> {
        unsupported()
    }
    fn delete_crawl(&self, _: &str) -> BackendResult<u64> {
        unsupported()
    }
    fn list_queues(&self, _: &Pagination) -> BackendResult<QueueList> {
        unsupported()
    }
    fn delete_queue(&self, _: &QueueWithinCrawlParams) -> BackendResult<u64> {
        unsupported()
    }
    fn block_queue_until(&self, _: &BlockQueueParams) -> BackendResult<()> {
        unsupported()
    }
    fn set_delay(&self, _: &QueueDelayParams) -> BackendResult<()> {
        unsupported()
    }
    fn set_crawl_limit(&self, _: &CrawlLimitParams) -> BackendResult<()> {
        unsupported()
    }
    fn url_status(&self, _: &UrlStatusRequest) -> BackendResult<Option<UrlItem>> {
        unsupported()
    }
    fn list_urls(
        &self,
        _: &ListUrlParams,
        _: &mut dyn FnMut(UrlItem) -> bool,
    ) -> BackendResult<()> {
        unsupported()
    }
    fn count_urls(&self, _: &CountUrlParams) -> BackendResult<u64> {
        unsupported()
    }
    fn purge_urls(&self, _: &PurgeUrlParams) -> BackendResult<u64> {
        unsupported()
    }
    fn set_active(&self, _: bool) -> BackendResult<()> {
        unsupported()
    }
    fn is_active(&self) -> bool {
        true
    }
    fn gauges(&self) -> Gauges {
        Gauges {
            queues: u64::from(NULL_QUEUES),
            ..Gauges::default()
        }
    }
    fn flush(&self) -> BackendResult<()> {
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listen = std::env::args()
        .nth(1)
        .ok_or("usage: null_serve HOST:PORT")?
        .parse()?;
    let log = Arc::new(LogControl::install("info")?);
    let config = ServerConfig {
        listen,
        seen_backend: "none".into(),
        ..ServerConfig::default()
    };
    let store = Arc::new(NullStore::default());
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let server = Server::bind(config, store.clone(), log).await?;
        server.serve(shutdown_signal()).await
    })?;
    eprintln!(
        "null store took {} URLs",
        store.urls.load(Ordering::Relaxed)
    );
    Ok(())
}
