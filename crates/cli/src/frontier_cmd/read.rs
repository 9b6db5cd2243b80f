//! `mgz frontier get | stats | list-queues | list-urls | dump`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use mgz_service::proto::{
    GetParams, KnownUrlItem, ListUrlParams, Local, Pagination, QueueDelayParams,
    QueueWithinCrawlParams, UrlItem, get_params, url_item,
};

use super::Client;

/// Arguments of `mgz frontier get`.
#[derive(clap::Args)]
pub struct GetArgs {
    /// Queues to serve from per call (0 = no limit).
    #[arg(long, default_value_t = 0)]
    max_queues: u32,
    /// URLs per queue per call, also the cap in flight per queue (0 = no limit).
    #[arg(long, default_value_t = 10)]
    per_queue: u32,
    /// Only this queue.
    #[arg(long, default_value = "")]
    key: String,
    /// Only this crawl ("" = DEFAULT); every crawl when absent.
    #[arg(long)]
    crawl: Option<String>,
    /// Seconds a served URL stays leased (0 = the server's default, 30).
    #[arg(long, default_value_t = 0)]
    lease: u32,
    /// Keep calling until this many URLs were served (0 = one call).
    #[arg(long, default_value_t = 0)]
    total: u64,
    /// With --total: give up after this many seconds without a URL.
    #[arg(long, default_value_t = 5)]
    idle_secs: u64,
    /// Print only the summary, not the URLs.
    #[arg(long)]
    quiet: bool,
    /// Mark each served URL completed (PutURLs, known, date 0), as a crawler would.
    #[arg(long)]
    complete: bool,
    /// With --total: one line per call on stderr ("call N at S s: K URLs,
    /// T in all"), to see where a long run spends its time.
    #[arg(long)]
    log_calls: bool,
}

/// Leases URLs and prints one per line; the rate goes to stderr.
pub async fn get(mut client: Client, args: GetArgs) -> anyhow::Result<ExitCode> {
    let params = GetParams {
        max_urls_per_queue: args.per_queue,
        max_queues: args.max_queues,
        key: args.key.clone(),
        delay_requestable: args.lease,
        item: args.crawl.clone().map(get_params::Item::CrawlId),
    };
    let (start, mut served, mut last) = (Instant::now(), 0u64, Instant::now());
    let (mut calls, mut empty, mut backoff) = (0u64, 0u64, Backoff::default());
    // When 90 % of --total was served: separates the steady rate from the
    // tail (the biggest queues, served at most per_queue per round).
    let mut t90 = None;
    let (done_tx, completer) = completer(&client, args.complete);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    loop {
        let mut stream = client
            .get_ur_ls(params.clone())
            .await
            .context("GetURLs")?
            .into_inner();
        let before = served;
        calls += 1;
        while let Some(info) = stream.message().await.context("GetURLs stream")? {
            served += 1;
            if !args.quiet {
                writeln!(out, "{}", info.url)?;
            }
            if let Some(tx) = &done_tx {
                let known = KnownUrlItem {
                    info: Some(info),
                    refetchable_from_date: 0,
                };
                let item = UrlItem {
                    item: Some(url_item::Item::Known(known)),
                    ..UrlItem::default()
                };
                tx.send(item).await.context("PutURLs stream closed")?;
            }
        }
        if args.log_calls {
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "call {calls} at {secs:.3} s: {} URLs, {served} in all",
                served - before
            );
        }
        if t90.is_none() && args.total > 0 && served * 10 >= args.total * 9 {
            t90 = Some(start.elapsed().as_secs_f64());
        }
        if args.total == 0 || served >= args.total {
            break;
        }
        if served == before {
            empty += 1;
            if last.elapsed() > Duration::from_secs(args.idle_secs) {
                break;
            }
            tokio::time::sleep(backoff.next()).await;
        } else {
            last = Instant::now();
            backoff = Backoff::default();
        }
    }
    out.flush()?;
    drop(done_tx);
    let completed = match completer {
        Some(task) => task.await.context("completer task")??,
        None => 0,
    };
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "served {served} URLs (completed {completed}) in {secs:.2} s: {:.0} URLs/s; \
         {calls} GetURLs calls, {empty} empty{}",
        served as f64 / secs,
        t90.map_or(String::new(), |t| format!("; 90 % served in {t:.2} s"))
    );
    Ok(ExitCode::SUCCESS)
}

/// The wait after an empty answer: 1 ms, doubling up to 20 ms.
///
/// With `--complete`, an answer is often empty only because the completions
/// of the previous one (sent on the PutURLs stream just before) were not yet
/// written when the next GetURLs was: a short first wait serves those queues
/// again at once, the doubling keeps an idle frontier from being polled hard.
#[derive(Debug)]
struct Backoff(Duration);

impl Default for Backoff {
    fn default() -> Self {
        Backoff(Duration::from_millis(1))
    }
}

impl Backoff {
    fn next(&mut self) -> Duration {
        let wait = self.0;
        self.0 = (wait * 2).min(Duration::from_millis(20));
        wait
    }
}

type Completer = Option<tokio::task::JoinHandle<anyhow::Result<u64>>>;

/// A PutURLs stream that marks served URLs completed; counts its OK acks.
fn completer(
    client: &Client,
    enabled: bool,
) -> (Option<tokio::sync::mpsc::Sender<UrlItem>>, Completer) {
    if !enabled {
        return (None, None);
    }
    let (tx, rx) = tokio::sync::mpsc::channel(8192);
    let mut client = client.clone();
    let task = tokio::spawn(async move {
        let call = client.put_ur_ls(tokio_stream::wrappers::ReceiverStream::new(rx));
        let mut acks = call.await.context("PutURLs")?.into_inner();
        let mut ok = 0;
        while let Some(ack) = acks.message().await.context("PutURLs acks")? {
            ok += u64::from(ack.status == 0);
        }
        Ok(ok)
    });
    (Some(tx), Some(task))
}

/// Arguments of `mgz frontier set-delay`.
#[derive(clap::Args)]
pub struct SetDelayArgs {
    /// Crawl ID ("" = DEFAULT).
    #[arg(long, default_value = "")]
    crawl: String,
    /// Queue key; the crawl's default delay when empty.
    #[arg(long, default_value = "")]
    key: String,
    /// Seconds between two serves of a queue.
    secs: u32,
}

/// Sets a queue's (or the crawl's default) politeness delay.
pub async fn set_delay(mut client: Client, a: SetDelayArgs) -> anyhow::Result<ExitCode> {
    let p = QueueDelayParams {
        key: a.key,
        delay_requestable: a.secs,
        crawl_id: a.crawl,
        local: true,
    };
    client.set_delay(p).await.context("SetDelay")?;
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `mgz frontier stats`.
#[derive(clap::Args)]
pub struct StatsArgs {
    /// Crawl ID ("" = DEFAULT).
    #[arg(long, default_value = "")]
    crawl: String,
    /// One queue; the whole crawl when empty.
    #[arg(long, default_value = "")]
    key: String,
}

/// Prints the counters as one JSON object.
pub async fn stats(mut client: Client, args: StatsArgs) -> anyhow::Result<ExitCode> {
    let p = QueueWithinCrawlParams {
        key: args.key,
        crawl_id: args.crawl,
        local: true,
    };
    let s = client.get_stats(p).await.context("GetStats")?.into_inner();
    let counts: serde_json::Map<String, serde_json::Value> = s
        .counts
        .iter()
        .map(|(k, v)| (k.clone(), (*v).into()))
        .collect();
    let json = serde_json::json!({
        "crawlID": s.crawl_id, "size": s.size, "inProcess": s.in_process,
        "numberOfQueues": s.number_of_queues, "counts": counts,
    });
    println!("{json}");
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `mgz frontier list-queues`.
#[derive(clap::Args)]
pub struct ListQueuesArgs {
    /// Crawl ID ("" = DEFAULT).
    #[arg(long, default_value = "")]
    crawl: String,
    /// Offset of the first queue.
    #[arg(long, default_value_t = 0)]
    start: u32,
    /// Page size (0 = the server's default, 100).
    #[arg(long, default_value_t = 0)]
    size: u32,
    /// Include queues with nothing left to serve.
    #[arg(long)]
    inactive: bool,
}

/// Prints one queue key per line.
pub async fn list_queues(mut client: Client, a: ListQueuesArgs) -> anyhow::Result<ExitCode> {
    let p = Pagination {
        start: a.start,
        size: a.size,
        include_inactive: a.inactive,
        crawl_id: a.crawl,
        local: true,
    };
    let page = client
        .list_queues(p)
        .await
        .context("ListQueues")?
        .into_inner();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for key in &page.values {
        writeln!(out, "{key}")?;
    }
    out.flush()?;
    eprintln!(
        "{} of {} queues from offset {}",
        page.size, page.total, page.start
    );
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `mgz frontier list-urls`.
#[derive(clap::Args)]
pub struct ListUrlsArgs {
    /// Crawl ID ("" = DEFAULT).
    #[arg(long, default_value = "")]
    crawl: String,
    /// One queue; every queue of the crawl when empty.
    #[arg(long, default_value = "")]
    key: String,
    /// Offset of the first URL.
    #[arg(long, default_value_t = 0)]
    start: u32,
    /// Page size (0 = the server's default, 100).
    #[arg(long, default_value_t = 0)]
    size: u32,
    /// Keep URLs containing this text.
    #[arg(long)]
    filter: Option<String>,
    /// Compare the filter without regard to case.
    #[arg(long)]
    ignore_case: bool,
}

/// Prints one JSON URLItem per line.
pub async fn list_urls(client: Client, a: ListUrlsArgs) -> anyhow::Result<ExitCode> {
    let p = ListUrlParams {
        start: a.start,
        size: a.size,
        key: a.key,
        crawl_id: a.crawl,
        local: true,
        filter: a.filter,
        ignore_case: Some(a.ignore_case),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let n = stream_urls(client, p, &mut out).await?;
    out.flush()?;
    eprintln!("{n} URLs");
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `mgz frontier dump`.
#[derive(clap::Args)]
pub struct DumpArgs {
    /// Only this crawl; every crawl when absent.
    #[arg(long)]
    crawl: Option<String>,
    /// Output file; standard output when absent.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// Writes every URL of every crawl as JSONL `known` URLItems.
pub async fn dump(mut client: Client, a: DumpArgs) -> anyhow::Result<ExitCode> {
    let crawls = match a.crawl {
        Some(c) => vec![c],
        None => {
            client
                .list_crawls(Local { local: true })
                .await
                .context("ListCrawls")?
                .into_inner()
                .values
        }
    };
    let mut out: Box<dyn std::io::Write> = match &a.output {
        Some(p) => {
            Box::new(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut out);
    let mut total = 0;
    for crawl in crawls {
        let p = ListUrlParams {
            size: u32::MAX,
            crawl_id: crawl.clone(),
            local: true,
            ..Default::default()
        };
        let n = stream_urls(client.clone(), p, &mut out).await?;
        eprintln!("{n} URLs dumped for crawl {crawl}");
        total += n;
    }
    out.flush().context("writing the dump")?;
    eprintln!("{total} URLs dumped");
    Ok(ExitCode::SUCCESS)
}

async fn stream_urls(
    mut client: Client,
    p: ListUrlParams,
    out: &mut impl std::io::Write,
) -> anyhow::Result<u64> {
    let mut stream = client.list_ur_ls(p).await.context("ListURLs")?.into_inner();
    let mut n = 0;
    while let Some(item) = stream.message().await.context("ListURLs stream")? {
        writeln!(out, "{}", mgz_service::json::to_line(&item))?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_1_ms_up_to_20_ms() {
        let mut b = Backoff::default();
        let waits: Vec<u64> = (0..7).map(|_| b.next().as_millis() as u64).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 20, 20]);
    }
}
