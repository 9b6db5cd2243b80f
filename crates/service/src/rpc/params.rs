//! Request normalisation: the API's defaults made explicit before the store sees them.
//!
//! After these functions every crawl ID is non-empty (`""` → `"DEFAULT"`), every
//! page size is non-zero (0 → 100) and the lease of GetURLs is non-zero (0 → 30 s),
//! so backends never re-implement the defaults.

use crate::backend::crawl_id;
use crate::proto::{
    BlockQueueParams, CountUrlParams, CrawlLimitParams, GetParams, ListUrlParams, Pagination,
    PurgeUrlParams, QueueDelayParams, QueueWithinCrawlParams, UrlStatusRequest, get_params,
};

/// Page size when the request leaves it at 0.
pub const DEFAULT_PAGE: u32 = 100;

/// Seconds a served URL stays leased when GetURLs leaves `delay_requestable` at 0.
pub const DEFAULT_LEASE_SECS: u32 = 30;

fn fix_crawl(id: &mut String) {
    if id.is_empty() {
        *id = crawl_id(id).to_owned();
    }
}

fn fix_page(size: &mut u32) {
    if *size == 0 {
        *size = DEFAULT_PAGE;
    }
}

/// GetURLs: lease default; an explicit empty crawl ID means DEFAULT, an unset one any crawl.
pub fn get(mut p: GetParams) -> GetParams {
    if p.delay_requestable == 0 {
        p.delay_requestable = DEFAULT_LEASE_SECS;
    }
    if let Some(get_params::Item::CrawlId(id)) = &mut p.item {
        fix_crawl(id);
    }
    p
}

/// ListQueues.
pub fn pagination(mut p: Pagination) -> Pagination {
    fix_crawl(&mut p.crawl_id);
    fix_page(&mut p.size);
    p
}

/// ListURLs.
pub fn list_urls(mut p: ListUrlParams) -> ListUrlParams {
    fix_crawl(&mut p.crawl_id);
    fix_page(&mut p.size);
    p
}

/// GetStats and DeleteQueue.
pub fn queue(mut p: QueueWithinCrawlParams) -> QueueWithinCrawlParams {
    fix_crawl(&mut p.crawl_id);
    p
}

/// BlockQueueUntil.
pub fn block(mut p: BlockQueueParams) -> BlockQueueParams {
    fix_crawl(&mut p.crawl_id);
    p
}

/// SetDelay.
pub fn delay(mut p: QueueDelayParams) -> QueueDelayParams {
    fix_crawl(&mut p.crawl_id);
    p
}

/// SetCrawlLimit.
pub fn limit(mut p: CrawlLimitParams) -> CrawlLimitParams {
    fix_crawl(&mut p.crawl_id);
    p
}

/// GetURLStatus.
pub fn status(mut p: UrlStatusRequest) -> UrlStatusRequest {
    fix_crawl(&mut p.crawl_id);
    p
}

/// CountURLs.
pub fn count(mut p: CountUrlParams) -> CountUrlParams {
    fix_crawl(&mut p.crawl_id);
    p
}

/// PurgeURLs.
pub fn purge(mut p: PurgeUrlParams) -> PurgeUrlParams {
    fix_crawl(&mut p.crawl_id);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_crawl_stays_any_and_empty_becomes_default() {
        let any = get(GetParams::default());
        assert_eq!(any.item, None);
        assert_eq!(any.delay_requestable, 30);
        let empty = get(GetParams {
            item: Some(get_params::Item::CrawlId(String::new())),
            ..Default::default()
        });
        assert_eq!(
            empty.item,
            Some(get_params::Item::CrawlId("DEFAULT".into()))
        );
    }

    #[test]
    fn page_defaults() {
        let p = pagination(Pagination::default());
        assert_eq!((p.start, p.size, p.crawl_id.as_str()), (0, 100, "DEFAULT"));
        let l = list_urls(ListUrlParams {
            size: 7,
            crawl_id: "X".into(),
            ..Default::default()
        });
        assert_eq!((l.size, l.crawl_id.as_str()), (7, "X"));
    }
}
