//! What the server promises about itself: the concurrent-stream limit, open
//! streams finishing after shutdown is asked (then the flush), the drain
//! timeout, and `local` meaning this node whatever its value.

mod common;

use std::time::Duration;

use common::*;
use mgz_service::ServerConfig;
use mgz_service::proto::{
    Active, CountUrlParams, DiscoveredBatch, ListUrlParams, Local, Pagination,
    QueueWithinCrawlParams,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

fn batch(id: &str, urls: &[&str]) -> DiscoveredBatch {
    DiscoveredBatch {
        id: id.into(),
        items: urls.iter().map(|u| info(u)).collect(),
    }
}

/// An open PutDiscovered stream: the sender (drop it to half-close) and the acks.
async fn open_put(
    client: &mut Client,
) -> (
    mpsc::Sender<DiscoveredBatch>,
    tonic::Streaming<mgz_service::proto::BatchAck>,
) {
    let (tx, rx) = mpsc::channel(8);
    tx.send(batch("b0", &["http://a.com/0"])).await.unwrap();
    let mut acks = client
        .put_discovered(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(acks.message().await.unwrap().unwrap().id, "b0");
    (tx, acks)
}

#[tokio::test]
async fn streams_beyond_the_limit_wait_for_a_free_slot() {
    let config = ServerConfig {
        max_concurrent_streams: 1,
        ..ServerConfig::default()
    };
    let mut s = start_with(config).await;
    let (tx, mut acks) = open_put(&mut s.client).await;
    // The connection's only stream is taken: HTTP/2 holds the next call back.
    let mut other = s.client.clone();
    let stats = tokio::spawn(async move {
        other
            .get_stats(QueueWithinCrawlParams::default())
            .await
            .map(|r| r.into_inner().size)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!stats.is_finished(), "a second stream was admitted");
    drop(tx);
    assert!(acks.message().await.unwrap().is_none());
    let size = tokio::time::timeout(Duration::from_secs(10), stats).await;
    assert_eq!(
        size.unwrap().unwrap().unwrap(),
        1,
        "served once the slot freed"
    );
}

#[tokio::test]
async fn shutdown_lets_open_streams_finish_then_flushes() {
    let mut s = start().await;
    let (tx, mut acks) = open_put(&mut s.client).await;
    s.ask_stop();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // No new connections once draining ...
    let fresh = tonic::transport::Channel::from_shared(format!("http://{}", s.addr))
        .unwrap()
        .connect()
        .await;
    assert!(
        fresh.is_err(),
        "a new connection was accepted while draining"
    );
    // ... but the open stream is still served to its end.
    tx.send(batch("b1", &["http://a.com/1", "http://b.com/2"]))
        .await
        .unwrap();
    let b1 = acks.message().await.unwrap().unwrap();
    assert_eq!(
        (b1.id.as_str(), b1.statuses.as_slice()),
        ("b1", &[0, 0][..])
    );
    drop(tx);
    assert!(acks.message().await.unwrap().is_none());
    let frontier = s.frontier.clone();
    let (stopped, dir) = tokio::time::timeout(Duration::from_secs(10), s.stopped_keeping_dir())
        .await
        .expect("the server did not stop after its last stream ended");
    stopped.unwrap();
    assert_eq!(frontier.stats("DEFAULT", None).size, 3);
    // The flush was a checkpoint: the seen log is as short as a new
    // frontier's (its keys are in the snapshot), so a restart replays none.
    let fresh = tempfile::tempdir().unwrap();
    drop(mgz_frontier::Frontier::open(fresh.path(), Default::default()).unwrap());
    assert_eq!(seen_log_bytes(dir.path()), seen_log_bytes(fresh.path()));
}

/// Bytes of the seen logs in a frontier's directory.
fn seen_log_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("seen-"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

#[tokio::test]
async fn a_stream_left_open_is_cut_at_the_drain_timeout() {
    let config = ServerConfig {
        drain_timeout: Duration::from_millis(300),
        ..ServerConfig::default()
    };
    let mut s = start_with(config).await;
    let (_tx, _acks) = open_put(&mut s.client).await;
    s.ask_stop();
    let frontier = s.frontier.clone();
    tokio::time::timeout(Duration::from_secs(10), s.stopped())
        .await
        .expect("the drain timeout did not end the server")
        .unwrap();
    assert_eq!(frontier.stats("DEFAULT", None).size, 1, "acked URL kept");
}

#[tokio::test]
async fn local_means_this_node_whatever_its_value() {
    let mut s = start().await;
    put(
        &mut s.client,
        ["http://a.com/1", "http://a.com/2", "http://b.com/1"]
            .map(|u| discovered(info(u)))
            .to_vec(),
    )
    .await;
    let mut answers = Vec::new();
    for local in [false, true] {
        let c = &mut s.client;
        let q = QueueWithinCrawlParams {
            local,
            ..Default::default()
        };
        let stats = c.get_stats(q).await.unwrap().into_inner();
        let crawls = c.list_crawls(Local { local }).await.unwrap().into_inner();
        let active = c.get_active(Local { local }).await.unwrap().into_inner();
        let page = Pagination {
            local,
            ..Default::default()
        };
        let queues = c.list_queues(page).await.unwrap().into_inner();
        let count = CountUrlParams {
            local: Some(local),
            ..Default::default()
        };
        let n = c.count_ur_ls(count).await.unwrap().into_inner().value;
        let list = ListUrlParams {
            local,
            ..Default::default()
        };
        let urls = collect(c.list_ur_ls(list).await.unwrap().into_inner()).await;
        answers.push((stats, crawls.values, active.state, queues.values, n, urls));
    }
    assert_eq!(answers[0], answers[1]);
    let (stats, crawls, active, queues, n, urls) = &answers[0];
    assert_eq!((stats.size, n, urls.len()), (3, &3, 3));
    assert_eq!(
        (crawls.as_slice(), *active),
        (&["DEFAULT".to_owned()][..], true)
    );
    assert_eq!(queues, &["a.com", "b.com"]);
    // A node-wide switch asked with local = false applies to this node.
    let off = Active {
        state: false,
        local: false,
    };
    s.client.set_active(off).await.unwrap();
    let state = s.client.get_active(Local { local: true }).await.unwrap();
    assert!(!state.into_inner().state);
}

#[tokio::test]
async fn a_stream_writes_in_order_across_chunks() {
    let mut s = start().await;
    // 200 batches of 256 span several store writes; the repeated URL is new
    // in the first batch only, whichever chunks the server cuts.
    let batches: Vec<DiscoveredBatch> = (0..200)
        .map(|b| {
            let mut items: Vec<_> = (0..255)
                .map(|i| info(&format!("http://h{}.com/{b}/{i}", i % 7)))
                .collect();
            items.push(info("http://again.com/"));
            DiscoveredBatch {
                id: b.to_string(),
                items,
            }
        })
        .collect();
    let acks = put_batches(&mut s.client, batches).await;
    assert_eq!(acks.len(), 200);
    for (b, ack) in acks.iter().enumerate() {
        assert_eq!(ack.id, b.to_string());
        assert!(ack.statuses[..255].iter().all(|&st| st == 0));
        assert_eq!(ack.statuses[255], if b == 0 { 0 } else { 1 }, "batch {b}");
    }
}
