//! Conversions between the protobuf messages and `mgz-frontier` values.
//!
//! URLFrontier has no depth field; crawlers such as StormCrawler keep the link
//! depth in the metadata under `depth`, so that value (when it parses) becomes
//! the frontier's depth, which orders a queue breadth-first. The metadata itself
//! is stored unchanged.

use std::collections::HashMap;

use mgz_frontier::{KnownItem, Metadata, PutOutcome, UrlItem as FItem, UrlRecord};

use crate::proto::ack_message::Status;
use crate::proto::{
    DiscoveredUrlItem, KnownUrlItem, StringList, UrlInfo, UrlItem, get_params, url_item,
};

/// Metadata key whose first value is read as the link depth.
pub const DEPTH_KEY: &str = "depth";

/// Protobuf metadata to the frontier's map.
pub fn metadata_in(map: HashMap<String, StringList>) -> Metadata {
    map.into_iter().map(|(k, v)| (k, v.values)).collect()
}

/// The frontier's metadata to protobuf.
pub fn metadata_out(map: Metadata) -> HashMap<String, StringList> {
    map.into_iter()
        .map(|(k, values)| (k, StringList { values }))
        .collect()
}

/// A URLInfo as a frontier item (creation time: now).
pub fn item_in(info: UrlInfo) -> FItem {
    let depth = info
        .metadata
        .get(DEPTH_KEY)
        .and_then(|l| l.values.first())
        .and_then(|d| d.trim().parse().ok())
        .unwrap_or(0);
    FItem {
        crawl: info.crawl_id,
        url: info.url,
        key: Some(info.key).filter(|k| !k.is_empty()),
        metadata: metadata_in(info.metadata),
        depth,
        created: 0,
    }
}

/// A known URLItem as the frontier's overwrite.
pub fn known_in(known: KnownUrlItem) -> KnownItem {
    KnownItem {
        item: item_in(known.info.unwrap_or_default()),
        next_fetch: known.refetchable_from_date,
    }
}

/// A stored URL as served by GetURLs.
pub fn info_out(rec: UrlRecord) -> UrlInfo {
    UrlInfo {
        url: rec.url,
        key: rec.key,
        metadata: metadata_out(rec.metadata),
        crawl_id: rec.crawl,
    }
}

/// A stored URL as reported by GetURLStatus and ListURLs: always `known`, with
/// its next fetch time (0 = completed) and its creation date.
pub fn item_out(rec: UrlRecord) -> UrlItem {
    let (next_fetch, created) = (rec.next_fetch, rec.created);
    UrlItem {
        item: Some(url_item::Item::Known(KnownUrlItem {
            info: Some(info_out(rec)),
            refetchable_from_date: next_fetch,
        })),
        id: String::new(),
        creation_date: created,
    }
}

/// A discovered item wrapper (used by clients building PutURLs streams).
pub fn discovered(info: UrlInfo) -> UrlItem {
    UrlItem {
        item: Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(info),
        })),
        id: String::new(),
        creation_date: 0,
    }
}

/// Ack status of a discovered put: only a new URL is `OK`.
pub fn discovered_status(outcome: &PutOutcome) -> Status {
    match outcome {
        PutOutcome::New => Status::Ok,
        _ => Status::Skipped,
    }
}

/// Ack status of a known put: stored (new or overwritten) is `OK`.
pub fn known_status(outcome: &PutOutcome) -> Status {
    match outcome {
        PutOutcome::New | PutOutcome::Updated => Status::Ok,
        _ => Status::Skipped,
    }
}

/// The crawl restriction of GetURLs: unset or AnyCrawlID means every crawl.
pub fn get_crawl(item: Option<get_params::Item>) -> Option<String> {
    match item {
        Some(get_params::Item::CrawlId(id)) => Some(id),
        Some(get_params::Item::AnyCrawlId(_)) | None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_comes_from_metadata_and_metadata_is_kept() {
        let mut metadata = HashMap::new();
        metadata.insert(
            "depth".to_owned(),
            StringList {
                values: vec!["3".into()],
            },
        );
        let info = UrlInfo {
            url: "http://a.com/".into(),
            metadata,
            ..Default::default()
        };
        let item = item_in(info);
        assert_eq!(item.depth, 3);
        assert_eq!(item.metadata["depth"], vec!["3".to_owned()]);
        assert_eq!(item.key, None);
    }

    #[test]
    fn unparsable_depth_is_zero() {
        let mut metadata = HashMap::new();
        metadata.insert(
            "depth".to_owned(),
            StringList {
                values: vec!["deep".into()],
            },
        );
        assert_eq!(
            item_in(UrlInfo {
                metadata,
                ..Default::default()
            })
            .depth,
            0
        );
    }

    #[test]
    fn records_come_back_as_known_items() {
        let rec = UrlRecord {
            crawl: "DEFAULT".into(),
            key: "a.com".into(),
            url: "http://a.com/x".into(),
            metadata: Metadata::new(),
            depth: 0,
            created: 7,
            next_fetch: 0,
        };
        let item = item_out(rec);
        assert_eq!(item.creation_date, 7);
        let Some(url_item::Item::Known(k)) = item.item else {
            panic!("not known")
        };
        assert_eq!(k.refetchable_from_date, 0);
        assert_eq!(k.info.unwrap().key, "a.com");
    }
}
