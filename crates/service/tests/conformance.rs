//! The behaviours the upstream URLFrontier test suite asserts, over a real socket.

mod common;

use common::*;
use mgz_service::proto::ack_message::Status;
use mgz_service::proto::{DeleteCrawlMessage, Local, Pagination, QueueWithinCrawlParams};

fn queue(key: &str, crawl: &str) -> QueueWithinCrawlParams {
    QueueWithinCrawlParams {
        key: key.into(),
        crawl_id: crawl.into(),
        local: false,
    }
}

#[tokio::test]
async fn a_known_url_without_date_is_never_served() {
    let mut s = start().await;
    let acks = put(
        &mut s.client,
        vec![known(info_in("http://key1.com/", "key1.com", ""), 0)],
    )
    .await;
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].status, Status::Ok as i32);
    let p = in_crawl(get_params("key1.com", 0, 1), "DEFAULT");
    assert!(get_urls(&mut s.client, p).await.is_empty());
    s.advance_s(3600);
    assert!(
        get_urls(&mut s.client, get_params("", 0, 0))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn earlier_dates_come_first() {
    let mut s = start().await;
    let later = known(info_in("http://key1.com/later", "key1.com", ""), T0);
    let sooner = known(
        info_in("http://key1.com/sooner", "key1.com", ""),
        T0 - 10_000,
    );
    assert_eq!(put(&mut s.client, vec![later, sooner]).await.len(), 2);
    let urls = get_urls(
        &mut s.client,
        in_crawl(get_params("key1.com", 0, 2), "DEFAULT"),
    )
    .await;
    assert_eq!(urls, ["http://key1.com/sooner", "http://key1.com/later"]);
}

#[tokio::test]
async fn rediscovered_url_is_skipped_served_once_leased_then_deleted_with_its_queue() {
    let mut s = start().await;
    let item = || discovered(info_in("http://key1.com/", "key1.com", ""));
    let acks = put(&mut s.client, vec![item(), item()]).await;
    let statuses: Vec<i32> = acks.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [Status::Ok as i32, Status::Skipped as i32]);

    let queues = s
        .client
        .list_queues(Pagination::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(queues.values, ["key1.com"]);

    let p = GetParamsExt::lease(in_crawl(get_params("key1.com", 0, 1), "DEFAULT"), 2);
    assert_eq!(
        get_urls(&mut s.client, p.clone()).await,
        ["http://key1.com/"]
    );
    let stats = s
        .client
        .get_stats(queue("key1.com", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((stats.number_of_queues, stats.in_process), (1, 1));
    // In flight: not served again, even once the politeness delay is over.
    s.advance_s(1);
    assert!(get_urls(&mut s.client, p.clone()).await.is_empty());
    // The lease (2 s) expires: no longer in flight.
    s.advance_s(2);
    let stats = s
        .client
        .get_stats(queue("key1.com", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((stats.number_of_queues, stats.in_process), (1, 0));

    let deleted = s
        .client
        .delete_queue(queue("key1.com", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(deleted.value, 1);
    let stats = s
        .client
        .get_stats(queue("key1.com", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stats.number_of_queues, 0);
}

#[tokio::test]
async fn the_default_key_is_the_host() {
    let mut s = start().await;
    put(
        &mut s.client,
        vec![discovered(info("http://gac.icann.org?language_id=9"))],
    )
    .await;
    let stats = s
        .client
        .get_stats(queue("gac.icann.org", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stats.size, 1);
    let served = get(&mut s.client, get_params("", 0, 0)).await;
    assert_eq!(served.len(), 1);
    assert_eq!(served[0].key, "gac.icann.org");
    let deleted = s
        .client
        .delete_queue(queue("gac.icann.org", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(deleted.value, 1);
}

#[tokio::test]
async fn crawl_ids_are_independent_and_deletable() {
    let mut s = start().await;
    let crawls = s
        .client
        .list_crawls(Local::default())
        .await
        .unwrap()
        .into_inner();
    assert!(crawls.values.is_empty());
    for crawl in ["BESPOKE", "", "DEFAULT"] {
        put(
            &mut s.client,
            vec![discovered(info_in("http://urlfrontier.net/", "", crawl))],
        )
        .await;
    }
    let stats = s
        .client
        .get_stats(queue("", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (stats.size, stats.crawl_id.as_str(), stats.number_of_queues),
        (1, "DEFAULT", 1)
    );
    let stats = s
        .client
        .get_stats(queue("", "BESPOKE"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (stats.size, stats.crawl_id.as_str(), stats.number_of_queues),
        (1, "BESPOKE", 1)
    );
    let local = Local { local: true };
    let mut crawls = s
        .client
        .list_crawls(local)
        .await
        .unwrap()
        .into_inner()
        .values;
    crawls.sort();
    assert_eq!(crawls, ["BESPOKE", "DEFAULT"]);

    let gone = s.client.delete_crawl(DeleteCrawlMessage {
        value: "BESPOKE".into(),
        local: false,
    });
    assert_eq!(gone.await.unwrap().into_inner().value, 1);
    let stats = s
        .client
        .get_stats(queue("", "BESPOKE"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((stats.crawl_id.as_str(), stats.size), ("BESPOKE", 0));
    let stats = s
        .client
        .get_stats(queue("", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stats.size, 1);

    let gone = s
        .client
        .delete_crawl(DeleteCrawlMessage::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(gone.value, 1);
    let stats = s
        .client
        .get_stats(queue("", ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stats.size, 0);
}

/// GetParams with a lease.
trait GetParamsExt {
    fn lease(self, secs: u32) -> Self;
}

impl GetParamsExt for mgz_service::proto::GetParams {
    fn lease(mut self, secs: u32) -> Self {
        self.delay_requestable = secs;
        self
    }
}
