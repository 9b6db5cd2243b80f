//! GetURLs answers streamed as several store calls (`rpc::get`): with a tiny
//! chunk size, the URLFrontier semantics must hold over the whole answer.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use mgz_service::ServerConfig;
use mgz_service::proto::{QueueWithinCrawlParams, Stats, UrlItem};

/// A server whose GetURLs leases at most about `chunk` URLs per store call.
async fn start_chunked(chunk: usize) -> TestServer {
    start_with(ServerConfig {
        get_chunk_urls: chunk,
        ..ServerConfig::default()
    })
    .await
}

/// `sizes[i]` URLs on host `h{i}.com`.
fn backlog(sizes: &[usize]) -> Vec<UrlItem> {
    let mut out = Vec::new();
    for (h, &n) in sizes.iter().enumerate() {
        for i in 0..n {
            out.push(discovered(info(&format!("http://h{h}.com/p{i}"))));
        }
    }
    out
}

fn expected(sizes: &[usize]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (h, &n) in sizes.iter().enumerate() {
        out.extend((0..n).map(|i| format!("http://h{h}.com/p{i}")));
    }
    out
}

/// URLs served per host; panics on a URL served twice.
/// Stats of every crawl (`GetStats` with default parameters).
async fn default_stats(s: &mut TestServer) -> Stats {
    s.client
        .get_stats(QueueWithinCrawlParams::default())
        .await
        .unwrap()
        .into_inner()
}

fn per_host(urls: &[String]) -> BTreeMap<String, usize> {
    let distinct: BTreeSet<&String> = urls.iter().collect();
    assert_eq!(distinct.len(), urls.len(), "a URL was served twice");
    let mut out = BTreeMap::new();
    for u in urls {
        let host = u.split('/').nth(2).unwrap().to_owned();
        *out.entry(host).or_default() += 1;
    }
    out
}

#[tokio::test]
async fn unlimited_get_over_a_backlog_of_many_chunks_serves_every_url_once() {
    let mut s = start_chunked(16).await;
    // 40 queues of 1..=7 URLs and one of 100 (bigger than a chunk): ≈ 270 URLs.
    let mut sizes: Vec<usize> = (0..40).map(|i| 1 + i % 7).collect();
    sizes.push(100);
    put(&mut s.client, backlog(&sizes)).await;
    let served = get_urls(&mut s.client, get_params("", 0, 0)).await;
    per_host(&served);
    let got: BTreeSet<String> = served.into_iter().collect();
    assert_eq!(got, expected(&sizes));
    s.advance_s(1); // politeness over, leases (30 s) running: nothing to serve
    assert!(
        get_urls(&mut s.client, get_params("", 0, 0))
            .await
            .is_empty()
    );
    s.advance_s(30); // leases expired: everything once more, once
    let again = get_urls(&mut s.client, get_params("", 0, 0)).await;
    per_host(&again);
    assert_eq!(again.len(), got.len());
}

#[tokio::test]
async fn per_queue_cap_and_max_queues_hold_across_chunks() {
    let sizes = vec![5; 40];
    let mut s = start_chunked(10).await;
    put(&mut s.client, backlog(&sizes)).await;
    // 3 per queue, every queue: ≥ 12 store calls of 3 queues each.
    let served = get_urls(&mut s.client, get_params("", 0, 3)).await;
    let hosts = per_host(&served);
    assert_eq!(hosts.len(), 40);
    assert!(hosts.values().all(|&n| n == 3), "{hosts:?}");
    s.advance_s(1); // 3 in flight per queue = the cap: nothing more
    assert!(
        get_urls(&mut s.client, get_params("", 0, 3))
            .await
            .is_empty()
    );
    let stats = default_stats(&mut s).await;
    assert_eq!(stats.in_process, 120);

    let mut s = start_chunked(10).await;
    put(&mut s.client, backlog(&sizes)).await;
    let served = get_urls(&mut s.client, get_params("", 7, 3)).await;
    let hosts = per_host(&served);
    assert_eq!((hosts.len(), served.len()), (7, 21), "{hosts:?}");
}

#[tokio::test]
async fn a_client_leaving_mid_answer_leaves_the_server_serving() {
    let mut s = start_chunked(4).await;
    put(&mut s.client, backlog(&[10; 20])).await;
    let mut stream = s
        .client
        .get_ur_ls(get_params("", 0, 0))
        .await
        .unwrap()
        .into_inner();
    assert!(stream.message().await.unwrap().is_some());
    drop(stream);
    // Whatever was leased stays leased; the rest is still served, once.
    s.advance_s(1);
    let rest = get_urls(&mut s.client, get_params("", 0, 0)).await;
    per_host(&rest);
    assert!(rest.len() < 200);
    let stats = default_stats(&mut s).await;
    assert_eq!(stats.size, 200);
}
