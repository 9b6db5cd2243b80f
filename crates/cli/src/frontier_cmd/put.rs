//! `mgz frontier put`: streams a file of URLs to the server and counts the acks.
//!
//! A reader thread parses the file into messages (PutDiscovered batches for
//! text lines, PutURLs items otherwise) and feeds a bounded channel; the gRPC
//! stream sends them while the acks are counted as they come back, so reading,
//! sending and storing overlap.
//!
//! With `--streams N` (default 1) the file goes out on N concurrent streams of
//! each kind, every URL on the stream its hash picks: the server writes one
//! chunk per stream at a time, so two streams let one chunk be canonicalised
//! while the other holds the store's lock (needs an idle second core: under
//! load it measured no faster, docs/BENCHMARKS.md, so it is not the default). A URL always takes the same
//! stream, so repeats of one URL still reach the store in file order (the first
//! discovered copy is `OK`, later ones `SKIPPED`; the last known copy wins).

use std::fs::File;
use std::hash::{BuildHasher as _, BuildHasherDefault, DefaultHasher};
use std::io::{BufRead as _, BufReader, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use mgz_service::proto::ack_message::Status;
use mgz_service::proto::{DiscoveredBatch, KnownUrlItem, UrlInfo, UrlItem, url_item};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::Client;

/// Arguments of `mgz frontier put`.
#[derive(clap::Args)]
pub struct PutArgs {
    /// Text lines are discovered URLs, sent with PutDiscovered (the default).
    #[arg(long, conflicts_with = "known")]
    discovered: bool,
    /// Text lines are known URLs, completed (refetch date 0), sent with PutURLs.
    #[arg(long)]
    known: bool,
    /// Send discovered text lines with PutURLs (one message per URL) instead.
    #[arg(long, conflicts_with = "known")]
    put_urls: bool,
    /// URLs per PutDiscovered batch.
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// Crawl ID for text lines (JSONL items carry their own).
    #[arg(long, default_value = "")]
    crawl: String,
    /// Concurrent streams of each kind; a URL's hash picks its stream.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    streams: u16,
    /// Input file; `-` or nothing reads standard input. Lines starting with `{` are JSON URLItems.
    #[arg(default_value = "-")]
    file: PathBuf,
}

#[derive(Default, Debug)]
struct Tally {
    ok: u64,
    skipped: u64,
    failed: u64,
}

impl Tally {
    fn add(&mut self, status: i32) {
        match Status::try_from(status) {
            Ok(Status::Ok) => self.ok += 1,
            Ok(Status::Skipped) => self.skipped += 1,
            _ => self.failed += 1,
        }
    }
}

/// Sends the file and prints `sent ok skipped failed seconds urls_per_s`.
pub async fn run(client: Client, args: PutArgs) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let input: Box<dyn Read + Send> = if args.file.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            File::open(&args.file).with_context(|| format!("opening {}", args.file.display()))?,
        )
    };
    let n = usize::from(args.streams);
    let (mut batch_txs, mut item_txs) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut calls = Vec::with_capacity(2 * n);
    for _ in 0..n {
        let (batch_tx, batch_rx) = mpsc::channel::<DiscoveredBatch>(64 / n + 1);
        let (item_tx, item_rx) = mpsc::channel::<UrlItem>(4096 / n + 1);
        batch_txs.push(batch_tx);
        item_txs.push(item_tx);
        let (mut c1, mut c2) = (client.clone(), client.clone());
        calls.push(tokio::spawn(async move {
            count_batches(c1.put_discovered(ReceiverStream::new(batch_rx))).await
        }));
        calls.push(tokio::spawn(async move {
            count_items(c2.put_ur_ls(ReceiverStream::new(item_rx))).await
        }));
    }
    let reader = std::thread::spawn(move || read_input(input, &args, &batch_txs, &item_txs));
    let mut tally = Tally::default();
    for call in calls {
        let t = call.await.context("ack counter task")??;
        tally.ok += t.ok;
        tally.skipped += t.skipped;
        tally.failed += t.failed;
    }
    let lines = reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader thread panicked"))??;
    let secs = start.elapsed().as_secs_f64();
    let acked = tally.ok + tally.skipped + tally.failed;
    println!(
        "sent {lines} acked {acked} ok {} skipped {} failed {} in {secs:.2} s: {:.0} URLs/s",
        tally.ok,
        tally.skipped,
        tally.failed,
        acked as f64 / secs
    );
    Ok(if tally.failed > 0 || acked != lines {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

async fn count_batches(
    call: impl std::future::Future<
        Output = Result<
            tonic::Response<tonic::Streaming<mgz_service::proto::BatchAck>>,
            tonic::Status,
        >,
    >,
) -> anyhow::Result<Tally> {
    let mut stream = call.await.context("PutDiscovered")?.into_inner();
    let mut tally = Tally::default();
    while let Some(ack) = stream.message().await.context("PutDiscovered acks")? {
        ack.statuses.iter().for_each(|&s| tally.add(s));
    }
    Ok(tally)
}

async fn count_items(
    call: impl std::future::Future<
        Output = Result<
            tonic::Response<tonic::Streaming<mgz_service::proto::AckMessage>>,
            tonic::Status,
        >,
    >,
) -> anyhow::Result<Tally> {
    let mut stream = call.await.context("PutURLs")?.into_inner();
    let mut tally = Tally::default();
    while let Some(ack) = stream.message().await.context("PutURLs acks")? {
        tally.add(ack.status);
    }
    Ok(tally)
}

/// The stream a URL goes on: the same one for every copy of the URL.
fn stream_of(url: &str, streams: usize) -> usize {
    let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(url);
    (hash % streams as u64) as usize
}

/// The URL a JSONL item carries (empty when it has none).
fn item_url(item: &UrlItem) -> &str {
    let info = match &item.item {
        Some(url_item::Item::Discovered(d)) => d.info.as_ref(),
        Some(url_item::Item::Known(k)) => k.info.as_ref(),
        None => None,
    };
    info.map_or("", |i| i.url.as_str())
}

/// Parses every line and sends it on its URL's stream; returns how many URLs
/// were sent.
fn read_input(
    input: Box<dyn Read + Send>,
    args: &PutArgs,
    batch_txs: &[mpsc::Sender<DiscoveredBatch>],
    item_txs: &[mpsc::Sender<UrlItem>],
) -> anyhow::Result<u64> {
    let n = batch_txs.len();
    let cap = args.batch.max(1);
    let mut pending: Vec<Vec<UrlInfo>> = (0..n).map(|_| Vec::with_capacity(cap)).collect();
    let (mut sent, mut batches) = (0u64, 0u64);
    let send_item = |item: UrlItem| -> anyhow::Result<()> {
        let tx = &item_txs[stream_of(item_url(&item), n)];
        anyhow::ensure!(
            tx.blocking_send(item).is_ok(),
            "the server closed the stream early"
        );
        Ok(())
    };
    let mut send_batch = |s: usize, items: Vec<UrlInfo>| -> anyhow::Result<()> {
        batches += 1;
        let batch = DiscoveredBatch {
            id: batches.to_string(),
            items,
        };
        anyhow::ensure!(
            batch_txs[s].blocking_send(batch).is_ok(),
            "the server closed the stream early"
        );
        Ok(())
    };
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut buf = String::with_capacity(256);
    for n_line in 1u64.. {
        // One reused line buffer: the only allocation per URL is its own string.
        buf.clear();
        if reader.read_line(&mut buf).context("reading input")? == 0 {
            break;
        }
        let line = buf.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        sent += 1;
        if line.starts_with('{') {
            let item = mgz_service::json::from_line(line).with_context(|| {
                format!(
                    "line {n_line} (nothing after it was sent, lines before it may have \
                     been: fix it and send the input again, URLs already put are skipped)"
                )
            })?;
            send_item(item)?;
            continue;
        }
        let info = UrlInfo {
            url: line.to_owned(),
            crawl_id: args.crawl.clone(),
            ..UrlInfo::default()
        };
        if args.known {
            let known = KnownUrlItem {
                info: Some(info),
                refetchable_from_date: 0,
            };
            send_item(UrlItem {
                item: Some(url_item::Item::Known(known)),
                ..UrlItem::default()
            })?;
        } else if args.put_urls {
            send_item(mgz_service::convert::discovered(info))?;
        } else {
            let s = stream_of(&info.url, n);
            pending[s].push(info);
            if pending[s].len() >= cap {
                let items = std::mem::replace(&mut pending[s], Vec::with_capacity(cap));
                send_batch(s, items)?;
            }
        }
    }
    for (s, items) in pending.into_iter().enumerate() {
        if !items.is_empty() {
            send_batch(s, items)?;
        }
    }
    let _ = args.discovered; // the default; accepted for explicitness
    Ok(sent)
}
