//! PutURLs and PutDiscovered: chunk functions and answer shapes for the
//! [`pipeline`](super::pipeline).
//!
//! Per URL the server allocates only what the API forces: the decoded URL
//! string (moved, not copied, into the frontier's item) and, for PutURLs, the
//! echoed ack ID. A PutDiscovered chunk is flattened into one store call; its
//! batch IDs are moved into the answers, not cloned.

use crate::backend::{FrontierBackend, Written, already_durable};
use crate::metrics::Metrics;
use crate::proto::ack_message::Status as AckStatus;
use crate::proto::{AckMessage, BatchAck, DiscoveredBatch, UrlItem, url_item};

use super::pipeline::{Shape, Stored, Weigh};

impl Weigh for UrlItem {
    fn urls(&self) -> usize {
        1
    }
}

impl Weigh for DiscoveredBatch {
    fn urls(&self) -> usize {
        self.items.len().max(1)
    }
}

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

/// PutURLs answers: one ack per item, echoing these IDs.
pub struct AckIds(Vec<String>);

impl Shape for AckIds {
    type Out = AckMessage;
    fn answers(self, statuses: Vec<AckStatus>) -> Vec<AckMessage> {
        self.0
            .into_iter()
            .zip(statuses)
            .map(|(id, status)| AckMessage {
                id,
                status: status as i32,
            })
            .collect()
    }
}

/// PutDiscovered answers: one BatchAck per batch, `(id, URLs)` each.
pub struct BatchSizes(Vec<(String, usize)>);

impl Shape for BatchSizes {
    type Out = BatchAck;
    fn answers(self, statuses: Vec<AckStatus>) -> Vec<BatchAck> {
        let mut rest = statuses.into_iter();
        self.0
            .into_iter()
            .map(|(id, n)| BatchAck {
                id,
                statuses: rest.by_ref().take(n).map(|s| s as i32).collect(),
            })
            .collect()
    }
}

/// Writes a chunk of PutURLs items; a store failure is `FAIL` for each.
pub fn put_urls<B: FrontierBackend>(
    backend: &B,
    metrics: &Metrics,
    items: Vec<UrlItem>,
) -> Stored<AckIds> {
    let ids: Vec<String> = items.iter().map(ack_id).collect();
    metrics.add_put(items.len());
    let written = backend.put_urls(items);
    let (statuses, durable) = checked(written, ids.len());
    Stored {
        shape: AckIds(ids),
        statuses,
        durable,
    }
}

/// Writes a chunk of PutDiscovered batches in one store call; one BatchAck per
/// batch (empty batches included), statuses in item order.
pub fn put_discovered<B: FrontierBackend>(
    backend: &B,
    metrics: &Metrics,
    batches: Vec<DiscoveredBatch>,
) -> Stored<BatchSizes> {
    let total = batches.iter().map(|b| b.items.len()).sum();
    let mut sizes = Vec::with_capacity(batches.len());
    let mut urls = Vec::with_capacity(total);
    for batch in batches {
        sizes.push((batch.id, batch.items.len()));
        urls.extend(batch.items);
    }
    metrics.add_discovered(total);
    let (statuses, durable) = if total == 0 {
        (Vec::new(), already_durable())
    } else {
        checked(backend.put_discovered(urls), total)
    };
    Stored {
        shape: BatchSizes(sizes),
        statuses,
        durable,
    }
}

/// The store's answer, or `FAIL` for all on error or on a miscounted answer.
fn checked(
    result: Result<Written, crate::ServiceError>,
    n: usize,
) -> (Vec<AckStatus>, crate::backend::Durable) {
    match result {
        Ok(w) if w.statuses.len() == n => (w.statuses, w.durable),
        Ok(w) => {
            tracing::error!(
                expected = n,
                got = w.statuses.len(),
                "store answered a wrong count"
            );
            (vec![AckStatus::Fail; n], already_durable())
        }
        Err(err) => {
            static FAILED: super::limited::Limited = super::limited::Limited::new();
            FAILED.warn("put failed; acking FAIL", &err);
            (vec![AckStatus::Fail; n], already_durable())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_answers_split_the_statuses_in_order() {
        let shape = BatchSizes(vec![("a".into(), 2), ("empty".into(), 0), ("b".into(), 1)]);
        let acks = shape.answers(vec![AckStatus::Ok, AckStatus::Skipped, AckStatus::Fail]);
        let got: Vec<(&str, &[i32])> = acks
            .iter()
            .map(|a| (a.id.as_str(), a.statuses.as_slice()))
            .collect();
        assert_eq!(got, [("a", &[0, 1][..]), ("empty", &[]), ("b", &[2])]);
    }

    #[test]
    fn empty_batches_weigh_one_url() {
        let empty = DiscoveredBatch::default();
        assert_eq!(empty.urls(), 1);
        assert_eq!(UrlItem::default().urls(), 1);
    }
}
