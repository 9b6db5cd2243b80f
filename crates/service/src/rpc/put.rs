//! PutURLs and PutDiscovered: chunk functions for the [`pipeline`](super::pipeline).

use tonic::Status;

use crate::backend::FrontierBackend;
use crate::metrics::Metrics;
use crate::proto::ack_message::Status as AckStatus;
use crate::proto::{AckMessage, BatchAck, DiscoveredBatch, UrlItem, url_item};

/// The ID an ack echoes: the client's, or the URL when the client gave none.
pub fn ack_id(item: &UrlItem) -> String {
    if !item.id.is_empty() {
        return item.id.clone();
    }
    let info = match &item.item {
        Some(url_item::Item::Discovered(d)) => d.info.as_ref(),
        Some(url_item::Item::Known(k)) => k.info.as_ref(),
        None => None,
    };
    info.map(|i| i.url.clone()).unwrap_or_default()
}

/// Stores a chunk of PutURLs items; one ack per item. A store failure becomes
/// `FAIL` for every item of the chunk (the client may resend them).
pub fn put_urls<B: FrontierBackend>(
    backend: &B,
    metrics: &Metrics,
    items: Vec<UrlItem>,
) -> Result<Vec<AckMessage>, Status> {
    let ids: Vec<String> = items.iter().map(ack_id).collect();
    metrics.add_put(items.len());
    let statuses = store_or_fail(backend.put_urls(items), ids.len());
    metrics.add_acks(&statuses);
    Ok(ids
        .into_iter()
        .zip(statuses)
        .map(|(id, status)| AckMessage {
            id,
            status: status as i32,
        })
        .collect())
}

/// Stores a chunk of PutDiscovered batches in one store call; one BatchAck per
/// batch (empty batches included), statuses in item order.
pub fn put_discovered<B: FrontierBackend>(
    backend: &B,
    metrics: &Metrics,
    batches: Vec<DiscoveredBatch>,
) -> Result<Vec<BatchAck>, Status> {
    let sizes: Vec<(String, usize)> = batches
        .iter()
        .map(|b| (b.id.clone(), b.items.len()))
        .collect();
    let urls: Vec<_> = batches.into_iter().flat_map(|b| b.items).collect();
    let total = urls.len();
    metrics.add_discovered(total);
    let statuses = if total == 0 {
        Vec::new()
    } else {
        store_or_fail(backend.put_discovered(urls), total)
    };
    metrics.add_acks(&statuses);
    let mut rest = statuses.into_iter();
    Ok(sizes
        .into_iter()
        .map(|(id, n)| BatchAck {
            id,
            statuses: rest.by_ref().take(n).map(|s| s as i32).collect(),
        })
        .collect())
}

/// The store's statuses, or `FAIL` for all on error or on a miscounted answer.
fn store_or_fail(result: Result<Vec<AckStatus>, crate::ServiceError>, n: usize) -> Vec<AckStatus> {
    match result {
        Ok(statuses) if statuses.len() == n => statuses,
        Ok(statuses) => {
            tracing::error!(
                expected = n,
                got = statuses.len(),
                "store answered a wrong count"
            );
            vec![AckStatus::Fail; n]
        }
        Err(err) => {
            tracing::warn!(%err, "put failed; acking FAIL");
            vec![AckStatus::Fail; n]
        }
    }
}
