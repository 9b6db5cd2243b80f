//! Every RPC of the API over a real socket, with the semantics `mgz serve` promises.

mod common;

use std::collections::HashMap;

use common::*;
use mgz_service::proto::ack_message::Status;
use mgz_service::proto::log_level_params::Level;
use mgz_service::proto::{
    Active, AnyCrawlId, BlockQueueParams, CountUrlParams, CrawlLimitParams, DiscoveredBatch, Empty,
    ListUrlParams, Local, LogLevelParams, Pagination, PurgeUrlParams, QueueDelayParams,
    QueueWithinCrawlParams, StringList, UrlInfo, UrlStatusRequest, get_params, url_item,
};

fn queue(key: &str) -> QueueWithinCrawlParams {
    QueueWithinCrawlParams {
        key: key.into(),
        ..Default::default()
    }
}

fn urls_of(hosts: &[&str], per_host: usize) -> Vec<mgz_service::proto::UrlItem> {
    let mut out = Vec::new();
    for h in hosts {
        for i in 0..per_host {
            out.push(discovered(info(&format!("http://{h}/p{i}"))));
        }
    }
    out
}

#[tokio::test]
async fn acks_echo_the_id_or_the_url_and_skip_bad_items() {
    let mut s = start().await;
    let mut with_id = discovered(info("http://a.com/1"));
    with_id.id = "client-7".into();
    let long_key = discovered(info_in("http://a.com/2", &"k".repeat(256), ""));
    let ok_key = discovered(info_in("http://a.com/3", &"k".repeat(255), ""));
    let malformed = discovered(info("not a url"));
    let neither = mgz_service::proto::UrlItem {
        id: "empty".into(),
        ..Default::default()
    };
    let acks = put(
        &mut s.client,
        vec![with_id, long_key, ok_key, malformed, neither],
    )
    .await;
    let got: Vec<(&str, i32)> = acks.iter().map(|a| (a.id.as_str(), a.status)).collect();
    assert_eq!(
        got,
        [
            ("client-7", Status::Ok as i32),
            ("http://a.com/2", Status::Skipped as i32),
            ("http://a.com/3", Status::Ok as i32),
            ("not a url", Status::Skipped as i32),
            ("empty", Status::Skipped as i32),
        ]
    );
}

#[tokio::test]
async fn put_discovered_acks_each_batch_in_order_including_empty_ones() {
    let mut s = start().await;
    let batch = |id: &str, urls: &[&str]| DiscoveredBatch {
        id: id.into(),
        items: urls.iter().map(|u| info(u)).collect(),
    };
    let acks = put_batches(
        &mut s.client,
        vec![
            batch("b1", &["http://a.com/1", "http://a.com/1", "http://b.com/"]),
            batch("empty", &[]),
            batch("b2", &["http://a.com/1", "::bad::", "http://c.com/"]),
        ],
    )
    .await;
    let (ok, skip) = (Status::Ok as i32, Status::Skipped as i32);
    let got: Vec<(&str, Vec<i32>)> = acks
        .iter()
        .map(|a| (a.id.as_str(), a.statuses.clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("b1", vec![ok, skip, ok]),
            ("empty", vec![]),
            ("b2", vec![skip, skip, ok]),
        ]
    );
    let count = s
        .client
        .count_ur_ls(CountUrlParams::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(count.value, 3);
}

#[tokio::test]
async fn many_batches_on_one_stream_are_all_acked_in_order() {
    let mut s = start().await;
    let batches: Vec<_> = (0..200)
        .map(|b| DiscoveredBatch {
            id: format!("b{b}"),
            items: (0..50)
                .map(|i| info(&format!("http://h{}.com/{b}/{i}", i % 7)))
                .collect(),
        })
        .collect();
    let acks = put_batches(&mut s.client, batches).await;
    assert_eq!(acks.len(), 200);
    for (b, ack) in acks.iter().enumerate() {
        assert_eq!(ack.id, format!("b{b}"));
        assert!(ack.statuses.iter().all(|&st| st == Status::Ok as i32));
        assert_eq!(ack.statuses.len(), 50);
    }
    let count = s
        .client
        .count_ur_ls(CountUrlParams::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(count.value, 10_000);
}

#[tokio::test]
async fn get_urls_zero_means_unlimited_and_returns_key_crawl_and_metadata() {
    let mut s = start().await;
    let mut items = urls_of(&["a.com", "b.com", "c.com"], 3);
    let mut metadata = HashMap::new();
    metadata.insert(
        "depth".to_owned(),
        StringList {
            values: vec!["2".into()],
        },
    );
    let meta_info = UrlInfo {
        url: "http://d.com/m".into(),
        metadata: metadata.clone(),
        ..Default::default()
    };
    items.push(discovered(meta_info));
    put(&mut s.client, items).await;
    let served = get(&mut s.client, get_params("", 0, 0)).await;
    assert_eq!(served.len(), 10);
    let d = served.iter().find(|i| i.url == "http://d.com/m").unwrap();
    assert_eq!((d.key.as_str(), d.crawl_id.as_str()), ("d.com", "DEFAULT"));
    assert_eq!(d.metadata, metadata);
    // max_queues and max_urls_per_queue cap the answer.
    let mut s = start().await;
    put(&mut s.client, urls_of(&["a.com", "b.com", "c.com"], 3)).await;
    assert_eq!(get(&mut s.client, get_params("", 2, 2)).await.len(), 4);
}

#[tokio::test]
async fn per_queue_cap_also_caps_in_flight_urls() {
    let mut s = start().await;
    put(&mut s.client, urls_of(&["a.com"], 5)).await;
    assert_eq!(get(&mut s.client, get_params("", 0, 2)).await.len(), 2);
    s.advance_s(1); // politeness delay over, leases (30 s) still running
    assert!(get(&mut s.client, get_params("", 0, 2)).await.is_empty());
    assert_eq!(get(&mut s.client, get_params("", 0, 3)).await.len(), 1);
}

#[tokio::test]
async fn unset_crawl_means_any_crawl_and_empty_means_default() {
    let mut s = start().await;
    put(
        &mut s.client,
        vec![
            discovered(info_in("http://a.com/", "", "")),
            discovered(info_in("http://b.com/", "", "OTHER")),
        ],
    )
    .await;
    let only_default = get_urls(&mut s.client, in_crawl(get_params("", 0, 0), "")).await;
    assert_eq!(only_default, ["http://a.com/"]);
    let mut any = get_params("", 0, 0);
    any.item = Some(get_params::Item::AnyCrawlId(AnyCrawlId {}));
    assert_eq!(get_urls(&mut s.client, any).await, ["http://b.com/"]);
}

#[tokio::test]
async fn default_delay_is_one_second_and_set_delay_changes_it() {
    let mut s = start().await;
    put(&mut s.client, urls_of(&["a.com"], 4)).await;
    assert_eq!(get(&mut s.client, get_params("", 0, 1)).await.len(), 1);
    // Two allowed in flight, one is: only the delay holds the second back.
    assert!(get(&mut s.client, get_params("", 0, 2)).await.is_empty());
    s.advance_s(1);
    assert_eq!(get(&mut s.client, get_params("", 0, 2)).await.len(), 1);
    let delay = QueueDelayParams {
        key: "a.com".into(),
        delay_requestable: 10,
        ..Default::default()
    };
    s.client.set_delay(delay).await.unwrap();
    s.advance_s(5);
    // max_urls_per_queue 0: the in-flight cap is lifted, only the delay holds it back.
    assert!(get(&mut s.client, get_params("", 0, 0)).await.is_empty());
    s.advance_s(5);
    assert_eq!(get(&mut s.client, get_params("", 0, 0)).await.len(), 2);
}

#[tokio::test]
async fn blocked_queues_are_not_served_until_unblocked() {
    let mut s = start().await;
    put(&mut s.client, urls_of(&["a.com"], 1)).await;
    let block = |time| BlockQueueParams {
        key: "a.com".into(),
        time,
        ..Default::default()
    };
    s.client.block_queue_until(block(T0 + 100)).await.unwrap();
    assert!(get(&mut s.client, get_params("", 0, 0)).await.is_empty());
    s.client.block_queue_until(block(0)).await.unwrap();
    assert_eq!(get(&mut s.client, get_params("", 0, 0)).await.len(), 1);
}

#[tokio::test]
async fn crawl_limit_stops_a_queue() {
    let mut s = start().await;
    put(&mut s.client, urls_of(&["a.com"], 3)).await;
    let limit = CrawlLimitParams {
        key: "a.com".into(),
        limit: 1,
        ..Default::default()
    };
    s.client.set_crawl_limit(limit).await.unwrap();
    let served = get(&mut s.client, get_params("", 0, 0)).await;
    assert_eq!(served.len(), 1);
    put(&mut s.client, vec![known(served[0].clone(), 0)]).await;
    s.advance_s(60);
    assert!(get(&mut s.client, get_params("", 0, 0)).await.is_empty());
}

#[tokio::test]
async fn set_active_false_stops_serving_but_not_writing() {
    let mut s = start().await;
    s.client
        .set_active(Active {
            state: false,
            local: true,
        })
        .await
        .unwrap();
    assert!(
        !s.client
            .get_active(Local::default())
            .await
            .unwrap()
            .into_inner()
            .state
    );
    let acks = put(&mut s.client, urls_of(&["a.com"], 2)).await;
    assert!(acks.iter().all(|a| a.status == Status::Ok as i32));
    assert!(get(&mut s.client, get_params("", 0, 0)).await.is_empty());
    s.client
        .set_active(Active {
            state: true,
            local: false,
        })
        .await
        .unwrap();
    assert!(
        s.client
            .get_active(Local::default())
            .await
            .unwrap()
            .into_inner()
            .state
    );
    assert_eq!(get(&mut s.client, get_params("", 0, 0)).await.len(), 2);
}

#[tokio::test]
async fn url_status_reports_known_state_or_not_found() {
    let mut s = start().await;
    let mut metadata = HashMap::new();
    metadata.insert(
        "src".to_owned(),
        StringList {
            values: vec!["seed".into()],
        },
    );
    let i = UrlInfo {
        url: "http://a.com/x".into(),
        metadata: metadata.clone(),
        ..Default::default()
    };
    put(&mut s.client, vec![known(i, T0 + 3600)]).await;
    let req = |url: &str| UrlStatusRequest {
        url: url.into(),
        ..Default::default()
    };
    let item = s
        .client
        .get_url_status(req("http://a.com/x"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(item.creation_date, T0);
    let Some(url_item::Item::Known(k)) = item.item else {
        panic!("not a known item")
    };
    assert_eq!(k.refetchable_from_date, T0 + 3600);
    let info = k.info.unwrap();
    assert_eq!(
        (info.key.as_str(), info.crawl_id.as_str()),
        ("a.com", "DEFAULT")
    );
    assert_eq!(info.metadata, metadata);
    let missing = s
        .client
        .get_url_status(req("http://a.com/nope"))
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    let other_crawl = UrlStatusRequest {
        crawl_id: "X".into(),
        ..req("http://a.com/x")
    };
    let missing = s.client.get_url_status(other_crawl).await.unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
}

#[tokio::test]
async fn list_queues_pages_and_hides_inactive_by_default() {
    let mut s = start().await;
    let hosts: Vec<String> = (0..150).map(|i| format!("h{i:03}.com")).collect();
    let refs: Vec<&str> = hosts.iter().map(String::as_str).collect();
    put(&mut s.client, urls_of(&refs, 1)).await;
    let page = s
        .client
        .list_queues(Pagination::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (page.values.len(), page.start, page.size, page.total),
        (100, 0, 100, 150)
    );
    assert_eq!(page.crawl_id, "DEFAULT");
    let p2 = Pagination {
        start: 140,
        size: 20,
        ..Default::default()
    };
    let page = s.client.list_queues(p2).await.unwrap().into_inner();
    assert_eq!(page.values, hosts[140..]);
    // Complete h000.com's only URL: it becomes inactive.
    put(&mut s.client, vec![known(info("http://h000.com/p0"), 0)]).await;
    let all = Pagination {
        size: 1000,
        ..Default::default()
    };
    let active = s
        .client
        .list_queues(all.clone())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(active.values.len(), 149);
    let with_inactive = Pagination {
        include_inactive: true,
        ..all
    };
    assert_eq!(
        s.client
            .list_queues(with_inactive)
            .await
            .unwrap()
            .into_inner()
            .values
            .len(),
        150
    );
}

#[tokio::test]
async fn list_and_count_urls_page_and_filter() {
    let mut s = start().await;
    let items: Vec<_> = (0..250)
        .map(|i| discovered(info(&format!("http://a.com/Page{i}"))))
        .collect();
    put(&mut s.client, items).await;
    let list = |p: ListUrlParams| {
        let mut c = s.client.clone();
        async move { collect(c.list_ur_ls(p).await.unwrap().into_inner()).await }
    };
    assert_eq!(list(ListUrlParams::default()).await.len(), 100);
    let tail = list(ListUrlParams {
        start: 200,
        size: 1000,
        ..Default::default()
    })
    .await;
    assert_eq!(tail.len(), 50);
    // Pages put end to end are the listing taken whole.
    let whole = list(ListUrlParams {
        size: 1000,
        ..Default::default()
    })
    .await;
    assert_eq!(whole.len(), 250);
    let mut paged = Vec::new();
    for start in (0..250).step_by(70) {
        paged.extend(
            list(ListUrlParams {
                start,
                size: 70,
                ..Default::default()
            })
            .await,
        );
    }
    assert_eq!(paged, whole);
    assert_eq!(&whole[200..], &tail[..]);
    assert!(
        tail.iter()
            .all(|i| matches!(i.item, Some(url_item::Item::Known(_))))
    );
    let filtered = ListUrlParams {
        filter: Some("page1".into()),
        ignore_case: Some(true),
        size: 1000,
        ..Default::default()
    };
    assert_eq!(list(filtered).await.len(), 1 + 10 + 100);
    let case_sensitive = ListUrlParams {
        filter: Some("page1".into()),
        size: 1000,
        ..Default::default()
    };
    assert!(list(case_sensitive).await.is_empty());
    let count = |p: CountUrlParams| {
        let mut c = s.client.clone();
        async move { c.count_ur_ls(p).await.unwrap().into_inner().value }
    };
    assert_eq!(count(CountUrlParams::default()).await, 250);
    let f = CountUrlParams {
        filter: Some("Page2".into()),
        key: "a.com".into(),
        ..Default::default()
    };
    assert_eq!(count(f).await, 1 + 10 + 50);
    let other = CountUrlParams {
        crawl_id: "X".into(),
        ..Default::default()
    };
    assert_eq!(count(other).await, 0);
}

#[tokio::test]
async fn purge_removes_urls_older_than_n_days() {
    let mut s = start().await;
    put(&mut s.client, urls_of(&["a.com"], 3)).await;
    s.advance_s(3 * 86_400);
    put(&mut s.client, urls_of(&["b.com"], 2)).await;
    let purge = |days| PurgeUrlParams {
        days,
        ..Default::default()
    };
    assert_eq!(
        s.client
            .purge_ur_ls(purge(5))
            .await
            .unwrap()
            .into_inner()
            .value,
        0
    );
    assert_eq!(
        s.client
            .purge_ur_ls(purge(2))
            .await
            .unwrap()
            .into_inner()
            .value,
        3
    );
    let count = s
        .client
        .count_ur_ls(CountUrlParams::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(count.value, 2);
}

#[tokio::test]
async fn delete_queue_and_crawl_return_counts() {
    let mut s = start().await;
    put(&mut s.client, urls_of(&["a.com", "b.com"], 3)).await;
    assert_eq!(
        s.client
            .delete_queue(queue("a.com"))
            .await
            .unwrap()
            .into_inner()
            .value,
        3
    );
    assert_eq!(
        s.client
            .delete_queue(queue("a.com"))
            .await
            .unwrap()
            .into_inner()
            .value,
        0
    );
    let all = mgz_service::proto::DeleteCrawlMessage {
        value: String::new(),
        local: true,
    };
    assert_eq!(
        s.client.delete_crawl(all).await.unwrap().into_inner().value,
        3
    );
}

#[tokio::test]
async fn stats_of_a_crawl_count_completed_and_active_queues() {
    let mut s = start().await;
    put(&mut s.client, urls_of(&["a.com", "b.com"], 2)).await;
    put(
        &mut s.client,
        vec![
            known(info("http://a.com/p0"), 0),
            known(info("http://a.com/p1"), 0),
        ],
    )
    .await;
    let stats = s.client.get_stats(queue("")).await.unwrap().into_inner();
    assert_eq!((stats.size, stats.number_of_queues), (2, 2));
    assert_eq!(stats.counts.get("completed"), Some(&2));
    assert_eq!(stats.counts.get("active_queues"), Some(&1));
}

#[tokio::test]
async fn log_level_nodes_and_unknown_enum_values() {
    let mut s = start().await;
    let set = LogLevelParams {
        package: "mgz_service".into(),
        level: Level::Debug as i32,
        local: true,
    };
    s.client.set_log_level(set).await.unwrap();
    let bad = LogLevelParams {
        package: "x".into(),
        level: 42,
        local: false,
    };
    assert_eq!(
        s.client.set_log_level(bad).await.unwrap_err().code(),
        tonic::Code::InvalidArgument
    );
    let nodes = s.client.list_nodes(Empty {}).await.unwrap().into_inner();
    assert_eq!(nodes.values, [s.addr.to_string()]);
    s.stop().await;
}
