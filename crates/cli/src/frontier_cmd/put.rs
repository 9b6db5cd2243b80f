//! `mgz frontier put`: streams a file of URLs to the server and counts the acks.
//!
//! A reader thread parses the file into messages (PutDiscovered batches for
//! text lines, PutURLs items otherwise) and feeds a bounded channel; the gRPC
//! stream sends them while the acks are counted as they come back, so reading,
//! sending and storing overlap.

use std::fs::File;
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
    /// Input file; `-` reads standard input. Lines starting with `{` are JSON URLItems.
    file: PathBuf,
}

enum Msg {
    Batch(DiscoveredBatch),
    Item(UrlItem),
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
pub async fn run(mut client: Client, args: PutArgs) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let input: Box<dyn Read + Send> = if args.file.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            File::open(&args.file).with_context(|| format!("opening {}", args.file.display()))?,
        )
    };
    let (batch_tx, batch_rx) = mpsc::channel::<DiscoveredBatch>(64);
    let (item_tx, item_rx) = mpsc::channel::<UrlItem>(4096);
    let reader = std::thread::spawn(move || read_input(input, &args, &batch_tx, &item_tx));
    let mut items_client = client.clone();
    let batches = client.put_discovered(ReceiverStream::new(batch_rx));
    let items = items_client.put_ur_ls(ReceiverStream::new(item_rx));
    let (batch_acks, item_acks) = tokio::join!(count_batches(batches), count_items(items));
    let lines = reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader thread panicked"))??;
    let mut tally = batch_acks?;
    let t2 = item_acks?;
    tally.ok += t2.ok;
    tally.skipped += t2.skipped;
    tally.failed += t2.failed;
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

/// Parses every line and sends it; returns how many URLs were sent.
fn read_input(
    input: Box<dyn Read + Send>,
    args: &PutArgs,
    batch_tx: &mpsc::Sender<DiscoveredBatch>,
    item_tx: &mpsc::Sender<UrlItem>,
) -> anyhow::Result<u64> {
    let mut pending: Vec<UrlInfo> = Vec::with_capacity(args.batch);
    let (mut sent, mut batches) = (0u64, 0u64);
    let send = |m: Msg| -> anyhow::Result<()> {
        let ok = match m {
            Msg::Batch(b) => batch_tx.blocking_send(b).is_ok(),
            Msg::Item(i) => item_tx.blocking_send(i).is_ok(),
        };
        anyhow::ensure!(ok, "the server closed the stream early");
        Ok(())
    };
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let mut buf = String::with_capacity(256);
    for n in 1u64.. {
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
            let item = mgz_service::json::from_line(line).with_context(|| format!("line {n}"))?;
            send(Msg::Item(item))?;
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
            let item = UrlItem {
                item: Some(url_item::Item::Known(known)),
                ..UrlItem::default()
            };
            send(Msg::Item(item))?;
        } else if args.put_urls {
            send(Msg::Item(mgz_service::convert::discovered(info)))?;
        } else {
            pending.push(info);
            if pending.len() >= args.batch.max(1) {
                batches += 1;
                let items = std::mem::replace(&mut pending, Vec::with_capacity(args.batch));
                send(Msg::Batch(DiscoveredBatch {
                    id: batches.to_string(),
                    items,
                }))?;
            }
        }
    }
    if !pending.is_empty() {
        send(Msg::Batch(DiscoveredBatch {
            id: (batches + 1).to_string(),
            items: pending,
        }))?;
    }
    let _ = args.discovered; // the default; accepted for explicitness
    Ok(sent)
}
