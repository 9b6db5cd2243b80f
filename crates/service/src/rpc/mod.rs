//! The tonic service: every URLFrontier RPC, mapped onto a [`FrontierBackend`].
//!
//! Unary calls are normalised ([`params`]) and run on the blocking pool; the two
//! put streams go through the [`pipeline`]; GetURLs streams its answer in
//! bounded chunks ([`get`]); ListURLs streams what the store hands back page
//! by page. The log control and the node's address live here; the
//! active flag lives in the store (it survives a restart).

pub mod get;
pub mod limited;
pub mod params;
pub mod pipeline;
pub mod put;

use std::pin::Pin;
use std::sync::Arc;

use futures_util::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::backend::FrontierBackend;
use crate::logging::LogControl;
use crate::metrics::Metrics;
use crate::proto::url_frontier_server::UrlFrontier;
use crate::proto::{
    AckMessage, Active, BatchAck, BlockQueueParams, Boolean, CountUrlParams, CrawlLimitParams,
    DeleteCrawlMessage, DiscoveredBatch, Empty, GetParams, ListUrlParams, Local, LogLevelParams,
    Long, Pagination, PurgeUrlParams, QueueDelayParams, QueueList, QueueWithinCrawlParams, Stats,
    StringList, UrlInfo, UrlItem, UrlStatusRequest, log_level_params,
};
use pipeline::PipelineLimits;

type Answers<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

/// State shared by every connection.
pub struct FrontierService<B> {
    backend: Arc<B>,
    metrics: Arc<Metrics>,
    log: Arc<LogControl>,
    node: String,
    get_chunk_urls: usize,
}

/// PutURLs: a message is one URL. A stream gathers up to 8,192 URLs per
/// store write and keeps up to 8 written chunks waiting for group commit.
const PUT_URLS_LIMITS: PipelineLimits = PipelineLimits {
    max_chunk: 8192,
    waiting: 8,
};

/// PutDiscovered: messages are batches (typically 256 URLs); up to 16,384
/// URLs per store write, up to 8 written chunks waiting for group commit
/// (at a 50 ms sync interval that caps one stream at ≈ 2.6 M URLs/s).
const PUT_DISCOVERED_LIMITS: PipelineLimits = PipelineLimits {
    max_chunk: 16_384,
    waiting: 8,
};

impl<B: FrontierBackend> FrontierService<B> {
    /// A service answering for node `node` (its `host:port`).
    pub fn new(backend: Arc<B>, metrics: Arc<Metrics>, log: Arc<LogControl>, node: String) -> Self {
        Self {
            backend,
            metrics,
            log,
            node,
            get_chunk_urls: get::DEFAULT_CHUNK_URLS,
        }
    }

    /// Sets the URLs leased per store call of a GetURLs answer (see [`get`]).
    pub fn with_get_chunk(mut self, urls: usize) -> Self {
        self.get_chunk_urls = urls.max(1);
        self
    }

    /// Runs `f` against the backend on the blocking pool.
    async fn blocking<T, F>(&self, f: F) -> Result<T, Status>
    where
        T: Send + 'static,
        F: FnOnce(&B) -> Result<T, crate::ServiceError> + Send + 'static,
    {
        let backend = self.backend.clone();
        match tokio::task::spawn_blocking(move || f(&backend)).await {
            Ok(result) => result.map_err(Status::from),
            Err(join) => Err(Status::internal(format!("store task failed: {join}"))),
        }
    }
}

#[tonic::async_trait]
impl<B: FrontierBackend> UrlFrontier for FrontierService<B> {
    async fn list_nodes(&self, _: Request<Empty>) -> Result<Response<StringList>, Status> {
        Ok(Response::new(StringList {
            values: vec![self.node.clone()],
        }))
    }

    async fn list_crawls(&self, _: Request<Local>) -> Result<Response<StringList>, Status> {
        let values = self.blocking(|b| b.list_crawls()).await?;
        Ok(Response::new(StringList { values }))
    }

    async fn delete_crawl(&self, r: Request<DeleteCrawlMessage>) -> Result<Response<Long>, Status> {
        let crawl = crate::backend::crawl_id(&r.into_inner().value).to_owned();
        let value = self.blocking(move |b| b.delete_crawl(&crawl)).await?;
        Ok(Response::new(Long { value }))
    }

    async fn list_queues(&self, r: Request<Pagination>) -> Result<Response<QueueList>, Status> {
        let p = params::pagination(r.into_inner());
        Ok(Response::new(
            self.blocking(move |b| b.list_queues(&p)).await?,
        ))
    }

    type GetURLsStream = Answers<UrlInfo>;

    async fn get_ur_ls(&self, r: Request<GetParams>) -> Result<Response<Answers<UrlInfo>>, Status> {
        let p = params::get(r.into_inner());
        Ok(Response::new(get::spawn(
            self.backend.clone(),
            p,
            self.get_chunk_urls,
            self.metrics.clone(),
        )))
    }

    type PutURLsStream = ReceiverStream<Result<AckMessage, Status>>;

    async fn put_ur_ls(
        &self,
        r: Request<Streaming<UrlItem>>,
    ) -> Result<Response<Self::PutURLsStream>, Status> {
        let (backend, metrics) = (self.backend.clone(), self.metrics.clone());
        let handle = Arc::new(move |items| put::put_urls(&*backend, &metrics, items));
        let guard = self.metrics.stream_opened();
        Ok(Response::new(pipeline::spawn(
            r.into_inner(),
            PUT_URLS_LIMITS,
            handle,
            self.metrics.clone(),
            guard,
        )))
    }

    type PutDiscoveredStream = ReceiverStream<Result<BatchAck, Status>>;

    async fn put_discovered(
        &self,
        r: Request<Streaming<DiscoveredBatch>>,
    ) -> Result<Response<Self::PutDiscoveredStream>, Status> {
        let (backend, metrics) = (self.backend.clone(), self.metrics.clone());
        let handle = Arc::new(move |batches| put::put_discovered(&*backend, &metrics, batches));
        let guard = self.metrics.stream_opened();
        Ok(Response::new(pipeline::spawn(
            r.into_inner(),
            PUT_DISCOVERED_LIMITS,
            handle,
            self.metrics.clone(),
            guard,
        )))
    }

    async fn get_stats(
        &self,
        r: Request<QueueWithinCrawlParams>,
    ) -> Result<Response<Stats>, Status> {
        let p = params::queue(r.into_inner());
        Ok(Response::new(self.blocking(move |b| b.stats(&p)).await?))
    }

    async fn delete_queue(
        &self,
        r: Request<QueueWithinCrawlParams>,
    ) -> Result<Response<Long>, Status> {
        let p = params::queue(r.into_inner());
        let value = self.blocking(move |b| b.delete_queue(&p)).await?;
        Ok(Response::new(Long { value }))
    }

    async fn block_queue_until(
        &self,
        r: Request<BlockQueueParams>,
    ) -> Result<Response<Empty>, Status> {
        let p = params::block(r.into_inner());
        self.blocking(move |b| b.block_queue_until(&p)).await?;
        Ok(Response::new(Empty {}))
    }

    async fn set_active(&self, r: Request<Active>) -> Result<Response<Empty>, Status> {
        let state = r.into_inner().state;
        self.blocking(move |b| b.set_active(state)).await?;
        Ok(Response::new(Empty {}))
    }

    async fn get_active(&self, _: Request<Local>) -> Result<Response<Boolean>, Status> {
        let state = self.blocking(|b| Ok(b.is_active())).await?;
        Ok(Response::new(Boolean { state }))
    }

    async fn set_delay(&self, r: Request<QueueDelayParams>) -> Result<Response<Empty>, Status> {
        let p = params::delay(r.into_inner());
        self.blocking(move |b| b.set_delay(&p)).await?;
        Ok(Response::new(Empty {}))
    }

    async fn set_log_level(&self, r: Request<LogLevelParams>) -> Result<Response<Empty>, Status> {
        let p = r.into_inner();
        let level = log_level_params::Level::try_from(p.level)
            .map_err(|_| Status::invalid_argument(format!("unknown log level {}", p.level)))?;
        self.log.set(&p.package, level)?;
        tracing::info!(target = %p.package, ?level, "log level changed");
        Ok(Response::new(Empty {}))
    }

    async fn set_crawl_limit(
        &self,
        r: Request<CrawlLimitParams>,
    ) -> Result<Response<Empty>, Status> {
        let p = params::limit(r.into_inner());
        self.blocking(move |b| b.set_crawl_limit(&p)).await?;
        Ok(Response::new(Empty {}))
    }

    async fn get_url_status(
        &self,
        r: Request<UrlStatusRequest>,
    ) -> Result<Response<UrlItem>, Status> {
        let p = params::status(r.into_inner());
        let url = p.url.clone();
        match self.blocking(move |b| b.url_status(&p)).await? {
            Some(item) => Ok(Response::new(item)),
            None => Err(Status::not_found(format!("unknown URL {url}"))),
        }
    }

    type ListURLsStream = ReceiverStream<Result<UrlItem, Status>>;

    async fn list_ur_ls(
        &self,
        r: Request<ListUrlParams>,
    ) -> Result<Response<Self::ListURLsStream>, Status> {
        let p = params::list_urls(r.into_inner());
        let (tx, rx) = tokio::sync::mpsc::channel(256);
        let backend = self.backend.clone();
        tokio::task::spawn_blocking(move || {
            let mut sink = |item| tx.blocking_send(Ok(item)).is_ok();
            if let Err(err) = backend.list_urls(&p, &mut sink) {
                let _ = tx.blocking_send(Err(Status::from(err)));
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn count_ur_ls(&self, r: Request<CountUrlParams>) -> Result<Response<Long>, Status> {
        let p = params::count(r.into_inner());
        let value = self.blocking(move |b| b.count_urls(&p)).await?;
        Ok(Response::new(Long { value }))
    }

    async fn purge_ur_ls(&self, r: Request<PurgeUrlParams>) -> Result<Response<Long>, Status> {
        let p = params::purge(r.into_inner());
        let value = self.blocking(move |b| b.purge_urls(&p)).await?;
        Ok(Response::new(Long { value }))
    }
}
